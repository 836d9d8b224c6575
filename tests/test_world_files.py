"""network=file and agents=file: sampling, the join with the world, the config's digests and checks, the moments."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from prism_experiments.composition import compose_experiment
from prism_experiments.config import ConfigError, ExperimentConfig
from prism_experiments.example_world import main as example_world
from prism_experiments.harness.graph_targets import graph_target_set, graph_targets_yaml
from prism_experiments.network.edge_file import read_edge_file
from prism_experiments.network.edge_stats import GRAPH_MOMENTS, agents_graph_moments, average_clustering, reciprocity
from prism_experiments.network.sampling import induced_edges, snowball_sample, uniform_sample
from prism_experiments.simulation import build_starting_world
from prism_experiments.simulation.world_comparison import graph_comparison
from prism_experiments.tracking.params import config_hash, to_params

SMALL = ("corpus.n_posts=60", "simulation.show_progress=false")


def path_graph(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(n - 1), np.arange(1, n)


# --------------------------------------------------------------------------------------------------- sampling
def test_a_snowball_sample_has_exactly_k_accounts_reached_wave_by_wave() -> None:
    follower, followee = path_graph(1000)
    nodes = snowball_sample(1000, follower, followee, 50, np.random.default_rng(1))
    assert nodes.size == 50 and np.all(np.diff(nodes) > 0)
    # on a path, breadth-first waves from one account reach a contiguous stretch (or, near an end, the end)
    assert nodes[-1] - nodes[0] == 49
    again = snowball_sample(1000, follower, followee, 50, np.random.default_rng(1))
    other = snowball_sample(1000, follower, followee, 50, np.random.default_rng(2))
    assert np.array_equal(nodes, again) and not np.array_equal(nodes, other)


def test_a_snowball_restarts_in_another_component_when_one_runs_out() -> None:
    # two disjoint triangles: a sample of 5 must take accounts of both
    follower, followee = np.array([0, 1, 2, 3, 4, 5]), np.array([1, 2, 0, 4, 5, 3])
    nodes = snowball_sample(6, follower, followee, 5, np.random.default_rng(0))
    assert nodes.size == 5 and {0, 1, 2} & set(nodes.tolist()) and {3, 4, 5} & set(nodes.tolist())


def test_uniform_samples_and_induced_edges() -> None:
    nodes = uniform_sample(100, 10, np.random.default_rng(0))
    assert nodes.size == np.unique(nodes).size == 10
    follower, followee = induced_edges(5, np.array([0, 1, 2, 3]), np.array([1, 2, 3, 4]), np.array([1, 2, 4]))
    assert list(zip(follower.tolist(), followee.tolist(), strict=True)) == [(0, 1)]  # only 1 -> 2 survives
    with pytest.raises(ValueError, match="sample_nodes: must be between 1 and the graph's 100 accounts, got 101"):
        uniform_sample(100, 101, np.random.default_rng(0))


# ------------------------------------------------------------------------------------------------ example data
@pytest.fixture
def example(tmp_path: Path) -> Path:
    assert example_world(["--out", str(tmp_path / "world"), "--nodes", "40", "--edges", "200"]) == 0
    return tmp_path / "world"


def test_the_example_script_writes_a_loadable_graph_and_population(example: Path) -> None:
    edges = read_edge_file(example / "edges.txt")
    population = pd.read_csv(example / "population.csv", dtype=str, keep_default_na=False)
    assert edges.n_edges == 200 and edges.self_loops == edges.duplicates == 0
    assert set(edges.ids) <= set(population["agent_id"]) and len(population) == 40
    assert (population["activity"] == "").any()  # some cells left to be drawn


# ------------------------------------------------------------------------------------------------ the join
def world_of(*overrides: str):
    cfg = compose_experiment([*SMALL, *overrides])
    return cfg, build_starting_world(cfg)


def test_a_graph_file_makes_the_world_its_accounts_and_follows(example: Path) -> None:
    cfg, world = world_of("network=file", f"network.path={example / 'edges.txt'}")
    edges = read_edge_file(example / "edges.txt")
    assert cfg.agents.n_agents == edges.n_nodes == len(world.agents)
    assert [agent.id for agent in world.agents] == list(edges.ids)
    assert set(world.graph.edges()) == {
        (str(edges.ids[a]), str(edges.ids[b])) for a, b in zip(edges.follower, edges.followee, strict=True)
    }
    assert all(agent.following == set(world.graph.following(agent.id)) for agent in world.agents)
    # the generated population's draws, for the graph's accounts: the same seed gives the same attributes
    _, again = world_of("network=file", f"network.path={example / 'edges.txt'}")
    assert world.agents == again.agents


def test_a_population_file_gives_the_accounts_and_the_generator_their_follows(example: Path) -> None:
    cfg, world = world_of("agents=file", f"agents.path={example / 'population.csv'}")
    population = pd.read_csv(example / "population.csv", dtype=str, keep_default_na=False)
    assert [agent.id for agent in world.agents] == population["agent_id"].tolist() and cfg.agents.n_agents == 40
    first = population.iloc[0]
    assert world.agents[0].interests == first["interests"].split("|")
    assert world.agents[0].post_rate == float(first["post_rate"])
    assert world.graph.number_of_edges() > 0  # generated among the file's accounts
    assert {b for _, b in world.graph.edges()} <= set(population["agent_id"])


def test_both_files_join_on_ids_and_the_file_values_win(example: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        _, world = world_of(
            "network=file", f"network.path={example / 'edges.txt'}",
            "agents=file", f"agents.path={example / 'population.csv'}",
        )  # fmt: skip
    population = pd.read_csv(example / "population.csv", dtype=str, keep_default_na=False).set_index("agent_id")
    by_id = {agent.id: agent for agent in world.agents}
    assert set(by_id) == set(population.index)  # accounts the graph never names follow nobody
    for account, row in population.iterrows():
        assert by_id[account].interests == row["interests"].split("|")
        if row["activity"]:
            assert by_id[account].activity == float(row["activity"])
    assert "agents.path: from the file: interests (40 of 40 accounts), activity (" in caplog.text
    assert "drawn with seed 0: like_bias, reshare_bias, reply_bias, archetype_weights" in caplog.text


def test_accounts_the_population_lacks_are_an_error_or_dropped_or_added(tmp_path: Path) -> None:
    (tmp_path / "edges.txt").write_text("a b\nb c\nc x\nx a\n")
    (tmp_path / "people.csv").write_text("agent_id,interests\na,music\nb,music\nc,sports\n")
    files = [
        "network=file",
        f"network.path={tmp_path / 'edges.txt'}",
        "agents=file",
        f"agents.path={tmp_path / 'people.csv'}",
    ]
    with pytest.raises(
        ConfigError, match=r"^config error: network.missing_accounts: .* names 1 accounts that .* lacks"
    ):
        compose_experiment([*SMALL, *files])
    _, dropped = world_of(*files, "network.missing_accounts=drop")
    assert [a.id for a in dropped.agents] == ["a", "b", "c"] and set(dropped.graph.edges()) == {("a", "b"), ("b", "c")}
    _, added = world_of(*files, "network.missing_accounts=add")
    assert [a.id for a in added.agents] == ["a", "b", "c", "x"] and ("x", "a") in set(added.graph.edges())


def test_a_sampled_graph_is_the_world_and_follows_the_seed(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    lines = {(int(a), int(b)) for a, b in rng.integers(0, 300, size=(1500, 2)) if a != b}
    (tmp_path / "edges.txt").write_text("".join(f"{a} {b}\n" for a, b in sorted(lines)))
    sampled = ["network=file", f"network.path={tmp_path / 'edges.txt'}", "network.sample_nodes=40"]
    cfg, world = world_of(*sampled)
    assert cfg.agents.n_agents == len(world.agents) == 40
    ids = {a.id for a in world.agents}
    assert all((int(a), int(b)) in lines and {a, b} <= ids for a, b in world.graph.edges())
    assert world.graph.number_of_edges() == sum(1 for a, b in lines if {str(a), str(b)} <= ids)  # induced
    _, seed_1 = world_of(*sampled, "seed=1")
    _, fixed_0 = world_of(*sampled, "seed=1", "network.sample_seed=0")
    assert {a.id for a in seed_1.agents} != ids and {a.id for a in fixed_0.agents} == ids


# -------------------------------------------------------------------------------------- config checks, digests
@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (("network=file", "network.path={missing}"), "config error: network.path: {missing}: no such file"),
        (("agents=file", "agents.path={tmp}"), "config error: agents.path: {tmp}: is a directory, not a file"),
        (("network.path={edges}",), "config error: network.path: set, but the graph is generated; choose network=file"),
        (("network.sample_nodes=10",), "config error: network.sample_nodes: samples a graph file; choose network=file"),
        (
            ("network=file", "network.path={edges}", "network.sample_nodes=50"),
            "config error: network.sample_nodes: 50 is more than the graph's 3 accounts",
        ),
        (
            ("network=file", "network.path={edges}", "network.self_loops=error"),
            "config error: network.path: {edges}: line 2, field 'followee_id': self-follow ('b' follows itself)",
        ),
        (
            ("agents=file", "agents.path={people}"),
            "config error: agents.path: {people}: row 1, column 'interests': unknown topic 'knitting'",
        ),
        (
            ("network=file",),
            "config error: network.path: required when source is 'file' (network=file network.path=...)",
        ),
    ],
)
def test_a_bad_world_file_is_one_config_error_naming_the_field(
    tmp_path: Path, overrides: tuple[str, ...], message: str
) -> None:
    (tmp_path / "edges.txt").write_text("a b\nb b\nb c\n")
    (tmp_path / "people.csv").write_text("agent_id,interests\na,knitting\n")
    names = {
        "missing": tmp_path / "absent.txt",
        "tmp": tmp_path,
        "edges": tmp_path / "edges.txt",
        "people": tmp_path / "people.csv",
    }
    with pytest.raises(ConfigError) as raised:
        compose_experiment([*SMALL, *(o.format(**names) for o in overrides)])
    assert str(raised.value).startswith(message.format(**names)), str(raised.value)
    assert "\n" not in str(raised.value)


def test_the_digest_is_in_the_config_its_hash_and_a_changed_file_is_refused(example: Path, tmp_path: Path) -> None:
    edges = example / "edges.txt"
    files = ["network=file", f"network.path={edges}"]
    cfg = compose_experiment([*SMALL, *files])
    import hashlib

    assert cfg.network.sha256 == hashlib.sha256(edges.read_bytes()).hexdigest()
    assert to_params(cfg.model_dump(mode="json"))["network.sha256"] == cfg.network.sha256
    copy = tmp_path / "copy" / "edges.txt"
    copy.parent.mkdir()
    copy.write_bytes(edges.read_bytes())
    same = compose_experiment([*SMALL, "network=file", f"network.path={copy}"])
    assert same.network.sha256 == cfg.network.sha256
    with edges.open("a") as handle:
        handle.write("# one more line\n1 2\n")
    changed = compose_experiment([*SMALL, *files])
    assert config_hash(changed.model_dump(mode="json")) != config_hash(cfg.model_dump(mode="json"))
    with pytest.raises(
        ConfigError, match=re.escape(f"network.sha256: {edges} has changed since the config was written")
    ):
        compose_experiment([*SMALL, *files, f"network.sha256={cfg.network.sha256}"])


def test_a_generated_world_logs_no_world_file_params_so_its_hash_is_unchanged() -> None:
    params = to_params(compose_experiment(list(SMALL)).model_dump(mode="json"))
    world_keys = ("source", "path", "sha256", "directed", "self_loops", "sample", "missing_accounts")
    assert not [
        key for key in params if key.split(".")[0] in ("network", "agents") and key.split(".")[1].startswith(world_keys)
    ]
    assert "corpus.sha256" not in params


# ---------------------------------------------------------------------------------------------- graph moments
def test_graph_moments_agree_with_networkx(example: Path) -> None:
    _, world = world_of("network=file", f"network.path={example / 'edges.txt'}", "network.directed=false")
    moments = agents_graph_moments(world.agents)
    graph = world.graph.to_networkx()
    assert moments["graph_reciprocity"] == pytest.approx(1.0)  # a mutual file
    assert moments["graph_clustering"] == pytest.approx(nx.average_clustering(graph.to_undirected()))
    in_degrees = [d for _, d in graph.in_degree()]
    assert moments["graph_in_degree_p90"] == pytest.approx(np.percentile(in_degrees, 90))
    assert moments["graph_mean_out_degree"] == pytest.approx(graph.number_of_edges() / graph.number_of_nodes())
    follower, followee = np.array([0, 1, 1]), np.array([1, 0, 2])
    assert reciprocity(3, follower, followee) == pytest.approx(
        nx.overall_reciprocity(nx.DiGraph([(0, 1), (1, 0), (1, 2)]))
    )
    assert average_clustering(3, np.array([0, 1, 2]), np.array([1, 2, 0])) == 1.0


def test_the_comparison_and_its_calibration_targets(example: Path, tmp_path: Path) -> None:
    from prism_experiments.calibration.targets import load_targets

    cfg, world = world_of("network=file", f"network.path={example / 'edges.txt'}")
    comparison = graph_comparison(world.agents, cfg.network, cfg.seed)
    assert list(comparison.index) == list(GRAPH_MOMENTS)
    assert comparison["file"].to_dict() == agents_graph_moments(world.agents)
    assert not comparison["file"].equals(comparison["generator"])  # the generator draws other follows
    target_set = graph_target_set(
        comparison["file"].to_dict(), example / "edges.txt", "abc", 40, ["agents.n_agents=40"]
    )
    path = tmp_path / "graph_targets.yaml"
    path.write_text(graph_targets_yaml(target_set))
    loaded = load_targets(path)  # a valid targets file for `make calibrate TARGETS=...`
    assert loaded.targets["reciprocity"].value == pytest.approx(comparison.loc["graph_reciprocity", "file"], abs=1e-6)
    assert "agents.n_agents=40" in loaded.run_overrides and set(loaded.parameters) >= {"network.homophily"}


def test_a_corpus_files_authors_are_the_world_accounts_of_the_same_ids(
    example: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from datetime import UTC, datetime

    from prism_experiments.corpus import save_posts
    from prism_experiments.domain import Post

    when = datetime(2026, 1, 1, tzinfo=UTC)
    posts = [
        Post(id=f"p{i}", author_id=author, text=f"post {i} about music", timestamp=when)
        for i, author in enumerate(["1", "2", "outsider"])
    ]
    corpus = save_posts(posts, tmp_path / "posts.csv")
    with caplog.at_level(logging.INFO):
        _, world = world_of(
            "network=file", f"network.path={example / 'edges.txt'}", "corpus=file", f"corpus.path={corpus}"
        )
    assert "corpus.path: 2 of its 3 authors are accounts of the world (matched by id)" in caplog.text
    # "1" wrote p0 and is the graph's account "1": its followers in the file get p0 in-network
    accounts = {agent.id for agent in world.agents}
    assert {"1", "2"} <= accounts and "outsider" not in accounts and world.graph.followers("1")


def test_every_bad_file_fails_config_validation_so_no_run_or_folder_can_exist(tmp_path: Path) -> None:
    """Each bad input of tests/test_edge_file.py and tests/test_population_file.py fails where a run's config is
    validated (before `make run` keeps its folder and before a sweep makes its parent run; the CLI path is in
    tests/test_faults.py), as one line naming the option, the file and where."""
    from test_edge_file import BAD_INPUTS as EDGE_INPUTS
    from test_edge_file import bad_file
    from test_population_file import BAD_INPUTS as POPULATION_INPUTS

    cases = [("network", name, content) for name, content, _, _ in EDGE_INPUTS if name != "absent.txt"]
    cases += [("agents", name, content) for name, content, _ in POPULATION_INPUTS]
    for number, (group, name, content) in enumerate(cases):
        folder = tmp_path / str(number)
        folder.mkdir()
        path = bad_file(folder, name, content)
        with pytest.raises(ConfigError) as raised:
            ExperimentConfig.from_mapping({group: {"source": "file", "path": str(path)}})
        message = str(raised.value)
        assert message.startswith(f"config error: {group}.path: {path}") and "\n" not in message, message
