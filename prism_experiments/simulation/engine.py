"""The step loop: activate agents -> rank feeds -> agents decide -> apply actions -> index new posts.

Behavioural draws are keyed by (step, agent, slot) (`streams.keyed_uniforms`), so the same seed
gives every ranking mode the same coin flips; only what the ranker shows differs. All of a
step's decisions are made on the state at the start of the step and applied together at its end.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from prism_experiments.agents import PopulationArrays, SocialAgent, population_arrays
from prism_experiments.corpus.appeal import PostAppeal
from prism_experiments.corpus.authoring import AUTHORING_DRAWS, authored_post, original_post, reply_post, writers
from prism_experiments.deciders import Decider, DeciderInputs, Impressions, StepActions, build_decider
from prism_experiments.domain import TARGET_PREFIX, EventRecorder, Post
from prism_experiments.embeddings import Embedder
from prism_experiments.feed_store import FeedRetriever, format_feed_for_prompt
from prism_experiments.feed_store.vector_table import ROW_BITS
from prism_experiments.memory import peak_rss_bytes
from prism_experiments.network import DictSocialGraph
from prism_experiments.politics.behaviour import impression_columns
from prism_experiments.politics.content import politicized
from prism_experiments.random_streams import LIKE, RESHARE, Stream, component_seed, keyed_generator, keyed_uniforms
from prism_experiments.ranking import RankerInputs, ReshareLog
from prism_experiments.ranking.feedback import ServedFeedback
from prism_experiments.ranking.flat import Pairs, pair_similarities
from prism_experiments.ranking.step_feeds import NO_VIA, StepFeeds
from prism_experiments.simulation.activity import FeedResponsiveActivity
from prism_experiments.simulation.result import SimulationResult
from prism_experiments.simulation.schedule import ScheduledRankers
from prism_experiments.simulation.seen import SeenRows
from prism_experiments.simulation.serving import ServedFeed, StochasticServer, build_server
from prism_experiments.simulation.settings import EngineSettings, RunSettings
from prism_experiments.simulation.starting_world import StartingWorld
from prism_experiments.simulation.stores import rag_embedder, run_store
from prism_experiments.simulation.world_cache import shared_starting_world

log = logging.getLogger(__name__)
#: bits of an action (LIKE, RESHARE) in a `_Engine.done` key, after the store row's `ROW_BITS`
_ACTION_BITS = 2


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """numpy's OpenBLAS on one thread for the step loop: its products are small (a step's queries by its new posts),
    and two BLAS threads spent 16x the time of one waiting on each other on a shared 2-core machine (docs/bench.md).
    Results do not depend on it (exact scores sum each row on its own); torch's encoder keeps its own threads."""
    from threadpoolctl import ThreadpoolController

    with ThreadpoolController().select(internal_api="openblas").limit(limits=1):
        yield


def _concatenated(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0)


def run_simulation(
    cfg: RunSettings,
    world: StartingWorld | None = None,
    embedder: Embedder | None = None,
    worlds_dir: Path | None = None,
) -> SimulationResult:
    """Run one simulation and return its event log; `cfg` is an `ExperimentConfig` or anything shaped like it
    (without a `serving` attribute, or with `serving` None, feeds are the mode's deterministic order). With
    `worlds_dir`, the starting world is the one a run of the same seed kept there (simulation/world_cache.py)."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    given = world is not None
    world = world or shared_starting_world(cfg, worlds_dir)
    timings["world_s"] = time.perf_counter() - started
    # peak memory so far at the end of each phase (where a big world's peak comes from: docs/bench.md)
    timings["world_peak_gb"] = peak_rss_bytes() / 1e9
    # texts this run sent to the model (the rest came from the cache): a count that, unlike a time, is the same on
    # every machine (docs/bench.md)
    embedder = embedder or rag_embedder(cfg.rag, cfg.cache_dir)
    encoded_before = embedder.encoded_count
    retriever = run_store(cfg.rag, cfg.cache_dir, world.corpus, embedder, show_progress=cfg.simulation.show_progress)
    try:
        # every agent gets its author code now: a ranker keeps each agent's followees' codes until it follows more
        retriever.register_authors(agent.id for agent in world.agents)
        graph = world.graph.copy() if given else world.graph  # a caller's world stays as it was given
        reshares = ReshareLog()
        serving = getattr(cfg, "serving", None)
        ranker_inputs = RankerInputs(
            retriever,
            graph,
            np.random.default_rng(component_seed(cfg.seed, Stream.RANKER)),
            reshares,
            agents=cfg.agents,
            depth=serving.depth if serving is not None else None,
            appeal=PostAppeal(cfg.seed, cfg.corpus.appeal) if cfg.corpus.appeal.enabled else None,
            positions={agent.id: agent.position for agent in world.agents} if cfg.agents.politics.enabled else None,
        )
        rankers = ScheduledRankers(cfg.ranking, cfg.simulation.schedule, ranker_inputs, cfg.simulation.n_steps)
        settings = EngineSettings.of(cfg)
        arrays = population_arrays(world.agents)
        server = (
            build_server(serving, cfg.seed, cfg.ranking, ranker_inputs, retriever.config.feed_size)
            if serving is not None
            else None
        )
        decider = build_decider(
            cfg.agents.decider,
            DeciderInputs(
                cfg.seed,
                cfg.agents,
                world.agents,
                arrays,
                retriever.config.feed_size,
                settings.prompt_max_chars,
                cfg.cache_dir,
                cfg.simulation.show_progress,
                cfg.corpus.appeal,
            ),
        )
        engine = _Engine(settings, world.agents, arrays, graph, retriever, rankers, reshares, decider, server)
        timings["index_s"] = time.perf_counter() - started - timings["world_s"]
        timings["index_peak_gb"] = peak_rss_bytes() / 1e9
        with _one_blas_thread():
            result = engine.run()
    finally:
        retriever.drop_collection()  # the run's fork; the shared starting index stays
    timings["texts_encoded"] = float(embedder.encoded_count - encoded_before)
    result.timings = (
        timings | result.timings | {"total_s": time.perf_counter() - started, "steps_peak_gb": peak_rss_bytes() / 1e9}
    )
    return result


class _Engine:
    """The step loop over one run's agents, follow graph, store, ranker, decider and (stochastic) server, all owned
    by the run and built before it."""

    def __init__(
        self,
        settings: EngineSettings,
        agents: list[SocialAgent],
        arrays: PopulationArrays,
        graph: DictSocialGraph,
        retriever: FeedRetriever,
        rankers: ScheduledRankers,
        reshares: ReshareLog,
        decider: Decider,
        server: StochasticServer | None = None,
    ) -> None:
        self.settings = settings
        self.seed = settings.seed
        self.agents = agents
        self.graph = graph
        self.retriever = retriever
        self.rankers = rankers
        self.reshares = reshares
        self.events = EventRecorder(post.id for post in retriever.posts)
        self.activity = FeedResponsiveActivity.of(arrays.activity, settings.agents, retriever.config.feed_size)
        self.post_rate = arrays.post_rate
        #: politics (REQ-POL-*): its settings when on, else None; agents' positions (NaN: non-political)
        self.politics = settings.agents.politics if settings.agents.politics.enabled else None
        self.positions = arrays.positions if arrays.positions is not None else np.full(len(agents), np.nan)
        self.position_of = {agent.id: agent.position for agent in agents}
        self.decider = decider
        self.server = server
        self.agent_ids = [agent.id for agent in agents]
        self.author_ids = retriever.author_ids()  # by author code; every agent's is registered before the run
        self.seen = SeenRows()  # the store rows of every post each agent was shown
        # likes and reshares happen once: (agent, row, action) as one int, `_once` (70 bytes an entry, a tuple's 150)
        self.done: set[int] = set()
        self.cascade_members: dict[int, set[str]] = {}
        self.recent_engagements: deque[dict[int, int]] = deque(maxlen=settings.simulation.velocity_window)
        self.window_engagements: dict[int, int] = {}  # row -> its engagements in `recent_engagements`
        self.rendered: dict[str, str] = {}
        self.step_delta = timedelta(minutes=settings.simulation.step_minutes)
        sim = settings.simulation
        self.render_steps = (
            set(np.linspace(0, sim.n_steps - 1, num=min(sim.render_steps, sim.n_steps), dtype=int).tolist())
            if sim.render_steps
            else set()
        )
        self.timings = {"rank_s": 0.0, "decide_s": 0.0, "index_new_s": 0.0}

    # ------------------------------------------------------------------ loop
    def run(self) -> SimulationResult:
        sim = self.settings.simulation
        for step in tqdm(
            range(sim.n_steps), desc=f"simulating ({self.settings.label})", disable=not sim.show_progress, unit="step"
        ):
            self.step(step)
        return self._result()

    def now(self, step: int) -> datetime:
        return self.settings.start + step * self.step_delta

    def active_agents(self, step: int) -> np.ndarray:
        """The step's active agents, ascending: a keyed uniform per agent below its activation threshold (its
        activity, moved by its feeds' rewards when `agents.activity_response` > 0: the same draws for every ranker)."""
        n = len(self.agents)
        return np.flatnonzero(
            keyed_uniforms(self.seed, Stream.ACTIVATION, step, np.arange(n), np.zeros(1))[:, 0]
            < self.activity.thresholds()
        )

    def step(self, step: int) -> None:
        now = self.now(step)
        active = self.active_agents(step)
        tick = time.perf_counter()
        agents = [self.agents[i] for i in active]
        exclude = self.seen.rows_of(active) if self.settings.simulation.exclude_seen else None
        feeds = self.rankers.at(step).rank_step(agents, now, exclude)
        served = None
        if self.server is not None:
            excluded = {agent.id: rows for agent, rows in zip(agents, exclude)} if exclude is not None else None
            served = self.server.serve(agents, now, feeds.candidates(self.retriever.posts, self.author_ids), excluded)
            feeds = StepFeeds.from_candidates([feed.feed for feed in served], self.retriever.author_code_of)
        self.timings["rank_s"] += time.perf_counter() - tick
        tick = time.perf_counter()
        new_posts, written = self._act(step, now, active, feeds, served)
        new_posts += self._author(step, now, active, written)
        for post in new_posts:
            self.events.created(post, step)
        self.timings["decide_s"] += time.perf_counter() - tick
        tick = time.perf_counter()
        if new_posts:
            self.retriever.add_posts(new_posts)
        self.timings["index_new_s"] += time.perf_counter() - tick

    # ------------------------------------------------------------- decisions
    def _act(
        self,
        step: int,
        now: datetime,
        active: np.ndarray,
        feeds: StepFeeds,
        served: list[ServedFeed] | None = None,
    ) -> tuple[list[Post], StepActions | None]:
        """Exposures, then the decider's likes / reshares / replies / follows per impression."""
        agent_idx = np.repeat(np.asarray(active, dtype=np.int64), feeds.lengths())
        positions, rows = feeds.positions(), feeds.rows
        # in impression order: feeds one after another
        similarity = feeds.similarity if feeds.similarity is not None else self._similarity(agent_idx, rows)
        self._record_exposures(step, now, active, feeds, agent_idx, positions, similarity, served)
        if served is not None:
            self._record_serving_candidates(step, active, served)
        if len(rows) == 0:
            self.activity.visited(active, agent_idx, np.zeros(0))
            self._update_velocity({})
            return [], None
        posts = self.retriever.posts
        shown = [posts[row] for row in rows.tolist()]
        impressions = Impressions(
            agent_idx=agent_idx,
            positions=positions,
            posts=shown,
            in_network=feeds.in_network,
            similarity=similarity,
            rows=rows,
        )
        actions = self.decider.decide_step(step, now, active, feeds, impressions)
        decided = actions.decisions
        liked, reshared, replied, follows = decided.liked, decided.reshared, decided.replied, decided.follows
        self.activity.visited(active, agent_idx, liked.astype(float) + reshared + replied)
        ids = self.agent_ids
        feedback = ServedFeedback(
            step, [ids[a] for a in agent_idx.tolist()], rows, positions, liked, reshared, replied, follows
        )
        for ranker in self.rankers.rankers:  # a schedule's idle rankers learn from the served feeds' logs too
            ranker.observe(feedback)

        counts: dict[int, int] = {}
        replies: list[Post] = []
        in_network, via = feeds.in_network, feeds.via
        for i in np.flatnonzero(liked | reshared | replied | follows).tolist():  # rule follows imply an engagement
            a, row = int(agent_idx[i]), int(rows[i])
            post = self.retriever.own_post(row)  # its counters change
            agent_id = ids[a]
            if liked[i] and self._once(a, row, LIKE):
                self._engage(step, agent_id, post, row, "like", None, bool(in_network[i]), counts)
                post.likes += 1
            if reshared[i] and self._once(a, row, RESHARE):
                resharer = self.author_ids[via[i]] if via[i] != NO_VIA else None
                self._engage(step, agent_id, post, row, "reshare", resharer, bool(in_network[i]), counts)
                post.reshares += 1
                self._reshare(step, agent_id, post, row, resharer)
            if replied[i]:
                self._engage(step, agent_id, post, row, "reply", None, bool(in_network[i]), counts)
                post.replies += 1
                replies.append(self._reply(step, now, a, int(positions[i]), post, actions.reply_texts.get(i)))
            if follows[i] and not in_network[i] and self.graph.follow(agent_id, post.author_id):
                self.events.follow(step, agent_id, post.author_id, post.id)
        self._update_velocity(counts)
        return replies, actions

    def _once(self, agent: int, row: int, action: int) -> bool:
        key = ((agent << ROW_BITS | row) << _ACTION_BITS) | action
        if key in self.done:
            return False
        self.done.add(key)
        return True

    def _engage(
        self,
        step: int,
        agent_id: str,
        post: Post,
        row: int,
        action: str,
        via: str | None,
        in_network: bool,
        counts: dict[int, int],
    ) -> None:
        self.events.engagement(step, agent_id, post, action, via, in_network)
        counts[row] = counts.get(row, 0) + 1

    def _reshare(self, step: int, agent_id: str, post: Post, row: int, via: str | None) -> None:
        """The reshare enters followers' in-network candidates and the post's cascade tree.

        Its parent in the tree is the followee through whom the agent saw the post (`via`), else the author.
        """
        members = self.cascade_members.setdefault(row, {post.author_id})
        parent = via if via in members else post.author_id
        if agent_id not in members:
            members.add(agent_id)
            self.events.cascade_edge(post.id, parent, agent_id, step)
        self.reshares.record(agent_id, row, step)

    def _reply(
        self, step: int, now: datetime, agent: int, position: int, parent: Post, text: str | None = None
    ) -> Post:
        """A reply from templates, or with the text a model wrote (a real post all the same: embedded, indexed)."""
        author = self.agents[agent]
        rng = keyed_generator(self.seed, Stream.TEXT, step, agent, 1 + position)
        if text is not None:
            return authored_post(
                f"r{step:04d}-{author.id}-{position}",
                author.id,
                text,
                now + self.step_delta * rng.random(),
                parent.topic or author.interests[0],
                parent_id=parent.id,
            )
        return self._politicized(
            reply_post(
                f"r{step:04d}-{author.id}-{position}",
                author.id,
                author.interests[0],
                parent,
                rng,
                now,
                self.step_delta,
                self.settings.hashtag_fraction,
                self.settings.text_pool_size,
            ),
            agent,
        )

    def _author(self, step: int, now: datetime, active: np.ndarray, actions: StepActions | None) -> list[Post]:
        """Active rule agents write new posts on their interests, some with media; then what LLM agents wrote."""
        draws = keyed_uniforms(self.seed, Stream.AUTHORING, step, active, np.arange(AUTHORING_DRAWS))
        rule_authors = self.decider.rule_authors(active)
        posts = []
        for row in writers(draws, self.post_rate[active]):
            if not rule_authors[row]:
                continue
            a = int(active[row])
            agent = self.agents[a]
            rng = keyed_generator(self.seed, Stream.TEXT, step, a, 0)
            posts.append(
                self._politicized(
                    original_post(
                        f"s{step:04d}-{agent.id}",
                        agent.id,
                        agent.interests,
                        draws[row],
                        rng,
                        now,
                        self.step_delta,
                        self.settings.agents.behaviour.media_post_probability,
                        self.settings.hashtag_fraction,
                        self.settings.text_pool_size,
                    ),
                    a,
                )
            )
        for a, text in sorted((actions.new_posts if actions is not None else {}).items()):
            agent = self.agents[a]
            rng = keyed_generator(self.seed, Stream.TEXT, step, a, 0)
            posts.append(
                authored_post(
                    f"s{step:04d}-{agent.id}", agent.id, text, now + self.step_delta * rng.random(), agent.interests[0]
                )
            )
        return posts

    # --------------------------------------------------------------- records
    def _similarity(self, agent_idx: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Interest similarity of each (agent, post) pair (`interest_similarities`, every pair of the step at once)."""
        if len(rows) == 0:
            return np.empty(0)
        agents, which = np.unique(agent_idx, return_inverse=True)
        queries = np.stack([self.retriever.embed_interests(self.agents[a].interests) for a in agents.tolist()])
        return pair_similarities(self.retriever.vectors, queries, Pairs(which.ravel(), rows))

    def _record_exposures(
        self,
        step: int,
        now: datetime,
        active: np.ndarray,
        feeds: StepFeeds,
        agent_idx: np.ndarray,
        positions: np.ndarray,
        similarity: np.ndarray,
        served: list[ServedFeed] | None = None,
    ) -> None:
        """One exposure row per impression (arrays in impression order); `served` (stochastic serving) adds each
        row's propensities. The shown rows join what each agent has seen; a few sampled feeds are rendered as text."""
        for f in sorted(self._agents_to_render(step, active)):
            feed = int(np.searchsorted(active, f))
            if len(rows := feeds.feed_rows(feed)):
                self.rendered[f"step_{step:03d}/{self.agent_ids[f]}"] = format_feed_for_prompt(
                    [self.retriever.posts[row] for row in rows.tolist()], now, max_chars=self.settings.prompt_max_chars
                )
        self.seen.add(agent_idx, feeds.rows)
        serving = None
        if served is not None:
            lengths = [len(feed.feed) for feed in served]
            serving = {
                "propensity": _concatenated([feed.propensity[:n] for feed, n in zip(served, lengths)]),
                "propensity_conditional": _concatenated([feed.conditional[:n] for feed, n in zip(served, lengths)]),
            }
            for name in served[0].targets if served else ():
                serving[f"{TARGET_PREFIX}{name}"] = _concatenated(
                    [feed.targets[name][:n] for feed, n in zip(served, lengths)]
                )
        self.events.exposures(
            step,
            agent_idx,
            feeds.rows,
            positions,
            feeds.base,
            feeds.final,
            feeds.in_network,
            feeds.source,
            similarity,
            feeds.components,
            serving,
            self._political_columns(agent_idx, feeds.rows, similarity),
        )

    def _political_columns(
        self, agent_idx: np.ndarray, rows: np.ndarray, similarity: np.ndarray
    ) -> dict[str, np.ndarray] | None:
        """The impressions' political columns and satisfaction (REQ-POL-7, REQ-POL-8); None when politics is off."""
        if self.politics is None:
            return None
        shown = [self.retriever.posts[row] for row in rows.tolist()]
        authors = [self.position_of.get(post.author_id) for post in shown]
        return impression_columns(
            self.positions[agent_idx],
            np.array([np.nan if a is None else a for a in authors], dtype=float),
            shown,
            similarity,
            self.politics,
        )

    def _politicized(self, post: Post, author: int) -> Post:
        """A new post with its political attributes (politics on), drawn from its author's position."""
        if self.politics is None:
            return post
        return politicized([post], [float(self.positions[author])], self.seed, self.politics)[0]

    def _record_serving_candidates(self, step: int, active: np.ndarray, served: list[ServedFeed]) -> None:
        """Every (candidate, position) cell a policy could fill, with P_A and each target's P_B (docs/ope.md)."""
        for a, feed in zip(active, served):
            agent = self.agents[a]
            rows = np.array([cand.row for cand in feed.candidates], dtype=np.int64)
            similarity = self.retriever.interest_similarities(agent.interests, rows) if len(rows) else rows
            filled = np.add.reduce([feed.candidate_propensity, *feed.candidate_targets.values()])
            for j, position in zip(*np.nonzero(filled > 0)):
                cand = feed.candidates[j]
                self.events.serving_candidate(
                    step,
                    agent.id,
                    cand.post,
                    int(position),
                    float(similarity[j]),
                    cand.in_network,
                    float(feed.candidate_propensity[j, position]),
                    {name: float(matrix[j, position]) for name, matrix in feed.candidate_targets.items()},
                )

    def _agents_to_render(self, step: int, active: np.ndarray) -> set[int]:
        """A seeded sample of the step's active agents whose feeds are rendered as text."""
        if step not in self.render_steps or len(active) == 0:
            return set()
        rng = keyed_generator(self.seed, Stream.TEXT, step, 2**31)
        size = min(self.settings.simulation.render_agents, len(active))
        return set(rng.choice(active, size=size, replace=False).tolist())

    def _update_velocity(self, counts: dict[int, int]) -> None:
        """velocity = engagements over the last `velocity_window` steps / velocity_window (running integer totals:
        the same sums as adding the window's steps up again)."""
        window = self.settings.simulation.velocity_window
        leaving = self.recent_engagements[0] if len(self.recent_engagements) == window else {}
        self.recent_engagements.append(counts)
        totals = self.window_engagements
        for row, n in leaving.items():
            totals[row] -= n
        for row, n in counts.items():
            totals[row] = totals.get(row, 0) + n
        for row in leaving.keys() | counts.keys():
            total = totals[row]
            if total == 0:
                del totals[row]
            self.retriever.own_post(row).velocity = total / window

    def _result(self) -> SimulationResult:
        return SimulationResult(
            **self.events.tables(
                self.retriever.posts, self.agent_ids, self.position_of if self.politics is not None else None
            ),
            agents=self.agents,
            final_graph=self.graph,
            rendered_feeds=self.rendered,
            ranker_debug=[
                record for ranker in self.rankers.rankers for record in getattr(ranker, "debug_records", list)()
            ],
            ranker_series={name: s for ranker in self.rankers.rankers for name, s in ranker.step_metrics().items()},
            ranker_tables={name: t for ranker in self.rankers.rankers for name, t in ranker.run_tables().items()},
            served_modes=self.rankers.served() if self.rankers.scheduled else [],
            timings=dict(self.timings),
            decider_stats=self.decider.stats()[0],
            decider_series=self.decider.stats()[1],
            llm_agent_ids=[agent.id for agent, asks in zip(self.agents, self.decider.llm_agents()) if asks],
            llm_model=self.decider.model_identity(),
            serving_candidates=self.events.serving_candidates(),
        )
