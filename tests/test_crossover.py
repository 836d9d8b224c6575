"""`prism-compare --crossover` (analysis/crossover.py): arm shapes, the crossover's arms, the effects table."""

from __future__ import annotations

import pandas as pd
import pytest

from prism_experiments.analysis.compare import ComparisonSettings
from prism_experiments.analysis.crossover import (
    ArmShape,
    arm_shape,
    crossover_arms,
    crossover_lines,
    crossover_table,
    load_shapes,
)

ON, OFF, CHRONO, ALGO = "on", "off", "chrono", "algo"
SHAPES = {
    CHRONO: ArmShape("chronological", "chronological", None),
    ON: ArmShape("chronological", "x_algo", 2),
    OFF: ArmShape("x_algo", "chronological", 2),
    ALGO: ArmShape("x_algo", "x_algo", None),
}


def test_a_runs_shape_is_its_first_and_last_mode_and_the_first_step_of_another() -> None:
    served = pd.DataFrame({"step": [3, 0, 1, 2], "mode": ["random", "x_algo", "x_algo", "random"]})
    assert arm_shape(served) == ArmShape("x_algo", "random", 2)
    assert arm_shape(served.assign(mode="x_algo")) == ArmShape("x_algo", "x_algo", None)


def test_the_crossover_pairs_each_switch_with_the_mode_it_switched_from() -> None:
    arms = crossover_arms(SHAPES)
    assert not isinstance(arms, str)
    assert arms.pairs == ((OFF, ALGO), (ON, CHRONO)) and arms.switch_step == 2
    assert arms.modes == (("x_algo", "chronological"), ("chronological", "x_algo"))


@pytest.mark.parametrize(
    "change, says",
    [
        ({ON: None}, "found 1"),
        ({ON: ArmShape("chronological", "x_algo", 3)}, "different steps"),
        ({ON: ArmShape("chronological", "random", 2)}, "not mirrored"),
        ({ALGO: None}, "served by x_algo throughout"),
    ],
)
def test_conditions_that_are_not_a_crossover_say_why(change: dict, says: str) -> None:
    shapes = {c: s for c, s in (SHAPES | change).items() if s is not None}
    reason = crossover_arms(shapes)
    assert isinstance(reason, str) and says in reason


def test_effects_are_paired_means_from_the_switch_on_and_one_significant_direction_is_asymmetric() -> None:
    """8 seeds, 4 steps, switch at 2: switching on adds 1 + seed/10 after the switch (and 100 before it, which
    must not count); switching off changes nothing."""
    rows = []
    for seed in range(8):
        for step in range(4):
            base = float(seed + step)
            rows += [(CHRONO, seed, step, base), (ALGO, seed, step, base + 5), (OFF, seed, step, base + 5)]
            rows.append((ON, seed, step, base + (100.0 if step < 2 else 1.0 + seed / 10)))
    values = pd.DataFrame(rows, columns=["condition", "seed", "step", "value"]).assign(series="new_follows")
    arms = crossover_arms(SHAPES)
    assert not isinstance(arms, str)
    table = crossover_table(values, arms, ["new_follows"], ComparisonSettings(n_resamples=200))
    on, off = (table.set_index("switching").loc[c] for c in (ON, OFF))
    assert on["effect"] == pytest.approx(1.35) and on["n_seeds"] == 8 and on["p_holm"] < 0.05
    assert off["effect"] == 0.0 and off["p_holm"] == 1.0 and table["asymmetric"].all()
    assert on["effect_ci_low"] <= 1.35 <= on["effect_ci_high"]
    (line,) = crossover_lines(table)
    assert line.startswith("new_follows from step 2: ") and "chronological→x_algo +1.35" in line
    assert line.endswith("asymmetric")


def test_shapes_come_from_each_runs_served_modes_and_unreadable_or_mixed_runs_are_named() -> None:
    """A double for the runs' tables (a unit test of the reading): r1 and r2 switch at step 1, r3 has no record,
    r4 and r5 (one condition) were served differently."""
    served = {
        "r1": ["chronological", "x_algo"],
        "r2": ["chronological", "x_algo"],
        "r4": ["x_algo", "x_algo"],
        "r5": ["x_algo", "chronological"],
    }

    class Tables:
        def table(self, run_id: str, name: str, columns: tuple[str, ...]) -> pd.DataFrame:
            assert name == "served_modes" and set(columns) == {"step", "mode"}
            if run_id not in served:
                raise KeyError(run_id)
            return pd.DataFrame({"step": [0, 1], "mode": served[run_id]})

    tidy = pd.DataFrame({"run_id": ["r1", "r2", "r3", "r4", "r5"], "condition": ["on", "on", "off", "algo", "algo"]})
    shapes, warnings = load_shapes(Tables(), tidy)  # type: ignore[arg-type]
    assert shapes == {"on": ArmShape("chronological", "x_algo", 1)}
    assert warnings == [
        "crossover: no tables/served_modes.parquet (a run without simulation.schedule) for 1 run(s): r3",
        "crossover: the runs of condition algo were not served alike; left out",
    ]
