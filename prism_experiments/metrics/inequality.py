"""Gini coefficient of a non-negative quantity, and of impressions per author."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from prism_experiments.metrics._tables import require_columns


def gini(values: Iterable[float]) -> float:
    """Gini coefficient of non-negative values; empty or all-zero -> 0.0.

    G = 2 * sum_i i * x_(i) / (n * sum x) - (n + 1) / n with x sorted ascending, i = 1..n
    (rank form of mean absolute difference / (2 * mean); Damgaard & Weiner 2000, Ecology 81(4)).
    One non-zero value among n gives (n - 1) / n.
    """
    array = np.asarray(values if hasattr(values, "__len__") else list(values), dtype=np.float64)
    x = np.sort(array.ravel())
    if x.size == 0:
        return 0.0
    if np.isnan(x).any():
        raise ValueError("values: must not contain NaN")
    if x[0] < 0:
        raise ValueError(f"values: must be non-negative, got minimum {x[0]}")
    total = x.sum()
    if total == 0:
        return 0.0
    n = x.size
    ranks = np.arange(1, n + 1, dtype=np.float64)
    return float(2.0 * (ranks * x).sum() / (n * total) - (n + 1) / n)


def author_impression_gini(posts: pd.DataFrame, exposures: pd.DataFrame) -> float:
    """Gini of impressions per author over every author in posts (and exposures), zeros included."""
    require_columns(posts, "posts", ["author_id"])
    require_columns(exposures, "exposures", ["author_id"])
    impressions = exposures.groupby("author_id").size()
    authors = pd.Index(posts["author_id"].dropna().unique()).union(impressions.index)
    return gini(impressions.reindex(authors, fill_value=0).to_numpy())
