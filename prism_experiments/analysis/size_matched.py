"""`prism-compare --size-matched`: each pair of conditions' cascade structure compared pooled and at matched size
(Juul & Ugander, PNAS 2021; metrics/size_matching.py), and where the two comparisons disagree.

Per pair and seed (paired design): the difference of the pair's mean structural virality and mean depth over
all their cascades (pooled) and within cascades of the same size (matched). Each is tested over seeds with the
report's paired Wilcoxon test against 0; the section's tests form one Holm family. They disagree when one is
significant and the other is not, or both are with opposite signs: the pooled difference is then (partly) a
difference in how large the cascades grew.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from mlflow.exceptions import MlflowException

from prism_experiments.analysis.compare import ComparisonSettings
from prism_experiments.analysis.run_tables import RunTables
from prism_experiments.analysis.stats import bootstrap_mean_ci, holm_adjust, rng_for, wilcoxon_test
from prism_experiments.metrics.size_matching import size_matched_difference

PROPERTIES: tuple[str, ...] = ("structural_virality", "depth")
SIZE_MATCHED_COLUMNS: tuple[str, ...] = (
    "property", "condition_a", "condition_b", "n_seeds", "pooled", "pooled_ci_low", "pooled_ci_high", "pooled_p",
    "pooled_p_holm", "matched", "matched_ci_low", "matched_ci_high", "matched_p", "matched_p_holm", "disagree",
)  # fmt: skip


def load_cascade_tables(tables: RunTables, run_ids: Sequence[str]) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """Each run's cascade table (size, depth, structural_virality), and a warning for runs without one."""
    loaded, failed = {}, []
    for run_id in run_ids:
        try:
            loaded[run_id] = tables.table(run_id, "cascades", ("size", *PROPERTIES))
        except (MlflowException, OSError, KeyError):
            failed.append(run_id)
    warnings = [f"size-matched: no readable tables/cascades.parquet for {len(failed)} run(s): {', '.join(failed)}"]
    return loaded, warnings if failed else []


def size_matched_comparison(
    cascades: Mapping[str, pd.DataFrame], tidy: pd.DataFrame, conditions: Sequence[str], settings: ComparisonSettings
) -> pd.DataFrame:
    """SIZE_MATCHED_COLUMNS per property and pair of conditions, over the seeds where both ran and both have
    cascades of a shared size."""
    runs = tidy.set_index(["condition", "seed"])["run_id"]
    rows = []
    for prop in PROPERTIES:
        for a, b in combinations(conditions, 2):
            pooled, matched = [], []
            for seed in sorted(
                set(tidy.loc[tidy["condition"] == a, "seed"]) & set(tidy.loc[tidy["condition"] == b, "seed"])
            ):
                run_a, run_b = runs.get((a, seed)), runs.get((b, seed))
                if run_a not in cascades or run_b not in cascades:
                    continue
                difference = size_matched_difference(cascades[run_a], cascades[run_b], prop)
                if np.isfinite(difference.pooled) and np.isfinite(difference.matched):
                    pooled.append(difference.pooled)
                    matched.append(difference.matched)
            tested = {
                name: tested_against_zero(name, values, settings, "size-matched", name, prop, a, b)
                for name, values in (("pooled", pooled), ("matched", matched))
            }
            rows.append({"property": prop, "condition_a": a, "condition_b": b, "n_seeds": len(pooled),
                         **tested["pooled"], **tested["matched"]})  # fmt: skip
    table = pd.DataFrame(rows, columns=[c for c in SIZE_MATCHED_COLUMNS if not c.endswith(("_p_holm", "disagree"))])
    adjusted = holm_adjust(np.concatenate([table["pooled_p"].to_numpy(float), table["matched_p"].to_numpy(float)]))
    table["pooled_p_holm"], table["matched_p_holm"] = np.split(adjusted, 2) if len(table) else ([], [])
    significant_p = table["pooled_p_holm"] < settings.alpha
    significant_m = table["matched_p_holm"] < settings.alpha
    opposite = np.sign(table["pooled"]) != np.sign(table["matched"])
    table["disagree"] = (significant_p != significant_m) | (significant_p & significant_m & opposite)
    return table.reindex(columns=list(SIZE_MATCHED_COLUMNS))


def tested_against_zero(name: str, values: list[float], settings: ComparisonSettings, *keys: str) -> dict[str, float]:
    """Mean of `values` (per-seed differences), its bootstrap CI (resampled with the stream of `keys`) and the
    Wilcoxon p against 0, as columns `name`, `name`_ci_low, `name`_ci_high, `name`_p."""
    x = np.asarray(values, dtype=float)
    ci = bootstrap_mean_ci(x, rng_for(settings.bootstrap_seed, *keys), settings.confidence, settings.n_resamples)
    p = wilcoxon_test(x, np.zeros(x.size)).pvalue if x.size else np.nan
    return {name: ci.estimate, f"{name}_ci_low": ci.low, f"{name}_ci_high": ci.high, f"{name}_p": p}


def disagreements(table: pd.DataFrame) -> list[str]:
    """One line per pair and property where the pooled and size-matched comparisons disagree."""
    return [
        f"{r.property}: {r.condition_a} − {r.condition_b} pooled {r.pooled:+.3g} (p_holm {r.pooled_p_holm:.3g}) but "
        f"{r.matched:+.3g} at matched size (p_holm {r.matched_p_holm:.3g})"
        for r in table.loc[table["disagree"].astype(bool)].itertuples()
    ]
