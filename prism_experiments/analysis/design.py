"""Paired or unpaired: whether every condition ran the same seeds (common random numbers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

MIN_RUNS_PER_CONDITION = 5


@dataclass(frozen=True)
class Design:
    """The test family used, why, and what makes its results weaker than they look."""

    paired: bool
    seeds: tuple[int, ...]
    group_sizes: Mapping[str, int]
    reasons: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def name(self) -> str:
        return "paired (common random numbers)" if self.paired else "unpaired (independent groups)"

    @property
    def omnibus_test(self) -> str:
        return "Friedman" if self.paired else "Kruskal-Wallis"

    @property
    def pairwise_test(self) -> str:
        return "Wilcoxon signed-rank" if self.paired else "Mann-Whitney U"

    @property
    def effect_size(self) -> str:
        return "matched-pairs rank-biserial r" if self.paired else "Cliff's delta"


def missing_seeds(tidy: pd.DataFrame, conditions: Sequence[str]) -> dict[str, list[int]]:
    """Per condition, the seeds other conditions ran but it did not (only conditions lacking some)."""
    present = pd.crosstab(tidy["condition"], tidy["seed"]).reindex(index=list(conditions), fill_value=0) > 0
    lacking = {str(c): [int(s) for s in present.columns[~present.loc[c].to_numpy()]] for c in present.index}
    return {condition: seeds for condition, seeds in lacking.items() if seeds}


def detect_design(tidy: pd.DataFrame, conditions: Sequence[str], min_runs: int = MIN_RUNS_PER_CONDITION) -> Design:
    """Paired when every condition has exactly the same seeds; otherwise unpaired, with the reason.

    A seed missing from one condition makes the whole design unpaired (all runs are kept and
    tested as independent groups) rather than silently dropping that seed from every condition.
    """
    if tidy.duplicated(subset=["condition", "seed"]).any():
        raise ValueError("tidy: each (condition, seed) must appear once; drop duplicate runs first")
    sizes = tidy["condition"].value_counts().reindex(list(conditions), fill_value=0)
    group_sizes = {str(c): int(n) for c, n in sizes.items()}
    all_seeds = tuple(sorted(int(s) for s in tidy["seed"].unique()))
    lacking = missing_seeds(tidy, conditions)
    warnings: list[str] = []

    small = {c: n for c, n in group_sizes.items() if n < min_runs}
    if small:
        listing = "; ".join(f"{c} ({n})" for c, n in small.items())
        warnings.append(f"fewer than {min_runs} runs in condition(s): {listing}; p-values and CIs are unreliable")

    if not lacking:
        reasons = (f"every condition ran the same {len(all_seeds)} seeds, so runs are compared seed by seed",)
        return Design(True, all_seeds, group_sizes, reasons, tuple(warnings))

    listing = "; ".join(f"{c} lacks {', '.join(map(str, seeds))}" for c, seeds in lacking.items())
    reasons = (f"seeds differ between conditions ({listing}), so runs are compared as independent groups",)
    warnings.append(
        f"missing seeds break the pairing ({listing}); unpaired tests are used, which lose the power of "
        "common random numbers; re-run the missing seeds to restore the paired design"
    )
    if len(set(group_sizes.values())) > 1:
        warnings.append("unequal group sizes: " + ", ".join(f"{c} {n}" for c, n in group_sizes.items()))
    return Design(False, all_seeds, group_sizes, reasons, tuple(warnings))
