"""The step loop: activate agents -> rank feeds -> agents decide -> apply actions -> index new posts.

Behavioural draws are keyed by (step, agent, slot) (`streams.keyed_uniforms`), so the same seed
gives every ranking mode the same coin flips; only what the ranker shows differs. All of a
step's decisions are made on the state at the start of the step and applied together at its end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import logging
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from prism_experiments.agents import (
    SocialAgent,
    archetype_matrix,
    attention_probability,
    engagement_probabilities,
    follow_probability,
    format_affinity_for,
)
from prism_experiments.corpus import new_media_description, new_post_text, classify_tweet_format
from prism_experiments.embeddings import Embedder
from prism_experiments.network import DictSocialGraph
from prism_experiments.rag import Post, format_feed_for_prompt
from prism_experiments.ranking import RankedCandidate, RankerContext, ReshareLog, build_ranker
from prism_experiments.simulation.event_log import COMPONENT_PREFIX, EventLog, TABLE_COLUMNS
from prism_experiments.simulation.streams import (
    BEHAVIOUR_SLOTS, FOLLOW, LIKE, LOOK, REPLY, RESHARE, Stream, component_seed, keyed_generator, keyed_uniforms,
)
from prism_experiments.simulation.stores import base_store, shared_embedder
from prism_experiments.simulation.world import World, build_world

if TYPE_CHECKING:
    from prism_experiments.config import ExperimentConfig

log = logging.getLogger(__name__)

#: Slots of the authoring stream, per (step, agent).
WRITE, WRITE_MEDIA, WRITE_TOPIC, WRITE_TIME, MEDIA_KIND = range(5)
MEDIA_KINDS: tuple[str, ...] = ("image", "video", "gif")


@dataclass
class SimulationResult(EventLog):
    """The event log of a run, plus what produced it."""

    agents: list[SocialAgent] = field(default_factory=list)
    final_graph_edges: list[tuple[str, str]] = field(default_factory=list)
    rendered_feeds: dict[str, str] = field(default_factory=dict)
    ranker_debug: list[dict] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class _StepLog:
    """Column lists the step loop appends to; turned into DataFrames once at the end."""

    exposures: dict[str, list] = field(default_factory=lambda: {c: [] for c in TABLE_COLUMNS["exposures"]})
    components: list[dict[str, float]] = field(default_factory=list)  # one dict per exposure row
    engagements: dict[str, list] = field(default_factory=lambda: {c: [] for c in TABLE_COLUMNS["engagements"]})
    follows: dict[str, list] = field(default_factory=lambda: {c: [] for c in TABLE_COLUMNS["follows"]})
    cascade_edges: dict[str, list] = field(default_factory=lambda: {c: [] for c in TABLE_COLUMNS["cascade_edges"]})


def run_simulation(cfg: ExperimentConfig, world: World | None = None, embedder: Embedder | None = None
                   ) -> SimulationResult:
    """Run one simulation and return its event log."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    world = world or build_world(cfg)
    timings["world_s"] = time.perf_counter() - started
    engine = _Engine(cfg, world, embedder)
    timings["index_s"] = time.perf_counter() - started - timings["world_s"]
    result = engine.run()
    result.timings = timings | result.timings | {"total_s": time.perf_counter() - started}
    return result


class _Engine:
    def __init__(self, cfg: ExperimentConfig, world: World, embedder: Embedder | None) -> None:
        self.cfg = cfg
        self.seed = cfg.seed
        self.agents = world.agents
        self.agent_index = {agent.id: i for i, agent in enumerate(self.agents)}
        self.graph: DictSocialGraph = world.graph.copy()
        rag = cfg.rag.model_copy(update={"cache_dir": cfg.cache_dir})
        embedder = embedder or shared_embedder(rag.embedding_model, cfg.cache_dir)
        base = base_store(rag, world.corpus, embedder, show_progress=cfg.simulation.show_progress)
        # the run writes (new posts, counters) into its own fork; the base index serves the next run
        self.retriever = base.fork(f"{rag.collection_name}-run-{uuid.uuid4().hex[:12]}")
        self.created_step: dict[str, int] = {post.id: -1 for post in world.corpus}
        self.reshares = ReshareLog()
        ranker_rng = np.random.default_rng(component_seed(cfg.seed, Stream.RANKER))
        self.ranker = build_ranker(cfg.ranking, RankerContext(self.retriever, self.graph, ranker_rng, self.reshares,
                                                              agents=cfg.agents))
        self.archetypes = archetype_matrix(self.agents)
        self.activity = np.array([a.activity for a in self.agents])
        self.post_rate = np.array([a.post_rate for a in self.agents])
        self.biases = np.array([[a.like_bias, a.reshare_bias, a.reply_bias] for a in self.agents])
        self.seen: dict[str, set[str]] = {}
        self.done: set[tuple[int, int, int]] = set()  # (agent, row, action) likes and reshares happen once
        self.cascade_members: dict[int, set[str]] = {}
        self.recent_engagements: deque[dict[int, int]] = deque(maxlen=cfg.simulation.velocity_window)
        self.log = _StepLog()
        self.rendered: dict[str, str] = {}
        self.start: datetime = cfg.corpus.reference_time
        self.step_delta = timedelta(minutes=cfg.simulation.step_minutes)
        sim = cfg.simulation
        self.render_steps = set(np.linspace(0, sim.n_steps - 1, num=min(sim.render_steps, sim.n_steps),
                                            dtype=int).tolist()) if sim.render_steps else set()
        self.timings = {"rank_s": 0.0, "decide_s": 0.0, "index_new_s": 0.0}

    # ------------------------------------------------------------------ loop
    def run(self) -> SimulationResult:
        sim = self.cfg.simulation
        try:
            for step in tqdm(range(sim.n_steps), desc=f"simulating ({self.cfg.ranking.mode})",
                             disable=not sim.show_progress, unit="step"):
                self.step(step)
            return self._result()
        finally:
            self.retriever.drop_collection()

    def now(self, step: int) -> datetime:
        return self.start + step * self.step_delta

    def step(self, step: int) -> None:
        now = self.now(step)
        n = len(self.agents)
        active = np.flatnonzero(keyed_uniforms(self.seed, Stream.ACTIVATION, step, np.arange(n), np.zeros(1))[:, 0]
                                < self.activity)
        tick = time.perf_counter()
        agents = [self.agents[i] for i in active]
        exclude = {a.id: self.seen.get(a.id, set()) for a in agents} if self.cfg.simulation.exclude_seen else None
        feeds = self.ranker.rank_many(agents, now, exclude)
        self.timings["rank_s"] += time.perf_counter() - tick
        tick = time.perf_counter()
        new_posts = self._act(step, now, active, feeds)
        new_posts += self._author(step, now, active)
        self.timings["decide_s"] += time.perf_counter() - tick
        tick = time.perf_counter()
        if new_posts:
            self.retriever.add_posts(new_posts)
        self.timings["index_new_s"] += time.perf_counter() - tick

    # ------------------------------------------------------------- decisions
    def _act(self, step: int, now: datetime, active: np.ndarray, feeds: list[list[RankedCandidate]]) -> list[Post]:
        """Exposures, then each looked-at post's like / reshare / reply draws, then follows."""
        pairs = [(a, pos, cand) for a, feed in zip(active, feeds) for pos, cand in enumerate(feed)]
        agent_idx = np.array([a for a, _, _ in pairs], dtype=np.int64)
        rows = np.array([cand.row for _, _, cand in pairs], dtype=np.int64)
        similarity = self._similarity(agent_idx, rows)  # in pair order: feeds one after another
        self._record_exposures(step, now, active, feeds, similarity)
        if not pairs:
            self._update_velocity({})
            return []
        positions = np.array([pos for _, pos, _ in pairs])
        posts = [cand.post for _, _, cand in pairs]
        behaviour = self.cfg.agents.behaviour
        probabilities = engagement_probabilities(
            similarity,
            np.array([p.has_media for p in posts]),
            np.array([p.likes for p in posts]),
            np.array([cand.in_network for _, _, cand in pairs]),
            self.biases[agent_idx, 0], self.biases[agent_idx, 1], self.biases[agent_idx, 2],
            behaviour,
            format_affinity=format_affinity_for(self.cfg.agents, self.archetypes[agent_idx], [p.format for p in posts]),
        )
        width = BEHAVIOUR_SLOTS * self.retriever.config.feed_size
        draws = keyed_uniforms(self.seed, Stream.BEHAVIOUR, step, active, np.arange(width))
        draw_row = np.searchsorted(active, agent_idx)

        def coin(slot: int) -> np.ndarray:
            return draws[draw_row, BEHAVIOUR_SLOTS * positions + slot]

        looked = coin(LOOK) < attention_probability(positions, behaviour)
        liked = looked & (coin(LIKE) < probabilities["like"])
        reshared = looked & (coin(RESHARE) < probabilities["reshare"])
        replied = looked & (coin(REPLY) < probabilities["reply"])
        follows = (liked | reshared | replied) & (coin(FOLLOW) < follow_probability(behaviour))

        counts: dict[int, int] = {}
        replies: list[Post] = []
        for i, (a, pos, cand) in enumerate(pairs):
            if not (liked[i] or reshared[i] or replied[i]):
                continue
            agent = self.agents[a]
            if liked[i] and self._once(a, cand.row, LIKE):
                self._engage(step, agent.id, cand, "like", counts)
                cand.post.likes += 1
            if reshared[i] and self._once(a, cand.row, RESHARE):
                self._engage(step, agent.id, cand, "reshare", counts)
                cand.post.reshares += 1
                self._reshare(step, agent.id, cand)
            if replied[i]:
                self._engage(step, agent.id, cand, "reply", counts)
                cand.post.replies += 1
                replies.append(self._reply(step, now, a, pos, cand.post))
            if follows[i] and not cand.in_network and self.graph.follow(agent.id, cand.post.author_id):
                for column, value in zip(TABLE_COLUMNS["follows"], (step, agent.id, cand.post.author_id, cand.post.id)):
                    self.log.follows[column].append(value)
        self._update_velocity(counts)
        return replies

    def _once(self, agent: int, row: int, action: int) -> bool:
        key = (agent, row, action)
        if key in self.done:
            return False
        self.done.add(key)
        return True

    def _engage(self, step: int, agent_id: str, cand: RankedCandidate, action: str, counts: dict[int, int]) -> None:
        post = cand.post
        values = (step, agent_id, post.id, action, cand.via_agent_id if action == "reshare" else None,
                  cand.in_network, post.author_id, post.has_media, post.format)
        for column, value in zip(TABLE_COLUMNS["engagements"], values):
            self.log.engagements[column].append(value)
        counts[cand.row] = counts.get(cand.row, 0) + 1

    def _reshare(self, step: int, agent_id: str, cand: RankedCandidate) -> None:
        """The reshare enters followers' in-network candidates and the post's cascade tree.

        Its parent in the tree is the followee through whom the agent saw the post, else the author.
        """
        post = cand.post
        members = self.cascade_members.setdefault(cand.row, {post.author_id})
        parent = cand.via_agent_id if cand.via_agent_id in members else post.author_id
        if agent_id not in members:
            members.add(agent_id)
            for column, value in zip(TABLE_COLUMNS["cascade_edges"], (post.id, parent, agent_id, step)):
                self.log.cascade_edges[column].append(value)
        self.reshares.record(agent_id, cand.row, step)

    def _reply(self, step: int, now: datetime, agent: int, position: int, parent: Post) -> Post:
        rng = keyed_generator(self.seed, Stream.TEXT, step, agent, 1 + position)
        text = new_post_text(parent.topic or self.agents[agent].interests[0], rng, reply=True,
                             hashtag_fraction=self.cfg.corpus.hashtag_fraction)
        return self._new_post(f"r{step:04d}-{self.agents[agent].id}-{position}", agent, text,
                              now + self.step_delta * rng.random(), parent.topic, step, parent_id=parent.id)

    def _author(self, step: int, now: datetime, active: np.ndarray) -> list[Post]:
        """Active agents write new posts on their interests, some with media."""
        draws = keyed_uniforms(self.seed, Stream.AUTHORING, step, active, np.arange(5))
        writes = draws[:, WRITE] < self.post_rate[active]
        media_probability = self.cfg.agents.behaviour.media_post_probability
        posts = []
        for row in np.flatnonzero(writes):
            a = int(active[row])
            agent = self.agents[a]
            topic = agent.interests[int(draws[row, WRITE_TOPIC] * len(agent.interests))]
            rng = keyed_generator(self.seed, Stream.TEXT, step, a, 0)
            text = new_post_text(topic, rng, hashtag_fraction=self.cfg.corpus.hashtag_fraction)
            media = draws[row, WRITE_MEDIA] < media_probability
            kind = MEDIA_KINDS[min(int(draws[row, MEDIA_KIND] * len(MEDIA_KINDS)), len(MEDIA_KINDS) - 1)]
            posts.append(self._new_post(
                f"s{step:04d}-{agent.id}", a, text, now + self.step_delta * draws[row, WRITE_TIME], topic, step,
                media_type=kind if media else "none",
                media_description=new_media_description(topic, kind, rng) if media else None,
            ))
        return posts

    def _new_post(self, post_id: str, agent: int, text: str, timestamp: datetime, topic: str | None, step: int,
                  parent_id: str | None = None, media_type: str = "none", media_description: str | None = None
                  ) -> Post:
        post = Post(
            id=post_id, author_id=self.agents[agent].id, text=text, timestamp=timestamp, topic=topic,
            has_media=media_type != "none", media_type=media_type, media_description=media_description,
            parent_id=parent_id, format=classify_tweet_format(text),
        )
        self.created_step[post.id] = step
        return post

    # --------------------------------------------------------------- records
    def _similarity(self, agent_idx: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Interest similarity of each (agent, post) pair, one lookup per agent."""
        out = np.empty(len(rows))
        if len(rows) == 0:
            return out
        order = np.argsort(agent_idx, kind="stable")
        grouped = agent_idx[order]
        starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
        for start, end in zip(starts, np.r_[starts[1:], len(order)]):
            pairs = order[start:end]
            out[pairs] = self.retriever.interest_similarities(self.agents[grouped[start]].interests, rows[pairs])
        return out

    def _record_exposures(self, step: int, now: datetime, active: np.ndarray,
                          feeds: list[list[RankedCandidate]], similarity: np.ndarray) -> None:
        """One exposure row per impression; `similarity` holds the feeds' similarities one feed after another."""
        columns = self.log.exposures
        rendered = self._agents_to_render(step, active)
        offset = 0
        for a, feed in zip(active, feeds):
            agent = self.agents[a]
            if not feed:
                continue
            feed_similarity = similarity[offset : offset + len(feed)]
            offset += len(feed)
            seen = self.seen.setdefault(agent.id, set())
            for position, (cand, sim) in enumerate(zip(feed, feed_similarity)):
                post = cand.post
                values = (step, agent.id, post.id, position, cand.base_score, cand.final_score, cand.in_network,
                          cand.source, post.author_id, post.topic, post.has_media, post.format, float(sim))
                for column, value in zip(TABLE_COLUMNS["exposures"], values):
                    columns[column].append(value)
                self.log.components.append(cand.components)
                seen.add(post.id)
            if a in rendered:
                self.rendered[f"step_{step:03d}/{agent.id}"] = format_feed_for_prompt(
                    [cand.post for cand in feed], now, max_chars=self.cfg.rag.prompt_max_chars)

    def _agents_to_render(self, step: int, active: np.ndarray) -> set[int]:
        """A seeded sample of the step's active agents whose feeds are rendered as text."""
        if step not in self.render_steps or len(active) == 0:
            return set()
        rng = keyed_generator(self.seed, Stream.TEXT, step, 2**31)
        size = min(self.cfg.simulation.render_agents, len(active))
        return set(rng.choice(active, size=size, replace=False).tolist())

    def _update_velocity(self, counts: dict[int, int]) -> None:
        """velocity = engagements over the last `velocity_window` steps / velocity_window."""
        window = self.cfg.simulation.velocity_window
        leaving = self.recent_engagements[0] if len(self.recent_engagements) == window else {}
        self.recent_engagements.append(counts)
        touched = set(leaving) | set(counts)
        posts = self.retriever.posts
        for row in touched:
            total = sum(step_counts.get(row, 0) for step_counts in self.recent_engagements)
            posts[row].velocity = total / window

    def _result(self) -> SimulationResult:
        log = self.log
        exposures = pd.DataFrame(log.exposures)
        components = pd.DataFrame.from_records(log.components, index=exposures.index).astype(float)
        for name in sorted(components.columns):  # absent in a row -> NaN
            exposures[f"{COMPONENT_PREFIX}{name}"] = components[name].to_numpy()
        posts = self.retriever.posts
        posts_table = pd.DataFrame({
            "post_id": [p.id for p in posts],
            "author_id": [p.author_id for p in posts],
            "text": [p.text for p in posts],
            "timestamp": pd.to_datetime([p.timestamp for p in posts], utc=True),
            "topic": [p.topic for p in posts],
            "has_media": [p.has_media for p in posts],
            "media_type": [p.media_type for p in posts],
            "format": [p.format for p in posts],
            "parent_id": [p.parent_id for p in posts],
            "created_step": [self.created_step[p.id] for p in posts],
            "likes": [p.likes for p in posts],
            "reshares": [p.reshares for p in posts],
            "replies": [p.replies for p in posts],
        })
        return SimulationResult(
            posts=posts_table,
            exposures=_typed(exposures, "exposures"),
            engagements=_typed(pd.DataFrame(log.engagements), "engagements"),
            follows=_typed(pd.DataFrame(log.follows), "follows"),
            cascade_edges=_typed(pd.DataFrame(log.cascade_edges), "cascade_edges"),
            agents=self.agents,
            final_graph_edges=self.graph.edges(),
            rendered_feeds=self.rendered,
            ranker_debug=list(getattr(self.ranker, "debug_records", lambda: [])()),
            timings=dict(self.timings),
        )


_INT_COLUMNS = {"step", "position"}
_BOOL_COLUMNS = {"in_network", "has_media"}
_FLOAT_COLUMNS = {"base_score", "final_score", "interest_similarity"}


def _typed(table: pd.DataFrame, name: str) -> pd.DataFrame:
    """Stable dtypes, also for empty tables (a Parquet round trip keeps them)."""
    for column in TABLE_COLUMNS[name]:
        if column in _INT_COLUMNS:
            table[column] = table[column].astype("int64")
        elif column in _BOOL_COLUMNS:
            table[column] = table[column].astype(bool)
        elif column in _FLOAT_COLUMNS:
            table[column] = table[column].astype("float64")
        else:
            table[column] = table[column].astype(object)
    return table
