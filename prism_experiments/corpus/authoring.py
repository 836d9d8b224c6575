"""Posts and replies the agents write during a run: topic, text, media and timing from given draws.

The caller owns the randomness: it passes each author's row of authoring uniforms and a text
generator keyed by (step, agent, slot), so what an agent writes never depends on the ranker.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import numpy as np

from prism_experiments.corpus.formats import classify_tweet_format
from prism_experiments.corpus.templates import MEDIA_KINDS, new_media_description, new_post_text
from prism_experiments.domain import MediaType, Post

#: Columns of one author's row of authoring uniforms.
WRITE, WRITE_MEDIA, WRITE_TOPIC, WRITE_TIME, MEDIA_KIND = range(5)
AUTHORING_DRAWS = 5


def writers(draws: np.ndarray, post_rates: np.ndarray) -> np.ndarray:
    """Rows of `draws` (one per active agent) whose agent writes a post this step."""
    return np.flatnonzero(draws[:, WRITE] < post_rates)


def original_post(
    post_id: str,
    author_id: str,
    interests: Sequence[str],
    draws: np.ndarray,
    rng: np.random.Generator,
    now: datetime,
    step_delta: timedelta,
    media_probability: float,
    hashtag_fraction: float,
    pool_size: int = 0,
) -> Post:
    """A post on one of the author's interests, some with media, timed within the step.

    `draws` is the author's row of AUTHORING_DRAWS uniforms; `rng` supplies the text (and media description).
    """
    topic = interests[int(draws[WRITE_TOPIC] * len(interests))]
    text = new_post_text(topic, rng, hashtag_fraction=hashtag_fraction, pool_size=pool_size)
    media = draws[WRITE_MEDIA] < media_probability
    kind = MEDIA_KINDS[min(int(draws[MEDIA_KIND] * len(MEDIA_KINDS)), len(MEDIA_KINDS) - 1)]
    return authored_post(
        post_id,
        author_id,
        text,
        now + step_delta * draws[WRITE_TIME],
        topic,
        media_type=kind if media else "none",
        media_description=new_media_description(topic, kind, rng) if media else None,
    )


def reply_post(
    post_id: str,
    author_id: str,
    fallback_topic: str,
    parent: Post,
    rng: np.random.Generator,
    now: datetime,
    step_delta: timedelta,
    hashtag_fraction: float,
    pool_size: int = 0,
) -> Post:
    """A reply to `parent` on its topic (`fallback_topic` if it has none), timed within the step."""
    text = new_post_text(
        parent.topic or fallback_topic, rng, reply=True, hashtag_fraction=hashtag_fraction, pool_size=pool_size
    )
    return authored_post(post_id, author_id, text, now + step_delta * rng.random(), parent.topic, parent_id=parent.id)


def authored_post(
    post_id: str,
    author_id: str,
    text: str,
    timestamp: datetime,
    topic: str | None,
    parent_id: str | None = None,
    media_type: MediaType = "none",
    media_description: str | None = None,
) -> Post:
    """A new post whose format is classified from its text (the format spec's classifier)."""
    return Post(
        id=post_id,
        author_id=author_id,
        text=text,
        timestamp=timestamp,
        topic=topic,
        has_media=media_type != "none",
        media_type=media_type,
        media_description=media_description,
        likes=0,  # the defaults, given: a post given every field shares one fields set (`Post`)
        reshares=0,
        replies=0,
        velocity=0.0,
        parent_id=parent_id,
        format=classify_tweet_format(text),
        political=None,
        slant=None,
        animosity=None,
        moral_emotion=None,
    )
