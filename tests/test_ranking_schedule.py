"""Ranking schedules (prism_experiments/simulation/schedule.py): parsing, validation, which ranker serves a step."""

from __future__ import annotations

import pytest

from prism_experiments.config import ConfigError, ExperimentConfig
from prism_experiments.ranking import ranking_config
from prism_experiments.ranking.ranker_inputs import RankerInputs
from prism_experiments.simulation.schedule import ScheduledRankers, ScheduleEntry, entry_config


def _schedule(entries: list[dict], n_steps: int = 48) -> list[ScheduleEntry]:
    return ExperimentConfig.from_mapping({"simulation": {"n_steps": n_steps, "schedule": entries}}).simulation.schedule


@pytest.mark.parametrize(
    "entries, says",
    [
        ([{"step": 48, "mode": "x_algo"}], "simulation.schedule: steps must be strictly increasing and within [0, "),
        ([{"step": -1, "mode": "x_algo"}], "simulation.schedule.0.step: Input should be greater than or equal to 0"),
        ([{"step": 5, "mode": "x_algo"}, {"step": 2, "mode": "random"}], "got [5, 2]"),
        ([{"step": 5, "mode": "x_algo"}, {"step": 5, "mode": "random"}], "got [5, 5]"),
        ([{"step": 1, "mode": "bogus"}], "schedule.0.mode: unknown mode 'bogus'; allowed: bridging, chronological"),
        ([{"step": 1, "mode": "x_algo", "reply_scale": 2}], "simulation.schedule.0.reply_scale: Input should be"),
        ([{"step": 1, "mode": "random", "reply_scale": 0.5}], "simulation.schedule.0.reply_scale: Extra inputs"),
        ([{"mode": "x_algo"}], "simulation.schedule.0.step: Field required"),
    ],
)
def test_a_bad_schedule_is_one_line_naming_the_field(entries: list[dict], says: str) -> None:
    with pytest.raises(ConfigError) as info:
        _schedule(entries)
    assert says in str(info.value) and "\n" not in str(info.value)


def test_a_schedule_with_stochastic_serving_is_refused() -> None:
    with pytest.raises(ConfigError, match="simulation.schedule: must be empty with serving"):
        ExperimentConfig.from_mapping({"serving": {}, "simulation": {"schedule": [{"step": 1, "mode": "random"}]}})


def test_an_entry_keeps_the_runs_settings_for_its_own_mode_and_defaults_for_another() -> None:
    run = ranking_config("x_algo", reply_scale=0.5)
    same, other = _schedule(
        [{"step": 3, "mode": "x_algo", "out_of_network_scale": 0.25}, {"step": 9, "mode": "random"}]
    )
    assert entry_config(run, same) == ranking_config("x_algo", reply_scale=0.5, out_of_network_scale=0.25)
    assert entry_config(run, other) == ranking_config("random")


def test_each_step_is_served_by_the_last_entry_starting_at_or_before_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A double for the rankers (a unit test of the lookup): one per distinct config, the run's own built first and
    reused by an entry equal to it."""
    built: list[str] = []

    class Named:
        def __init__(self, mode: str) -> None:
            self.mode = mode
            built.append(mode)

    monkeypatch.setattr("prism_experiments.simulation.schedule.build_ranker", lambda config, inputs: Named(config.mode))
    entries = _schedule(
        [{"step": 0, "mode": "chronological"}, {"step": 2, "mode": "x_algo"}, {"step": 4, "mode": "chronological"}],
        n_steps=6,
    )
    rankers = ScheduledRankers(ranking_config("x_algo"), entries, RankerInputs(None, None), n_steps=6)  # type: ignore[arg-type]
    assert built == ["x_algo", "chronological"]
    assert rankers.served() == [
        ("chronological", 1),
        ("chronological", 1),
        ("x_algo", 2),
        ("x_algo", 2),
        ("chronological", 3),
        ("chronological", 3),
    ]
    assert rankers.at(0) is rankers.at(5) and rankers.at(2) is rankers.first and rankers.scheduled
    plain = ScheduledRankers(ranking_config("random"), [], RankerInputs(None, None), n_steps=3)  # type: ignore[arg-type]
    assert [mode for mode, _ in plain.served()] == ["random"] * 3 and not plain.scheduled
