"""Checks the driver makes before Hydra starts anything: one line and exit 2 instead of a traceback.

Hydra reports an unknown config-group option with a 16-line block, creates its output directory
before any of our code runs, and turns a sweep callback's exception into a warning; so invalid
choices, an unusable runs directory, a missing corpus file and an unreachable tracking server are
caught here, before any run or job exists. So is a run too big for the memory it may use (`check_memory`): its
peak estimated from its sizes (prism_experiments/memory_estimate.py) against the machine's, its cgroup's or the
SLURM job's limit (REQ-FAULT-1).
"""

from __future__ import annotations

import tempfile
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore

from prism_experiments.config import ConfigError, ExperimentConfig
from prism_experiments.memory_estimate import GB, RunSizes, estimate_peak_gb, run_sizes
from prism_experiments.memory_limit import MemoryLimit, MemoryPlan, process_memory_limit

#: Seconds the driver waits for a tracking server's /health before giving up.
SERVER_CHECK_TIMEOUT_S = 5.0
#: A run (or a sweep's jobs at once) estimated above this share of its memory limit gets a warning line.
MEMORY_WARNING_SHARE = 0.8
#: Where the estimate and its error are documented.
MEMORY_DOC = 'docs/bench.md, "Memory preflight"'


def stored_options(repo: dict[str, Any], group: str = "") -> dict[str, set[str]]:
    """Config group -> its options in Hydra's ConfigStore (the registries' options: `ranking`, `agents/decider`, ...),
    Hydra's own groups left out."""
    options: dict[str, set[str]] = {}
    for key, value in repo.items():
        if isinstance(value, dict):
            if not group and key == "hydra":
                continue
            options |= stored_options(value, f"{group}{key}/")
        elif group and key.endswith(".yaml"):
            options.setdefault(group.rstrip("/"), set()).add(key.removesuffix(".yaml"))
    return options


def group_options(config_dir: Path) -> dict[str, list[str]]:
    """Config group -> its options, from the folders of `conf/` and their subfolders (`agents/decider`), the
    generated `schema/` left out, and from the registries' options in Hydra's ConfigStore."""
    groups = [folder for folder in sorted(config_dir.rglob("*")) if folder.is_dir()]
    options = {
        folder.relative_to(config_dir).as_posix(): {p.stem for p in folder.glob("*.yaml")}
        for folder in groups
        if not any(part.startswith(("_", ".")) or part == "schema" for part in folder.relative_to(config_dir).parts)
    }
    for group, names in stored_options(ConfigStore.instance().repo).items():
        options[group] = options.get(group, set()) | names
    return {group: sorted(names) for group, names in options.items()}


def choice_values(value: str) -> list[str] | None:
    """The options a group override names (`a`, `a,b`, `choice(a,b)`), or None for glob()/other sweeps."""
    text = value.strip()
    if text.startswith("choice(") and text.endswith(")"):
        text = text[len("choice(") : -1]
    elif "(" in text:
        return None
    return [part.strip().strip("'\"") for part in text.split(",") if part.strip()]


def check_group_choices(overrides: Sequence[str], config_dir: Path) -> None:
    """ConfigError naming the group and its options when an override picks an option that does not exist."""
    options = group_options(config_dir)
    for override in overrides:
        key, sep, value = override.partition("=")
        group = key.lstrip("+~")
        if not sep or group not in options or key.startswith("~"):
            continue
        for choice in choice_values(value) or []:
            if choice not in options[group] and choice != "null":
                raise ConfigError(
                    f"config error: {group}: unknown option {choice!r}; allowed: {', '.join(options[group])}"
                )


def check_runs_dir(runs_dir: Path) -> None:
    """ConfigError unless `runs_dir` exists (or can be created) and is writable."""
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=runs_dir, prefix=".write-check-"):
            pass
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ConfigError(f"config error: paths.runs_dir: cannot write to {runs_dir} ({reason})") from None


def check_tracking_server(uri: str, timeout: float = SERVER_CHECK_TIMEOUT_S) -> None:
    """ConfigError unless an MLflow server answers `GET <uri>/health` within `timeout` seconds."""
    if not uri.startswith(("http://", "https://")):
        return
    try:
        with urllib.request.urlopen(f"{uri.rstrip('/')}/health", timeout=timeout) as response:
            if response.status == 200:
                return
            reason = f"HTTP {response.status}"
    except urllib.error.HTTPError as error:
        reason = f"HTTP {error.code}"
    except (urllib.error.URLError, OSError) as error:
        reason = str(getattr(error, "reason", error))
    raise ConfigError(
        f"config error: tracking.uri: no MLflow server answers at {uri} ({reason}); "
        f"start one (mlflow server --host 127.0.0.1 ...) or drop tracking=server"
    )


def check_corpus_file(cfg: ExperimentConfig) -> int | None:
    """ConfigError unless a `corpus=file` corpus loads (read once here, in the driver, before any run); its number
    of posts (None without a corpus file)."""
    if cfg.corpus.source != "file" or cfg.corpus.path is None:
        return None
    from prism_experiments.corpus.loader import CorpusFileError, load_posts

    try:
        return len(load_posts(cfg.corpus.path))
    except (CorpusFileError, FileNotFoundError) as error:
        raise ConfigError(f"config error: corpus.path: {error}") from None


def describe_sizes(sizes: RunSizes) -> str:
    """`5,000,000 agents, 5,000 posts, 48 steps, 36,735,000 follows`: what the estimate was made from."""
    return f"{sizes.agents:,} agents, {sizes.posts:,} posts, {sizes.steps:,} steps, {sizes.follows:,} follows"


def check_memory(
    estimates_gb: Sequence[float], sizes: RunSizes, plan: MemoryPlan, limit: MemoryLimit | None, force: bool
) -> str | None:
    """ConfigError when the `plan.jobs_at_once` largest of `estimates_gb` (each job's estimated peak; `sizes`: the
    largest job's) need more than `limit` (the plan's own, else this process's); a warning line when they need
    `MEMORY_WARNING_SHARE` of it or more, or more than all of it with `force` (`+force_memory=true`); else None."""
    limit = plan.limit or limit
    if not plan.known or limit is None or not estimates_gb:
        return None
    jobs = max(1, min(plan.jobs_at_once, len(estimates_gb)))
    need_gb = sum(sorted(estimates_gb, reverse=True)[:jobs])
    limit_gb = limit.bytes / GB
    share = need_gb / limit_gb
    if share < MEMORY_WARNING_SHARE:
        return None
    sweep = len(estimates_gb) > 1
    who = f"{jobs} jobs at once ({plan.setting}) need" if jobs > 1 else ("a job needs" if sweep else "this run needs")
    largest = " in the largest job" if sweep else ""
    what = f"{who} about {need_gb:.1f} GB at the peak (estimated for {describe_sizes(sizes)}{largest}; {MEMORY_DOC})"
    whose = "a job asks for" if plan.limit else "this process may use"
    where = f"the {limit_gb:.1f} GB {whose} ({limit.source})"
    if share <= 1.0:
        return f"memory: {what}: {share:.0%} of {where}"
    if force:
        return f"memory: {what}, more than {where}; going on because of +force_memory=true"
    if plan.limit:
        hint = f"ask for more ({limit.source}), make the runs smaller"
    elif jobs > 1:
        hint = f"run fewer at once ({plan.setting}), make the runs smaller"
    else:
        hint = "make the runs smaller" if sweep else "make the run smaller"
    anyway = "them" if sweep else "it"
    raise ConfigError(
        f"config error: memory: {what}, more than {where}; {hint} or run {anyway} anyway with +force_memory=true"
    )


def this_process_limit() -> MemoryLimit | None:
    """`process_memory_limit()`, with an unreadable `PRISM_MEMORY_LIMIT_GB` as the one-line config error."""
    try:
        return process_memory_limit()
    except ValueError as error:
        raise ConfigError(f"config error: {error}") from None


#: a single run: one job, within this process's limit
SINGLE_RUN = MemoryPlan(jobs_at_once=1, setting="one run")


def launcher_memory_plan(launcher: Any, jobs: int) -> MemoryPlan:
    """How a sweep's `jobs` share memory under `launcher` (the config's `hydra.launcher`): the launcher class's own
    `memory_plan(launcher, jobs)`, else joblib's `n_jobs` where its config has one, else one job at a time (Hydra's
    basic launcher)."""
    from hydra.utils import get_class

    plan = getattr(get_class(str(launcher._target_)), "memory_plan", None)
    if plan is not None:
        return plan(launcher, jobs)
    if launcher.get("n_jobs") is not None:
        from joblib import effective_n_jobs

        return MemoryPlan(min(effective_n_jobs(launcher.n_jobs), jobs), f"hydra.launcher.n_jobs={launcher.n_jobs}")
    return MemoryPlan(1, "one job at a time")


def check_sweep_memory(
    configs: Sequence[ExperimentConfig],
    plan: MemoryPlan,
    corpus_posts: dict[str, int | None],
    limit: MemoryLimit | None,
) -> str | None:
    """`check_memory` for a sweep's jobs (`corpus_posts`: each corpus file's posts, by path; `limit`: the driver's
    process's), finished ones included: it runs before the store is read. `+force_memory=true` on any job lets it
    pass."""
    sizes = [run_sizes(cfg, corpus_posts.get(str(cfg.corpus.path))) for cfg in configs]
    estimates = [estimate_peak_gb(size) for size in sizes]
    largest = sizes[estimates.index(max(estimates))]
    force = any(cfg.force_memory for cfg in configs)
    return check_memory(estimates, largest, plan, limit, force)


def check_experiment(cfg: ExperimentConfig, tracking_uri: str) -> list[str]:
    """Everything a run needs from outside its config: a writable runs dir, the corpus file, the server, the memory
    its sizes need; the warning lines to print (a run near its memory limit)."""
    check_runs_dir(cfg.paths.runs_dir)
    corpus_posts = check_corpus_file(cfg)
    check_tracking_server(tracking_uri)
    sizes = run_sizes(cfg, corpus_posts)
    warning = check_memory([estimate_peak_gb(sizes)], sizes, SINGLE_RUN, this_process_limit(), cfg.force_memory)
    return [warning] if warning else []
