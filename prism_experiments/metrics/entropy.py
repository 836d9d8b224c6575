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


def sorted_group_codes(frame: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, np.ndarray, pd.MultiIndex]:
    """Each row's group of `keys` as an int64 code that sorts as the keys do, the groups' codes (sorted), and the
    groups' keys in that order.

    The codes are mixed-radix over each key's sorted factorisation (missing keys form one group, as in a
    `groupby(dropna=False)`), so what follows works on integers, not on the id strings.
    """
    codes = np.zeros(len(frame), dtype=np.int64)
    levels: list[pd.Index] = []
    for key in keys:
        key_codes, uniques = pd.factorize(frame[key], sort=True, use_na_sentinel=False)
        codes *= len(uniques)
        codes += key_codes
        levels.append(pd.Index(uniques))
    groups = np.unique(codes)
    level_codes: list[np.ndarray] = []
    rest = groups
    for level in reversed(levels):
        rest, code = np.divmod(rest, len(level))
        level_codes.insert(0, code)
    return codes, groups, pd.MultiIndex(levels=levels, codes=level_codes, names=keys, verify_integrity=False)


def grouped_entropy(frame: pd.DataFrame, keys: list[str], label: str) -> pd.Series:
    """Entropy in bits of `label` within each group of `keys`, indexed by the keys (sorted).

    Over integer codes, so it scales to tens of millions of rows (about 40 bytes a row at its peak); missing labels
    form one category. A group's terms are summed in the order its labels first appear, as pandas' grouped sum
    over the (keys, label) counts would.
    """
    if frame.empty:
        index = pd.MultiIndex.from_arrays([[] for _ in keys], names=keys)
        return pd.Series([], index=index, dtype=np.float64, name=f"{label}_entropy")
    group_codes, groups, group_index = sorted_group_codes(frame, keys)
    label_codes, labels = pd.factorize(frame[label], use_na_sentinel=False)
    # each (group, label) pair once, numbered in its order of first appearance, with its count
    pair_codes, pairs = pd.factorize(group_codes * len(labels) + label_codes)
    del group_codes, label_codes
    counts = np.bincount(pair_codes, minlength=len(pairs))
    del pair_codes
    pair_groups = np.searchsorted(groups, pairs // len(labels))  # the group's rank in sorted order
    totals = np.bincount(pair_groups, weights=counts).astype(np.int64)[pair_groups]
    p = counts / totals
    # pandas' grouped sum (compensated, in the terms' order): the bits of a groupby over the ids
    entropy = pd.Series(p * np.log2(1.0 / p)).groupby(pair_groups, sort=True).sum()
    return pd.Series(entropy.to_numpy(), index=group_index, name=f"{label}_entropy")
