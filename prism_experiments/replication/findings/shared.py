"""What several findings share: the smoke and full sizes of the research-world findings (so their --quick runs, and
their --full runs, coincide)."""

from __future__ import annotations

#: --quick of the findings run in the research worlds (x2023_10k_tail): the 200-agent world at a smoke size
RESEARCH_QUICK_OVERRIDES: tuple[str, ...] = (
    "world=x2023", "agents.n_agents=60", "network.mean_out_degree=6", "corpus.n_posts=600", "corpus.span_hours=24",
    "simulation.n_steps=8", "simulation.render_steps=0",
)  # fmt: skip
#: --full of the shape claims run in x2023_10k_tail (goel2016, juul_ugander2021 and huszar2022, which reads
#: juul_ugander2021's runs): 10x the agents, so about 10x the large cascades (>= 100 accounts, about 0.4 per seed at
#: 10,000 agents) per seed, at the research world's 2 posts per agent: the scale bench's research-world point at
#: 100,000 agents (docs/bench.md, section 9). The world (x2023_10k_tail) and the 48 steps stay the experiment files'.
RESEARCH_FULL_OVERRIDES: tuple[str, ...] = ("agents.n_agents=100000", "corpus.n_posts=200000")
#: --quick of the findings run in world x2023 at 200 agents
SMALL_QUICK_OVERRIDES: tuple[str, ...] = (
    "agents.n_agents=40", "network.mean_out_degree=6", "corpus.n_posts=400", "corpus.span_hours=24",
    "simulation.n_steps=8", "simulation.render_steps=0",
)  # fmt: skip


def replacing(overrides: tuple[str, ...], *replacements: str) -> tuple[str, ...]:
    """`overrides` with each `key=value` of `replacements` in place of the same key's (or appended)."""
    keys = {item.split("=", 1)[0] for item in replacements}
    return (*(item for item in overrides if item.split("=", 1)[0] not in keys), *replacements)
