"""What must hold after any fault, once the next command has run (docs/model.md, "Faults and recovery"):
nothing RUNNING, every config FINISHED exactly once, every child under its own sweep's parent, a non-zero exit for
any sweep with a failed or killed job, an intact sqlite store, and every FINISHED run's metrics equal to a
fault-free run of its config. A replication round adds: a suite that exits 0, and the suite resumed after its
fault, give the fault-free suite's verdicts, claim by claim and digit for digit."""

from __future__ import annotations

import csv
import math
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prism_experiments.chaos.world import EXPERIMENT, same_metric
from prism_experiments.locations import sqlite_path
from prism_experiments.tracking.tags import (
    ERROR_TAG,
    KIND_TAG,
    PARENT_RUN_TAG,
    SEED_TAG,
    SIMULATION_KIND,
    SWEEP_ID_TAG,
    SWEEP_KIND,
)

#: the sweep's line naming its parent run (prism_experiments/harness/sweep.py)
PARENT_LINE = re.compile(r"sweep (\S+): \d+ jobs, \d+ to run, .*parent run (\w+)")


@dataclass(frozen=True)
class SweepExit:
    """How one sweep of a round ended: its exit code and the parent run it named (None: it made none)."""

    code: int
    parent_run_id: str | None
    label: str


def sweep_exit(code: int, output: str, label: str) -> SweepExit:
    found = PARENT_LINE.search(output)
    return SweepExit(code, found[2] if found else None, label)


def suite_exits(code: int, output: str, label: str) -> list[SweepExit]:
    """A replication suite's sweeps, each with the suite's exit code: a suite that exits 0 vouches for every one
    (`prism-replicate` exits 1 when any of its sweeps failed); none when it started no sweep."""
    return [SweepExit(code, found[2], f"{label}, sweep {n}") for n, found in enumerate(PARENT_LINE.finditer(output))]


def round_violations(
    client: Any,
    uri: str,
    seeds: set[int],
    configs: set[tuple[int, str]],
    exits: list[SweepExit],
    references: dict[tuple[int, str], dict[str, float]],
    finished_once: bool,
    experiment_name: str = EXPERIMENT,
    may_be_empty: bool = False,
) -> list[str]:
    """Every invariant the runs of `seeds` break, one line each (empty: none). A config is FINISHED at most once
    after a round, and exactly once after the final clean re-run (`finished_once`). `may_be_empty`: a store without
    the experiment breaks nothing (a suite stopped before its first sweep made none)."""
    experiment = client.get_experiment_by_name(experiment_name)
    if experiment is None:
        return [] if may_be_empty else [f"the store has no {experiment_name} experiment"]
    every = client.search_runs([experiment.experiment_id], "", max_results=50_000)
    parents = {run.data.tags.get(SWEEP_ID_TAG): run for run in every if run.data.tags.get(KIND_TAG) == SWEEP_KIND}
    runs = [
        run
        for run in every
        if run.data.tags.get(KIND_TAG) == SIMULATION_KIND and int(run.data.tags.get(SEED_TAG, "-1")) in seeds
    ]
    violations = []
    own_parents = {exit.parent_run_id for exit in exits if exit.parent_run_id}
    for run in runs + [p for p in parents.values() if p.info.run_id in own_parents]:
        if run.info.status == "RUNNING":
            violations.append(f"run {run.info.run_id} is still RUNNING after the next command's reaper")
    finished = Counter(_config(run) for run in runs if run.info.status == "FINISHED")
    for config in sorted(configs):
        if finished[config] > 1 or (finished_once and finished[config] != 1):
            violations.append(
                f"config seed={config[0]} ranking={config[1]} FINISHED {finished[config]} times, not once"
            )
    for run in runs:
        sweep_id = run.data.tags.get(SWEEP_ID_TAG, "none")
        parent = parents.get(sweep_id)
        if sweep_id != "none" and (parent is None or run.data.tags.get(PARENT_RUN_TAG) != parent.info.run_id):
            violations.append(f"run {run.info.run_id} of sweep {sweep_id} is not a child of that sweep's parent run")
    for exit in exits:
        if exit.code == 0 and exit.parent_run_id is not None:
            failed = [
                run
                for run in runs
                if run.data.tags.get(PARENT_RUN_TAG) == exit.parent_run_id and run.info.status != "FINISHED"
            ]
            if failed:
                why = failed[0].data.tags.get(ERROR_TAG, "")
                violations.append(
                    f"{exit.label} exited 0 with {len(failed)} job(s) not FINISHED "
                    f"(run {failed[0].info.run_id} {failed[0].info.status}: {why})"
                )
    for run in runs:
        if run.info.status == "FINISHED" and _config(run) in references:
            wrong = [
                name
                for name, value in references[_config(run)].items()
                if not same_metric(run.data.metrics.get(name), value)
            ]
            if wrong:
                violations.append(f"run {run.info.run_id} FINISHED with metrics unlike the fault-free run: {wrong[:5]}")
    violations += integrity_violations(uri)
    return violations


def _config(run: Any) -> tuple[int, str]:
    return int(run.data.tags.get(SEED_TAG, "-1")), run.data.params.get("ranking.mode", "?")


def integrity_violations(uri: str) -> list[str]:
    """`PRAGMA integrity_check` of a sqlite store (nothing for a server)."""
    path = sqlite_path(uri)
    if path is None or not path.is_file():
        return []
    with sqlite3.connect(path) as db:
        verdict = db.execute("PRAGMA integrity_check").fetchone()[0]
    return [] if verdict == "ok" else [f"sqlite store {path}: integrity_check says {verdict}"]


def read_verdicts(path: Path) -> list[dict[str, str]]:
    """The rows of a replication report's verdicts.csv, as written (every cell a string)."""
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def verdict_violations(reference: list[dict[str, str]], found: list[dict[str, str]], label: str) -> list[str]:
    """Where `found` (a suite's verdicts.csv) differs from the fault-free suite's, claim by claim: every cell equal,
    numbers digit for digit (as written: the same runs give the same floats) or both missing; one line a claim."""
    by_claim = {(row["finding"], row["claim"]): row for row in found}
    violations = []
    for row in reference:
        key = (row["finding"], row["claim"])
        other = by_claim.pop(key, None)
        if other is None:
            violations.append(f"{label}: no verdict for {key[0]}/{key[1]}")
            continue
        differ = [column for column, value in row.items() if not _same_cell(value, other.get(column))]
        if differ:
            shown = ", ".join(f"{c} {other.get(c)!r} not {row[c]!r}" for c in differ[:3])
            violations.append(f"{label}: {key[0]}/{key[1]} differs from the fault-free suite: {shown}")
    violations += [f"{label}: a verdict the fault-free suite has not: {a}/{b}" for a, b in sorted(by_claim)]
    return violations


def _same_cell(reference: str, found: str | None) -> bool:
    """Equal as written, or both NaN (pandas writes an empty cell; a float column may read 'nan')."""
    if found == reference:
        return True
    if found is None:
        return False
    return _is_nan(reference) and _is_nan(found)


def _is_nan(cell: str) -> bool:
    try:
        return cell == "" or math.isnan(float(cell))
    except ValueError:
        return False
