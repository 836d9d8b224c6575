"""Robustness of a comparison across parameter sets: how often each pair's sign and significance agree.

Run the same experiment under several parameter sets (e.g. the best trials of a calibration study),
`prism-compare` each, and pass the `results.csv` files here:

    python -m prism_experiments.analysis.robustness runs/reports/a/*/results.csv runs/reports/b/*/results.csv

Pure: `robustness_table` takes one pairwise table per parameter set and returns the agreement table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

ROBUSTNESS_COLUMNS: tuple[str, ...] = (
    "metric", "condition_a", "condition_b", "n_sets", "n_higher", "n_lower", "n_significant",
    "sign_agreement", "significance_agreement", "consistent_significant", "mean_difference", "sets_missing",
)  # fmt: skip
KEYS = ["metric", "condition_a", "condition_b"]


def robustness_table(results: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Per metric and pair, over the parameter sets: counts of A > B, A < B and significant results.

    `sign_agreement` is the share of sets with the majority sign of A − B (a zero difference has
    none); `significance_agreement` the share agreeing with the majority verdict (significant or
    not); `consistent_significant` the share that are significant *and* have the majority sign,
    the robust finding. A pair missing from some sets is counted over the sets that have it and
    `sets_missing` names the others.
    """
    if not results:
        raise ValueError("results: need at least one comparison")
    frames = []
    for name, table in results.items():
        missing = [column for column in [*KEYS, "difference", "significant"] if column not in table.columns]
        if missing:
            raise ValueError(f"results[{name!r}]: not a results.csv table (missing {', '.join(missing)})")
        frames.append(table[[*KEYS, "difference", "significant"]].assign(parameter_set=name))
    pooled = pd.concat(frames, ignore_index=True)
    pooled["significant"] = pooled["significant"].astype(str).str.lower().isin({"true", "1"})
    rows = []
    names = list(results)
    for (metric, a, b), group in pooled.groupby(KEYS, sort=False):
        sign = np.sign(group["difference"].to_numpy(dtype=float))
        significant = group["significant"].to_numpy(dtype=bool)
        n = len(group)
        higher, lower = int((sign > 0).sum()), int((sign < 0).sum())
        majority = 1.0 if higher >= lower else -1.0
        n_significant = int(significant.sum())
        rows.append({
            "metric": metric, "condition_a": a, "condition_b": b, "n_sets": n,
            "n_higher": higher, "n_lower": lower, "n_significant": n_significant,
            "sign_agreement": max(higher, lower) / n,
            "significance_agreement": max(n_significant, n - n_significant) / n,
            "consistent_significant": float(np.sum(significant & (sign == majority))) / n,
            "mean_difference": float(group["difference"].mean()),
            "sets_missing": ", ".join(name for name in names if name not in set(group["parameter_set"])),
        })  # fmt: skip
    return pd.DataFrame(rows, columns=list(ROBUSTNESS_COLUMNS))


def metric_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per metric: mean sign and significance agreement over its pairs, and pairs significant in every set."""
    grouped = table.groupby("metric", sort=False)
    return pd.DataFrame({
        "pairs": grouped.size(),
        "sign_agreement": grouped["sign_agreement"].mean(),
        "significance_agreement": grouped["significance_agreement"].mean(),
        "pairs_significant_in_every_set": grouped.apply(
            lambda g: int((g["consistent_significant"] == 1.0).sum()), include_groups=False),
    }).reset_index()  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Read results.csv files (one per parameter set), print the per-metric summary, write the full table."""
    parser = argparse.ArgumentParser(
        prog="python -m prism_experiments.analysis.robustness",
        description="sign and significance agreement across comparisons",
    )
    parser.add_argument("results", nargs="+", type=Path, help="results.csv of each parameter set's comparison")
    parser.add_argument("--out", type=Path, default=Path("robustness.csv"), help="full table (default robustness.csv)")
    args = parser.parse_args(argv)
    try:
        tables = {str(path): pd.read_csv(path) for path in args.results}
        table = robustness_table(tables)
    except (OSError, ValueError) as error:
        print(f"robustness: error: {str(error).splitlines()[0]}", file=sys.stderr)
        return 2
    table.to_csv(args.out, index=False)
    print(metric_summary(table).to_string(index=False))
    print(f"full table: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
