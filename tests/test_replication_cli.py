"""prism-replicate talks from its first instant: its first line comes before any heavy import and before the jobs'
configs are composed, and a progress bar runs while they are (read by the order of events, never by seconds)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from prism_experiments.harness import sweep
from prism_experiments.replication.cli import STARTING_LINE, main
from prism_experiments.replication.registry import FINDINGS

ROOT = Path(__file__).resolve().parents[1]


class Stop(Exception):
    """Ends the command at the event the test looks at."""


def test_the_first_line_comes_before_any_heavy_import() -> None:
    # an import hook marks the first import of each heavy package on stderr, in order with the command's own lines
    script = textwrap.dedent(
        """
        import importlib.abc, sys
        HEAVY = {"hydra", "mlflow", "pandas", "omegaconf", "pydantic", "numpy"}
        class Watch(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name in HEAVY:
                    HEAVY.discard(name)
                    print(f"[import {name}]", file=sys.stderr, flush=True)
                return None
        sys.meta_path.insert(0, Watch())
        from prism_experiments.replication.cli import main
        sys.exit(main(["--seeds", "1"]))
        """
    )
    environment = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"} | {"HF_HUB_OFFLINE": "1"}
    process = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=environment, capture_output=True,
                             text=True, timeout=300)  # fmt: skip
    lines = process.stderr.strip().splitlines()
    assert process.returncode == 2, process.stderr
    assert lines[0] == STARTING_LINE
    assert any(line.startswith("[import ") for line in lines[1:])  # the heavy imports did come, after it
    assert lines[-1] == "prism-replicate: error: --seeds: must be an integer >= 2, got 1"


def test_the_first_line_and_a_progress_bar_come_before_the_first_composition(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[str] = []

    def first_composition(cls: object, cfg: object) -> None:
        seen.append(capsys.readouterr().err)  # what the console shows when the first Hydra composition is made
        raise Stop

    monkeypatch.setattr(sweep._Shape, "composed", classmethod(first_composition))
    with pytest.raises(Stop):
        main(["--quick", "--seeds", "2", "--no-run"])  # every finding: 30 jobs in v6, enough for the bar
    [shown] = seen
    lines = shown.splitlines()
    # one job per finding, arm and seed (runs two findings share are composed once each, then found once by hash)
    jobs = sum(2 * len(finding.arms) for finding in FINDINGS)
    assert lines[0] == STARTING_LINE
    assert lines[1].startswith("prism-replicate: set v") and f"composing the configs of {jobs} jobs" in lines[1]
    assert "composing jobs:" in shown and f"0/{jobs}" in shown  # tqdm draws its bar when it starts


def test_bad_input_is_one_error_line_after_the_first_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--only", "goel2016", "nope"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0] == STARTING_LINE and len(lines) == 2
    assert lines[1].startswith("prism-replicate: error: --only: unknown finding 'nope'; the set (v")
    assert main(["--help"]) == 0
    assert STARTING_LINE not in capsys.readouterr().err  # --help prints its text only


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--quick", "--full"], "prism-replicate: error: --full and --quick: choose one"),
        (["--full", "--only", "goel2016", "chaney2018"], "prism-replicate: error: --full --only: chaney2018 has no "
         "full size; the findings that have one: goel2016, juul_ugander2021, huszar2022"),
    ],
)  # fmt: skip
def test_full_with_quick_or_a_finding_without_a_full_size_is_one_line_and_exit_2_before_anything(
    argv: list[str], error: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from prism_experiments.replication import suite

    def never(*args: object, **kwargs: object) -> None:
        raise Stop  # no job is composed, no run looked up or started

    monkeypatch.setattr(suite, "plan_suite", never)
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0] == STARTING_LINE and len(lines) == 2
    assert lines[1].startswith(error)
    assert not any(tmp_path.iterdir())  # no runs directory, no store, no report (PRISM_RUNS_DIR is under tmp_path)
