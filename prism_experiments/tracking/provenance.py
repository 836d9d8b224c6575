"""What code produced a run: the git commit and the versions of the packages that matter."""

from __future__ import annotations

import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path

from prism_experiments.locations import PROJECT_ROOT

PACKAGES: tuple[str, ...] = (
    "prism-experiments",
    "mlflow",
    "chromadb",
    "sentence-transformers",
    "torch",
    "hydra-core",
    "numpy",
    "pandas",
)


@cache
def git_commit(root: Path = PROJECT_ROOT) -> str:
    """HEAD's commit, with `+dirty` when tracked files have uncommitted changes; `unknown` outside git."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{commit}+dirty" if dirty else commit


@cache
def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions
