"""Checks the driver makes before Hydra starts anything: one line and exit 2 instead of a traceback.

Hydra reports an unknown config-group option with a 16-line block, creates its output directory
before any of our code runs, and turns a sweep callback's exception into a warning; so invalid
choices, an unusable runs directory, a missing corpus file and an unreachable tracking server are
caught here, before any run or job exists.
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

#: Seconds the driver waits for a tracking server's /health before giving up.
SERVER_CHECK_TIMEOUT_S = 5.0


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


def check_corpus_file(cfg: ExperimentConfig) -> None:
    """ConfigError unless a `corpus=file` corpus loads (read once here, in the driver, before any run)."""
    if cfg.corpus.source != "file" or cfg.corpus.path is None:
        return
    from prism_experiments.corpus.loader import CorpusFileError, load_posts

    try:
        load_posts(cfg.corpus.path)
    except (CorpusFileError, FileNotFoundError) as error:
        raise ConfigError(f"config error: corpus.path: {error}") from None


def check_experiment(cfg: ExperimentConfig, tracking_uri: str) -> None:
    """Everything a run needs from outside its config: a writable runs dir, the corpus file, the server."""
    check_runs_dir(cfg.paths.runs_dir)
    check_corpus_file(cfg)
    check_tracking_server(tracking_uri)
