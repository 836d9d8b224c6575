"""A run's peak memory estimated from its sizes: a linear curve fitted to the peaks the benchmarks measured
(REQ-FAULT-1, the memory preflight).

The formula (GB = 10^9 bytes; PEAK_CURVE, the least-squares fit of MEASURED_PEAKS, with the per-follow and
per-text bytes set from the structures):

    peak = 0.551 GB + 2,212 B x agents + 1,980 B x posts + 215.5 B x agents x steps + 16 B x follows
           + 4,800 B x texts

The source: the measured points are the scale bench's whole-run peaks (docs/bench.md's scale rows: 10K agents
0.76 GB, 100K 2.35 GB, 200K 4.38 GB, 1M 16.80 GB), the huge preset's (4.26 GB) and, of the same runs, the peak
once the world was built, all at the code of 2026-11-28 (docs/history/bench.md); the fit and its error at each
point (+1.3 % at 10K, -1.1 % at 100K, +6.3 % at 1M) are in docs/bench.md, "Memory preflight".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from prism_experiments.config import ExperimentConfig

GB = 1e9  # the benchmarks' GB (10^9 bytes), as peak RSS is reported there


@dataclass(frozen=True)
class RunSizes:
    """What a run's memory grows with."""

    agents: int
    #: starting posts
    posts: int
    steps: int
    #: starting follows (agents x mean out-degree, or the graph file's)
    follows: int
    #: distinct texts the stores hold a vector of: the text pool's (2 x topics x pool size), else one per post
    texts: int


@dataclass(frozen=True)
class MeasuredPeak:
    """A peak RSS the benchmarks measured: of a whole run, or after its world was built (a run of no steps)."""

    sizes: RunSizes
    peak_gb: float
    whole_run: bool
    #: where the figure is written
    source: str


_MILLION = "docs/history/bench.md, 'The million-agent point' (report 20261128-010332)"
_SCALE = "docs/history/bench.md, 'Where the scale curve's memory goes' (report 20261127-230044; 200K: c031ff7)"
_HUGE = "docs/history/bench.md, 'The huge preset with its full text pool' (report 20261128-004224)"
#: the research world's (x2023_10k) mean out-degree, the scale bench's; the huge preset's world is x2023
_RESEARCH_DEGREE, _HUGE_DEGREE = 46.47, 7.347
#: the default text pool (400 per topic, 12 topics, posts and replies) and the huge preset's (4,000 per topic)
_POOL, _HUGE_POOL = 2 * 12 * 400, 2 * 12 * 4000


def _scale(agents: int) -> RunSizes:
    """A scale-bench point: `experiment=ranking_modes_10k` with 2 posts per agent, 48 steps."""
    return RunSizes(agents, 2 * agents, 48, round(agents * _RESEARCH_DEGREE), _POOL)


_HUGE_SIZES = RunSizes(100_000, 1_000_000, 48, round(100_000 * _HUGE_DEGREE), _HUGE_POOL)

#: Every peak the fit reads: the whole run's (48 steps) and, of the same runs, the peak once the world was built
#: (the phase columns "world" of the same tables), which stands for a run of no steps.
MEASURED_PEAKS: tuple[MeasuredPeak, ...] = (
    MeasuredPeak(_scale(10_000), 0.76, True, _MILLION),
    MeasuredPeak(_scale(100_000), 2.35, True, _SCALE),
    MeasuredPeak(_scale(200_000), 4.38, True, _SCALE),
    MeasuredPeak(_scale(1_000_000), 16.80, True, _MILLION),
    MeasuredPeak(_HUGE_SIZES, 4.26, True, _HUGE),
    MeasuredPeak(replace(_scale(10_000), steps=0), 0.34, False, _MILLION),
    MeasuredPeak(replace(_scale(100_000), steps=0), 0.81, False, _SCALE),
    MeasuredPeak(replace(_scale(200_000), steps=0), 1.17, False, _SCALE),
    MeasuredPeak(replace(_scale(1_000_000), steps=0), 5.39, False, _MILLION),
    MeasuredPeak(replace(_HUGE_SIZES, steps=0), 1.89, False, _HUGE),
)

#: Bytes per follow and per distinct text, set from the structures rather than fitted: every measured point has
#: one of two (degree, pool) pairs, so the fit cannot tell them from agents and posts. A follow: the graph's int32
#: rows both ways (docs/history/bench.md, the follow graph as CSR rows) and the world file's copy of them. A text:
#: its float32 vector (384 x 4 bytes) in the store's vector table, in the run's fork's copy of it, and in the
#: embedding cache a run loads whole (0.163 GB for 92,486 vectors, measured).
BYTES_PER_FOLLOW = 16
BYTES_PER_TEXT = 4_800


@dataclass(frozen=True)
class PeakCurve:
    """peak = world_gb + loop_gb + agent_bytes·agents + post_bytes·posts + agent_step_bytes·agents·steps
    + BYTES_PER_FOLLOW·follows + BYTES_PER_TEXT·texts (whole run; a world alone lacks loop_gb, the steps' terms
    and loop_post_bytes, which is included in post_bytes here)."""

    #: the process before any size counts (imports, the store), and what the step loop and logging add to it
    world_gb: float
    loop_gb: float
    agent_bytes: float
    #: per post in the world, and again once the run's fork of the store copies its rows (the first new post)
    world_post_bytes: float
    loop_post_bytes: float
    #: the event log: a step's exposures, engagements and their tables, per agent
    agent_step_bytes: float

    @property
    def post_bytes(self) -> float:
        return self.world_post_bytes + self.loop_post_bytes


def _features(sizes: RunSizes, whole_run: bool) -> list[float]:
    """The fitted terms' factors, in PeakCurve's order (GB and bytes as they are)."""
    loop = 1.0 if whole_run else 0.0
    return [1.0, loop, sizes.agents / GB, sizes.posts / GB, loop * sizes.posts / GB, sizes.agents * sizes.steps / GB]


def _fixed_gb(sizes: RunSizes) -> float:
    return (BYTES_PER_FOLLOW * sizes.follows + BYTES_PER_TEXT * sizes.texts) / GB


def fit_curve(points: tuple[MeasuredPeak, ...] = MEASURED_PEAKS) -> PeakCurve:
    """Least squares of the relative error over `points` (each residual over its measured peak: the check compares
    the estimate with a limit as a ratio, and the points span 0.34 to 16.8 GB)."""
    weights = np.array([1.0 / point.peak_gb for point in points])
    x = np.array([_features(point.sizes, point.whole_run) for point in points]) * weights[:, None]
    y = np.array([point.peak_gb - _fixed_gb(point.sizes) for point in points]) * weights
    coefficients = np.linalg.lstsq(x, y, rcond=None)[0]
    return PeakCurve(*(float(c) for c in coefficients))


#: fit_curve() rounded (tests/test_memory_preflight.py refits it from MEASURED_PEAKS)
PEAK_CURVE = PeakCurve(
    world_gb=0.244,
    loop_gb=0.307,
    agent_bytes=2_212.0,
    world_post_bytes=952.0,
    loop_post_bytes=1_028.0,
    agent_step_bytes=215.5,
)


def estimate_peak_gb(sizes: RunSizes, curve: PeakCurve = PEAK_CURVE, whole_run: bool = True) -> float:
    """The peak RSS of a run of `sizes` in GB (10^9 bytes) on the curve."""
    terms = (curve.world_gb, curve.loop_gb, curve.agent_bytes, curve.world_post_bytes, curve.loop_post_bytes)
    factors = _features(sizes, whole_run)
    return float(np.dot([*terms, curve.agent_step_bytes], factors)) + _fixed_gb(sizes)


def run_sizes(cfg: ExperimentConfig, corpus_posts: int | None = None) -> RunSizes:
    """The sizes of `cfg`'s run; `corpus_posts`: the posts of its corpus file (`corpus=file`), counted by the
    preflight that reads it. A graph file's follows are counted from the file as the config's validation read it."""
    posts = corpus_posts if cfg.corpus.source == "file" and corpus_posts is not None else cfg.corpus.n_posts
    pool = cfg.corpus.text_pool_size if cfg.corpus.source == "synthetic" else 0
    texts = 2 * len(cfg.corpus.topics) * pool if pool > 0 else posts
    agents = cfg.agents.n_agents
    return RunSizes(agents, posts, cfg.simulation.n_steps, _follows(cfg, agents), texts)


def _follows(cfg: ExperimentConfig, agents: int) -> int:
    """The graph file's follows (the validated config's read, from the process's cache), else the generator's
    mean out-degree (clipped to n - 1 as the generator clips it) times the agents."""
    if cfg.network.source == "file":
        from prism_experiments.simulation.starting_world import corpus_topics
        from prism_experiments.simulation.world_files import world_accounts

        accounts = world_accounts(cfg.network, cfg.agents, corpus_topics(cfg.corpus), cfg.seed)
        if accounts is not None and accounts.edges is not None:
            return len(accounts.edges[0])
    return round(agents * min(cfg.network.mean_out_degree, max(agents - 1, 0)))
