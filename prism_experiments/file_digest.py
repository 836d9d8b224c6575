"""Content digests of a run's input files (graph, population, corpus): part of its config, its hash and its tags."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

_BLOCK = 1 << 20


def stat_key(path: Path) -> tuple[str, int, int, int]:
    """(path, size, mtime in ns, inode): changes whenever the file is rewritten, so caches keyed on it stay true."""
    info = path.stat()
    return str(path), info.st_size, info.st_mtime_ns, info.st_ino


@lru_cache(maxsize=16)
def _sha256(key: tuple[str, int, int, int]) -> str:
    digest = hashlib.sha256()
    with open(key[0], "rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """The sha256 of the file's bytes (hex), computed once per version of the file in a process."""
    return _sha256(stat_key(path))


def checked_sha256(field: str, path: Path, recorded: str | None) -> str:
    """The file's sha256; ValueError (one line naming `field`) when `recorded` is set and differs, or when `path`
    is missing or not a file."""
    if not path.exists():
        raise ValueError(f"{field.rsplit('.', 1)[0]}.path: {path}: no such file")
    if not path.is_file():
        raise ValueError(f"{field.rsplit('.', 1)[0]}.path: {path}: is a directory, not a file")
    actual = file_sha256(path)
    if recorded is not None and recorded != actual:
        raise ValueError(
            f"{field}: {path} has changed since the config was written: its sha256 is now {actual[:12]}…, the "
            f"config (a logged run) names {recorded[:12]}…; restore that file, or drop {field} to accept this one"
        )
    return actual
