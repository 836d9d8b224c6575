"""Package-level import graph: no loops between packages, no forbidden edges.

Every `import` in `prism_experiments` counts, also those under `if TYPE_CHECKING:` and inside
functions: a lazy import hides a dependency from the interpreter, not from the design.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Set
from pathlib import Path

import pytest

import prism_experiments

ROOT = Path(prism_experiments.__file__).parent
PACKAGE = "prism_experiments"
Graph = Mapping[str, Set[str]]

#: (importer, imported) edges between nodes that must not exist, with the reason.
FORBIDDEN: dict[tuple[str, str], str] = {
    (f"{PACKAGE}.simulation", "mlflow"): "the engine runs without a tracking backend",
    (f"{PACKAGE}.simulation", f"{PACKAGE}.tracking"): "the engine runs without a tracking backend",
    (f"{PACKAGE}.metrics", f"{PACKAGE}.simulation"): "metrics are pure functions of the event log",
    (f"{PACKAGE}.ranking", f"{PACKAGE}.simulation"): "rankers are built for, not from, the engine",
    (f"{PACKAGE}.deciders", f"{PACKAGE}.simulation"): "deciders are built for, not from, the engine",
    (f"{PACKAGE}.analysis", f"{PACKAGE}.simulation"): "the analysis reads what runs logged, never the engine",
}
#: The entry point `python -m prism_experiments`: no module may import it (a path or a helper lives elsewhere).
ENTRY_POINT = f"{PACKAGE}.__main__"
#: The only nodes that may import the harness: the `prism-run` entry point, `prism-calibrate`, whose
#: trials compose configs and end runs the way a harness job does, and `prism-ope --validate`, which composes
#: an experiment's config per seed the same way, and `make bench`, whose section 7 counts what a sweep's
#: up-front embedding would embed and times the UI as `make ui` starts it, `make chaos`, which starts
#: `make ray-head`'s head for its Ray sweeps, and `prism-replicate`, which composes its findings' job configs once
#: per shape of job as a sweep's driver does (`harness/sweep.py`, `validated_job_configs`).
HARNESS = f"{PACKAGE}.harness"
HARNESS_IMPORTERS: frozenset[str] = frozenset(
    {
        f"{PACKAGE}.__main__",
        f"{PACKAGE}.calibration",
        f"{PACKAGE}.ope",
        f"{PACKAGE}.bench",
        f"{PACKAGE}.chaos",
        f"{PACKAGE}.replication",
    }
)
#: The neutral package: everything may depend on it, it depends on no other package of ours.
DOMAIN = f"{PACKAGE}.domain"


def module_name(path: Path) -> str:
    """`prism_experiments/feed_store/store.py` -> `prism_experiments.feed_store.store` (an `__init__`: its package)."""
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def node_of(module: str) -> str:
    """The graph node of a module: `prism_experiments.<package or top-level module>`, else the top-level name."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return parts[0]
    return ".".join(parts[:2])


def _is_submodule(dotted: str) -> bool:
    relative = Path(*dotted.split(".")[1:])
    return (ROOT / relative).is_dir() or (ROOT / relative).with_suffix(".py").is_file()


def imported_modules(source: str, module: str, is_package: bool) -> Iterator[str]:
    """Every module `source` imports, anywhere in the file, relative imports resolved."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            yield base
            # `from prism_experiments import config` imports the module `prism_experiments.config`
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                if candidate.startswith(f"{PACKAGE}.") and _is_submodule(candidate):
                    yield candidate


def package_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """node -> nodes it imports (ours and third-party top-level names), self-edges left out."""
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        module = module_name(path)
        source_node = node_of(module)
        edges = graph.setdefault(source_node, set())
        for imported in imported_modules(path.read_text(encoding="utf-8"), module, path.name == "__init__.py"):
            target = node_of(imported)
            if target != source_node:
                edges.add(target)
    return graph


def find_cycle(graph: Graph) -> list[str] | None:
    """One cycle as a node path that starts and ends at the same node, or None (iterative DFS)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    for start in sorted(graph):
        if state.get(start):
            continue
        path: list[str] = [start]
        pending: list[Iterator[str]] = [iter(sorted(graph.get(start, ())))]
        state[start] = 1
        while pending:
            nxt = next(pending[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                pending.pop()
            elif state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                pending.append(iter(sorted(graph.get(nxt, ()))))
    return None


def internal(graph: Graph) -> dict[str, set[str]]:
    """The graph restricted to our own nodes."""
    return {
        node: {t for t in targets if t == PACKAGE or t.startswith(f"{PACKAGE}.")} for node, targets in graph.items()
    }


def forbidden_edges(graph: Graph) -> list[str]:
    """Every edge that breaks the layering, as `importer -> imported: why`."""
    found = [f"{a} -> {b}: {why}" for (a, b), why in FORBIDDEN.items() if b in graph.get(a, set())]
    found += [
        f"{node} -> {HARNESS}: only {', '.join(sorted(HARNESS_IMPORTERS))} may import the harness"
        for node, targets in graph.items()
        if HARNESS in targets and node not in HARNESS_IMPORTERS
    ]
    found += [
        f"{DOMAIN} -> {target}: the domain package depends on no other package of ours"
        for target in sorted(internal(graph).get(DOMAIN, set()))
    ]
    found += [
        f"{node} -> {ENTRY_POINT}: nothing imports the entry point"
        for node, targets in graph.items()
        if ENTRY_POINT in targets
    ]
    return sorted(found)


# ---------------------------------------------------------------- the project


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return package_graph()


def test_no_import_loop_between_packages(graph: dict[str, set[str]]) -> None:
    cycle = find_cycle(internal(graph))
    assert cycle is None, f"import loop between packages: {' -> '.join(cycle or [])}"


def test_no_forbidden_import_edge(graph: dict[str, set[str]]) -> None:
    assert forbidden_edges(graph) == []


def test_the_engine_does_not_reach_mlflow_through_any_package(graph: dict[str, set[str]]) -> None:
    reached, frontier = set(), [f"{PACKAGE}.simulation"]
    while frontier:
        node = frontier.pop()
        if node not in reached:
            reached.add(node)
            frontier.extend(graph.get(node, ()))
    assert "mlflow" not in reached, (
        f"simulation reaches mlflow via {sorted(n for n in reached if 'mlflow' in graph.get(n, ()))}"
    )


def test_graph_sees_the_packages_and_their_known_edges(graph: dict[str, set[str]]) -> None:
    # guards the walker itself: a broken walker would find no edges and pass the two tests above
    assert {
        f"{PACKAGE}.{name}" for name in ("domain", "simulation", "ranking", "feed_store", "metrics", "config")
    } <= set(graph)
    assert f"{PACKAGE}.ranking" in graph[f"{PACKAGE}.simulation"]
    assert DOMAIN in graph[f"{PACKAGE}.feed_store"]
    assert HARNESS in graph[f"{PACKAGE}.__main__"]
    assert "mlflow" in graph[f"{PACKAGE}.tracking"]


# ------------------------------------------------------------ the checker itself


def test_find_cycle_names_the_loop() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert find_cycle(graph) == ["a", "b", "c", "a"]


def test_find_cycle_accepts_a_diamond() -> None:
    assert find_cycle({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}) is None


def test_find_cycle_sees_a_two_node_loop_reached_late() -> None:
    graph = {"a": {"b"}, "b": set(), "x": {"y"}, "y": {"x"}}
    assert find_cycle(graph) == ["x", "y", "x"]


def test_forbidden_edges_are_reported() -> None:
    graph = {
        f"{PACKAGE}.simulation": {"mlflow", f"{PACKAGE}.tracking"},
        f"{PACKAGE}.metrics": {f"{PACKAGE}.simulation"},
        f"{PACKAGE}.ranking": {f"{PACKAGE}.simulation"},
        f"{PACKAGE}.analysis": {HARNESS, f"{PACKAGE}.simulation"},
        f"{PACKAGE}.__main__": {HARNESS},
        f"{PACKAGE}.bench": {f"{PACKAGE}.__main__"},
        DOMAIN: {f"{PACKAGE}.feed_store", "numpy"},
    }
    found = forbidden_edges(graph)
    assert len(found) == 8
    assert any(line.startswith(f"{PACKAGE}.analysis -> {PACKAGE}.simulation") for line in found)
    assert any(line.startswith(f"{PACKAGE}.bench -> {ENTRY_POINT}") for line in found)
    assert any(line.startswith(f"{PACKAGE}.analysis -> {HARNESS}") for line in found)
    assert any(line.startswith(f"{DOMAIN} -> {PACKAGE}.feed_store") for line in found)
    assert not any(line.startswith(f"{PACKAGE}.__main__") for line in found)


def test_imports_are_found_under_type_checking_in_functions_and_relative(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from prism_experiments.config import ExperimentConfig\n"
        "def f():\n    import mlflow\n"
        "from . import sibling\nfrom ..feed_store import store\n"
        "from prism_experiments import harness\n"
    )
    found = set(imported_modules(source, f"{PACKAGE}.simulation.engine", is_package=False))
    assert {
        f"{PACKAGE}.config",
        "mlflow",
        f"{PACKAGE}.simulation",
        f"{PACKAGE}.feed_store",
        f"{PACKAGE}.harness",
    } <= found
