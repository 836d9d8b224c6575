"""`prism-compare --crossover`: the switch-on / switch-off crossover of ranking schedules (Gauthier et al. 2026).

Each condition's shape is read from its runs' per-step record of the mode that served them
(`tables/served_modes.parquet`, a run with `simulation.schedule`): the constant arms A and B, and the switching arms
A→B and B→A, switching at the same step. Per seed (paired design) and step series, the mean over the steps from the
switch on: the effect of switching to B is (A→B) − A, of switching back to A is (B→A) − B. Each is tested over seeds
with the report's paired Wilcoxon test against 0, Holm over the section's tests; a series is asymmetric when one
switch's effect is significant and the other's is not (Gauthier et al.: switching the algorithm on moved following,
switching it off did not undo it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from mlflow.exceptions import MlflowException

from prism_experiments.analysis.compare import ComparisonSettings
from prism_experiments.analysis.run_tables import RunTables
from prism_experiments.analysis.size_matched import tested_against_zero
from prism_experiments.analysis.stats import holm_adjust

#: step series the crossover reads beside the report's own (analysis/step_series.py): what Gauthier et al. measured
CROSSOVER_SERIES: tuple[str, ...] = ("new_follows",)
#: the per-step record of a scheduled run (tracking/artifacts.py)
SERVED_MODES = "served_modes"
CROSSOVER_COLUMNS: tuple[str, ...] = (
    "series", "from_mode", "to_mode", "switching", "constant", "switch_step", "n_seeds", "effect", "effect_ci_low",
    "effect_ci_high", "effect_p", "p_holm", "asymmetric",
)  # fmt: skip


@dataclass(frozen=True)
class ArmShape:
    """The mode of a run's first and last step and the first step served by another mode than the first (None:
    one mode throughout)."""

    first: str
    last: str
    switch_step: int | None


def arm_shape(served: pd.DataFrame) -> ArmShape:
    """The shape of one run from its served-modes table (step, mode)."""
    modes = served.sort_values("step")
    first = str(modes["mode"].iloc[0])
    other = modes.loc[modes["mode"] != first, "step"]
    return ArmShape(first, str(modes["mode"].iloc[-1]), int(other.iloc[0]) if len(other) else None)


@dataclass(frozen=True)
class CrossoverArms:
    """The conditions of the crossover: (switching condition, its constant control) per direction."""

    pairs: tuple[tuple[str, str], ...]
    modes: tuple[tuple[str, str], ...]
    switch_step: int


def crossover_arms(shapes: Mapping[str, ArmShape]) -> CrossoverArms | str:
    """The two switching conditions A→B and B→A at one step and the constant A and B, or why the conditions are not
    such a crossover."""
    switching = {c: s for c, s in sorted(shapes.items()) if s.first != s.last}
    constant = {s.first: c for c, s in sorted(shapes.items()) if s.switch_step is None}
    if len(switching) != 2:
        return f"needs two conditions that switch the ranker (A→B and B→A), found {len(switching)}"
    (one, a), (other, b) = switching.items()
    if (a.first, a.last) != (b.last, b.first):
        return f"the switching conditions {one} ({a.first}→{a.last}) and {other} ({b.first}→{b.last}) are not mirrored"
    if a.switch_step != b.switch_step or a.switch_step is None:
        return f"the switching conditions switch at different steps ({a.switch_step}, {b.switch_step})"
    missing = [mode for mode in (a.first, b.first) if mode not in constant]
    if missing:
        return f"needs a condition served by {' and by '.join(missing)} throughout (a one-mode schedule)"
    return CrossoverArms(
        ((one, constant[a.first]), (other, constant[b.first])),
        ((a.first, a.last), (b.first, b.last)),
        a.switch_step,
    )


def load_shapes(tables: RunTables, tidy: pd.DataFrame) -> tuple[dict[str, ArmShape], list[str]]:
    """Each condition's shape (from its runs' served modes), and warnings for runs without the record or
    conditions whose runs differ."""
    shapes: dict[str, ArmShape] = {}
    unread, mixed = [], set()
    for run in tidy[["run_id", "condition"]].itertuples(index=False):
        try:
            shape = arm_shape(tables.table(str(run.run_id), SERVED_MODES, ("step", "mode")))
        except (MlflowException, OSError, KeyError):
            unread.append(str(run.run_id))
            continue
        if shapes.setdefault(run.condition, shape) != shape:
            mixed.add(run.condition)
    warnings = [f"crossover: no tables/{SERVED_MODES}.parquet (a run without simulation.schedule) for "
                f"{len(unread)} run(s): {', '.join(unread)}"] if unread else []  # fmt: skip
    warnings += [f"crossover: the runs of condition {c} were not served alike; left out" for c in sorted(mixed)]
    return {c: s for c, s in shapes.items() if c not in mixed}, warnings


def crossover_table(
    step_values: pd.DataFrame, arms: CrossoverArms, series: Sequence[str], settings: ComparisonSettings
) -> pd.DataFrame:
    """CROSSOVER_COLUMNS per series and direction, from step values (run_id, condition, seed, step, series, value)."""
    after = step_values.loc[step_values["step"] >= arms.switch_step]
    means = after.groupby(["series", "condition", "seed"])["value"].mean()
    rows = []
    for name in series:
        for (switching, constant), (from_mode, to_mode) in zip(arms.pairs, arms.modes):
            seeds = sorted(_seeds_of(means, name, switching) & _seeds_of(means, name, constant))
            effects = [means[(name, switching, seed)] - means[(name, constant, seed)] for seed in seeds]
            effects = [value for value in effects if np.isfinite(value)]
            tested = tested_against_zero("effect", effects, settings, "crossover", name, switching, constant)
            rows.append({"series": name, "from_mode": from_mode, "to_mode": to_mode, "switching": switching,
                         "constant": constant, "switch_step": arms.switch_step, "n_seeds": len(effects),
                         **tested})  # fmt: skip
    table = pd.DataFrame(rows, columns=[c for c in CROSSOVER_COLUMNS if c not in ("p_holm", "asymmetric")])
    table["p_holm"] = holm_adjust(table["effect_p"].to_numpy(float)) if len(table) else []
    significant = (table["p_holm"] < settings.alpha).groupby(table["series"]).transform("sum")
    table["asymmetric"] = significant == 1
    return table.reindex(columns=list(CROSSOVER_COLUMNS))


def _seeds_of(means: pd.Series, series: str, condition: str) -> set[int]:
    try:
        return set(means.loc[(series, condition)].index)
    except KeyError:
        return set()


def crossover_lines(table: pd.DataFrame) -> list[str]:
    """Console lines: each series' two switching effects, and whether only one of them is significant."""
    lines = []
    for name, rows in table.groupby("series", sort=False):
        effects = "; ".join(
            f"{r.from_mode}→{r.to_mode} {r.effect:+.3g} (95% CI {r.effect_ci_low:+.3g} to {r.effect_ci_high:+.3g}, "
            f"p_holm {r.p_holm:.3g})"
            for r in rows.itertuples()
        )
        lines.append(f"{name} from step {int(rows['switch_step'].iloc[0])}: {effects}"
                     + (" — asymmetric" if bool(rows["asymmetric"].iloc[0]) else ""))  # fmt: skip
    return lines
