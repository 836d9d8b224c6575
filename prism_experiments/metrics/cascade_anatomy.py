"""Cascade anatomy: how each reshare tree was built, broadcast or chain (Goel, Anderson, Hofman & Watts 2016).

Pure functions of a run's event tables and the accounts' follower counts: the depth of every reshare and how its
exposure came about, per cascade the root's share and the largest broadcast, and the follower-count distribution
the broadcasts draw on. Read in docs/validation.md ("Why large cascades are as viral as random trees").
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from prism_experiments.metrics._tables import as_bool, require_columns
from prism_experiments.metrics.cascades import cascade_table, edge_depths

#: how the resharer came to see the post (the engine's parent in the tree follows from it)
FOLLOWED_AUTHOR, FOLLOWEE_RESHARE, OUT_OF_NETWORK = "followed_author", "followee_reshare", "out_of_network"
EXPOSURE_PATHS: tuple[str, ...] = (FOLLOWED_AUTHOR, FOLLOWEE_RESHARE, OUT_OF_NETWORK)
#: a reshare with no matching engagement row (a table from elsewhere)
UNKNOWN_PATH = "unknown"
#: the percentiles `follower_distribution` reports: the median and the points published figures give (below)
FOLLOWER_PERCENTILES: tuple[float, ...] = (10.0, 25.0, 50.0, 75.0, 90.0, 96.0, 99.0, 99.9)
ANATOMY_COLUMNS: tuple[str, ...] = (
    "root_post_id",
    "root_author",
    "root_in_starting_corpus",
    "size",
    "depth",
    "structural_virality",
    "root_followers",
    "root_children",
    "root_or_children_share",
    "largest_broadcast",
    "largest_broadcast_share",
    *(f"{path}_share" for path in EXPOSURE_PATHS),
)


def reshare_paths(cascade_edges: pd.DataFrame, engagements: pd.DataFrame) -> pd.DataFrame:
    """Each cascade edge with its child's depth and the path of its reshare's exposure, in the edges' order.

    The path comes from the child's reshare of the root post in `engagements`: not in-network ->
    `out_of_network`; in-network through a followee's reshare (`via_agent_id` set) -> `followee_reshare`;
    otherwise in-network because the author is followed -> `followed_author`.
    """
    require_columns(cascade_edges, "cascade_edges", ("root_post_id", "parent_id", "child_id", "step"))
    require_columns(engagements, "engagements", ("agent_id", "post_id", "action", "via_agent_id", "in_network"))
    edges = cascade_edges.loc[:, ["root_post_id", "parent_id", "child_id", "step"]].reset_index(drop=True)
    edges["depth"] = edge_depths(
        edges["root_post_id"].to_numpy(), edges["parent_id"].to_numpy(), edges["child_id"].to_numpy()
    )
    reshares = engagements.loc[engagements["action"] == "reshare"].sort_values("step", kind="stable")
    # an account's first reshare of a post is the one that put it in the tree
    reshares = reshares.drop_duplicates(["post_id", "agent_id"])
    in_network = as_bool(reshares["in_network"]).to_numpy()
    via = reshares["via_agent_id"].notna().to_numpy()
    path = np.where(~in_network, OUT_OF_NETWORK, np.where(via, FOLLOWEE_RESHARE, FOLLOWED_AUTHOR))
    lookup = pd.Series(path, index=pd.MultiIndex.from_arrays([reshares["post_id"], reshares["agent_id"]]))
    keys = pd.MultiIndex.from_arrays([edges["root_post_id"], edges["child_id"]])
    edges["path"] = lookup.reindex(keys).fillna(UNKNOWN_PATH).to_numpy(dtype=object)
    return edges


def cascade_anatomy(paths: pd.DataFrame, posts: pd.DataFrame, followers: pd.Series) -> pd.DataFrame:
    """One row per cascade (`ANATOMY_COLUMNS`, by root_post_id) from `reshare_paths`' table.

    root_or_children_share = (1 + the root's children) / size: Goel et al.'s share of adoptions by "the root nodes
    themselves or the immediate followers of root nodes"; largest_broadcast = the most children of one node, and its
    share of the cascade's reshares (size - 1); root_in_starting_corpus: the root post was there before the run
    (created_step < 0); `followers` maps an account to its follower count.
    """
    require_columns(paths, "paths", ("root_post_id", "parent_id", "child_id", "step", "path"))
    require_columns(posts, "posts", ("post_id", "author_id", "created_step"))
    if paths.empty:
        return pd.DataFrame({column: pd.Series(dtype=object) for column in ANATOMY_COLUMNS})
    table = cascade_table(paths).set_index("root_post_id")
    roots = table.index
    by_id = posts.drop_duplicates("post_id").set_index("post_id")
    author = by_id["author_id"].reindex(roots)
    created = pd.to_numeric(by_id["created_step"]).reindex(roots)
    children = paths.groupby(["root_post_id", "parent_id"]).size()
    largest = children.groupby(level=0).max().reindex(roots)
    of_root = pd.Series(
        children.reindex(pd.MultiIndex.from_arrays([roots, author.to_numpy()])).fillna(0).to_numpy(), index=roots
    )
    reshares = table["size"] - 1
    shares = pd.crosstab(paths["root_post_id"], paths["path"], normalize="index").reindex(roots)
    out = pd.DataFrame(
        {
            "root_post_id": roots,
            "root_author": author.to_numpy(),
            "root_in_starting_corpus": (created < 0).to_numpy(),
            "size": table["size"].to_numpy(),
            "depth": table["depth"].to_numpy(),
            "structural_virality": table["structural_virality"].to_numpy(),
            "root_followers": followers.reindex(author.to_numpy()).to_numpy(dtype=float),
            "root_children": of_root.to_numpy(dtype=np.int64),
            "root_or_children_share": ((1 + of_root) / table["size"]).to_numpy(),
            "largest_broadcast": largest.to_numpy(dtype=np.int64),
            "largest_broadcast_share": (largest / reshares).to_numpy(),
        }
    )
    for path in EXPOSURE_PATHS:
        column = shares[path] if path in shares.columns else pd.Series(0.0, index=roots)
        out[f"{path}_share"] = column.to_numpy(dtype=float)
    return out.reset_index(drop=True)


def size_band(size: pd.Series | np.ndarray, edges: Sequence[int] = (10, 100)) -> np.ndarray:
    """Label each cascade size with its band: "<10", "10-99", ">=100" for the default edges."""
    sizes = np.asarray(size)
    labels = [f"<{edges[0]}", *(f"{lo}-{hi - 1}" for lo, hi in itertools.pairwise(edges)), f">={edges[-1]}"]
    return np.asarray(labels, dtype=object)[np.searchsorted(np.asarray(edges), sizes, side="right")]


def anatomy_by_band(anatomy: pd.DataFrame, edges: Sequence[int] = (10, 100)) -> pd.DataFrame:
    """Per size band: cascades, mean size and virality, the share rooted in the starting corpus, mean root share,
    medians of root followers and largest broadcast, mean largest-broadcast share, and the mean share of each
    exposure path (means over cascades)."""
    require_columns(anatomy, "anatomy", ANATOMY_COLUMNS)
    band = pd.Series(size_band(anatomy["size"], edges), index=anatomy.index, name="band")
    grouped = anatomy.groupby(band, sort=False)
    out = pd.DataFrame(
        {
            "cascades": grouped.size(),
            "size_mean": grouped["size"].mean(),
            "structural_virality_mean": grouped["structural_virality"].mean(),
            "root_in_starting_corpus_share": grouped["root_in_starting_corpus"].mean(),
            "root_or_children_share_mean": grouped["root_or_children_share"].mean(),
            "root_followers_median": grouped["root_followers"].median(),
            "largest_broadcast_median": grouped["largest_broadcast"].median(),
            "largest_broadcast_share_mean": grouped["largest_broadcast_share"].mean(),
            **{f"{path}_share_mean": grouped[f"{path}_share"].mean() for path in EXPOSURE_PATHS},
        }
    )
    order = [label for label in size_band(np.asarray([1, *edges]), edges) if label in out.index]
    return out.loc[order]


def path_depths(paths: pd.DataFrame, max_depth: int = 8) -> pd.DataFrame:
    """Reshares by exposure path (rows) and depth (columns 1 .. max_depth, the last one "max_depth or deeper")."""
    require_columns(paths, "paths", ("depth", "path"))
    depth = np.minimum(paths["depth"].to_numpy(dtype=np.int64), max_depth)
    table = pd.crosstab(pd.Series(paths["path"].to_numpy(), name="path"), pd.Series(depth, name="depth"))
    rows = [path for path in (*EXPOSURE_PATHS, UNKNOWN_PATH) if path in table.index or path in EXPOSURE_PATHS]
    return table.reindex(index=rows, columns=range(1, max_depth + 1), fill_value=0)


def hill_tail_exponent(values: np.ndarray, k: int) -> float:
    """Hill's (1975) estimator of the tail exponent a of P(X > x) ~ x^-a over the k largest values:
    1 / mean(ln(x_(i) / x_(k+1))), x sorted descending (a density exponent is a + 1)."""
    x = np.sort(np.asarray(values, dtype=float))[::-1]
    if not 1 <= k < x.size or x[k] <= 0:
        raise ValueError(f"k: needs 1 <= k < {x.size} values and a positive (k+1)-th largest value")
    return float(1.0 / np.mean(np.log(x[:k] / x[k])))


def follower_distribution(followers: np.ndarray, tail_share: float = 0.01) -> dict[str, float]:
    """Mean, percentiles (`FOLLOWER_PERCENTILES`), max, share with none, the ratios p96/p50 and p99/p50, and the
    Hill tail exponent over the top `tail_share` of accounts."""
    counts = np.asarray(followers, dtype=float)
    if counts.size < 2:
        raise ValueError("followers: needs at least two accounts")
    levels = np.percentile(counts, FOLLOWER_PERCENTILES)
    out = {"accounts": float(counts.size), "mean": float(counts.mean())}
    out.update({f"p{q:g}": float(v) for q, v in zip(FOLLOWER_PERCENTILES, levels)})
    median = out["p50"]
    out.update(
        {
            "max": float(counts.max()),
            "zero_share": float(np.mean(counts == 0)),
            "p96_over_p50": out["p96"] / median if median > 0 else float("nan"),
            "p99_over_p50": out["p99"] / median if median > 0 else float("nan"),
            "hill_tail_exponent": hill_tail_exponent(counts, max(1, round(tail_share * counts.size))),
        }
    )
    return out


def top_decile_median_ratio(followers: np.ndarray, by: np.ndarray) -> float:
    """Median followers of the top tenth of accounts by `by` ÷ that of the other nine tenths (Pew Research Center
    2019 compares the top 10% of users by tweets with the bottom 90% this way); inf when only the top tenth's
    median is above 0."""
    counts, key = np.asarray(followers, dtype=float), np.asarray(by, dtype=float)
    if counts.shape != key.shape or counts.size < 10:
        raise ValueError("followers, by: need the same length, at least 10 accounts")
    top = np.zeros(counts.size, dtype=bool)
    top[np.argsort(-key, kind="stable")[: counts.size // 10]] = True
    rest, above = float(np.median(counts[~top])), float(np.median(counts[top]))
    if rest > 0:
        return above / rest
    return float("inf") if above > 0 else float("nan")  # most accounts without a follower: unbounded
