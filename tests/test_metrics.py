"""Metrics against hand-computed values, networkx/scipy references and naive re-implementations."""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy.stats import entropy as scipy_entropy

from prism_experiments.domain import (
    CASCADE_EDGES_COLUMNS,
    ENGAGEMENTS_COLUMNS,
    EXPOSURES_COLUMNS,
    FOLLOWS_COLUMNS,
    POSTS_COLUMNS,
    EventLog,
)
from prism_experiments.metrics import (
    RunTables,
    cascade_table,
    engagement_rate_by_format,
    feed_jaccard_mean,
    gini,
    registered_metrics,
    shannon_entropy,
    step_series,
    structural_virality,
    summarize,
    summary_metric_names,
)
from prism_experiments.metrics.entropy import grouped_entropy
from prism_experiments.metrics.feeds import mean_pairwise_jaccard

LOG3 = math.log2(3)
H_TWO_THIRDS = LOG3 - 2 / 3  # entropy of (2/3, 1/3) in bits


# --- entropy ------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
def test_entropy_of_uniform_labels_is_log2_k(k: int) -> None:
    assert shannon_entropy([f"t{i}" for i in range(k)] * 3) == pytest.approx(math.log2(k))


def test_entropy_of_one_hot_and_empty_is_zero() -> None:
    assert shannon_entropy(["a"] * 7) == 0.0
    assert shannon_entropy([]) == 0.0


def test_entropy_matches_scipy_on_skewed_counts() -> None:
    labels = ["a"] * 5 + ["b"] * 3 + ["c"] * 2
    assert shannon_entropy(labels) == pytest.approx(scipy_entropy([5, 3, 2], base=2))
    assert shannon_entropy(iter(labels)) == pytest.approx(scipy_entropy([5, 3, 2], base=2))


def test_grouped_entropy_equals_per_group_entropy() -> None:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {
            "step": rng.integers(0, 4, 400),
            "agent_id": rng.choice(list("abcde"), 400),
            "topic": rng.choice(["x", "y", "z", None], 400),
        }
    )
    vectorised = grouped_entropy(frame, ["step", "agent_id"], "topic")
    for (step, agent), group in frame.groupby(["step", "agent_id"]):
        assert vectorised.loc[(step, agent)] == pytest.approx(shannon_entropy(group["topic"].tolist()))
    assert len(vectorised) == frame.groupby(["step", "agent_id"]).ngroups


def pandas_grouped_entropy(frame: pd.DataFrame, keys: list[str], label: str) -> pd.Series:
    """The plain groupby over the id columns: counts per (keys, label), terms summed per group (pandas' sum)."""
    counts = frame.groupby([*keys, label], dropna=False, sort=False).size()
    levels = list(range(len(keys)))
    p = (counts / counts.groupby(level=levels, sort=False).transform("sum")).to_numpy(dtype=np.float64)
    return pd.Series(p * np.log2(1.0 / p), index=counts.index).groupby(level=levels, sort=True).sum()


@pytest.mark.parametrize("seed", range(4))
def test_grouped_entropy_over_codes_gives_the_bits_of_the_groupby_over_ids(seed: int) -> None:
    # unsorted ids, feeds of many labels (long compensated sums), missing labels: same values, same order, same bits
    rng = np.random.default_rng(seed)
    n = 5000
    frame = pd.DataFrame(
        {
            "step": rng.integers(0, 6, n),
            "agent_id": rng.choice([f"u{i}" for i in rng.permutation(40)], n),
            "author_id": rng.choice([f"a{i}" for i in rng.permutation(300)] + [None], n),
        }
    )
    over_codes = grouped_entropy(frame, ["step", "agent_id"], "author_id")
    reference = pandas_grouped_entropy(frame, ["step", "agent_id"], "author_id")
    assert list(over_codes.index) == list(reference.index)
    assert over_codes.to_numpy().tobytes() == reference.to_numpy().tobytes()
    assert float(over_codes.mean()).hex() == float(reference.mean()).hex()


# --- Gini ---------------------------------------------------------------------------------------


def test_gini_of_equal_values_is_zero() -> None:
    assert gini([3.0, 3.0, 3.0, 3.0]) == pytest.approx(0.0)


@pytest.mark.parametrize("n", [2, 5, 10])
def test_gini_of_one_nonzero_is_n_minus_one_over_n(n: int) -> None:
    assert gini([0.0] * (n - 1) + [4.0]) == pytest.approx((n - 1) / n)


def test_gini_hand_computed() -> None:
    # |differences| over unordered pairs of (1,2,3,4) sum to 10; G = 2*10 / (2 * n^2 * mean) = 20/80.
    assert gini([4, 1, 3, 2]) == pytest.approx(0.25)
    assert gini(np.array([0, 1, 2, 2, 5])) == pytest.approx(0.44)


def test_gini_edge_cases_and_bad_input() -> None:
    assert gini([]) == 0.0
    assert gini([0, 0, 0]) == 0.0
    with pytest.raises(ValueError, match="values"):
        gini([1.0, -1.0])


# --- structural virality and cascades ------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 6, 50])
def test_structural_virality_of_star(n: int) -> None:
    assert structural_virality([("root", f"leaf{i}") for i in range(1, n)]) == pytest.approx(2 * (n - 1) / n)


@pytest.mark.parametrize("n", [2, 3, 7, 2000])
def test_structural_virality_of_chain(n: int) -> None:
    assert structural_virality([(i, i + 1) for i in range(n - 1)]) == pytest.approx((n + 1) / 3)


def test_structural_virality_of_single_edge_is_one() -> None:
    assert structural_virality([("a", "b")]) == 1.0


@pytest.mark.parametrize("seed", range(12))
def test_structural_virality_matches_networkx_wiener_index(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    labels = [f"user{i}" for i in rng.permutation(n)]
    edges = [(labels[int(rng.integers(0, i))], labels[i]) for i in range(1, n)]
    rng.shuffle(edges)
    tree = nx.Graph(edges)
    expected = nx.wiener_index(tree) * 2 / (n * (n - 1))
    assert structural_virality(edges) == pytest.approx(expected)


def test_structural_virality_rejects_non_trees() -> None:
    with pytest.raises(ValueError, match="edges"):
        structural_virality([])
    with pytest.raises(ValueError, match="cycle"):
        structural_virality([("r", "a"), ("b", "c"), ("c", "b")])
    with pytest.raises(ValueError, match="one tree"):
        structural_virality([("r", "a"), ("s", "b")])
    with pytest.raises(ValueError, match="at most once"):
        structural_virality([("r", "a"), ("b", "a"), ("r", "b")])


def _edges(rows: list[tuple[str, str, str, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(CASCADE_EDGES_COLUMNS))


def test_cascade_table_hand_built_two_cascades() -> None:
    # X: u0 -> u1,u2,u3; u1 -> u4,u5; u4 -> u6. Subtree sizes below edges 4,1,1,2,1,1 -> W = 46.
    # Y reuses user names: u3 -> u0; u0 -> u1,u5; u1 -> u2. Subtree sizes 4,2,1,1 -> W = 18.
    edges = _edges(
        [
            ("Y", "u1", "u2", 6),
            ("X", "u1", "u4", 3),
            ("X", "u0", "u1", 2),
            ("Y", "u3", "u0", 4),
            ("X", "u0", "u2", 5),
            ("X", "u4", "u6", 4),
            ("Y", "u0", "u1", 5),
            ("X", "u0", "u3", 2),
            ("X", "u1", "u5", 3),
            ("Y", "u0", "u5", 5),
        ]
    )
    table = cascade_table(edges).set_index("root_post_id")
    assert list(table.index) == ["X", "Y"]
    assert table.loc["X", "size"] == 7 and table.loc["Y", "size"] == 5
    assert table.loc["X", "depth"] == 3 and table.loc["Y", "depth"] == 3
    assert table.loc["X", "max_breadth"] == 3 and table.loc["Y", "max_breadth"] == 2
    assert table.loc["X", "structural_virality"] == pytest.approx(2 * 46 / (7 * 6))
    assert table.loc["Y", "structural_virality"] == pytest.approx(2 * 18 / (5 * 4))
    assert table.loc["X", "first_step"] == 2 and table.loc["Y", "first_step"] == 4


def test_cascade_table_matches_per_tree_structural_virality() -> None:
    rng = np.random.default_rng(3)
    rows, expected = [], {}
    for cascade in range(30):
        n = int(rng.integers(2, 25))
        tree_edges = [(f"a{int(rng.integers(0, i))}", f"a{i}") for i in range(1, n)]
        expected[f"post{cascade}"] = (n, structural_virality(tree_edges))
        rows += [(f"post{cascade}", parent, child, int(rng.integers(0, 9))) for parent, child in tree_edges]
    table = cascade_table(_edges(rows).sample(frac=1.0, random_state=1)).set_index("root_post_id")
    for root, (n, virality) in expected.items():
        assert table.loc[root, "size"] == n
        assert table.loc[root, "structural_virality"] == pytest.approx(virality)


def test_cascade_table_of_empty_edges_is_empty() -> None:
    table = cascade_table(EventLog().cascade_edges)
    assert table.empty
    assert list(table.columns) == ["root_post_id", "size", "depth", "max_breadth", "structural_virality", "first_step"]


# --- the hand-built run --------------------------------------------------------------------------


def hand_built_log(with_safety: bool = False) -> EventLog:
    """2 steps, agents a, b, c; authors a-e; every expected value below is worked out from these rows."""
    posts = pd.DataFrame(
        [
            ("p1", "a", "", 0, "sports", True, "image", "storytelling", None, -1, 0, 0, 0),
            ("p2", "b", "", 0, "politics", False, "none", "question", None, -1, 0, 0, 0),
            ("p3", "c", "", 0, "sports", False, "none", "question", None, -1, 0, 0, 0),
            ("p4", "d", "", 0, "tech", True, "video", "storytelling", None, -1, 0, 0, 0),
            ("p8", "e", "", 0, "tech", False, "none", "question", None, -1, 0, 0, 0),
            ("p5", "a", "", 0, "tech", False, "none", "storytelling", None, 0, 0, 0, 0),
            ("p6", "b", "", 0, "politics", False, "none", "question", "p1", 1, 0, 0, 0),
            ("p7", "c", "", 0, "sports", False, "none", "question", None, 1, 0, 0, 0),
        ],
        columns=list(POSTS_COLUMNS),
    )
    shown = [  # step, agent, post, position, in_network, author, topic, has_media, format, interest_similarity
        (0, "a", "p2", 0, True, "b", "politics", False, "question", 0.2),
        (0, "a", "p3", 1, False, "c", "sports", False, "question", 0.4),
        (0, "b", "p1", 0, True, "a", "sports", True, "storytelling", 0.6),
        (0, "b", "p3", 1, False, "c", "sports", False, "question", 0.8),
        (0, "b", "p4", 2, False, "d", "tech", True, "storytelling", 1.0),
        (1, "b", "p1", 0, True, "a", "sports", True, "storytelling", 0.1),
        (1, "b", "p5", 1, True, "a", "tech", False, "storytelling", 0.3),
        (1, "c", "p1", 0, True, "a", "sports", True, "storytelling", 0.5),
        (1, "c", "p2", 1, False, "b", "politics", False, "question", 0.7),
        (1, "c", "p5", 2, True, "a", "tech", False, "storytelling", 0.9),
    ]
    exposures = pd.DataFrame(
        [
            {
                "step": s,
                "agent_id": agent,
                "post_id": post,
                "position": pos,
                "base_score": 0.5,
                "final_score": 0.5,
                "in_network": inn,
                "source": "in_network" if inn else "out_of_network",
                "author_id": author,
                "topic": topic,
                "has_media": media,
                "format": fmt,
                "interest_similarity": sim,
            }
            for s, agent, post, pos, inn, author, topic, media, fmt, sim in shown
        ],
        columns=list(EXPOSURES_COLUMNS),
    )
    if with_safety:
        # Feed (0, a) was forced; feed (1, c) reports the component as 0; the rest lack it.
        exposures["comp_forced_by_safety"] = [1.0, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, 0.0, 0.0, 0.0]
    engagements = pd.DataFrame(
        [
            (0, "b", "p1", "like", None, True, "a", True, "storytelling"),
            (0, "b", "p1", "reshare", None, True, "a", True, "storytelling"),
            (0, "b", "p4", "like", None, False, "d", True, "storytelling"),
            (1, "c", "p1", "reshare", "b", True, "a", True, "storytelling"),
            (1, "b", "p1", "reply", None, True, "a", True, "storytelling"),
            (1, "c", "p2", "reshare", None, False, "b", False, "question"),
        ],
        columns=list(ENGAGEMENTS_COLUMNS),
    )
    follows = pd.DataFrame([(0, "b", "d", "p4"), (1, "c", "b", "p2")], columns=list(FOLLOWS_COLUMNS))
    cascade_edges = _edges([("p1", "a", "b", 0), ("p1", "b", "c", 1), ("p2", "b", "c", 1)])
    return EventLog(
        posts=posts, exposures=exposures, engagements=engagements, follows=follows, cascade_edges=cascade_edges
    )


def expected_summary() -> dict[str, float]:
    """Hand computation for hand_built_log().

    Feeds: (0,a) topics {politics, sports} authors {b, c}; (0,b) sports x2 + tech, authors a, c, d;
    (1,b) sports + tech, authors a, a; (1,c) sports, politics, tech, authors a, b, a.
    """
    return {
        "feed_topic_entropy": (1 + H_TWO_THIRDS + 1 + LOG3) / 4,
        "feed_author_entropy": (1 + LOG3 + 0 + H_TWO_THIRDS) / 4,
        "exposure_topic_entropy": -(0.2 * math.log2(0.2) + 0.5 * math.log2(0.5) + 0.3 * math.log2(0.3)),
        "inn_share": 6 / 10,
        "oon_share": 4 / 10,
        "inn_engagement_rate": 4 / 6,
        "oon_engagement_rate": 2 / 4,
        "engagement_rate": 6 / 10,
        "impressions_total": 10.0,
        "likes_total": 2.0,
        "reshares_total": 3.0,
        "replies_total": 1.0,
        "posts_total": 2.0,  # p5 and p7; p6 is a reply, p1-p4 and p8 are the starting corpus
        "cascade_count": 2.0,
        "cascade_size_mean": 2.5,
        "cascade_size_p99": 2.99,  # sizes (2, 3): 2 + 0.99 * (3 - 2)
        "cascade_size_max": 3.0,
        "cascade_depth_mean": 1.5,
        "cascade_depth_max": 2.0,
        "cascade_breadth_max": 1.0,
        "structural_virality_mean": (4 / 3 + 1.0) / 2,  # chain of 3 and a single edge
        "author_impression_gini": 0.44,  # impressions per author a..e = 5, 2, 2, 1, 0
        "feed_jaccard_mean": (1 / 4 + 2 / 3) / 2,  # step 0: {p2,p3} vs {p1,p3,p4}; step 1: {p1,p5} vs {p1,p2,p5}
        "interest_similarity_mean": 0.55,
        "media_engagement_lift": (5 / 4) / (1 / 6),
        # no agents with the log: the accounts it names, a-e; written during the run: a (p5), b (p6), c (p7)
        "author_top10_post_share": 1 / 3,
        "never_reshared_share": 3 / 5,  # shown originals p1-p5; p1 and p2 reshared
        "cascades_reaching_10_share": 0.0,  # sizes 3 (p1), 2 (p2), 1, 1, 1
        "cascades_reaching_100_share": 0.0,
        "large_cascade_structural_virality": math.nan,
    }


SUMMARY_METRICS = summary_metric_names()


@pytest.mark.parametrize("name", SUMMARY_METRICS)
def test_summarize_hand_built_log(name: str) -> None:
    """Every registered metric has its hand-computed value on the hand-built log (a new metric adds its own)."""
    summary = summarize(hand_built_log())
    assert name in expected_summary(), f"{name}: add its hand-computed value to expected_summary()"
    assert summary[name] == pytest.approx(expected_summary()[name], nan_ok=True)


def test_summarize_keys_and_safety_override_rate() -> None:
    plain = summarize(hand_built_log())
    assert list(plain) == list(SUMMARY_METRICS) == list(expected_summary())
    with_safety = summarize(hand_built_log(with_safety=True))
    # the safety metric applies; the political ones do not (no political column in this log)
    applies = [m.name for m in registered_metrics() if not m.optional or m.name == "safety_override_rate"]
    assert list(with_safety) == applies
    assert set(with_safety) - set(plain) == {"safety_override_rate"}
    assert with_safety["safety_override_rate"] == pytest.approx(1 / 4)


def test_summarize_survives_parquet_round_trip(tmp_path) -> None:
    log = hand_built_log()
    log.to_parquet(tmp_path)
    reloaded = summarize(EventLog.from_parquet(tmp_path))
    for name, value in expected_summary().items():
        assert reloaded[name] == pytest.approx(value, nan_ok=True), name


def test_summarize_empty_log() -> None:
    summary = summarize(EventLog())
    assert list(summary) == list(SUMMARY_METRICS)
    for name in (
        "impressions_total",
        "likes_total",
        "posts_total",
        "cascade_count",
        "cascade_size_p99",
        "structural_virality_mean",
        "author_impression_gini",
    ):
        assert summary[name] == 0.0, name
    for name in (
        "feed_topic_entropy",
        "exposure_topic_entropy",
        "inn_share",
        "oon_share",
        "engagement_rate",
        "feed_jaccard_mean",
        "interest_similarity_mean",
        "media_engagement_lift",
    ):
        assert math.isnan(summary[name]), name


def test_summarize_names_missing_table() -> None:
    with pytest.raises(ValueError, match="result.cascade_edges"):
        summarize(
            type(
                "Partial",
                (),
                {
                    "posts": pd.DataFrame(),
                    "exposures": pd.DataFrame(),
                    "engagements": pd.DataFrame(),
                    "follows": pd.DataFrame(),
                },
            )()
        )


def test_step_series_hand_built_log() -> None:
    series = step_series(hand_built_log())
    assert list(series.index) == [0, 1]
    assert series.index.name == "step"
    expected = pd.DataFrame(
        {
            "impressions": [5, 5],
            "engagements": [3, 3],
            "likes": [2, 0],
            "reshares": [1, 2],
            "replies": [0, 1],
            "inn_share": [2 / 5, 4 / 5],
            "feed_topic_entropy": [(1 + H_TWO_THIRDS) / 2, (1 + LOG3) / 2],
            "feed_author_entropy": [(1 + LOG3) / 2, (0 + H_TWO_THIRDS) / 2],
            "new_cascades": [1, 1],
            "new_posts": [1, 1],
            "new_follows": [1, 1],
        },
        index=pd.Index([0, 1], name="step"),
    )
    pd.testing.assert_frame_equal(series, expected, check_dtype=False)


def test_summary_and_step_series_share_one_run_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's job reads both from one RunTables: the feeds' entropies are computed once per label, and both
    give exactly what each gives from the event log alone."""
    from prism_experiments.metrics import run_tables

    log = hand_built_log()
    alone = summarize(log), step_series(log)
    computed: list[str] = []
    counting = run_tables.feed_entropies
    monkeypatch.setattr(
        run_tables, "feed_entropies", lambda exposures, label: computed.append(label) or counting(exposures, label)
    )
    tables = RunTables.of(log)
    assert RunTables.of(tables) is tables
    np.testing.assert_equal(summarize(tables), alone[0])  # NaN equal to NaN, everything else exactly
    pd.testing.assert_frame_equal(step_series(tables), alone[1])
    assert sorted(computed) == ["author_id", "topic"]


def test_step_series_includes_engagement_only_steps_and_fills_gaps() -> None:
    log = hand_built_log()
    extra = pd.DataFrame(
        [(3, "a", "p5", "like", None, False, "a", False, "storytelling")], columns=list(ENGAGEMENTS_COLUMNS)
    )
    log.engagements = pd.concat([log.engagements, extra], ignore_index=True)
    series = step_series(log)
    assert list(series.index) == [0, 1, 3]
    assert series.loc[3, "impressions"] == 0 and series.loc[3, "likes"] == 1
    assert math.isnan(series.loc[3, "inn_share"]) and math.isnan(series.loc[3, "feed_topic_entropy"])


def test_engagement_rate_by_format_hand_built_log() -> None:
    table = engagement_rate_by_format(hand_built_log()).set_index("format")
    assert sorted(table.index) == ["question", "storytelling"]
    assert table.loc["storytelling", "impressions"] == 6 and table.loc["storytelling", "engagements"] == 5
    assert table.loc["question", "impressions"] == 4 and table.loc["question", "engagements"] == 1
    assert table.loc["storytelling", "engagement_rate"] == pytest.approx(5 / 6)
    assert table.loc["question", "engagement_rate"] == pytest.approx(1 / 4)


# --- feed overlap ---------------------------------------------------------------------------------


def naive_step_jaccard(feeds: dict[str, set[str]]) -> float:
    pairs = list(itertools.combinations(sorted(feeds), 2))
    return sum(len(feeds[x] & feeds[y]) / len(feeds[x] | feeds[y]) for x, y in pairs) / len(pairs)


def random_exposures(seed: int, n_steps: int = 4, n_agents: int = 9, n_posts: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for step in range(n_steps):
        for agent in rng.choice(n_agents, size=int(rng.integers(1, n_agents + 1)), replace=False):
            # Replacement sampling leaves duplicates in a feed, which a set-based Jaccard must ignore.
            for post in rng.choice(n_posts, size=int(rng.integers(1, 8)), replace=True):
                rows.append({"step": step, "agent_id": f"agent{agent}", "post_id": f"post{post}"})
    return pd.DataFrame(rows)


def naive_feed_jaccard(exposures: pd.DataFrame) -> float:
    step_means = []
    for _, step_rows in exposures.groupby("step"):
        feeds = {agent: set(rows["post_id"]) for agent, rows in step_rows.groupby("agent_id")}
        if len(feeds) >= 2:
            step_means.append(naive_step_jaccard(feeds))
    return float(np.mean(step_means)) if step_means else float("nan")


@pytest.mark.parametrize("seed", range(8))
def test_feed_jaccard_mean_matches_naive_pairwise(seed: int) -> None:
    exposures = random_exposures(seed)
    assert feed_jaccard_mean(exposures) == pytest.approx(naive_feed_jaccard(exposures))


def test_feed_jaccard_mean_samples_feeds_when_a_step_has_too_many() -> None:
    rng = np.random.default_rng(11)
    feeds = {f"agent{i}": {f"post{p}" for p in rng.choice(12, size=4, replace=False)} for i in range(5)}
    exposures = pd.DataFrame(
        [{"step": 0, "agent_id": agent, "post_id": post} for agent, posts in feeds.items() for post in sorted(posts)]
    )
    sampled = feed_jaccard_mean(exposures, max_feeds_for_jaccard=4)
    subset_means = [naive_step_jaccard({a: feeds[a] for a in subset}) for subset in itertools.combinations(feeds, 4)]
    assert len({round(value, 12) for value in subset_means}) > 1  # the sample matters, so the check can fail
    assert any(sampled == pytest.approx(value) for value in subset_means)
    assert sampled == feed_jaccard_mean(exposures, max_feeds_for_jaccard=4)
    assert feed_jaccard_mean(exposures, max_feeds_for_jaccard=5) == pytest.approx(naive_step_jaccard(feeds))


def jaccard_over_id_columns(exposures: pd.DataFrame, max_feeds: int) -> float:
    """feed_jaccard_mean as first written: drop_duplicates and groupby over the id columns, feeds by (step, agent)."""
    incidence = exposures[["step", "agent_id", "post_id"]].drop_duplicates()
    feed_codes = incidence.groupby(["step", "agent_id"], sort=True).ngroup().to_numpy()
    post_codes, steps = pd.factorize(incidence["post_id"])[0], incidence["step"].to_numpy()
    order = np.argsort(feed_codes, kind="stable")
    feed_codes, post_codes, steps = feed_codes[order], post_codes[order], steps[order]
    means = []
    for step in np.unique(steps):
        here = steps == step
        feeds, feed_rows = np.unique(feed_codes[here], return_inverse=True)
        post_cols = np.unique(post_codes[here], return_inverse=True)[1]
        if feeds.size > max_feeds:
            chosen = np.zeros(feeds.size, dtype=bool)
            chosen[np.random.default_rng([0, int(step)]).choice(feeds.size, size=max_feeds, replace=False)] = True
            keep = chosen[feed_rows]
            feed_rows = np.cumsum(chosen)[feed_rows[keep]] - 1
            post_cols = np.unique(post_cols[keep], return_inverse=True)[1]
        if feeds.size >= 2:
            means.append(mean_pairwise_jaccard(feed_rows, post_cols))
    return float(np.mean(means))


@pytest.mark.parametrize("seed", range(4))
def test_feed_jaccard_mean_over_codes_gives_the_bits_of_the_version_over_ids(seed: int) -> None:
    exposures = random_exposures(seed, n_steps=5, n_agents=60, n_posts=80).sample(frac=1.0, random_state=seed)
    assert feed_jaccard_mean(exposures, max_feeds_for_jaccard=20) == jaccard_over_id_columns(exposures, 20)


def test_feed_jaccard_mean_edge_cases() -> None:
    identical = pd.DataFrame({"step": [0] * 6, "agent_id": list("aabbcc"), "post_id": ["x", "y"] * 3})
    assert feed_jaccard_mean(identical, max_feeds_for_jaccard=2) == pytest.approx(1.0)
    single_feed = pd.DataFrame({"step": [0, 0], "agent_id": ["a", "a"], "post_id": ["x", "y"]})
    assert math.isnan(feed_jaccard_mean(single_feed))
    with pytest.raises(ValueError, match="max_feeds_for_jaccard"):
        feed_jaccard_mean(identical, max_feeds_for_jaccard=1)


def test_calibration_moments_in_the_summary_by_hand() -> None:
    """A population of 10 agents: u00 writes 8 posts in the run, u01 two, the others nothing (the top 1 of 10 wrote
    8 of 10). Four shown originals: s0 is reshared by 99
    accounts straight from its author (a star of 100: virality 2 * 99 / 100), s1 by a chain of 9 (10 accounts),
    s2 and s3 never; s4 is never shown."""
    agents = [SimpleNamespace(id=f"u{i:02d}") for i in range(10)]
    written = [(f"s{i}", "u00") for i in range(8)] + [("s8", "u01"), ("s9", "u01")]
    posts = pd.DataFrame(
        [(post, author, "", 0, "tech", False, "none", "question", None, 0, 0, 0, 0) for post, author in written],
        columns=list(POSTS_COLUMNS),
    )
    exposures = pd.DataFrame(
        [
            {column: 0 for column in EXPOSURES_COLUMNS} | {"agent_id": "u05", "post_id": post, "in_network": True}
            for post in ("s0", "s1", "s2", "s3")
        ],
        columns=list(EXPOSURES_COLUMNS),
    )
    star = [("s0", "u00", f"v{i:02d}", 1) for i in range(99)]
    chain = [("s1", "u00" if i == 0 else f"w{i - 1}", f"w{i}", 1) for i in range(9)]
    engagements = pd.DataFrame(
        [(1, child, root, "reshare", None, True, "u00", False, "question") for root, _, child, _ in star + chain],
        columns=list(ENGAGEMENTS_COLUMNS),
    )
    tables = {
        "posts": posts,
        "exposures": exposures,
        "engagements": engagements,
        "follows": pd.DataFrame(columns=list(FOLLOWS_COLUMNS)),
        "cascade_edges": _edges(star + chain),
    }
    summary = summarize(SimpleNamespace(**tables, agents=agents))
    assert summary["author_top10_post_share"] == pytest.approx(8 / 10)
    assert summary["never_reshared_share"] == pytest.approx(2 / 4)
    assert summary["cascades_reaching_10_share"] == pytest.approx(2 / 4)
    assert summary["cascades_reaching_100_share"] == pytest.approx(1 / 4)
    assert summary["large_cascade_structural_virality"] == pytest.approx(2 * 99 / 100)
    # without the population, the share is over the 111 accounts the log names (u00, u01, u05 and the resharers):
    # the top 12 hold both writers
    alone = summarize(SimpleNamespace(**tables))
    assert alone["author_top10_post_share"] == pytest.approx(1.0)
    sizes_ten = summarize(SimpleNamespace(**tables | {"cascade_edges": _edges(chain)}, agents=agents))
    assert sizes_ten["cascades_reaching_100_share"] == 0.0
    assert math.isnan(sizes_ten["large_cascade_structural_virality"])
