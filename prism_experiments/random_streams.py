"""Common random numbers: independent, keyed random streams from one seed (docs/model.md, "Common random numbers").

Setup components (corpus, population, graph, ranker) each get their own child of one
`numpy.random.SeedSequence`. Per-step draws are keyed, not sequential: the uniform for
(stream, step, agent, slot) is a pure function of those numbers, a counter-based generator in the
sense of Salmon et al. 2011 ("Parallel random numbers: as easy as 1, 2, 3"), here with the
SplitMix64 finaliser (Steele, Lea & Flood 2014) as the mixing function. Two runs that differ only
in the ranker therefore draw identical numbers for the same (step, agent, slot), whatever each
ranker shows.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import numpy as np


class Stream(IntEnum):
    CORPUS = 1
    POPULATION = 2
    NETWORK = 3
    ACTIVATION = 4
    BEHAVIOUR = 5
    AUTHORING = 6
    RANKER = 7
    TEXT = 8
    DECIDER = 9
    SERVING = 10  # stochastic serving's draws (simulation/serving.py)
    APPEAL = 11  # each post's latent appeal (corpus/appeal.py)
    POLITICS = 12  # each post's political attributes (politics/content.py)


#: Slots of the behaviour stream for feed position i: BEHAVIOUR_SLOTS * i + offset.
LOOK, LIKE, RESHARE, REPLY, FOLLOW = range(5)
BEHAVIOUR_SLOTS = 5

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _splitmix64(x: Any) -> Any:
    z = (x + _GOLDEN) & _MASK
    z = ((z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _MASK
    z = ((z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _MASK
    return z ^ (z >> np.uint64(31))


def keyed_uniforms(seed: int, stream: int, step: int, agents: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """(len(agents), len(slots)) uniforms in [0, 1), each fixed by (seed, stream, step, agent, slot)."""
    with np.errstate(over="ignore"):
        key = _splitmix64(np.uint64(seed & 0xFFFFFFFFFFFFFFFF) ^ np.uint64(stream))
        key = _splitmix64(key ^ np.uint64(step & 0xFFFFFFFFFFFFFFFF))
        agent_keys = _splitmix64(key ^ np.asarray(agents, dtype=np.uint64).reshape(-1))
        mixed = _splitmix64(agent_keys[:, None] ^ np.asarray(slots, dtype=np.uint64).reshape(1, -1))
    # the top 53 bits make a double in [0, 1)
    return (mixed >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


def component_seed(seed: int, stream: Stream) -> np.random.SeedSequence:
    """The seed sequence of one setup component."""
    return np.random.SeedSequence(seed, spawn_key=(int(stream),))


def keyed_generator(seed: int, stream: Stream, *key: int) -> np.random.Generator:
    """A generator for one (stream, key...) cell, e.g. the text of the post agent 7 writes at step 3."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(int(stream), *key)))
