"""The world a run starts from: agents, follow graph and starting corpus, all from the seed.

Everything here is independent of the ranker (common random numbers): two runs with one seed
and different ranking modes start from identical worlds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

import numpy as np

from prism_experiments.agents import SocialAgent, generate_population
from prism_experiments.corpus import TOPICS, SyntheticCorpusConfig, generate_corpus, load_posts
from prism_experiments.network import DictSocialGraph, generate_follow_graph, with_following
from prism_experiments.rag.post import Post
from prism_experiments.simulation.streams import Stream, component_seed

if TYPE_CHECKING:
    from prism_experiments.config import ExperimentConfig


@dataclass(frozen=True)
class World:
    agents: list[SocialAgent]
    graph: DictSocialGraph
    corpus: list[Post]


def corpus_topics(cfg: ExperimentConfig) -> tuple[str, ...]:
    return tuple(cfg.corpus.topics) if cfg.corpus.source == "synthetic" else TOPICS


def build_world(cfg: ExperimentConfig) -> World:
    """Agents, their initial follow graph and the starting corpus for `cfg.seed`."""
    population = generate_population(cfg.agents, corpus_topics(cfg), component_seed(cfg.seed, Stream.POPULATION))
    graph = generate_follow_graph(population, cfg.network, component_seed(cfg.seed, Stream.NETWORK))
    agents = with_following(population, graph)
    return World(agents=agents, graph=graph, corpus=build_corpus(cfg, agents))


def build_corpus(cfg: ExperimentConfig, agents: list[SocialAgent]) -> list[Post]:
    """The synthetic corpus written by the agents on their interests, or the user's file."""
    if cfg.corpus.source == "file":
        assert cfg.corpus.path is not None
        return load_posts(cfg.corpus.path)  # the loader classifies posts that come without a format
    synthetic = SyntheticCorpusConfig(**cfg.corpus.model_dump(exclude={"source", "path"}))
    corpus_seed = int(component_seed(cfg.seed, Stream.CORPUS).generate_state(1, dtype=np.uint32)[0])
    return generate_corpus(synthetic, corpus_seed, authors={agent.id: agent.interests for agent in agents})
