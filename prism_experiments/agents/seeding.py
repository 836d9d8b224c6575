"""Named, independent random streams derived from one seed without mutating it.

Common random numbers (docs/model.md, "Common random numbers"): every component draws from its own stream, so
changing one component's parameters never shifts another component's draws.
"""

from __future__ import annotations

import zlib

import numpy as np

Seed = int | np.random.SeedSequence


def as_seed_sequence(seed: Seed) -> np.random.SeedSequence:
    """`seed` as a SeedSequence; ints must be non-negative (numpy's rule)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: must be a non-negative int or a numpy.random.SeedSequence, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def stream_rng(seed: Seed, namespace: str, index: int) -> np.random.Generator:
    """Generator(PCG64) for stream `index` of `namespace`, a child of `seed`.

    The child is built from the parent's entropy and spawn key plus
    (crc32(namespace), index) instead of `SeedSequence.spawn`, which mutates the
    parent; the namespace keeps it apart from the small-integer children a caller
    may spawn from the same parent.
    """
    parent = as_seed_sequence(seed)
    child = np.random.SeedSequence(
        entropy=parent.entropy,
        spawn_key=(*parent.spawn_key, zlib.crc32(namespace.encode()), index),
        pool_size=parent.pool_size,
    )
    return np.random.Generator(np.random.PCG64(child))
