"""Fit `network.followee_post_rate_elasticity` to Pew Research Center 2019's followers of the most prolific users.

`python -m prism_experiments.calibration.followers [overrides] --seeds 0 1 2`: the elasticity k at which the
starting graph's median followers of the top tenth of agents by post rate, divided by the other nine tenths', is
Pew's 387 / 19. Only the population and the follow graph are drawn (no run): an input fitted to a published figure
of the follow graph, never to a run's outcome (docs/model.md, "Followers follow posting").
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np

from prism_experiments.agents import SocialAgent, generate_population
from prism_experiments.command_line import EXIT_OK, command_main, usage_error
from prism_experiments.metrics.cascade_anatomy import follower_distribution, top_decile_median_ratio
from prism_experiments.network import NetworkConfig, generate_follow_graph
from prism_experiments.random_streams import Stream, component_seed

PROGRAM = "python -m prism_experiments.calibration.followers"
#: Pew Research Center 2019, "Sizing Up Twitter Users": median followers of the top 10% of U.S. adult users by
#: number of tweets, and of the bottom 90% (quoted source text: docs/model.md, "Followers follow posting")
PEW_TOP_MEDIAN_FOLLOWERS, PEW_BOTTOM_MEDIAN_FOLLOWERS = 387.0, 19.0
PEW_RATIO = PEW_TOP_MEDIAN_FOLLOWERS / PEW_BOTTOM_MEDIAN_FOLLOWERS
#: the bisection's bracket and its stopping width
LOW, HIGH, WIDTH = 0.0, 2.0, 0.002


def graph_followers(agents: Sequence[SocialAgent], network: NetworkConfig, seed: int) -> np.ndarray:
    """Each agent's followers in the starting graph drawn for `seed` (the run's own network stream)."""
    graph = generate_follow_graph(agents, network, component_seed(seed, Stream.NETWORK))
    return np.array([len(graph.followers(agent.id)) for agent in agents], dtype=float)


def poster_ratio(populations: Sequence[tuple[int, Sequence[SocialAgent]]], network: NetworkConfig) -> float:
    """Mean over the seeds' populations of `top_decile_median_ratio(followers, post rate)`."""
    ratios = [
        top_decile_median_ratio(graph_followers(agents, network, seed), np.array([a.post_rate for a in agents]))
        for seed, agents in populations
    ]
    return float(np.mean(ratios))


def fit_elasticity(
    populations: Sequence[tuple[int, Sequence[SocialAgent]]],
    network: NetworkConfig,
    target: float = PEW_RATIO,
    low: float = LOW,
    high: float = HIGH,
    width: float = WIDTH,
) -> float:
    """The elasticity in [low, high] whose `poster_ratio` meets `target`, by bisection: the middle of the last
    bracket, whose lower end's ratio is below the target and whose upper end's is not (the ratio rises with the
    elasticity, in steps and with some noise: each elasticity draws a graph of its own)."""
    at = {
        k: poster_ratio(populations, network.model_copy(update={"followee_post_rate_elasticity": k}))
        for k in (low, high)
    }
    if not at[low] <= target <= at[high]:
        raise ValueError(
            f"target: {target:.3g} is outside the ratios {at[low]:.3g} .. {at[high]:.3g} of [{low}, {high}]"
        )
    while high - low > width:
        middle = (low + high) / 2
        ratio = poster_ratio(populations, network.model_copy(update={"followee_post_rate_elasticity": middle}))
        low, high = (middle, high) if ratio < target else (low, middle)
    return (low + high) / 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROGRAM, description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2], help="seeds whose graphs are averaged")
    parser.add_argument(
        "--target", type=float, default=PEW_RATIO, help=f"the ratio to meet (default Pew's {PEW_RATIO:.3g})"
    )
    parser.add_argument("overrides", nargs="*", help="Hydra overrides of the world (e.g. world=x2023_10k_tail ...)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Fit, then print the elasticity and each seed's graph at it."""
    from prism_experiments.composition import compose_experiment
    from prism_experiments.config import ConfigError
    from prism_experiments.simulation.starting_world import corpus_topics

    try:
        cfg = compose_experiment(list(args.overrides))
    except ConfigError as exc:
        return usage_error(PROGRAM, str(exc))
    topics = corpus_topics(cfg.corpus)
    populations = [
        (seed, generate_population(cfg.agents, topics, component_seed(seed, Stream.POPULATION))) for seed in args.seeds
    ]
    try:
        elasticity = round(fit_elasticity(populations, cfg.network, args.target), 3)
    except ValueError as exc:
        return usage_error(PROGRAM, str(exc))
    fitted = cfg.network.model_copy(update={"followee_post_rate_elasticity": elasticity})
    print(f"network.followee_post_rate_elasticity={elasticity} (target ratio {args.target:.3g})")
    for seed, agents in populations:
        followers = graph_followers(agents, fitted, seed)
        stats = follower_distribution(followers)
        ratio = top_decile_median_ratio(followers, np.array([a.post_rate for a in agents]))
        print(
            f"seed {seed}: ratio {ratio:.3g}; followers p50 {stats['p50']:.3g}, p90 {stats['p90']:.3g}, "
            f"p96 {stats['p96']:.3g}, p99 {stats['p99']:.3g}, max {stats['max']:.0f}, none {stats['zero_share']:.3f}"
        )
    return EXIT_OK


main = command_main(build_parser, run)

if __name__ == "__main__":
    sys.exit(main())
