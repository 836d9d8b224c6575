"""On-disk embedding cache: sha256(text) -> vector, one folder per model.

Shards are written atomically (temporary file, then rename) under unique names, so
parallel workers never read a half-written file; many small shards are merged. Each shard
carries a sha256 of its keys and vectors: a shard that cannot be read, or whose contents no
longer match its checksum (a truncated copy, a bit flip, vectors reordered by a script), is
moved to `quarantine/` with a warning naming it, and its texts are encoded again.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import logging
import os
import time
import uuid
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

_MERGE_AT = 32  # shards in a folder before they are merged into one
QUARANTINE_DIR = "quarantine"
log = logging.getLogger(__name__)


#: flock errors meaning "this filesystem does not lock" (e.g. NFS without lockd, some Lustre mounts)
_NO_LOCKING = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}


def _warn_unlocked(directory: Path, error: OSError) -> None:
    """Workers may now encode the same texts at the same time."""
    log.warning(
        "embedding cache %s: the filesystem refuses locks (%s); continuing unlocked, so concurrent "
        "workers may encode the same texts twice (the vectors stay correct)",
        directory,
        error.strerror,
    )


class DamagedShardError(ValueError):
    """A shard that cannot be read or whose contents do not match its checksum."""


def shard_checksum(keys: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """sha256 over the shard's digest bytes and float32 vectors, as 32 uint8."""
    digest = hashlib.sha256(np.ascontiguousarray(keys, dtype=np.uint8).tobytes())
    digest.update(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
    return np.frombuffer(digest.digest(), dtype=np.uint8)


def read_shard(path: Path) -> tuple[list[bytes], np.ndarray]:
    """(digests, vectors) of a shard, or DamagedShardError; FileNotFoundError if it is gone."""
    try:
        with np.load(path) as data:
            if "checksum" not in data.files:
                raise DamagedShardError("no checksum (written before checksums, or not by PRISM)")
            keys, vectors, checksum = data["keys"], data["vectors"], data["checksum"]
    except FileNotFoundError:
        raise
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise DamagedShardError(f"unreadable ({type(error).__name__}: {error})") from None
    keys = np.asarray(keys)
    if keys.ndim != 2 or keys.shape[1] != 32 or vectors.ndim != 2 or len(vectors) != len(keys):
        raise DamagedShardError(f"bad shapes: keys {keys.shape}, vectors {vectors.shape}")
    if not np.array_equal(checksum, shard_checksum(keys, vectors)):
        raise DamagedShardError("contents do not match the shard's checksum")
    return _digests_from_array(keys), vectors


def text_digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    """Vectors by text digest, kept in memory and persisted as `.npz` shards."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self._rows: dict[bytes, int] = {}
        self._blocks: list[np.ndarray] = []
        self._block_starts: list[int] = []
        self._size = 0
        self._seen_shards: set[str] = set()
        self._warned_unlocked = False
        self.refresh()

    def __len__(self) -> int:
        return self._size

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the folder's lock (between processes): check, encode and write as one step.

        The lock only saves duplicate encoding; correctness never depends on it (unique shard
        names, atomic renames, deterministic vectors). A filesystem without `flock` (some shared
        filesystems mounted without lock support) gets a warning and proceeds unlocked.
        """
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / ".lock", "w") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX)
            except OSError as error:
                if error.errno not in _NO_LOCKING:
                    raise
                if not self._warned_unlocked:  # once per cache, not once per batch
                    self._warned_unlocked = True
                    _warn_unlocked(self.directory, error)
                yield
                return
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def refresh(self) -> None:
        """Pick up shards written by other processes since the last look."""
        if not self.directory.is_dir():
            return
        for shard in sorted(self.directory.glob("*.npz")):
            if shard.name in self._seen_shards:
                continue
            try:
                keys, vectors = read_shard(shard)
            except FileNotFoundError:
                continue  # merged away by another process
            except DamagedShardError as error:
                self._quarantine(shard, str(error))
                continue
            self._seen_shards.add(shard.name)
            self._append(keys, vectors)

    def _quarantine(self, shard: Path, reason: str) -> None:
        """Move a damaged shard aside (kept for inspection); its texts are simply missing and re-encoded."""
        target = self.directory / QUARANTINE_DIR / f"{shard.stem}-{time.strftime('%Y%m%d-%H%M%S')}.npz"
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shard.replace(target)
        except FileNotFoundError:
            return  # another process moved it first
        log.warning(
            "embedding cache: shard %s is damaged (%s); moved to %s, its texts will be encoded again",
            shard,
            reason,
            target,
        )

    def _append(self, keys: list[bytes], vectors: np.ndarray) -> None:
        fresh = [i for i, key in enumerate(keys) if key not in self._rows]
        if not fresh:
            return
        block = np.ascontiguousarray(vectors[fresh], dtype=np.float32)
        self._block_starts.append(self._size)
        self._blocks.append(block)
        for offset, i in enumerate(fresh):
            self._rows[keys[i]] = self._size + offset
        self._size += len(fresh)

    def rows(self, digests: Sequence[bytes]) -> np.ndarray:
        """Row of each digest in `matrix()`, -1 where the text has not been embedded yet."""
        get = self._rows.get
        return np.fromiter((get(digest, -1) for digest in digests), dtype=np.int64, count=len(digests))

    def matrix(self) -> np.ndarray:
        """Every cached vector, one row each, in row order."""
        if len(self._blocks) > 1:
            self._compact_memory()
        return self._blocks[0] if self._blocks else np.zeros((0, 0), dtype=np.float32)

    def _compact_memory(self) -> None:
        self._blocks = [np.concatenate(self._blocks, axis=0)]
        self._block_starts = [0]

    def add(self, digests: Sequence[bytes], vectors: np.ndarray) -> None:
        """Remember and persist new vectors."""
        if len(digests) == 0:
            return
        self._append(list(digests), vectors)
        self.directory.mkdir(parents=True, exist_ok=True)
        name = f"{uuid.uuid4().hex}.npz"
        self._write_shard(self.directory / name, _digests_to_array(digests), vectors)
        self._seen_shards.add(name)
        if len(self._seen_shards) >= _MERGE_AT:
            self._merge_shards()

    @staticmethod
    def _write_shard(path: Path, keys: np.ndarray, vectors: np.ndarray) -> None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        vectors = np.asarray(vectors, dtype=np.float32)
        with open(tmp, "wb") as handle:
            np.savez(handle, keys=keys, vectors=vectors, checksum=shard_checksum(keys, vectors))
        tmp.replace(path)

    def _merge_shards(self) -> None:
        """Fold every shard into one file: the merged file is in place before any old one goes."""
        self.refresh()
        self._compact_memory()
        ordered = sorted(self._rows.items(), key=lambda item: item[1])
        keys = _digests_to_array([key for key, _ in ordered])
        name = f"{uuid.uuid4().hex}.npz"
        self._write_shard(self.directory / name, keys, self._blocks[0])
        for old in self._seen_shards:
            (self.directory / old).unlink(missing_ok=True)
        self._seen_shards = {name}


def _digests_to_array(digests: Sequence[bytes]) -> np.ndarray:
    """(n, 32) uint8: raw digest bytes (numpy's "S32" would drop a digest's trailing zero bytes)."""
    return np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(len(digests), 32)


def _digests_from_array(keys: np.ndarray) -> list[bytes]:
    return [row.tobytes() for row in np.asarray(keys, dtype=np.uint8).reshape(-1, 32)]
