"""A damaged embedding-cache shard is quarantined and re-encoded, never used and never fatal."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from prism_experiments.embeddings.cache import QUARANTINE_DIR, EmbeddingCache, text_digest

TEXTS = [f"post number {i} about the weather" for i in range(6)]


def _filled_cache(directory: Path) -> tuple[list[bytes], np.ndarray, Path]:
    digests = [text_digest(text) for text in TEXTS]
    vectors = np.random.default_rng(0).standard_normal((len(TEXTS), 8)).astype(np.float32)
    EmbeddingCache(directory).add(digests, vectors)
    (shard,) = directory.glob("*.npz")
    return digests, vectors, shard


def _truncate(shard: Path) -> None:
    data = shard.read_bytes()
    shard.write_bytes(data[: len(data) // 2])


def _flip_a_bit(shard: Path) -> None:
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01
    shard.write_bytes(bytes(data))


def _shuffle_vectors(shard: Path) -> None:
    """A readable, well-formed shard whose vectors no longer belong to their keys."""
    with np.load(shard) as data:
        keys, vectors, checksum = data["keys"], data["vectors"], data["checksum"]
    with open(shard, "wb") as handle:
        np.savez(handle, keys=keys, vectors=vectors[::-1], checksum=checksum)


def _drop_checksum(shard: Path) -> None:
    with np.load(shard) as data:
        keys, vectors = data["keys"], data["vectors"]
    with open(shard, "wb") as handle:
        np.savez(handle, keys=keys, vectors=vectors)


@pytest.mark.parametrize("damage", [_truncate, _flip_a_bit, _shuffle_vectors, _drop_checksum])
def test_damaged_shard_is_quarantined_with_its_path_logged(
    damage, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    digests, _, shard = _filled_cache(tmp_path)
    damage(shard)
    with caplog.at_level(logging.WARNING, logger="prism_experiments.embeddings.cache"):
        cache = EmbeddingCache(tmp_path)
    assert (cache.rows(digests) == -1).all(), "nothing from a damaged shard is used"
    assert not shard.exists()
    (moved,) = (tmp_path / QUARANTINE_DIR).iterdir()
    assert moved.name.startswith(shard.stem)
    assert str(shard) in caplog.text and str(moved) in caplog.text


def test_intact_shard_is_read_back_exactly(tmp_path: Path) -> None:
    digests, vectors, _ = _filled_cache(tmp_path)
    cache = EmbeddingCache(tmp_path)
    np.testing.assert_array_equal(cache.matrix()[cache.rows(digests)], vectors)
    assert not (tmp_path / QUARANTINE_DIR).exists()


@pytest.mark.integration
def test_embedder_re_encodes_the_texts_of_a_damaged_shard(tmp_path: Path) -> None:
    from prism_experiments.embeddings import Embedder

    first = Embedder(cache_dir=tmp_path)
    expected = first.encode(TEXTS)
    (shard,) = tmp_path.rglob("*.npz")
    _shuffle_vectors(shard)
    second = Embedder(cache_dir=tmp_path)
    np.testing.assert_array_equal(second.encode(TEXTS), expected)
    assert second.encoded_count == len(TEXTS)
    third = Embedder(cache_dir=tmp_path)  # the re-encoded shard is good: nothing is encoded again
    np.testing.assert_array_equal(third.encode(TEXTS), expected)
    assert third.encoded_count == 0


def test_a_filesystem_without_locks_warns_once_and_the_cache_still_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import errno

    from prism_experiments.embeddings import cache as cache_module

    def no_locks(handle: object, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(cache_module.fcntl, "flock", no_locks)
    writer, other = EmbeddingCache(tmp_path), EmbeddingCache(tmp_path)
    rng = np.random.default_rng(0)
    for round_ in range(3):  # two unlocked writers interleave; every vector written stays readable
        for cache, name in ((writer, "w"), (other, "o")):
            with caplog.at_level(logging.WARNING), cache.exclusive():
                cache.add([text_digest(f"{name}{round_}")], rng.normal(size=(1, 4)).astype(np.float32))
    assert sum("refuses locks" in r.message for r in caplog.records) == 2  # once per cache object
    reader = EmbeddingCache(tmp_path)
    assert len(reader) == 6

    def broken(handle: object, operation: int) -> None:
        raise OSError(errno.EBADF, "Bad file descriptor")

    monkeypatch.setattr(cache_module.fcntl, "flock", broken)
    with pytest.raises(OSError, match="Bad file descriptor"), reader.exclusive():
        pass


@pytest.mark.integration
def test_a_cache_given_as_its_embeddings_folder_is_the_same_cache(tmp_path: Path, warm_smoke_cache: Path) -> None:
    """`rag.cache_dir=<cache>/embeddings` (the folder a user sees the vectors in) made `<cache>/embeddings/embeddings`
    and encoded every text again: a run given either path reads the same warm cache and encodes nothing."""
    from process_helpers import all_runs, prism

    embeddings = warm_smoke_cache / "embeddings"
    result = prism(
        "experiment=smoke",
        "simulation.n_steps=2",
        f"rag.cache_dir={embeddings}",
        "tracking.log_figures=false",
        runs_dir=tmp_path / "runs",
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert not (embeddings / "embeddings").exists(), "no second cache inside the first"
    assert "not in the cache" not in output, "every text came from the warm cache"
    (run,) = all_runs(tmp_path / "runs")
    assert run.info.status == "FINISHED" and run.data.tags["prism.cache_dir"] == str(warm_smoke_cache)
