"""Comparing two sets of cascades at matched size (Juul & Ugander, PNAS 2021) next to the pooled comparison.

Structural properties of cascades (depth, structural virality) grow with size, so two processes that differ
only in how many people they reach differ in pooled means of those properties too. Juul & Ugander show that
"previously reported structural differences between diffusion paths of false and true news on Twitter disappear
when comparing only cascades of the same size". Matched here: exact size strata, each weighted by the smaller of
its two counts (as if each stratum were subsampled to equal numbers, 1:1), sizes present in one set only dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from prism_experiments.metrics._tables import require_columns

NAN = float("nan")


@dataclass(frozen=True)
class MatchedDifference:
    """mean A - mean B of a cascade property, pooled and at matched size, and how many cascades were matched."""

    pooled: float
    matched: float
    n_a: int
    n_b: int
    n_matched: int


def size_matched_difference(cascades_a: pd.DataFrame, cascades_b: pd.DataFrame, column: str) -> MatchedDifference:
    """Pooled and size-matched difference in `column` (e.g. structural_virality, depth) between two cascade tables.

    matched = sum_s w_s (mean_A(s) - mean_B(s)) / sum_s w_s with w_s = min(n_A(s), n_B(s)) over the sizes s both
    tables hold; NaN when no size is shared (or a table is empty).
    """
    for name, table in (("cascades_a", cascades_a), ("cascades_b", cascades_b)):
        require_columns(table, name, ["size", column])
    a = cascades_a[["size", column]].astype(float)
    b = cascades_b[["size", column]].astype(float)
    pooled = float(a[column].mean() - b[column].mean()) if len(a) and len(b) else NAN
    by_a = a.groupby("size")[column].agg(["mean", "size"])
    by_b = b.groupby("size")[column].agg(["mean", "size"])
    shared = by_a.join(by_b, lsuffix="_a", rsuffix="_b", how="inner")
    weights = np.minimum(shared["size_a"], shared["size_b"]).to_numpy(dtype=float)
    matched = (
        float(np.sum(weights * (shared["mean_a"] - shared["mean_b"]).to_numpy()) / weights.sum())
        if weights.sum() > 0
        else NAN
    )
    return MatchedDifference(pooled, matched, len(a), len(b), int(weights.sum()))
