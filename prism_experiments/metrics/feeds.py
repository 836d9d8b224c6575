"""Per-feed metrics: topic/author entropy, overlap between agents' feeds, safety overrides.

A feed is the set of exposure rows sharing one (step, agent_id).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse

from prism_experiments.domain import FEED_KEYS
from prism_experiments.metrics._tables import require_columns
from prism_experiments.metrics.entropy import grouped_entropy

DEFAULT_MAX_FEEDS_FOR_JACCARD = 2000
SAFETY_COLUMN = "comp_forced_by_safety"


def feed_entropies(exposures: pd.DataFrame, label: str) -> pd.Series:
    """Entropy in bits of `label` (topic, author_id) within each feed, indexed by (step, agent_id)."""
    require_columns(exposures, "exposures", [*FEED_KEYS, label])
    return grouped_entropy(exposures, list(FEED_KEYS), label)


def mean_over_feeds(entropies: pd.Series) -> float:
    """The mean of per-feed values (`feed_entropies`); NaN when no feed was served."""
    return float(entropies.mean()) if len(entropies) else float("nan")


def mean_pairwise_jaccard(feed_rows: np.ndarray, post_cols: np.ndarray) -> float:
    """Mean Jaccard similarity over all pairs of distinct feeds, from (feed, post) incidence pairs.

    |A ∩ B| for every pair comes from the sparse product M M^T of the binary feed x post matrix;
    pairs with no common post contribute 0, so only non-zeros of the upper triangle are visited.
    """
    n_feeds = int(feed_rows.max()) + 1
    incidence = sparse.csr_array(
        (np.ones(feed_rows.size, dtype=np.int64), (feed_rows, post_cols)),
        shape=(n_feeds, int(post_cols.max()) + 1),
    )
    feed_sizes = np.bincount(feed_rows, minlength=n_feeds)
    overlap = (incidence @ incidence.T).tocoo()
    upper = overlap.row < overlap.col
    rows, cols = overlap.row[upper], overlap.col[upper]
    shared = overlap.data[upper].astype(np.float64)
    jaccard = shared / (feed_sizes[rows] + feed_sizes[cols] - shared)
    return float(jaccard.sum() / (n_feeds * (n_feeds - 1) / 2))


def feed_jaccard_mean(
    exposures: pd.DataFrame,
    *,
    max_feeds_for_jaccard: int = DEFAULT_MAX_FEEDS_FOR_JACCARD,
    seed: int = 0,
) -> float:
    """Mean pairwise Jaccard similarity of the post-id sets of feeds served in the same step.

    Averaged over steps with >= 2 feeds (NaN if none). A step with more than
    `max_feeds_for_jaccard` feeds uses a random sample of that many feeds drawn from
    numpy.random.default_rng([seed, step]), so the sample depends only on (seed, step).
    """
    if max_feeds_for_jaccard < 2:
        raise ValueError(f"max_feeds_for_jaccard: must be an integer >= 2, got {max_feeds_for_jaccard}")
    if seed < 0:
        raise ValueError(f"seed: must be a non-negative integer, got {seed}")
    require_columns(exposures, "exposures", [*FEED_KEYS, "post_id"])
    if exposures.empty:
        return float("nan")
    # integer codes, not the id strings: agents numbered in their sorted order (the order of the feeds), posts in
    # their order of first appearance; each step's rows are then taken in their table order
    steps = pd.to_numeric(exposures["step"]).to_numpy()
    agent_codes = pd.factorize(exposures["agent_id"], sort=True)[0]
    post_codes = pd.factorize(exposures["post_id"])[0]
    n_posts = int(post_codes.max()) + 1
    by_step = np.argsort(steps, kind="stable")
    step_starts = np.flatnonzero(np.diff(steps[by_step], prepend=np.nan) != 0)
    step_ends = np.append(step_starts[1:], steps.size)

    step_means: list[float] = []
    for start, end in zip(step_starts, step_ends):
        rows = by_step[start:end]
        feeds, posts = agent_codes[rows], post_codes[rows]
        first_shown = np.sort(np.unique(feeds * n_posts + posts, return_index=True)[1])  # a post twice: once
        feeds, posts = feeds[first_shown], posts[first_shown]
        by_feed = np.argsort(feeds, kind="stable")
        feeds_here, feed_rows = np.unique(feeds[by_feed], return_inverse=True)
        if feeds_here.size < 2:
            continue
        post_cols = np.unique(posts[by_feed], return_inverse=True)[1]
        if feeds_here.size > max_feeds_for_jaccard:
            rng = np.random.default_rng([seed, int(steps[rows[0]]) % 2**32])
            chosen = np.zeros(feeds_here.size, dtype=bool)
            chosen[rng.choice(feeds_here.size, size=max_feeds_for_jaccard, replace=False)] = True
            keep = chosen[feed_rows]
            feed_rows = np.cumsum(chosen)[feed_rows[keep]] - 1
            post_cols = np.unique(post_cols[keep], return_inverse=True)[1]
        step_means.append(mean_pairwise_jaccard(feed_rows, post_cols))
    return float(np.mean(step_means)) if step_means else float("nan")


def safety_override_rate(exposures: pd.DataFrame) -> float:
    """Share of feeds in which any row has comp_forced_by_safety == 1 (REQ-POOLED-3); NaN if no feeds."""
    require_columns(exposures, "exposures", [*FEED_KEYS, SAFETY_COLUMN])
    if exposures.empty:
        return float("nan")
    forced = pd.to_numeric(exposures[SAFETY_COLUMN]).eq(1)
    return float(forced.groupby([exposures[key] for key in FEED_KEYS]).any().mean())
