"""Stochastic serving in the step loop: sample each feed from the mode's top `depth` candidates and log, per
served position, the propensities of the served policy A and of every target policy B (docs/ope.md).

Draws come from the SERVING stream keyed by (agent, time, slot), never from a shared stream, so call order and
the ranker do not matter; the propensity estimates of every policy use the same keyed draws (common random numbers).
"""

from __future__ import annotations

import zlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from prism_experiments.domain import TARGET_PREFIX, epoch_microseconds
from prism_experiments.random_streams import Stream, component_seed, keyed_generator
from prism_experiments.ranking import ModeConfig, RankedCandidate, Ranker, RankerInputs, build_ranker
from prism_experiments.ranking.serving_config import ServingConfig
from prism_experiments.ranking.serving_policy import (
    PolicySpec,
    conditional_probabilities,
    position_marginals,
    sample_slates,
    serving_scores,
)

if TYPE_CHECKING:
    from prism_experiments.agents import SocialAgent

#: slots of the SERVING stream for one (agent, time): the served slate, the propensity-estimating slates
SERVED_SLOT, MARGINALS_SLOT = 0, 1


@dataclass
class ServedFeed:
    """One agent's served feed and its propensities.

    `propensity[k]` = P_A(feed[k] at k), `conditional[k]` = P_A(feed[k] at k | feed[:k]), `targets[name][k]` =
    P_B(feed[k] at k); `candidates` is every post some policy could put somewhere, with (len, K) matrices of
    P(candidate at position) under A (`candidate_propensity`) and each B (`candidate_targets`).
    """

    feed: list[RankedCandidate]
    propensity: np.ndarray
    conditional: np.ndarray
    targets: dict[str, np.ndarray]
    candidates: list[RankedCandidate] = field(default_factory=list)
    candidate_propensity: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    candidate_targets: dict[str, np.ndarray] = field(default_factory=dict)

    def exposure_columns(self, position: int) -> dict[str, float]:
        """The serving columns of the exposure row at `position`."""
        return {
            "propensity": float(self.propensity[position]),
            "propensity_conditional": float(self.conditional[position]),
            **{f"{TARGET_PREFIX}{name}": float(values[position]) for name, values in self.targets.items()},
        }


@dataclass(frozen=True)
class Target:
    """A target policy B: its name, policy and ranker (None: the served ranker's own ranking)."""

    name: str
    spec: PolicySpec
    ranker: Ranker | None


class StochasticServer:
    """Samples feeds from ranked candidates and computes every policy's position propensities."""

    def __init__(self, config: ServingConfig, seed: int, feed_size: int, targets: Sequence[Target]) -> None:
        self.config = config
        self.seed = seed
        self.feed_size = feed_size
        self.spec = config.spec
        self.targets = list(targets)

    def _generator(self, agent_id: str, now: datetime, slot: int) -> np.random.Generator:
        return keyed_generator(
            self.seed, Stream.SERVING, zlib.crc32(agent_id.encode("utf-8")), epoch_microseconds(now) // 1_000_000, slot
        )

    def serve(
        self,
        agents: Sequence[SocialAgent],
        now: datetime,
        ranked: list[list[RankedCandidate]],
        exclude: Mapping[str, Collection[str]] | None,
    ) -> list[ServedFeed]:
        """Served feeds for the step's agents from their ranked candidates (the served ranker's, `depth` deep)."""
        shadow = {t.name: t.ranker.rank_many(agents, now, exclude) for t in self.targets if t.ranker is not None}
        out = []
        for i, (agent, candidates) in enumerate(zip(agents, ranked)):
            target_lists = {t.name: shadow[t.name][i] if t.ranker is not None else candidates for t in self.targets}
            out.append(self._serve_one(agent.id, now, candidates, target_lists))
        return out

    def _serve_one(
        self,
        agent_id: str,
        now: datetime,
        candidates: list[RankedCandidate],
        target_lists: Mapping[str, list[RankedCandidate]],
    ) -> ServedFeed:
        k = min(self.feed_size, len(candidates))
        scores = serving_scores(np.array([c.final_score for c in candidates]))
        slate = sample_slates(self.spec, scores, k, self._generator(agent_id, now, SERVED_SLOT), 1)[0]
        served = self._marginals(self.spec, scores, k, agent_id, now, slate)
        union = list(candidates)
        index = {c.row: i for i, c in enumerate(candidates)}
        target_matrices: dict[str, tuple[list[int], np.ndarray]] = {}
        for target in self.targets:
            pool = target_lists[target.name]
            if target.ranker is None and target.spec == self.spec:  # B = A: the same estimate, weights exactly 1
                target_matrices[target.name] = (list(range(len(candidates))), served)
                continue
            for c in pool:
                if c.row not in index:
                    index[c.row] = len(union)
                    union.append(c)
            target_scores = serving_scores(np.array([c.final_score for c in pool]))
            matrix = self._marginals(target.spec, target_scores, min(self.feed_size, len(pool)), agent_id, now)
            target_matrices[target.name] = ([index[c.row] for c in pool], matrix)
        logging = _embed(served, list(range(len(candidates))), len(union), k)
        targets = {name: _embed(matrix, rows, len(union), k) for name, (rows, matrix) in target_matrices.items()}
        positions = np.arange(k)
        return ServedFeed(
            feed=[candidates[j] for j in slate],
            propensity=logging[slate, positions],
            conditional=conditional_probabilities(self.spec, scores, slate),
            targets={name: matrix[slate, positions] for name, matrix in targets.items()},
            candidates=union,
            candidate_propensity=logging,
            candidate_targets=targets,
        )

    def _marginals(
        self,
        spec: PolicySpec,
        scores: np.ndarray,
        k: int,
        agent_id: str,
        now: datetime,
        served: np.ndarray | None = None,
    ) -> np.ndarray:
        """(len(scores), k) P(candidate at position), estimated from `marginal_samples` keyed slates (plus the
        served slate for A, so every served post has a positive propensity); exact for the deterministic policy."""
        if spec.policy == "deterministic":
            return position_marginals(np.arange(k)[None, :], len(scores))
        slates = sample_slates(
            spec, scores, k, self._generator(agent_id, now, MARGINALS_SLOT), self.config.marginal_samples
        )
        if served is not None:
            slates = np.vstack([slates, served[None, :]])
        return position_marginals(slates, len(scores))


def _embed(matrix: np.ndarray, rows: Sequence[int], n_rows: int, k: int) -> np.ndarray:
    """`matrix` (len(rows), k') placed at `rows` of an (n_rows, k) zero matrix (k' <= k: a shorter slate)."""
    out = np.zeros((n_rows, k))
    width = min(k, matrix.shape[1])
    out[np.asarray(rows, dtype=np.int64), :width] = matrix[:, :width]
    return out


def build_server(
    config: ServingConfig, seed: int, ranking: ModeConfig, inputs: RankerInputs, feed_size: int
) -> StochasticServer:
    """The run's server. A target with another ranking gets a shadow ranker on the run's store, graph and reshares
    (read-only) with a fresh generator of the RANKER seed (the entropy B's own run would have; no shared draws)."""
    targets = []
    for target in config.targets:
        ranker = None
        if target.ranking is not None and target.ranking != ranking:
            shadow_inputs = RankerInputs(
                inputs.retriever,
                inputs.graph,
                np.random.default_rng(component_seed(seed, Stream.RANKER)),
                inputs.reshares,
                inputs.agents,
                inputs.depth,
                positions=inputs.positions,
            )
            ranker = build_ranker(target.ranking, shadow_inputs)
        targets.append(Target(target.name, target.spec, ranker))
    return StochasticServer(config, seed, feed_size, targets)
