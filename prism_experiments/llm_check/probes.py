"""The probe set: personas x feeds whose right answers are known by construction.

Each persona is interested in one topic; each feed holds `ON_TOPIC` posts on that topic and as many on one topic the
persona never names, half of each with media, in a seeded shuffled order. A persona that behaves like the person it
plays engages more with the posts on its topic, whatever their position. The set is versioned: a changed persona,
topic, text or order is a new `PROBE_SET_VERSION`, so figures of two versions are never compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from prism_experiments.agents import ARCHETYPES, SocialAgent
from prism_experiments.corpus.templates import (
    MEDIA_DRAWS,
    MEDIA_KINDS,
    TEXT_DRAWS,
    compose_media_description,
    compose_text,
)
from prism_experiments.domain import Post

PROBE_SET_VERSION = "1"
#: (the persona's topic, a topic it never names): every pair of distinct corpus topics, far apart in subject
TOPIC_PAIRS: tuple[tuple[str, str], ...] = (
    ("food", "crypto"),
    ("sports", "politics"),
    ("music", "finance"),
    ("science", "gaming"),
    ("travel", "technology"),
    ("health", "climate"),
)
FEEDS_PER_PERSONA = 9
ON_TOPIC = 4
#: the time every probe feed is read at (relative times in the rendered feed depend on it)
PROBE_TIME = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
SEED = 2026


@dataclass(frozen=True)
class Probe:
    """One prompt of the set: who reads, what is shown (in feed order), and which posts are on the persona's topic."""

    probe_id: str
    agent: SocialAgent
    posts: tuple[Post, ...]
    on_topic: tuple[bool, ...]


def probe_persona(index: int, topic: str) -> SocialAgent:
    """A persona interested in `topic` alone, leaning on one archetype, active and ready to react."""
    archetype = ARCHETYPES[index % len(ARCHETYPES)]
    weights = {a: (0.6 if a == archetype else 0.4 / (len(ARCHETYPES) - 1)) for a in ARCHETYPES}
    return SocialAgent(id=f"reader{index}", interests=[topic], activity=0.5, post_rate=0.1, archetype_weights=weights)


def probe_post(rng: np.random.Generator, post_id: str, topic: str, with_media: bool, age_hours: float) -> Post:
    """A post on `topic` written from the corpus templates, with an image or a video when `with_media`."""
    media = MEDIA_KINDS[int(rng.integers(0, 2))] if with_media else "none"
    description = compose_media_description(topic, media, rng.random(MEDIA_DRAWS).tolist()) if with_media else None
    return Post(
        id=post_id,
        author_id=f"author-{post_id}",
        text=compose_text(topic, rng.random(TEXT_DRAWS).tolist(), False, 0.0, 0),
        timestamp=PROBE_TIME - timedelta(hours=age_hours),
        topic=topic,
        has_media=with_media,
        media_type=media,
        media_description=description,
        likes=int(rng.integers(0, 40)),
        reshares=int(rng.integers(0, 8)),
        replies=int(rng.integers(0, 5)),
    )


def probe_set() -> list[Probe]:
    """Every probe of PROBE_SET_VERSION, in a fixed order (len(TOPIC_PAIRS) x FEEDS_PER_PERSONA)."""
    rng = np.random.default_rng(SEED)
    probes = []
    for index, (topic, other) in enumerate(TOPIC_PAIRS):
        agent = probe_persona(index, topic)
        for feed in range(FEEDS_PER_PERSONA):
            topics = [topic] * ON_TOPIC + [other] * ON_TOPIC
            media = [i % 2 == 0 for i in range(ON_TOPIC)] * 2  # half of each topic's posts with media
            posts = [
                probe_post(rng, f"q{index}-{feed}-{i}", t, m, age_hours=float(rng.uniform(0.2, 20)))
                for i, (t, m) in enumerate(zip(topics, media, strict=True))
            ]
            order = rng.permutation(len(posts))
            shown = tuple(posts[i] for i in order)
            probes.append(Probe(f"{index}-{feed}", agent, shown, tuple(p.topic == topic for p in shown)))
    return probes
