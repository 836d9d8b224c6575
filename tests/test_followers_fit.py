"""Followers that follow posting: the Pew moment of the starting graph and the elasticity's fit to it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from prism_experiments.agents import AgentsConfig, SocialAgent, generate_population
from prism_experiments.calibration.followers import HIGH, LOW, PEW_RATIO, fit_elasticity, poster_ratio
from prism_experiments.composition import compose_experiment
from prism_experiments.domain import TOPICS
from prism_experiments.metrics.moments import EXTRA_MOMENTS, POSTER_FOLLOWER_RATIO, poster_follower_ratio
from prism_experiments.network import NetworkConfig


def test_the_poster_follower_ratio_by_hand() -> None:
    # 20 agents; a0 and a1 post most (the top tenth) and have 4 and 6 followers; the others 1 each (a2 .. a19
    # follow in a ring) -> medians 5 and 1
    ids = [f"a{i}" for i in range(20)]
    following = {i: set() for i in ids}
    for i in range(2, 20):
        following[ids[i]].add(ids[2 + (i - 1) % 18])
    for i in range(2, 6):
        following[ids[i]].add("a0")
    for i in range(6, 12):
        following[ids[i]].add("a1")
    agents = [
        SocialAgent(id=i, interests=["music"], following=following[i], post_rate=0.9 if n < 2 else 0.01)
        for n, i in enumerate(ids)
    ]
    assert poster_follower_ratio(agents) == pytest.approx(5.0)
    assert math.isnan(poster_follower_ratio(agents[:5]))
    assert POSTER_FOLLOWER_RATIO in EXTRA_MOMENTS


def test_the_elasticity_fit_brackets_its_target() -> None:
    """The fit is the middle of the last bracket: at its lower end the ratio is under the target, at its upper end
    it is not (the ratio rises in steps and with noise, so nothing is said between the two)."""
    agents = generate_population(AgentsConfig(n_agents=400), TOPICS, 3)
    populations = [(3, agents)]
    network = NetworkConfig(mean_out_degree=20)
    fitted = fit_elasticity(populations, network, target=4.0, width=0.01)
    at = lambda k: poster_ratio(populations, network.model_copy(update={"followee_post_rate_elasticity": k}))  # noqa: E731
    bracket = (HIGH - LOW) / 2 ** math.ceil(math.log2((HIGH - LOW) / 0.01))  # halved until at most 0.01 wide
    assert at(fitted - bracket / 2) < 4.0 <= at(fitted + bracket / 2)
    with pytest.raises(ValueError, match="outside the ratios"):
        fit_elasticity(populations, network, target=1e9, high=0.5)
    assert round(PEW_RATIO, 2) == 20.37


def test_the_posters_world_is_the_tail_world_whose_posters_have_the_audiences() -> None:
    posters = compose_experiment(["world=x2023_10k_posters", "agents.n_agents=10000"])
    tail = compose_experiment(["world=x2023_10k_tail", "agents.n_agents=10000"])
    assert posters.network.followee_post_rate_elasticity == 0.251 and tail.network.followee_post_rate_elasticity is None
    assert posters.network.model_copy(update={"followee_post_rate_elasticity": None}) == tail.network
    assert posters.corpus.author_weights == "authoring_rate" and tail.corpus.author_weights == "uniform"
    assert posters.agents == tail.agents
    assert posters.corpus.model_copy(update={"author_weights": "uniform"}) == tail.corpus
    assert np.isclose(posters.network.mean_out_degree, 43.15)


def test_an_authoring_rate_corpus_is_written_by_the_agents_who_write_in_the_run() -> None:
    from prism_experiments.simulation.starting_world import build_starting_world

    small = ["agents.n_agents=300", "corpus.n_posts=3000", "seed=4"]
    uniform = build_starting_world(compose_experiment(small))
    weighted = build_starting_world(compose_experiment([*small, "corpus.author_weights=authoring_rate"]))
    assert [a.id for a in weighted.agents] == [a.id for a in uniform.agents]  # the same population and graph
    assert weighted.graph == uniform.graph
    rate = {a.id: a.activity * a.post_rate for a in weighted.agents}
    top = set(sorted(rate, key=rate.__getitem__)[-30:])  # the top tenth by authoring rate
    share = lambda corpus: np.mean([post.author_id in top for post in corpus])  # noqa: E731
    expected = sum(rate[a] for a in top) / sum(rate.values())
    assert share(weighted.corpus) == pytest.approx(expected, abs=0.03)
    assert share(uniform.corpus) == pytest.approx(0.1, abs=0.03)
