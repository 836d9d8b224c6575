"""`python -m prism_experiments` / `prism-run`: the Hydra entry point of one run or a sweep."""

from __future__ import annotations

import sys

if __name__ == "__main__":  # `python -m` (make run, make sweep): a line before the seconds of imports below
    print("prism-run: starting (loading Hydra, MLflow and the simulation) ...", file=sys.stderr, flush=True)

import gc
import logging
import os
import shutil
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from prism_experiments.harness.sweep_file import current_sweep
from prism_experiments.locations import (
    CONFIG_DIR,
    RUN_DIR_OVERRIDE,
    TRACKING_URI_ENV,
    RunLayout,
    override_value,
    runs_dir_from,
)
from prism_experiments.ops.processes import interrupt_name, interrupt_on_sigterm
from prism_experiments.tracking.store import apply_http_budget, quiet_store_tracebacks, resolve_tracking_uri

log = logging.getLogger("prism_experiments")


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="config")
def hydra_main(cfg: DictConfig) -> dict[str, float] | None:
    # imported here, not at the top: `main` imports them first with the garbage collector paused (`_imports_kept`)
    from prism_experiments.composition import experiment_config
    from prism_experiments.config import ConfigError
    from prism_experiments.harness.job import run_job
    from prism_experiments.harness.preflight import check_experiment
    from prism_experiments.harness.recovery import JobRecord, write_outcome

    quiet_store_tracebacks()
    hydra_cfg = HydraConfig.get()
    overrides = list(hydra_cfg.overrides.task)
    multirun = hydra_cfg.mode == RunMode.MULTIRUN
    try:
        experiment = experiment_config(cfg)
        # a sweep's driver checked these once for every job
        preflight_warnings = [] if multirun else check_experiment(experiment, resolve_tracking_uri(experiment))
    except ConfigError as exc:
        log.error("%s", exc)
        if not multirun:  # Hydra made the run's output folder before the config could be checked
            remove_output_dir(Path(hydra_cfg.runtime.output_dir), RunLayout(runs_dir_of(cfg, overrides)))
        raise SystemExit(2) from None
    for line in preflight_warnings:
        log.warning("%s", line)
    apply_http_budget(experiment)
    sweep = current_sweep(Path(hydra_cfg.sweep.dir)) if multirun else None
    job_num = int(hydra_cfg.job.num) if multirun else None
    # a failed job is recorded (its run FAILED, one ERROR line) and not raised: Hydra would print its traceback
    # ("Error executing job") after that line; in a sweep the others go on and the sweep fails at the end
    outcome = run_job(experiment, overrides, sweep, reraise=False, job_num=job_num)
    if not multirun:
        if outcome.status == "FAILED":
            raise SystemExit(1)
        return outcome.summary
    try:
        write_outcome(Path(hydra_cfg.runtime.output_dir), JobRecord(outcome.status, outcome.run_id, outcome.error))
    except OSError as exc:  # a full disk: the sweep reads how this job ended from the store instead
        log.error("could not write the job's outcome file (%s)", exc)
    return outcome.summary


def runs_dir_of(cfg: DictConfig, overrides: list[str]) -> Path:
    """The composed config's `paths.runs_dir`, else (a value that does not resolve) the command line's."""
    value = OmegaConf.select(cfg, "paths.runs_dir", throw_on_resolution_failure=False)
    return Path(str(value)) if value else runs_dir_from(overrides)


def remove_output_dir(output_dir: Path, layout: RunLayout) -> None:
    """Remove a run's output folder and its parents inside the runs dir left empty (`hydra/<experiment>/`); a
    folder outside the runs dir (`hydra.run.dir=` elsewhere) goes alone, its parents stay."""
    shutil.rmtree(output_dir, ignore_errors=True)
    for parent in layout.parents_inside(output_dir):
        try:
            parent.rmdir()
        except OSError:  # not empty: another run's folder
            return


def remove_created_folders(top: Path, existed: Path | None) -> None:
    """Remove the empty folders under `top`, `top` and its parents up to `existed` (excluded, the nearest one that
    existed before this command ran): what a command stopped by a config error created and never wrote to. `existed`
    None: `top` existed before, and stays."""
    if existed is None:
        return
    # folder by folder, deepest first, each only while empty (rmdir): a file another command writes meanwhile stays
    for folder, _, _ in sorted(os.walk(top), key=lambda entry: -len(Path(entry[0]).parts)):
        try:
            os.rmdir(folder)
        except OSError:
            return
    for parent in top.parents:
        if parent == existed:
            return
        try:
            parent.rmdir()
        except OSError:  # no longer empty: another command writes there
            return


def nearest_existing(folder: Path) -> Path | None:
    """The nearest of `folder`'s parents that exists, None when `folder` itself does."""
    return None if folder.exists() else next(path for path in folder.parents if path.exists())


@contextmanager
def _imports_kept() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a run's modules are imported, and what they built kept out
    of its later collections (`gc.freeze`): MLflow, SQLAlchemy, pandas and the simulation build about 200,000
    objects that live as long as the process, and each full collection walked all of them again (docs/bench.md)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def mode_left_unset(argv: Sequence[str], config_dir: Path) -> bool:
    """True when Hydra's `hydra.mode` is certainly unset: no flag on the command line (`-m`, `--multirun`,
    `--config-dir`, `--cfg`, ...), no `hydra.` override (a search path could bring a file that sets it) and no
    mention of a multirun in its overrides or in any file of `config_dir`."""
    if any(arg.startswith("-") or arg.lstrip("+~").startswith("hydra.") or "multirun" in arg.lower() for arg in argv):
        return False
    return not any("multirun" in path.read_text(errors="replace").lower() for path in config_dir.rglob("*.yaml"))


@contextmanager
def composed_once(known_unset: bool) -> Iterator[None]:
    """Hydra composes a run's whole config twice: once only to read `hydra.mode` (`Hydra.get_mode`), then again to
    run. When that mode is known to be unset (`mode_left_unset`), the first composition's answer, None, is given
    without it (0.2-0.3 s of a run's start-up): Hydra then runs the job exactly as before (`hydra.mode=RUN`)."""
    if not known_unset:
        yield
        return
    from hydra._internal.hydra import Hydra

    composing = Hydra.get_mode
    Hydra.get_mode = lambda self, config_name, overrides: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        Hydra.get_mode = composing  # type: ignore[method-assign]


def sqlite_store_expected(overrides: Sequence[str]) -> bool:
    """Whether the run's tracking store is the project's sqlite one: unless the command line picks another
    (`tracking=`, `tracking.uri=`) or `$MLFLOW_TRACKING_URI` does. A guess that decides only when the store's
    modules are imported, never which store is used."""
    chosen = os.environ.get(TRACKING_URI_ENV, "sqlite:")
    return chosen.startswith("sqlite:") and not any(o.lstrip("+~").startswith("tracking") for o in overrides)


def main() -> None:
    """`prism-run`: choices and the runs directory are checked before Hydra creates anything; a config error
    (exit 2) leaves no folder behind, the runs directory the check created included (and a `hydra.run.dir=`
    outside it)."""
    overrides = [arg for arg in sys.argv[1:] if "=" in arg and not arg.startswith("-")]
    with _imports_kept():
        import prism_experiments.harness.job  # noqa: F401  (the run's modules: MLflow, pandas, the simulation)
        from prism_experiments.config import ConfigError
        from prism_experiments.harness.preflight import check_group_choices, check_runs_dir

        if sqlite_store_expected(overrides):  # MLflow imports it at the first client: 0.7 CPU-s, 100,000 objects
            import mlflow.store.tracking.sqlalchemy_store  # noqa: F401
    runs_dir = runs_dir_from(overrides)
    run_dir = override_value(overrides, RUN_DIR_OVERRIDE)
    # each folder this command may create, with the nearest folder that exists before it runs (None: it exists)
    existed = {
        folder: nearest_existing(folder) for folder in (runs_dir, *([Path(run_dir).resolve()] if run_dir else []))
    }

    def remove_created() -> None:
        for folder, before in existed.items():
            remove_created_folders(folder, before)

    try:
        check_group_choices(overrides, CONFIG_DIR)
        check_runs_dir(runs_dir)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        remove_created()
        raise SystemExit(2) from None
    quiet_store_tracebacks()  # the sweep driver's callbacks talk to the store too
    interrupt_on_sigterm(forward_to_children=True)
    try:
        with composed_once(mode_left_unset(sys.argv[1:], CONFIG_DIR)):
            hydra_main()
    except SystemExit as stop:
        if stop.code == 2:
            remove_created()
        raise
    except KeyboardInterrupt as interrupt:
        name = interrupt_name(interrupt)
        if not getattr(interrupt, "prism_reported", False):
            print(f"prism-run: interrupted ({name}); runs in progress are marked KILLED", file=sys.stderr)
        raise SystemExit(128 + (signal.SIGTERM if name == "SIGTERM" else signal.SIGINT)) from None
    finally:
        # the process ends here and its memory with it: the interpreter's full collections at exit need not walk
        # every object still alive (the run's world, tables and caches): 1-2 s after a research run (docs/bench.md)
        gc.freeze()


if __name__ == "__main__":
    main()
