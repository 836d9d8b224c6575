"""Politics in the world (docs/politics.md): partisan agents, political posts, the behaviour that responds to them,
and the rankers and metrics that read them (REQ-POL-*). Off unless `agents.politics.enabled` is true."""

from prism_experiments.politics.config import MAX_TERMS, PoliticsConfig

__all__ = ["MAX_TERMS", "PoliticsConfig"]
