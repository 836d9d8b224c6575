"""The starting world of a run: agents, follow graph and starting corpus, all from the seed (not to be confused
with `conf/world/`, the calibrated parameter sets a run is configured with).

Everything here is independent of the ranker (common random numbers): two runs with one seed
and different ranking modes start from identical worlds.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from prism_experiments.agents import SocialAgent, generate_population
from prism_experiments.corpus import SyntheticCorpusConfig, generate_corpus, load_posts
from prism_experiments.domain import TOPICS, Post
from prism_experiments.network import DictSocialGraph, generate_follow_graph
from prism_experiments.politics.config import PoliticsConfig
from prism_experiments.politics.content import politicized
from prism_experiments.random_streams import Stream, component_seed
from prism_experiments.simulation.settings import CorpusSettings, StartingWorldSettings
from prism_experiments.simulation.world_files import corpus_authors_line, population_and_graph, world_accounts

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StartingWorld:
    agents: list[SocialAgent]
    graph: DictSocialGraph
    corpus: list[Post]


def corpus_topics(corpus: CorpusSettings) -> tuple[str, ...]:
    """The topics agents are interested in: the synthetic corpus's, or all of them for a user's file."""
    return tuple(corpus.topics) if corpus.source == "synthetic" else TOPICS


def build_starting_world(cfg: StartingWorldSettings) -> StartingWorld:
    """Agents, their initial follow graph and the starting corpus for `cfg.seed`; from the user's graph and
    population files where the config names them (`simulation/world_files.py`)."""
    topics = corpus_topics(cfg.corpus)
    accounts = world_accounts(cfg.network, cfg.agents, topics, cfg.seed)
    if accounts is None:
        population = generate_population(cfg.agents, topics, component_seed(cfg.seed, Stream.POPULATION))
        graph = generate_follow_graph(
            population, cfg.network, component_seed(cfg.seed, Stream.NETWORK), politics=cfg.agents.politics
        )
    else:
        population, graph = population_and_graph(accounts, cfg.agents, cfg.network, topics, cfg.seed)
    # each agent's follow set is a view of the graph's starting rows, not a set of ids (2 KB an agent); a generated
    # population is this call's own and takes them in place, a file's (kept per process) in shallow copies
    if accounts is None:
        for agent in population:
            agent.following = graph.starting_following(agent.id)
        agents = population
    else:
        agents = [agent.model_copy(update={"following": graph.starting_following(agent.id)}) for agent in population]
    corpus = build_corpus(cfg.corpus, cfg.seed, agents)
    if cfg.agents.politics.enabled:  # only when on: a world without politics keeps its corpus as it was (REQ-POL-4)
        corpus = politicized_corpus(corpus, agents, cfg.seed, cfg.agents.politics)
    if accounts is not None and cfg.corpus.source == "file":
        log.info("%s", corpus_authors_line(accounts.ids, corpus))
    return StartingWorld(agents=agents, graph=graph, corpus=corpus)


def politicized_corpus(
    corpus: list[Post], agents: list[SocialAgent], seed: int, politics: PoliticsConfig
) -> list[Post]:
    """The corpus with each post's political attributes drawn from its author's position (`politics.content`); a
    loaded corpus's own `political` values are kept."""
    position = {agent.id: agent.position for agent in agents}
    authors = [position.get(post.author_id) for post in corpus]
    return politicized(corpus, [np.nan if p is None else p for p in authors], seed, politics)


def build_corpus(corpus: CorpusSettings, seed: int, agents: list[SocialAgent]) -> list[Post]:
    """The synthetic corpus written by the agents on their interests, or the user's file."""
    if corpus.source == "file":
        assert corpus.path is not None
        return load_posts(corpus.path)  # the loader classifies posts that come without a format
    synthetic = SyntheticCorpusConfig(
        **corpus.model_dump(exclude={"source", "path", "sha256", "appeal", "author_weights"})
    )
    corpus_seed = int(component_seed(seed, Stream.CORPUS).generate_state(1, dtype=np.uint32)[0])
    # authoring_rate: the corpus written by the agents who write in the run, at the run's rate (docs/corpus.md)
    weights = (
        {agent.id: agent.activity * agent.post_rate for agent in agents}
        if corpus.author_weights == "authoring_rate"
        else None
    )
    return generate_corpus(
        synthetic, corpus_seed, authors={agent.id: agent.interests for agent in agents}, author_weights=weights
    )
