"""Audience archetypes and the post formats they favour or dislike.

The context rerank's archetype boost (REQ-RERANK-4) favours content tagged with an audience archetype ("Analyst")
for users whose archetype vector leans that way; here the tags are post formats
(REQ-RETRIEVAL-6's seven classes) and the user vector is `SocialAgent.archetype_weights`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from prism_experiments.domain import POST_FORMATS

#: Five reader archetypes: what a reader looks for in a post.
ARCHETYPES: tuple[str, ...] = ("analyst", "storyteller", "skeptic", "enthusiast", "pragmatist")


#: Format -> archetypes that favour it (REQ-RERANK-4's content tag).
DEFAULT_FORMAT_ARCHETYPE_BIAS: dict[str, list[str]] = {
    "list": ["analyst", "pragmatist"],
    "most_people_think_x": ["skeptic", "enthusiast"],
    "contrarian_take": ["skeptic", "analyst"],
    "before_after": ["pragmatist", "storyteller"],
    "question": ["enthusiast", "storyteller"],
    "tip": ["pragmatist", "analyst"],
    "storytelling": ["storyteller", "enthusiast"],
}

#: Archetype -> formats its readers engage with more.
DEFAULT_ARCHETYPE_PREFERRED_FORMATS: dict[str, list[str]] = {
    "analyst": ["list", "contrarian_take"],
    "storyteller": ["storytelling", "before_after"],
    "skeptic": ["contrarian_take", "most_people_think_x"],
    "enthusiast": ["question", "storytelling"],
    "pragmatist": ["tip", "list"],
}

#: Archetype -> formats its readers engage with less.
DEFAULT_ARCHETYPE_DISLIKED_FORMATS: dict[str, list[str]] = {
    "analyst": ["most_people_think_x"],
    "storyteller": ["list", "tip"],
    "skeptic": ["before_after"],
    "enthusiast": ["contrarian_take"],
    "pragmatist": ["storytelling"],
}


def format_affinity_matrix(preferred: Mapping[str, Sequence[str]], disliked: Mapping[str, Sequence[str]]) -> np.ndarray:
    """(len(ARCHETYPES), len(POST_FORMATS)) matrix: +1 preferred, -1 disliked, 0 neutral."""
    matrix = np.zeros((len(ARCHETYPES), len(POST_FORMATS)))
    for row, archetype in enumerate(ARCHETYPES):
        for fmt in preferred.get(archetype, ()):
            matrix[row, POST_FORMATS.index(fmt)] = 1.0
        for fmt in disliked.get(archetype, ()):
            matrix[row, POST_FORMATS.index(fmt)] = -1.0
    return matrix


def format_indices(formats: Sequence[str]) -> np.ndarray:
    """Column index in POST_FORMATS of each format; unknown formats raise ValueError."""
    lookup = {fmt: i for i, fmt in enumerate(POST_FORMATS)}
    unknown = sorted({fmt for fmt in formats if fmt not in lookup})
    if unknown:
        raise ValueError(f"format: unknown {unknown}; allowed: {', '.join(POST_FORMATS)}")
    return np.fromiter((lookup[fmt] for fmt in formats), dtype=np.intp, count=len(formats))
