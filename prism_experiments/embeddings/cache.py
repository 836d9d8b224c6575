"""On-disk embedding cache: sha256(text) -> vector, one folder per model.

Shards are written atomically (temporary file, then rename) under unique names, so
parallel workers never read a half-written file; many small shards are merged.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

_MERGE_AT = 32  # shards in a folder before they are merged into one


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
        self.refresh()

    def __len__(self) -> int:
        return self._size

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the folder's lock (between processes): check, encode and write as one step."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / ".lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
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
                with np.load(shard) as data:
                    keys, vectors = data["keys"], data["vectors"]
            except (FileNotFoundError, OSError, ValueError, KeyError):
                continue  # merged away or being replaced by another process
            self._seen_shards.add(shard.name)
            self._append(_digests_from_array(keys), vectors)

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
        with open(tmp, "wb") as handle:
            np.savez(handle, keys=keys, vectors=np.asarray(vectors, dtype=np.float32))
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
    if keys.dtype.kind == "S":  # shards of the first format: numpy stripped trailing zero bytes, put them back
        return [key.ljust(32, b"\0") for key in keys.tolist()]
    return [row.tobytes() for row in np.asarray(keys, dtype=np.uint8).reshape(-1, 32)]
