"""The sweep callback: before any worker starts, validate every job, initialise the store once and
open the parent run; after the last job, close it and fail loudly if any job failed."""

from __future__ import annotations

import atexit
import copy
import logging
import os
import re
import shlex
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from prism_experiments.composition import experiment_config
from prism_experiments.config import ConfigError, ExperimentConfig, world_size_warning
from prism_experiments.harness.job import finished_runs_by_hash
from prism_experiments.harness.preflight import (
    check_corpus_file,
    check_runs_dir,
    check_sweep_memory,
    check_tracking_server,
    launcher_memory_plan,
    this_process_limit,
)
from prism_experiments.harness.recovery import (
    close_interrupted_jobs,
    failure_lines,
    read_outcome,
)
from prism_experiments.harness.sweep_file import SWEEP_FILE_ENV, SWEEP_FILE_NAME, SweepFile
from prism_experiments.harness.sweep_summary import log_sweep_summary, log_texts_encoded
from prism_experiments.harness.upfront_embedding import embed_starting_corpora
from prism_experiments.ops.liveness import HEARTBEAT_TAG, Heartbeat, live_holder, liveness_tags, reap_stale_runs
from prism_experiments.tracking.errors import error_line
from prism_experiments.tracking.experiment_note import sweep_note, write_sweep_note
from prism_experiments.tracking.experiment_views import apply_view_tags
from prism_experiments.tracking.labels import override_values, varying_override_keys
from prism_experiments.tracking.limits import fit_tag
from prism_experiments.tracking.params import config_hash
from prism_experiments.tracking.provenance import git_commit
from prism_experiments.tracking.run_logger import log_params
from prism_experiments.tracking.store import apply_http_budget, client_for, ensure_experiment, resolve_tracking_uri
from prism_experiments.tracking.tags import (
    ERROR_TAG,
    GIT_COMMIT_TAG,
    JOBS_TAG,
    JOBS_TO_RUN_TAG,
    KIND_TAG,
    SIMULATION_KIND,
    SWEEP_ID_TAG,
    SWEEP_KIND,
    VARYING_TAG,
    tag_equals,
)

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

log = logging.getLogger("prism_experiments")
T = TypeVar("T")


def job_overrides(config: DictConfig) -> list[list[str]]:
    """Every job's overrides, in Hydra's BasicSweeper order (sweeper params, then the command line)."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

    params = [f"{k}={v}" for k, v in (config.hydra.sweeper.get("params") or {}).items()]
    arguments = [str(item) for item in config.hydra.overrides.task]
    parser = OverridesParser.create(config_loader=GlobalHydra.instance().config_loader())
    return BasicSweeper.split_arguments(parser.parse_overrides(params + arguments), None)[0]


def validated_job_configs(
    config: DictConfig, jobs: list[list[str]], desc: str = "validating jobs"
) -> tuple[list[ExperimentConfig], int]:
    """Every job's validated config (ConfigError at the first invalid one), and how many Hydra compositions that took
    (`desc` labels the progress bar on stderr, shown from 20 jobs on).

    A composition costs ~0.13 s, and OmegaConf's resolution of a whole config ~0.1 s more; a sweep's jobs mostly
    differ in plain values (`seed=3`, `ranking.x=0.5`). Jobs of one shape (the same group choices and other
    overrides, plain values aside) share the composition of the first: each of the others sets its own plain values
    on a copy of that job's resolved values, which is what Hydra's composition gives (it applies plain values after
    composing: `ConfigLoaderImpl._apply_overrides_to_config`), unless an interpolation of the config may read one of
    them (aa's `${prism.arm:${seed},...}`): then the values go through OmegaConf again. Each is validated on its own."""
    loader = GlobalHydra.instance().config_loader()
    parser = OverridesParser.create(config_loader=loader)
    shapes: dict[tuple[str, ...], _Shape] = {}
    configs = []
    for overrides in _bar(jobs, desc, "job"):
        shape, values = [], []
        for text, override in zip(overrides, parser.parse_overrides(overrides)):
            plain = _plain_value(override, loader)
            shape.append(f"{override.key_or_group}=" if plain else text)
            if plain:
                values.append(override)
        known = shapes.get(key := tuple(shape))
        if known is None:
            shapes[key] = _Shape.composed(loader.load_sweep_config(config, list(overrides)))
            configs.append(experiment_config(shapes[key].unresolved))
        else:
            configs.append(known.with_values(values))
    return configs, len(shapes)


def _plain_value(override: Any, loader: Any) -> bool:
    """A `key=value` of one value (not a group choice, a sweep, an addition or a deletion), as Hydra's defaults list
    tells them apart (`hydra._internal.defaults_list.Overrides`)."""
    from hydra.core.override_parser.types import OverrideType, ValueType

    repository = getattr(loader, "repository", None)
    return (
        repository is not None
        and override.type == OverrideType.CHANGE
        and override.value_type == ValueType.ELEMENT
        and override.package is None
        and isinstance(override.value(), (str, int, float, bool))
        and not repository.group_exists(override.key_or_group)
    )


class _Shape:
    """The composed config of the first job of a shape, unresolved and resolved, and the text of its interpolations."""

    def __init__(self, unresolved: DictConfig, resolved: dict[str, Any], interpolations: str) -> None:
        self.unresolved, self.resolved, self.interpolations = unresolved, resolved, interpolations

    @classmethod
    def composed(cls, cfg: DictConfig) -> _Shape:
        data = OmegaConf.to_container(cfg, resolve=False)
        assert isinstance(data, dict)
        data.pop("hydra", None)  # Hydra's own node resolves only inside a running job
        unresolved = OmegaConf.create(data)
        try:
            resolved = OmegaConf.to_container(unresolved, resolve=True)
        except Exception:  # reported by experiment_config, with its one line
            resolved = {}
        interpolations = " ".join(text for text in _strings(data) if "${" in text)
        return cls(
            unresolved, {str(k): v for k, v in resolved.items()} if isinstance(resolved, dict) else {}, interpolations
        )

    def with_values(self, values: list[Any]) -> ExperimentConfig:
        """The validated config of a job of this shape with its own plain values."""
        from hydra._internal.config_loader_impl import ConfigLoaderImpl

        resolved = copy.deepcopy(self.resolved)
        if self.resolved and all(self._set(resolved, value) for value in values):
            return ExperimentConfig.from_mapping(resolved)
        job = copy.deepcopy(self.unresolved)
        ConfigLoaderImpl._apply_overrides_to_config(values, job)
        return experiment_config(job)

    def _set(self, resolved: dict[str, Any], override: Any) -> bool:
        """Set the value in the resolved values; False when only OmegaConf can (an interpolation may read the key,
        the value is one, or the key is not there)."""
        value: Any = override.value()
        *parents, name = str(override.key_or_group).split(".")
        if re.search(rf"\b{re.escape(name)}\b", self.interpolations):
            return False
        if isinstance(value, str) and ("${" in value or value == "???"):
            return False
        node: Any = resolved
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict) or name not in node:
            return False
        node[name] = value
        return True


def _strings(data: Any) -> Iterator[str]:
    """Every string in nested dicts and lists."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for value in data.values():
            yield from _strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from _strings(value)


def describe_experiment(
    client: MlflowClient,
    experiment_id: str,
    experiment: str,
    jobs: list[list[str]],
    configs: list[ExperimentConfig],
    varying: list[str],
    parent_id: str,
    sweep_id: str,
) -> None:
    """The experiment's note (what varies, seeds, command, parent run) and its runs-view tags (docs/review.md)."""
    varies = {key: ", ".join(values) for key, values in override_values(jobs, varying).items() if key != "seed"}
    command = shlex.join(["python", "-m", "prism_experiments", *sys.argv[1:]])
    n_seeds = len({cfg.seed for cfg in configs})
    try:
        apply_view_tags(client, experiment_id)
        write_sweep_note(
            client,
            experiment_id,
            sweep_note(experiment, varies, n_seeds, len(jobs), command, experiment_id, parent_id, sweep_id),
        )
    except Exception as exc:  # a description must never stop a sweep
        log.error("could not describe experiment %s (%s)", experiment, error_line(exc))


def prepare_launcher(config: DictConfig, runs_dir: Path) -> None:
    """The launcher's own start-up (a local Ray instance), before any run exists, so its failure is one line and
    exit 2: a launcher class may define `prepare_sweep(config, runs_dir)`."""
    from hydra.utils import get_class

    prepare = getattr(get_class(config.hydra.launcher._target_), "prepare_sweep", None)
    if prepare is not None:
        prepare(config, runs_dir)


def _embed_before_fanout(configs: list[ExperimentConfig]) -> int:
    """The starting corpora embedded once before any job starts, and how many texts that encoded; a failure stops
    the sweep before any run exists."""
    try:
        return embed_starting_corpora(
            configs,
            show_progress=any(cfg.simulation.show_progress for cfg in configs),
            worlds_dir=configs[0].paths.layout.worlds_dir if configs else None,
        ).encoded
    except Exception as exc:
        log.error("embedding the sweep's starting corpora failed before any job started: %s", error_line(exc))
        raise SystemExit(2) from None


def _bar(items: list[T], desc: str, unit: str) -> Iterator[T]:
    """`items` behind a progress bar on stderr when there are enough of them to take seconds."""
    from tqdm.auto import tqdm

    yield from tqdm(items, desc=desc, unit=unit, disable=len(items) < 20, leave=False)


class SweepCallback(Callback):
    """Hydra callback that brackets a multirun with one MLflow parent run."""

    def __init__(self, embed_before_fanout: bool = True) -> None:
        self.embed_before_fanout = embed_before_fanout
        self.sweep: SweepFile | None = None
        self.sweep_file: Path | None = None
        self.heartbeat: Heartbeat | None = None
        self.encoded_before_fanout = 0
        self.tracking_uri: str | None = None  # once resolved: named in a failed start's line

    def __getstate__(self) -> dict[str, Any]:
        """Hydra pickles its callbacks into every joblib job: the driver's heartbeat thread stays behind."""
        return self.__dict__ | {"heartbeat": None}

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        # Hydra turns a callback's Exception into a warning and goes on without a parent run; every failure
        # here stops the sweep with one line and exit 2 instead (a parent run already made is marked FAILED)
        try:
            self._start(config)
        except Exception as exc:  # not SystemExit (a BaseException): a one-line exit of its own passes through
            line = error_line(exc, store=self.tracking_uri)
            self._close_parent("FAILED", f"the sweep could not start: {line}")
            log.error("the sweep could not start: %s", line)
            raise SystemExit(2) from None

    def _start(self, config: DictConfig) -> None:
        jobs = job_overrides(config)
        log.info("sweep: composing and validating %d jobs", len(jobs))
        try:
            configs, compositions = validated_job_configs(config, jobs)
            log.info("sweep: %d jobs valid (%d distinct compositions)", len(jobs), compositions)
            first = configs[0]
            uri = self.tracking_uri = resolve_tracking_uri(first)
            # the server once, each distinct runs dir and corpus file once, before any run exists
            check_tracking_server(uri)
            for runs_dir in {cfg.paths.runs_dir for cfg in configs}:
                check_runs_dir(runs_dir)
            corpus_posts = {
                path: check_corpus_file(cfg) for path, cfg in {str(c.corpus.path): c for c in configs}.items()
            }
            plan = launcher_memory_plan(config.hydra.launcher, len(jobs))
            memory_warning = check_sweep_memory(configs, plan, corpus_posts, this_process_limit())
        except (ConfigError, HydraException) as exc:
            log.error("%s", str(exc).strip().splitlines()[0])
            raise SystemExit(2) from None
        if memory_warning:
            log.warning("%s", memory_warning)
        size_warnings = {world_size_warning(cfg.world, cfg.agents.n_agents) for cfg in configs}
        for size_warning in sorted(w for w in size_warnings if w is not None):
            log.warning("%s", size_warning)
        apply_http_budget(first)
        log.info("sweep: looking up the %d jobs' FINISHED runs in %s", len(jobs), uri)
        experiment_id = ensure_experiment(uri, first.experiment_name, first.paths.artifacts_dir)
        client = client_for(uri)
        reap_stale_runs(client, [experiment_id])
        finished_runs = finished_runs_by_hash(client, experiment_id)
        pending, finished_jobs = [], {}
        for num, (overrides, cfg) in enumerate(_bar(list(zip(jobs, configs)), "looking up finished runs", "job")):
            digest = config_hash(cfg.model_dump(mode="json"))
            finished = None if cfg.force else finished_runs.get(digest)
            if finished:
                finished_jobs[num] = (overrides, finished)
                continue
            holder = live_holder(client, experiment_id, digest, own_run_id="")
            if holder is not None:
                log.warning(
                    "job %s skipped: run %s in another live process is running it",
                    " ".join(overrides),
                    holder.info.run_id,
                )
                continue
            pending.append((overrides, cfg))
        if pending:
            prepare_launcher(config, first.paths.runs_dir)
        if pending and self.embed_before_fanout:
            self.encoded_before_fanout = _embed_before_fanout([cfg for _, cfg in pending])
        varying = varying_override_keys(jobs)
        sweep_id = f"{first.experiment_name}-{uuid.uuid4().hex[:8]}"
        self.sweep = SweepFile(sweep_id, uri, experiment_id, None, varying, len(jobs), os.getpid())
        if pending:
            parent = client.create_run(
                experiment_id,
                run_name=f"sweep {sweep_id}",
                tags={
                    KIND_TAG: SWEEP_KIND,
                    SWEEP_ID_TAG: sweep_id,
                    GIT_COMMIT_TAG: git_commit(),
                    JOBS_TAG: str(len(jobs)),
                    JOBS_TO_RUN_TAG: str(len(pending)),
                    VARYING_TAG: ",".join(varying),
                }
                | liveness_tags(),
            )
            parent_id = self.sweep.parent_run_id = parent.info.run_id
            atexit.register(self._close_if_interrupted)
            self.heartbeat = Heartbeat(lambda: client.set_tag(parent_id, HEARTBEAT_TAG, f"{time.time():.0f}"))
            self.heartbeat.__enter__()
            sweep_params = {f"sweep.{k}": str(v) for k, v in (config.hydra.sweeper.get("params") or {}).items()}
            sweep_params["sweep.overrides"] = " ".join(config.hydra.overrides.task)
            log_params(client, parent_id, sweep_params)
            client.log_text(parent_id, "\n".join(" ".join(o) for o in jobs) + "\n", "sweep/jobs.txt")
            describe_experiment(
                client, experiment_id, first.experiment_name, jobs, configs, varying, parent_id, sweep_id
            )
            log.info(
                "sweep %s: %d jobs, %d to run, %d already FINISHED (skipped); parent run %s",
                sweep_id,
                len(jobs),
                len(pending),
                len(jobs) - len(pending),
                parent_id,
            )
        else:
            log.info(
                "sweep %s: all %d jobs already have FINISHED runs; nothing to run (+force=true reruns)",
                sweep_id,
                len(jobs),
            )
        sweep_dir = Path(config.hydra.sweep.dir)
        # a job FINISHED before this sweep is not started (a resumed sweep starts no process for it, and writes no
        # folder for it: a "nothing to do" re-run of 200 jobs wrote 200)
        for num, (overrides, _) in finished_jobs.items():
            self.sweep.finished_jobs[str(num)] = list(overrides)
        self.sweep_file = self.sweep.save(sweep_dir / SWEEP_FILE_NAME)
        os.environ[SWEEP_FILE_ENV] = str(self.sweep_file)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        # as at the start: an exception here would be a warning and the sweep would exit 0
        try:
            self._end(config)
        except Exception as exc:
            log.error(
                "the sweep's end could not be recorded (%s); its jobs' outcomes: %s",
                error_line(exc),
                Path(config.hydra.sweep.dir),
            )
            raise SystemExit(1) from None

    def _end(self, config: DictConfig) -> None:
        """List every failed job and exit 1 if there is one, whether or not the store still answers."""
        sweep = self.sweep
        os.environ.pop(SWEEP_FILE_ENV, None)
        self._stop_heartbeat()
        if sweep is None:
            return
        sweep_dir = Path(config.hydra.sweep.dir)
        outcomes = {
            num: read_outcome(sweep_dir, num) for num in range(sweep.n_jobs) if str(num) not in sweep.finished_jobs
        }
        client = client_for(sweep.tracking_uri)
        try:
            children = client.search_runs(
                [sweep.experiment_id],
                filter_string=f"{tag_equals(SWEEP_ID_TAG, sweep.sweep_id)} and {tag_equals(KIND_TAG, SIMULATION_KIND)}",
                max_results=10_000,
            )
        except Exception as exc:  # the store is gone: report from the jobs' own outcome files
            children = None
            log.error(
                "the tracking store at %s is unreachable (%s); the next sweep reaps what it left RUNNING",
                sweep.tracking_uri,
                error_line(exc),
            )
        lines = failure_lines(children, outcomes, sweep_dir)
        if children is not None and sweep.parent_run_id is not None:
            try:
                log_sweep_summary(client, sweep.parent_run_id, children)
                log_texts_encoded(client, sweep.parent_run_id, self.encoded_before_fanout, children)
            except Exception as exc:
                log.error("could not log the sweep summary to parent run %s (%s)", sweep.parent_run_id, error_line(exc))
        if sweep.parent_run_id is not None:
            self._close_parent("FAILED" if lines else "FINISHED")
        if lines:
            log.error("%d of %d jobs failed:\n  %s", len(lines), sweep.n_jobs, "\n  ".join(lines))
            raise SystemExit(1)

    def _close_parent(self, status: str, error: str | None = None) -> None:
        """End the parent run (if one was made); a store that refuses is reported, the reaper closes it later."""
        self._stop_heartbeat()
        if self.sweep is None or self.sweep.parent_run_id is None:
            return
        try:
            client = client_for(self.sweep.tracking_uri)
            if error is not None:
                client.set_tag(self.sweep.parent_run_id, ERROR_TAG, fit_tag(error))
            client.set_terminated(self.sweep.parent_run_id, status)
        except Exception as exc:
            log.error(
                "could not close the sweep's parent run %s (%s); the next sweep's reaper will",
                self.sweep.parent_run_id,
                error_line(exc),
            )

    def _stop_heartbeat(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.__exit__(None, None, None)
            self.heartbeat = None

    def _close_if_interrupted(self) -> None:
        """At exit (Ctrl-C or SIGTERM included), a parent run still RUNNING is marked KILLED, and so is every
        job run of this sweep whose process on this machine is gone (loky SIGKILLs its workers on an abort)."""
        if self.sweep is None or self.sweep.parent_run_id is None:
            return
        try:
            client = client_for(self.sweep.tracking_uri)
            if client.get_run(self.sweep.parent_run_id).info.status != "RUNNING":
                return
            client.set_terminated(self.sweep.parent_run_id, "KILLED")
            close_interrupted_jobs(client, self.sweep)
        except Exception:  # the interpreter is going down; the next sweep's reaper closes what is left
            pass
