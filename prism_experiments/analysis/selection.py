"""From all simulation runs to the compared ones: exclusions, conditions, metrics, one tidy table."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from prism_experiments.analysis.conditions import ordered_conditions, resolve_param_keys, varying_params
from prism_experiments.analysis.errors import AnalysisInputError
from prism_experiments.analysis.runs import FINISHED, SEED_PARAM, RunTable
from prism_experiments.metrics.registry import optional_metric_names, primary_metric_names
from prism_experiments.tracking.labels import condition_labels, short_names
from prism_experiments.tracking.tags import EMPTY_TAG, KIND_TAG, SEED_TAG, SIMULATION_KIND

EXCLUDED_COLUMNS: tuple[str, ...] = ("run_id", "status", "seed", "condition", "reason")


@dataclass(frozen=True)
class Selection:
    """The compared runs as `tidy` (run_id, seed, sweep_id, start_time, condition, condition keys, metrics)."""

    tidy: pd.DataFrame
    conditions: tuple[str, ...]
    condition_keys: tuple[str, ...]
    short_names: Mapping[str, str]
    seed_tracking_keys: tuple[str, ...]
    metrics: tuple[str, ...]
    excluded: pd.DataFrame
    sweep_ids: tuple[str, ...]
    warnings: tuple[str, ...]
    #: `<model>: <verdict>` of each model the compared runs' LLM agents asked (docs/llm.md, "Fitness")
    llm_checks: tuple[str, ...] = ()


def choose_metrics(requested: Sequence[str] | None, available: Sequence[str]) -> tuple[list[str], list[str]]:
    """(metrics, warnings): the requested ones (each must exist) or the default ones that were logged."""
    if requested:
        unknown = [name for name in requested if name not in available]
        if unknown:
            raise AnalysisInputError(
                f"metrics: {', '.join(unknown)} not logged by any selected run; allowed values: {', '.join(available)}"
            )
        return list(dict.fromkeys(requested)), []
    default = primary_metric_names()  # the primary outcome metrics (metrics/registry.py)
    chosen = [name for name in default if name in available]
    if not chosen:
        raise AnalysisInputError(
            f"metrics: none of the default metrics were logged; pass --metrics, one of: {', '.join(available)}"
        )
    # an optional metric (the political ones) is absent from every run it does not apply to: not worth a warning
    optional = optional_metric_names()
    missing = [name for name in default if name not in available and name not in optional]
    warnings = [f"default metrics not logged by any run, skipped: {', '.join(missing)}"] if missing else []
    return chosen, warnings


#: how an empty run's exclusion reason starts (REQ-FAULT-2: no impression or no engagement, tag prism.empty)
EMPTY_REASON = "empty"


def empty_runs_line(excluded: pd.DataFrame) -> str | None:
    """The one line that says how many runs were left out for having no metric, and the first one's reason."""
    reasons = [str(reason) for reason in excluded["reason"] if str(reason).startswith(f"{EMPTY_REASON}: ")]
    if not reasons:
        return None
    example = reasons[0].removeprefix(f"{EMPTY_REASON}: ")
    return (
        f"{len(reasons)} empty run(s) left out: no impression or no engagement, so no metric to compare "
        f"(e.g. {example}; tag {EMPTY_TAG})"
    )


def exclusion_reasons(table: RunTable, metrics: Sequence[str]) -> pd.Series:
    """Why each run cannot be compared ("" when it can): not FINISHED, no seed, empty (no impression or no
    engagement, REQ-FAULT-2), or no compared metric."""
    info = table.info
    status_reason = ("status " + info["status"].astype(str)).where(info["status"] != FINISHED, "")
    still_going = info["status"].isin(["RUNNING", "SCHEDULED"])
    status_reason = status_reason.where(~still_going, status_reason + " (incomplete)")
    no_seed = info["seed"].isna()
    no_metrics = table.metrics.reindex(columns=list(metrics)).isna().all(axis=1)
    reasons = status_reason.copy()
    no_seed_reason = f"no seed (tag {SEED_TAG} or param {SEED_PARAM})"
    reasons = reasons.where(reasons != "", no_seed.map({True: no_seed_reason, False: ""}))
    if "empty" in info:  # a FINISHED run whose rates are 0/0 would otherwise enter the means as NaN or a false 0
        empty = info["empty"].map(lambda why: f"{EMPTY_REASON}: {why}" if isinstance(why, str) and why else "")
        reasons = reasons.where(reasons != "", empty)
    reasons = reasons.where(
        reasons != "", no_metrics.map({True: "incomplete: none of the compared metrics logged", False: ""})
    )
    return reasons.astype(object)


def select_runs(table: RunTable, by: Sequence[str] | None = None, metrics: Sequence[str] | None = None) -> Selection:
    """The runs to compare and why the others are left out; AnalysisInputError if fewer than two conditions."""
    if table.info.empty:
        raise AnalysisInputError(f"runs: no simulation runs found (tag {KIND_TAG} = {SIMULATION_KIND})")
    statuses = table.info["status"].astype(str)
    if not (statuses == FINISHED).any():
        counts = ", ".join(f"{n} {status}" for status, n in statuses.value_counts().sort_index().items())
        raise AnalysisInputError(f"runs: none of the {len(statuses)} simulation runs is FINISHED ({counts})")
    chosen_metrics, warnings = choose_metrics(metrics, [str(name) for name in table.metrics.columns])
    reasons = exclusion_reasons(table, chosen_metrics)
    keep = reasons == ""
    if not keep.any():
        n_empty = int(reasons.astype(str).str.startswith(f"{EMPTY_REASON}: ").sum())
        empties = f" ({n_empty} empty: no impression or no engagement, tag {EMPTY_TAG})" if n_empty else ""
        raise AnalysisInputError(
            f"runs: none of the {len(reasons)} simulation runs is FINISHED with a seed and the compared "
            f"metrics{empties}"
        )

    params = table.params.loc[keep]
    info = table.info.loc[keep]
    if by:
        try:
            keys = resolve_param_keys(by, [str(key) for key in params.columns])
        except ValueError as error:
            raise AnalysisInputError(str(error)) from error
        seed_tracking: list[str] = []
    else:
        keys, seed_tracking = varying_params(params, info["seed"])
    names = short_names(keys)
    labels = condition_labels(params, keys, names)

    tidy = pd.DataFrame(
        {
            "run_id": info.index.astype(str),
            "seed": info["seed"].astype("int64").to_numpy(),
            "sweep_id": info["sweep_id"].to_numpy(),
            "start_time": info["start_time"].to_numpy(),
            "condition": labels.to_numpy(),
        }
    )
    for key in keys:
        tidy[key] = params[key].to_numpy()
    for name in chosen_metrics:
        tidy[name] = table.metrics.loc[keep, name].to_numpy()

    tidy, duplicates = drop_duplicate_runs(tidy)
    if len(duplicates):
        warnings.append(
            f"{len(duplicates)} run(s) repeat a (condition, seed) already run; the newest run of each is kept"
        )
    excluded_mask = ~keep
    excluded = pd.DataFrame(
        {
            "run_id": table.info.index[excluded_mask].astype(str),
            "status": table.info.loc[excluded_mask, "status"].to_numpy(),
            "seed": table.info.loc[excluded_mask, "seed"].to_numpy(),
            "condition": table.info.loc[excluded_mask, "condition_tag"].to_numpy(),
            "reason": reasons[excluded_mask].to_numpy(),
        }
    )
    excluded = pd.concat([excluded, duplicates], ignore_index=True) if len(duplicates) else excluded
    if (empty_line := empty_runs_line(excluded)) is not None:
        warnings.append(empty_line)

    sweep_ids = tuple(sorted(str(s) for s in tidy["sweep_id"].dropna().unique()))
    if len(sweep_ids) > 1:
        warnings.append(f"runs come from {len(sweep_ids)} sweeps ({', '.join(sweep_ids)}); all are used")
    if seed_tracking:
        warnings.append(f"params that follow the seed were not used as conditions: {', '.join(seed_tracking)}")

    conditions = ordered_conditions(tidy, keys)
    if len(conditions) < 2:
        raise AnalysisInputError(
            f"nothing to compare: all {len(tidy)} compared runs fall in one condition ({conditions[0]}); "
            "vary a param across runs or choose the factors with --by"
        )
    tidy = tidy.sort_values(["condition", "seed"], key=_condition_order_key(conditions), ignore_index=True)
    return Selection(
        tidy=tidy,
        conditions=tuple(conditions),
        condition_keys=tuple(keys),
        short_names=names,
        seed_tracking_keys=tuple(seed_tracking),
        metrics=tuple(chosen_metrics),
        excluded=excluded.reindex(columns=list(EXCLUDED_COLUMNS)),
        sweep_ids=sweep_ids,
        warnings=tuple(warnings),
        llm_checks=tuple(sorted(set(info["llm_check"].dropna().astype(str)))) if "llm_check" in info else (),
    )


def drop_duplicate_runs(tidy: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(kept, dropped): of runs sharing (condition, seed), the newest (latest start_time) is kept."""
    newest_first = tidy.sort_values("start_time", ascending=False, kind="stable")
    duplicated = newest_first.duplicated(subset=["condition", "seed"], keep="first")
    kept = newest_first.loc[~duplicated]
    dropped = newest_first.loc[duplicated]
    kept_ids = kept.set_index(["condition", "seed"])["run_id"]
    kept_for_dropped = kept_ids.reindex(pd.MultiIndex.from_frame(dropped[["condition", "seed"]])).to_numpy()
    dropped_rows = pd.DataFrame(
        {
            "run_id": dropped["run_id"].to_numpy(),
            "status": FINISHED,
            "seed": dropped["seed"].to_numpy(),
            "condition": dropped["condition"].to_numpy(),
            "reason": [f"duplicate of newer run {run_id} (same condition and seed)" for run_id in kept_for_dropped],
        }
    )
    return kept.sort_index(), dropped_rows


def _condition_order_key(conditions: Sequence[str]) -> Callable[[pd.Series], pd.Series]:
    """Sort key for `DataFrame.sort_values`: conditions in the given order, other columns as they are."""
    position = {label: i for i, label in enumerate(conditions)}

    def key(column: pd.Series) -> pd.Series:
        return column.map(position) if column.name == "condition" else column

    return key
