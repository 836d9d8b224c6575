"""Agent population: `SocialAgent`, its configuration, seeded generation and behaviour probabilities."""

from prism_experiments.agents.archetypes import (
    ARCHETYPES,
    POST_FORMATS,
    format_affinity_matrix,
    format_indices,
)
from prism_experiments.agents.behaviour import (
    CALIBRATION_TARGETS,
    ENGAGEMENT_ACTIONS,
    REFERENCE_POINT,
    attention_probability,
    engagement_logit,
    engagement_probabilities,
    follow_probability,
    format_affinity,
    format_affinity_for,
)
from prism_experiments.agents.config import AgentsConfig, BehaviourConfig, EngagementCoefficients
from prism_experiments.agents.population import (
    PopulationArrays,
    agent_id_width,
    agent_ids,
    archetype_matrix,
    generate_population,
    population_arrays,
    topic_popularity,
)
from prism_experiments.agents.seeding import Seed, as_seed_sequence, stream_rng
from prism_experiments.agents.social_agent import SocialAgent

__all__ = [
    "ARCHETYPES",
    "CALIBRATION_TARGETS",
    "ENGAGEMENT_ACTIONS",
    "POST_FORMATS",
    "REFERENCE_POINT",
    "AgentsConfig",
    "BehaviourConfig",
    "EngagementCoefficients",
    "PopulationArrays",
    "Seed",
    "SocialAgent",
    "agent_id_width",
    "agent_ids",
    "archetype_matrix",
    "as_seed_sequence",
    "attention_probability",
    "engagement_logit",
    "engagement_probabilities",
    "follow_probability",
    "format_affinity",
    "format_affinity_for",
    "format_affinity_matrix",
    "format_indices",
    "generate_population",
    "population_arrays",
    "stream_rng",
    "topic_popularity",
]
