"""Deterministic synthetic corpus: topic-labelled posts, replies, media and starting engagement.

`generate_corpus(config, seed, authors)` is a pure function of its arguments.
Independent random streams (numpy PCG64, spawned from `SeedSequence(seed)`)
drive authors, structure (author, topic, reply, parent, time), text, media and
engagement, so changing e.g. `media_fraction` leaves texts and timestamps as
they were. Everything is drawn as whole arrays; the only per-post Python work
is filling a template and building the `Post`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from prism_experiments.corpus.formats import classify_tweet_format
from prism_experiments.corpus.templates import (
    DEFAULT_HASHTAG_FRACTION,
    DEFAULT_TEXT_POOL_SIZE,
    MEDIA_DRAWS,
    MEDIA_KINDS,
    TEXT_DRAWS,
    compose_media_description,
    compose_text,
    new_media_description,
    new_post_text,
)
from prism_experiments.domain import TOPICS, MediaType, Post, as_utc

__all__ = [
    "LIKES_LOG_SIGMA",
    "REPLY_LIKES_LOG_MEAN",
    "REPLY_PER_LIKE",
    "RESHARE_PER_LIKE",
    "ROOT_LIKES_LOG_MEAN",
    "SyntheticCorpusConfig",
    "generate_corpus",
    "new_media_description",
    "new_post_text",
]

MAX_TOPICS_PER_GENERATED_AUTHOR = 3

# Starting engagement (documented in docs/corpus.md): likes ~ floor(LogNormal(mu, sigma)),
# a heavy tail as in observed like counts (median e^mu, a few posts with hundreds);
# replies get less attention than root posts. Reshares and replies are thinned
# likes, Binomial(likes, p), so they are smaller and correlated with likes.
ROOT_LIKES_LOG_MEAN = 1.0
REPLY_LIKES_LOG_MEAN = 0.0
LIKES_LOG_SIGMA = 1.5
RESHARE_PER_LIKE = 0.2
REPLY_PER_LIKE = 0.1

_MS_PER_HOUR = 3_600_000
_STREAMS = ("authors", "structure", "text", "media", "engagement")


def _default_reference_time() -> datetime:
    return datetime(2026, 1, 1, tzinfo=UTC)


class SyntheticCorpusConfig(BaseModel):
    """Size and mix of the synthetic starting corpus."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    n_posts: int = Field(default=5000, ge=1)
    n_authors: int = Field(default=200, ge=1, description="Used only when no authors are passed.")
    reference_time: datetime = Field(
        default_factory=_default_reference_time,
        description="Newest a starting post can be; the simulation starts here.",
    )
    span_hours: float = Field(default=72.0, gt=0.0, description="Posts spread over this span before reference_time.")
    reply_fraction: float = Field(default=0.15, ge=0.0, le=1.0)
    media_fraction: float = Field(default=0.3, ge=0.0, le=1.0)
    media_type_weights: dict[str, float] = Field(default_factory=lambda: {"image": 0.6, "video": 0.25, "gif": 0.15})
    hashtag_fraction: float = Field(default=DEFAULT_HASHTAG_FRACTION, ge=0.0, le=1.0)
    topics: tuple[str, ...] = Field(default=TOPICS, description="Topics of generated authors.")
    #: N > 0: texts (and the run's new posts and replies) drawn from a fixed pool of N texts per topic and as
    #: many replies, shared by every seed, so that at most 2 x 12 x N texts are ever embedded (9,600 at 400:
    #: a cold 10-seed sweep embeds each once); 0: every text composed from the templates afresh
    #: (docs/corpus.md "Text pools")
    text_pool_size: int = Field(default=DEFAULT_TEXT_POOL_SIZE, ge=0)

    @field_validator("reference_time")
    @classmethod
    def _reference_time_is_utc(cls, value: datetime) -> datetime:
        return as_utc(value)

    @field_validator("media_type_weights")
    @classmethod
    def _media_weights(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(MEDIA_KINDS))
        if unknown:
            raise ValueError(f"media_type_weights: keys must be among {', '.join(MEDIA_KINDS)}; got {unknown}")
        if any(weight < 0 for weight in value.values()):
            raise ValueError(f"media_type_weights: weights must be >= 0; got {value}")
        if sum(value.values()) <= 0:
            raise ValueError(f"media_type_weights: weights must sum to more than 0; got {value}")
        return value

    @field_validator("topics")
    @classmethod
    def _known_topics(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [topic for topic in value if topic not in TOPICS]
        if unknown or not value or len(set(value)) != len(value):
            raise ValueError(
                f"topics: must be 1 to {len(TOPICS)} distinct topics from {', '.join(TOPICS)}; got {list(value)}"
            )
        return value

    @model_validator(mode="after")
    def _room_for_distinct_timestamps(self) -> SyntheticCorpusConfig:
        # Timestamps are distinct milliseconds, so the span must hold n_posts of them.
        if self.span_hours * _MS_PER_HOUR < self.n_posts:
            raise ValueError(
                f"span_hours: must be >= n_posts / {_MS_PER_HOUR} (one millisecond per post); got {self.span_hours}"
            )
        return self


def _author_probabilities(weights: Mapping[str, float], author_ids: Sequence[str]) -> np.ndarray:
    """Each author's probability of writing a post, in `author_ids`' order: its weight over the total (checked: a
    finite weight >= 0 for every author, some above 0)."""
    missing = [author for author in author_ids if author not in weights]
    if missing:
        raise ValueError(f"author_weights: no weight for {len(missing)} author(s), e.g. {missing[0]!r}")
    w = np.array([weights[author] for author in author_ids], dtype=float)
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("author_weights: must be finite numbers >= 0 with a positive sum")
    return w / w.sum()


def _stream_generators(seed: int) -> dict[str, np.random.Generator]:
    children = np.random.SeedSequence(seed).spawn(len(_STREAMS))
    return {name: np.random.Generator(np.random.PCG64(child)) for name, child in zip(_STREAMS, children)}


def _generated_authors(config: SyntheticCorpusConfig, rng: np.random.Generator) -> dict[str, tuple[str, ...]]:
    """`n_authors` authors "author_0000"... each with 1-3 distinct topics from `config.topics`."""
    n_topics = len(config.topics)
    order = np.argsort(rng.random((config.n_authors, n_topics)), axis=1)
    counts = rng.integers(1, min(MAX_TOPICS_PER_GENERATED_AUTHOR, n_topics) + 1, size=config.n_authors)
    width = max(4, len(str(config.n_authors - 1)))
    return {
        f"author_{i:0{width}d}": tuple(config.topics[j] for j in sorted(order[i, : counts[i]]))
        for i in range(config.n_authors)
    }


def _checked_authors(authors: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    """Authors sorted by id, each with its distinct topics in TOPICS order (so input order never matters)."""
    if not authors:
        raise ValueError("authors: must hold at least one author (or pass None to generate them)")
    bad_ids = [author_id for author_id in authors if not isinstance(author_id, str) or not author_id]
    if bad_ids:
        raise ValueError(f"authors: ids must be non-empty strings; got {bad_ids[:3]}")
    checked: dict[str, tuple[str, ...]] = {}
    for author_id in sorted(authors):
        topics = authors[author_id]
        if isinstance(topics, str):
            raise ValueError(f"authors[{author_id!r}]: must be a sequence of topics, got the string {topics!r}")
        wanted = set(topics)
        if not wanted or not wanted <= set(TOPICS):
            raise ValueError(f"authors[{author_id!r}]: needs 1+ topics from {', '.join(TOPICS)}; got {list(topics)}")
        checked[author_id] = tuple(topic for topic in TOPICS if topic in wanted)
    return checked


def _post_topics(author_topics: list[tuple[str, ...]], author_index: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Topic index (into TOPICS) of each post: uniform over its author's topics."""
    topic_index = {topic: i for i, topic in enumerate(TOPICS)}
    width = max(len(topics) for topics in author_topics)
    table = np.zeros((len(author_topics), width), dtype=np.int64)
    counts = np.array([len(topics) for topics in author_topics], dtype=np.int64)
    for row, topics in enumerate(author_topics):
        table[row, : len(topics)] = [topic_index[t] for t in topics]
    choice = np.minimum((u * counts[author_index]).astype(np.int64), counts[author_index] - 1)
    return table[author_index, choice]


def _reply_parents(topic: np.ndarray, wants_reply: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Parent row of each post (-1 = root): uniform over earlier posts of the same topic.

    A would-be reply with no earlier post on its topic stays a root post.
    """
    parents = np.full(topic.shape[0], -1, dtype=np.int64)
    for t in np.unique(topic):
        rows = np.flatnonzero(topic == t)
        earlier = np.arange(rows.shape[0])
        is_reply = wants_reply[rows] & (earlier > 0)
        picks = np.minimum((u[rows] * earlier).astype(np.int64), np.maximum(earlier - 1, 0))
        parents[rows[is_reply]] = rows[picks[is_reply]]
    return parents


def _offsets_ms(n: int, span_ms: int, rng: np.random.Generator) -> np.ndarray:
    """n strictly increasing millisecond offsets in [1, span_ms], uniform over the span."""
    # Sorted draws from [0, span - n] plus 0..n-1 are strictly increasing and stay in range.
    return np.sort(rng.integers(0, span_ms - n + 1, size=n)) + np.arange(n) + 1


def _media(
    n: int, config: SyntheticCorpusConfig, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(has_media, media kind index into MEDIA_KINDS, description draws) for n posts."""
    has_media = rng.random(n) < config.media_fraction
    weights = np.array([config.media_type_weights.get(kind, 0.0) for kind in MEDIA_KINDS])
    cumulative = np.cumsum(weights / weights.sum())
    kind = np.minimum(np.searchsorted(cumulative, rng.random(n), side="right"), len(MEDIA_KINDS) - 1)
    return has_media, kind, rng.random((n, MEDIA_DRAWS))


def _engagement(is_reply: np.ndarray, parents: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Heavy-tailed starting likes; reshares and replies thinned from likes; replies count children."""
    mean = np.where(is_reply, REPLY_LIKES_LOG_MEAN, ROOT_LIKES_LOG_MEAN)
    likes = np.floor(rng.lognormal(mean, LIKES_LOG_SIGMA)).astype(np.int64)
    reshares = rng.binomial(likes, RESHARE_PER_LIKE)
    replies = rng.binomial(likes, REPLY_PER_LIKE)
    children = np.bincount(parents[parents >= 0], minlength=parents.shape[0])
    return likes, reshares, replies + children


def generate_corpus(
    config: SyntheticCorpusConfig,
    seed: int,
    authors: Mapping[str, Sequence[str]] | None = None,
    author_weights: Mapping[str, float] | None = None,
) -> list[Post]:
    """A reproducible corpus of `config.n_posts` posts; same (config, seed, authors, weights) -> identical posts.

    `authors` maps author id -> topics (the simulation's agents and interests);
    None generates `config.n_authors` authors with 1-3 topics each. `author_weights` (author id -> weight): each
    post's author drawn in proportion to its weight; None: every author alike.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: must be a non-negative integer, got {seed!r}")
    streams = _stream_generators(int(seed))
    author_map = _generated_authors(config, streams["authors"]) if authors is None else _checked_authors(authors)
    author_ids = list(author_map)
    author_topics = list(author_map.values())

    n = config.n_posts
    structure = streams["structure"]
    if author_weights is None:  # the draws every corpus before author weights was made of
        author_index = structure.integers(0, len(author_ids), size=n)
    else:
        author_index = structure.choice(len(author_ids), size=n, p=_author_probabilities(author_weights, author_ids))
    topic = _post_topics(author_topics, author_index, structure.random(n))
    parents = _reply_parents(topic, structure.random(n) < config.reply_fraction, structure.random(n))
    is_reply = parents >= 0
    span_ms = int(config.span_hours * _MS_PER_HOUR)
    offsets = _offsets_ms(n, span_ms, structure)

    # an array, each row a list only when used: a million rows of Python floats held at once were 0.6 GB
    text_draws = streams["text"].random((n, TEXT_DRAWS))
    has_media, media_kind, media_draws = _media(n, config, streams["media"])
    likes, reshares, replies = _engagement(is_reply, parents, streams["engagement"])

    start = config.reference_time - timedelta(milliseconds=span_ms)
    age_hours = (span_ms - offsets) / _MS_PER_HOUR
    # Velocity (REQ-FEED-1.1: rate of engagement growth) = engagement per hour of age at
    # reference_time, with ages under an hour counted as one hour.
    velocity = np.round((likes + reshares + replies) / np.maximum(age_hours, 1.0), 4)

    width = max(6, len(str(n - 1)))
    ids = [f"p{i:0{width}d}" for i in range(n)]
    posts: list[Post] = []
    for i in range(n):
        topic_id = TOPICS[topic[i]]
        draws = text_draws[i].tolist()
        text = compose_text(topic_id, draws, bool(is_reply[i]), config.hashtag_fraction, config.text_pool_size)
        media_type: MediaType = MEDIA_KINDS[media_kind[i]] if has_media[i] else "none"
        description = compose_media_description(topic_id, media_type, media_draws[i].tolist()) if has_media[i] else None
        posts.append(
            Post(
                id=ids[i],
                author_id=author_ids[author_index[i]],
                text=text,
                timestamp=start + timedelta(milliseconds=int(offsets[i])),
                topic=topic_id,
                has_media=bool(has_media[i]),
                media_type=media_type,
                media_description=description,
                likes=int(likes[i]),
                reshares=int(reshares[i]),
                replies=int(replies[i]),
                velocity=float(velocity[i]),
                parent_id=ids[parents[i]] if is_reply[i] else None,
                format=classify_tweet_format(text),
                political=None,
                slant=None,
                animosity=None,
                moral_emotion=None,
            )
        )
    return posts
