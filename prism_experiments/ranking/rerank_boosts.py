"""The context rerank's boosts mapped to feeds, as pure functions, and the post text signals they read.

The generic boost's signals (REQ-RERANK-2, docs/requirements.md) -> this project:
  platform slug match  +0.10  -> the post's topic is the agent's primary (first) interest
  discipline overlap   +0.06  -> the post's topic is one of the agent's other interests
  entity alignment     +0.12 / +0.15 -> the agent follows the author / they follow each other
  topic/tag overlap    +0.05  -> a hashtag in the text belongs to an interest's vocabulary
  keyword presence     +0.03  -> an interest's name appears in the text (outside hashtags)
  mode alignment       +0.06  -> the format is preferred by the agent's dominant archetype (-0.06 if disliked)
The sum is clamped to [boost_min, boost_max] = [-0.1, 0.5] (REQ-RERANK-3).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from prism_experiments.domain import TOPIC_VOCABULARIES


class GenericBoostWeights(Protocol):
    """The generic boost's weights and clamp (REQ-RERANK-2, REQ-RERANK-3): `ContextRerankConfig` has them."""

    @property
    def primary_interest_boost(self) -> float: ...
    @property
    def other_interest_boost(self) -> float: ...
    @property
    def followed_author_boost(self) -> float: ...
    @property
    def mutual_follow_boost(self) -> float: ...
    @property
    def hashtag_boost(self) -> float: ...
    @property
    def keyword_boost(self) -> float: ...
    @property
    def preferred_format_boost(self) -> float: ...
    @property
    def disliked_format_penalty(self) -> float: ...
    @property
    def boost_min(self) -> float: ...
    @property
    def boost_max(self) -> float: ...


_HASHTAG = re.compile(r"#\w+")
_WORD = re.compile(r"(?<![#\w])\w+")


@dataclass(frozen=True, slots=True)
class PostText:
    """What the boosts read from a post's text: its hashtags, and its words outside hashtags."""

    hashtags: frozenset[str]
    words: tuple[str, ...]


def post_text(text: str) -> PostText:
    """Lower-cased hashtags (with '#') and the lower-cased words that are not part of a hashtag."""
    lowered = text.lower()
    return PostText(frozenset(_HASHTAG.findall(lowered)), tuple(_WORD.findall(lowered)))


def interest_hashtags(interests: Iterable[str]) -> frozenset[str]:
    """Hashtags of the interests' topic vocabularies (lower-cased), plus '#<interest>' for any interest."""
    tags: set[str] = set()
    for interest in interests:
        vocabulary = TOPIC_VOCABULARIES.get(interest)
        if vocabulary is not None:
            tags.update(tag.lower() for tag in vocabulary.hashtags)
        tags.add("#" + "".join(interest.lower().split()))
    return frozenset(tags)


def has_keyword(text: PostText, interests: Iterable[str]) -> bool:
    """An interest's name, as whole words, among the post's words (a multi-word name as a phrase)."""
    words = text.words
    for interest in interests:
        phrase = tuple(interest.lower().split())
        width = len(phrase)
        if width and any(words[i : i + width] == phrase for i in range(len(words) - width + 1)):
            return True
    return False


def dominant_archetype(weights: Mapping[str, float]) -> str | None:
    """The archetype with the single largest weight; None when the top two tie (no clear archetype)."""
    ordered = sorted(weights.items(), key=lambda item: -item[1])
    if not ordered or (len(ordered) > 1 and ordered[0][1] == ordered[1][1]):
        return None
    return ordered[0][0]


def generic_boost(
    *,
    primary_topic: np.ndarray,
    other_topic: np.ndarray,
    followed: np.ndarray,
    mutual: np.ndarray,
    hashtag: np.ndarray,
    keyword: np.ndarray,
    preferred_format: np.ndarray,
    disliked_format: np.ndarray,
    config: GenericBoostWeights,
) -> np.ndarray:
    """The generic boost (REQ-RERANK-2): the matched signals' boosts summed, clamped to [boost_min, boost_max].

    Each argument is a boolean array with one entry per candidate; entity alignment takes the mutual
    boost when the follow is mutual, else the followed boost (they do not add up).
    """
    c = config
    entity = np.where(
        np.asarray(mutual, bool),
        c.mutual_follow_boost,
        np.where(np.asarray(followed, bool), c.followed_author_boost, 0.0),
    )
    raw = (
        c.primary_interest_boost * np.asarray(primary_topic, bool)
        + c.other_interest_boost * np.asarray(other_topic, bool)
        + entity
        + c.hashtag_boost * np.asarray(hashtag, bool)
        + c.keyword_boost * np.asarray(keyword, bool)
        + c.preferred_format_boost * np.asarray(preferred_format, bool)
        - c.disliked_format_penalty * np.asarray(disliked_format, bool)
    )
    return np.clip(raw, c.boost_min, c.boost_max)


def archetype_confidence(weights: np.ndarray, confidence_min: float) -> float:
    """clamp(margin / confidence_min, 0, 1), margin = largest minus second-largest weight (REQ-RERANK-4)."""
    top = np.sort(np.asarray(weights, dtype=np.float64))[::-1]
    margin = float(top[0] - top[1]) if top.size >= 2 else 0.0
    return float(np.clip(margin / confidence_min, 0.0, 1.0))


def archetype_boost(
    weights: np.ndarray,
    bias: np.ndarray,
    *,
    k: float = 0.08,
    confidence_min: float = 0.08,
    max_boost: float = 0.15,
) -> np.ndarray:
    """The archetype boost (REQ-RERANK-4) for each candidate.

    weights: the agent's archetype weights (n_archetypes,); bias: (n_candidates, n_archetypes) booleans,
    True where the archetype is in the post's archetype-bias keys.
    alignment = sum of weights over the bias keys; specialisation = 1 - |bias keys| / n_archetypes;
    boost = min(max_boost, k x alignment x specialisation x confidence).
    """
    weights = np.asarray(weights, dtype=np.float64)
    bias = np.asarray(bias, dtype=bool).reshape(-1, len(weights))
    alignment = bias @ weights
    specialisation = 1.0 - bias.sum(axis=1) / len(weights)
    confidence = archetype_confidence(weights, confidence_min)
    return np.minimum(max_boost, k * alignment * specialisation * confidence)


def bias_matrix(formats: Sequence[str], table: Mapping[str, Sequence[str]], archetypes: Sequence[str]) -> np.ndarray:
    """(len(formats), len(archetypes)) booleans from a format -> archetypes table; unknown formats: no keys."""
    column = {archetype: j for j, archetype in enumerate(archetypes)}
    matrix = np.zeros((len(formats), len(archetypes)), dtype=bool)
    for i, fmt in enumerate(formats):
        for archetype in table.get(fmt, ()):
            matrix[i, column[archetype]] = True
    return matrix
