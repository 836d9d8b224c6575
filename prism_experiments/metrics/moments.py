"""Moments for calibration against published platform figures: authorship concentration and cascade shape; and
the starting follow graph's moments (`network/edge_stats.py`), targets when fitting the generator to a loaded graph.

Pure functions of the event log. The authorship and cascade-shape moments are run-summary metrics
(`summary_metrics/calibration_moments.py`), so every run logs them; the calibration adds the graph's moments
(`summary.calibration_moments`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from prism_experiments.agents.social_agent import SocialAgent
from prism_experiments.metrics._tables import as_int, event_table, require_columns
from prism_experiments.metrics.cascade_anatomy import top_decile_median_ratio
from prism_experiments.metrics.cascades import cascade_table
from prism_experiments.network.edge_stats import GRAPH_MOMENTS, agents_edge_arrays

NAN = float("nan")
#: a "large" cascade, whose structural virality is compared (Goel et al. 2016 study cascades of >= 100 adopters)
LARGE_CASCADE_SIZE = 100
#: the starting graph's median followers of the top tenth of agents by post rate / the other nine tenths' (Pew
#: Research Center 2019: 387 / 19 between the top 10% of U.S. adult users by tweets and the bottom 90%)
POSTER_FOLLOWER_RATIO = "graph_top_poster_follower_ratio"
#: the moments the calibration adds to the run summary (the others are summary metrics)
EXTRA_MOMENTS: tuple[str, ...] = (*GRAPH_MOMENTS, POSTER_FOLLOWER_RATIO)


def top_share(values: Iterable[float], fraction: float = 0.1) -> float:
    """Share of the total held by the top `fraction` of units (ceil(fraction * n) largest); NaN if the total is 0."""
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"fraction: must be in (0, 1], got {fraction}")
    x = np.sort(np.asarray(list(values), dtype=np.float64))[::-1]
    if x.size and x[-1] < 0:
        raise ValueError(f"values: must be non-negative, got minimum {x[-1]}")
    total = x.sum()
    if x.size == 0 or total == 0:
        return NAN
    k = int(np.ceil(fraction * x.size - 1e-9))
    return float(x[:k].sum() / total)


def author_top_share(posts: pd.DataFrame, author_ids: Iterable[str], fraction: float = 0.1) -> float:
    """Share of the posts and replies written during the run (created_step >= 0) by the top `fraction` of
    `author_ids` (every agent, those who wrote nothing included, as in Pew 2019's user sample)."""
    require_columns(posts, "posts", ["author_id", "created_step"])
    written = posts.loc[as_int(posts["created_step"]) >= 0, "author_id"].value_counts()
    ids = pd.Index(list(author_ids))
    return top_share(written.reindex(ids, fill_value=0).to_numpy(), fraction)


def never_reshared_share(posts: pd.DataFrame, exposures: pd.DataFrame, engagements: pd.DataFrame) -> float:
    """Among original posts (not replies) shown at least once, the share never reshared: the cascades of size 1.

    A post nobody was shown cannot spread in any model, so unseen posts are left out of the denominator.
    """
    require_columns(posts, "posts", ["post_id", "parent_id"])
    require_columns(exposures, "exposures", ["post_id"])
    require_columns(engagements, "engagements", ["post_id", "action"])
    originals = set(posts.loc[posts["parent_id"].isna(), "post_id"])
    shown = set(exposures["post_id"]) & originals
    if not shown:
        return NAN
    reshared = set(engagements.loc[engagements["action"] == "reshare", "post_id"]) & shown
    return 1.0 - len(reshared) / len(shown)


def shown_original_cascade_sizes(posts: pd.DataFrame, exposures: pd.DataFrame, cascades: pd.DataFrame) -> np.ndarray:
    """The cascade size (accounts, author included) of each original post shown at least once: 1 if never
    reshared, else its tree's size from `cascade_table`."""
    require_columns(posts, "posts", ["post_id", "parent_id"])
    require_columns(exposures, "exposures", ["post_id"])
    originals = set(posts.loc[posts["parent_id"].isna(), "post_id"])
    shown = sorted(set(exposures["post_id"]) & originals)
    sizes = pd.Series(cascades["size"].to_numpy(), index=cascades["root_post_id"].to_numpy())
    return sizes.reindex(shown, fill_value=1).to_numpy(dtype=np.int64)


def result_cascade_sizes(result: object) -> np.ndarray:
    """`shown_original_cascade_sizes` of a run result (its event log)."""
    cascades = cascade_table(event_table(result, "cascade_edges"))
    return shown_original_cascade_sizes(event_table(result, "posts"), event_table(result, "exposures"), cascades)


def share_reaching(sizes: np.ndarray, accounts: int) -> float:
    """Share of cascades of at least `accounts` accounts; NaN with no cascade: one point of the size CCDF."""
    return float(np.mean(sizes >= accounts)) if sizes.size else NAN


def large_cascade_virality(cascades: pd.DataFrame, min_size: int = LARGE_CASCADE_SIZE) -> float:
    """Mean structural virality of the cascades of at least `min_size` accounts; NaN when there is none."""
    large = cascades.loc[cascades["size"] >= min_size, "structural_virality"]
    return float(large.mean()) if len(large) else NAN


def poster_follower_ratio(agents: Sequence[SocialAgent]) -> float:
    """`top_decile_median_ratio` of the agents' followers in their `following` sets, by post rate; NaN for fewer
    than 10 agents."""
    n, _, followee = agents_edge_arrays(agents)
    if n < 10:
        return NAN
    followers = np.bincount(followee, minlength=n).astype(float)
    return top_decile_median_ratio(followers, np.array([agent.post_rate for agent in agents]))
