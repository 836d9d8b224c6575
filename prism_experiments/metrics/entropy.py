"""Shannon entropy of label distributions, for one sequence or per group of a table."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

import numpy as np
import pandas as pd


def shannon_entropy(labels: Iterable[Hashable]) -> float:
    """Entropy in bits of the empirical distribution of `labels`; empty -> 0.0.

    H = -sum_k p_k log2 p_k (Shannon 1948). Missing labels (None/NaN) form one category.
    """
    series = labels if isinstance(labels, pd.Series) else pd.Series(list(labels), dtype=object)
    if series.empty:
        return 0.0
    counts = series.value_counts(dropna=False).to_numpy(dtype=np.float64)
    p = counts / counts.sum()
    return float((p * np.log2(1.0 / p)).sum())


def grouped_entropy(frame: pd.DataFrame, keys: list[str], label: str) -> pd.Series:
    """Entropy in bits of `label` within each group of `keys`, indexed by the keys (sorted).

    One groupby for all groups, so it scales to millions of rows; missing labels form one category.
    """
    if frame.empty:
        index = pd.MultiIndex.from_arrays([[] for _ in keys], names=keys)
        return pd.Series([], index=index, dtype=np.float64, name=f"{label}_entropy")
    counts = frame.groupby([*keys, label], dropna=False, sort=False).size()
    group_levels = list(range(len(keys)))
    totals = counts.groupby(level=group_levels, sort=False).transform("sum")
    p = (counts / totals).to_numpy(dtype=np.float64)
    terms = pd.Series(p * np.log2(1.0 / p), index=counts.index)
    entropy = terms.groupby(level=group_levels, sort=True).sum()
    entropy.index.names = keys
    return entropy.rename(f"{label}_entropy")
