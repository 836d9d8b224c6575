"""Lists of registered names in README.md and docs/*.md are the registries' (docs/testing.md, "Lists of names"): a
list marked `<!-- names: <kind> -->` names every registered mode, metric, world, experiment or finding of its kind,
and nothing else."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from docs_blocks import PAGES, ROOT

from prism_experiments.metrics import primary_metric_names
from prism_experiments.ranking import KNOWN_MODES
from prism_experiments.replication.registry import FINDINGS, REPLICATION_SET_VERSION

MARKER = re.compile(r"^<!-- names: (?P<kind>[a-z ]+) -->$")
NAME = re.compile(r"`([a-z][a-z0-9_]*)`")
#: kind -> the registered names
REGISTRIES: dict[str, Callable[[], set[str]]] = {
    "ranking modes": lambda: set(KNOWN_MODES),
    "primary metrics": lambda: set(primary_metric_names()),
    "worlds": lambda: {path.stem for path in (ROOT / "conf" / "world").glob("*.yaml")},
    "experiments": lambda: {path.stem for path in (ROOT / "conf" / "experiment").glob("*.yaml")},
    "findings": lambda: {finding.name for finding in FINDINGS},
}
#: where each kind must have a checked list (a list that lost its marker would no longer be checked)
REQUIRED = {
    ("README.md", "ranking modes"),
    ("docs/ranking.md", "ranking modes"),
    ("docs/analysis.md", "primary metrics"),
    ("README.md", "worlds"),
    ("docs/usage.md", "worlds"),
    ("docs/usage.md", "experiments"),
    ("README.md", "findings"),
    ("docs/validation.md", "findings"),
}


def listed_names(block: list[str]) -> list[str]:
    """A table's names: the first backticked name of each row's first cell; a list's: of each item; a paragraph's:
    every backticked name."""
    if block[0].startswith("|"):
        cells = [line.strip("|").split("|")[0] for line in block]
        return [found[0] for found in (NAME.findall(cell) for cell in cells) if found]
    if block[0].startswith(("- ", "* ")):
        items = [line for line in block if line.startswith(("- ", "* "))]
        return [found[0] for found in (NAME.findall(item) for item in items) if found]
    return NAME.findall(" ".join(block))


def marked_lists() -> list[tuple[str, int, str, list[str], str]]:
    """(page, line of the marker, kind, names listed, the list's text) of every marked list."""
    found = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for index, line in enumerate(lines):
            marker = MARKER.match(line.strip())
            if marker is None:
                continue
            block: list[str] = []
            for following in lines[index + 1 :]:
                if not following.strip():
                    break
                block.append(following.strip())
            relative = str(page.relative_to(ROOT))
            found.append((relative, index + 1, marker["kind"], listed_names(block) if block else [], " ".join(block)))
    return found


@pytest.mark.parametrize(
    "page, line, kind, names, text", [pytest.param(*found, id=f"{found[0]}:{found[1]}") for found in marked_lists()]
)
def test_a_marked_list_names_what_is_registered(page: str, line: int, kind: str, names: list[str], text: str) -> None:
    assert kind in REGISTRIES, f"{page}:{line}: unknown kind {kind!r}; known: {', '.join(REGISTRIES)}"
    registered = REGISTRIES[kind]()
    assert sorted(registered - set(names)) == [], f"{page}:{line}: registered {kind} missing from the list"
    assert sorted(set(names) - registered) == [], f"{page}:{line}: listed {kind} that are not registered"
    assert len(names) == len(set(names)), f"{page}:{line}: a name listed twice"
    if kind == "findings":
        for version in re.findall(r"\bset \(?v(\d+)", text):
            assert int(version) == REPLICATION_SET_VERSION, f"{page}:{line}: the replication set is v{version}?"


def test_each_list_the_docs_keep_is_marked() -> None:
    marked = {(page, kind) for page, _, kind, _, _ in marked_lists()}
    assert sorted(REQUIRED - marked) == []


def test_the_validation_page_names_the_current_replication_set() -> None:
    text = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    assert f"## The replication set (v{REPLICATION_SET_VERSION})" in text


def test_the_registries_are_not_empty() -> None:
    for kind, names in REGISTRIES.items():
        assert names(), kind
