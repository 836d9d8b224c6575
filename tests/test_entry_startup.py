"""The entry point's start-up shortcuts (prism_experiments/__main__.py): Hydra's config composed once when its mode
is certainly unset, and the run's modules imported with the garbage collector paused and their objects frozen."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest
from hydra._internal.hydra import Hydra

from prism_experiments.__main__ import _imports_kept, composed_once, mode_left_unset, sqlite_store_expected
from prism_experiments.locations import CONFIG_DIR


def config_dir(tmp_path: Path, **files: str) -> Path:
    folder = tmp_path / "conf"
    (folder / "experiment").mkdir(parents=True)
    (folder / "config.yaml").write_text("defaults:\n  - _self_\nseed: 0\n")
    for name, text in files.items():
        (folder / "experiment" / f"{name}.yaml").write_text(text)
    return folder


def test_the_projects_configs_leave_the_mode_unset() -> None:
    assert mode_left_unset(["experiment=ranking_modes_10k", "seed=0", "ranking=preference"], CONFIG_DIR)


@pytest.mark.parametrize(
    "argv",
    [
        ["-m", "experiment=aa"],
        ["--multirun", "seed=0,1"],
        ["--cfg", "job"],
        ["--config-dir", "/elsewhere", "seed=0"],
        ["hydra.mode=MULTIRUN", "seed=0,1"],
        ["hydra.mode=multirun"],
        ["hydra.searchpath=[file:///elsewhere]", "experiment=sweeping"],
        ["+hydra.job.chdir=true"],
    ],
)
def test_a_flag_or_a_multirun_on_the_command_line_keeps_hydras_own_look(tmp_path: Path, argv: list[str]) -> None:
    assert not mode_left_unset(argv, config_dir(tmp_path))


def test_a_config_file_asking_for_a_multirun_keeps_hydras_own_look(tmp_path: Path) -> None:
    plain = config_dir(tmp_path, plain="# @package _global_\nseed: 3\n")
    assert mode_left_unset(["experiment=plain"], plain)
    (plain / "experiment" / "sweeping.yaml").write_text("# @package _global_\nhydra:\n  mode: MULTIRUN\n")
    assert not mode_left_unset(["experiment=plain"], plain)


def test_composed_once_answers_the_mode_without_composing_and_restores_hydra() -> None:
    composing = Hydra.get_mode
    with composed_once(True):
        # no config loader behind it: a composition would fail, the shortcut does not compose
        assert Hydra.get_mode(object(), config_name="config", overrides=[]) is None  # type: ignore[arg-type]
    assert Hydra.get_mode is composing
    with composed_once(False):
        assert Hydra.get_mode is composing


def test_imports_kept_pauses_the_collector_and_freezes_what_was_built() -> None:
    # judged by what the collector does to an object: other frozen objects freed by reference counting
    # change gc.get_freeze_count() at any time
    class Cycle:
        def __init__(self) -> None:
            self.me = self

    try:
        with _imports_kept():
            assert not gc.isenabled()
            built = Cycle()
            built_alive = weakref.ref(built)
        assert gc.isenabled()
        del built  # unreachable now, but frozen: the collector must leave it alone
        gc.collect()
        assert built_alive() is not None
    finally:
        gc.unfreeze()
    gc.collect()
    assert built_alive() is None  # unfrozen, it is an ordinary cycle again


def test_the_sqlite_stores_modules_are_imported_early_only_when_no_other_store_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert sqlite_store_expected(["experiment=aa", "seed=0"])
    assert not sqlite_store_expected(["tracking=server"])
    assert not sqlite_store_expected(["tracking.uri=http://127.0.0.1:5000"])
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5000")
    assert not sqlite_store_expected(["seed=0"])
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:////tmp/runs/mlflow.db")
    assert sqlite_store_expected(["seed=0"])
