"""Topic vocabularies: what the synthetic corpus writes and how an interest is embedded as a query.

Each topic has its own named entities, noun phrases, actions, outcomes, groups
of people, hashtags and media descriptions, chosen so that all-MiniLM-L6-v2
embeddings of posts cluster by topic. Neighbouring topics (technology /
science / gaming, crypto / finance, health / sports / food) use deliberately
disjoint vocabularies. No phrase contains a seed-002 classifier trigger, so a
post's format comes from its template alone (tests check this).

Grammar contract for the templates: `nouns` and `outcomes` are noun phrases,
`actions` are bare verb phrases without "your" (they follow
"to", "who" and "I" as well as starting a sentence), `people` are plural
groups, `entities` are names. Media descriptions may contain `{entity}`.

The words live in `topics.json` beside this module (one object a topic, in `TOPICS` order, with the fields
of `TopicVocabulary`), read and checked once at import: a malformed file fails with one line naming the topic
and the field.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from dataclasses import dataclass, fields
from importlib import resources
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class TopicVocabulary:
    """The words a topic's posts are made of."""

    topic: str
    entities: tuple[str, ...]
    nouns: tuple[str, ...]
    actions: tuple[str, ...]
    outcomes: tuple[str, ...]
    people: tuple[str, ...]
    hashtags: tuple[str, ...]
    image_descriptions: tuple[str, ...]
    video_descriptions: tuple[str, ...]
    gif_descriptions: tuple[str, ...]

    def media_descriptions(self, media_type: str) -> tuple[str, ...]:
        """Description templates for `media_type` (image, video or gif)."""
        by_type = {
            "image": self.image_descriptions,
            "video": self.video_descriptions,
            "gif": self.gif_descriptions,
        }
        if media_type not in by_type:
            raise ValueError(f"media_type: must be one of image, video, gif; got {media_type!r}")
        return by_type[media_type]


#: The data file, a resource of this package (pyproject.toml's package-data ships it in wheels).
DATA_FILE = "topics.json"

_FIELDS: tuple[str, ...] = tuple(field.name for field in fields(TopicVocabulary))
_WORD_FIELDS: tuple[str, ...] = _FIELDS[1:]
#: Fields filled in with str.format(entity=...) by the corpus templates: any other placeholder would fail there.
_MEDIA_FIELDS: frozenset[str] = frozenset({"image_descriptions", "video_descriptions", "gif_descriptions"})


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json object hook: a repeated key is an error (json keeps the last one silently)."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            topic = next((v for k, v in pairs if k == "topic"), None)
            where = f"topic {topic!r}: " if isinstance(topic, str) else ""
            raise ValueError(f"{where}field {key!r} appears twice")
        result[key] = value
    return result


def _checked_words(where: str, field: str, value: object) -> tuple[str, ...]:
    """`value` as a tuple of non-blank strings, or a ValueError naming `where` and `field`."""
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where}: field {field!r} must be a non-empty list of strings; got {value!r:.80}")
    for position, word in enumerate(value):
        if not isinstance(word, str) or not word.strip():
            raise ValueError(f"{where}: field {field!r}: entry {position} must be a non-blank string; got {word!r:.80}")
        if field in _MEDIA_FIELDS:
            try:
                slots = {name for _, name, _, _ in string.Formatter().parse(word) if name is not None}
            except ValueError as error:
                raise ValueError(f"{where}: field {field!r}: entry {position}: {error}") from None
            if not slots <= {"entity"}:
                raise ValueError(f"{where}: field {field!r}: entry {position} may hold only {{entity}}; got {word!r}")
    return tuple(value)


def parse_vocabularies(text: str, source: str = DATA_FILE) -> tuple[TopicVocabulary, ...]:
    """The vocabularies of a topics JSON text, in file order; a ValueError of one line names what is wrong."""
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except ValueError as error:  # json.JSONDecodeError included: its message is one line with the position
        raise ValueError(f"{source}: {error}") from None
    if not isinstance(data, list) or not data:
        raise ValueError(f"{source}: must be a non-empty list of topic objects; got {type(data).__name__}")
    vocabularies: list[TopicVocabulary] = []
    for index, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise ValueError(f"{source}: entry {index} must be an object; got {type(entry).__name__}")
        topic = entry.get("topic")
        if not isinstance(topic, str) or not topic.strip():
            raise ValueError(f"{source}: entry {index}: field 'topic' must be a non-blank string; got {topic!r:.80}")
        where = f"{source}: topic {topic!r}"
        if any(vocabulary.topic == topic for vocabulary in vocabularies):
            raise ValueError(f"{where}: appears twice (topic ids are unique)")
        for field in _FIELDS:
            if field not in entry:
                raise ValueError(f"{where}: field {field!r} is missing")
        for field in entry:
            if field not in _FIELDS:
                raise ValueError(f"{where}: field {field!r} is unknown (fields: {', '.join(_FIELDS)})")
        words = {field: _checked_words(where, field, entry[field]) for field in _WORD_FIELDS}
        vocabularies.append(TopicVocabulary(topic, **words))
    return tuple(vocabularies)


def _load() -> tuple[TopicVocabulary, ...]:
    """The package's vocabularies, from its data file."""
    text = resources.files(__package__).joinpath(DATA_FILE).read_text(encoding="utf-8")
    return parse_vocabularies(text, f"{__package__}/{DATA_FILE}")


_ALL: tuple[TopicVocabulary, ...] = _load()

#: Topic ids, in a fixed order (draws are indexed by it, so do not reorder).
TOPICS: tuple[str, ...] = tuple(vocabulary.topic for vocabulary in _ALL)

#: Read-only topic id -> vocabulary.
TOPIC_VOCABULARIES: Mapping[str, TopicVocabulary] = MappingProxyType({v.topic: v for v in _ALL})


def topic_vocabulary(topic: str) -> TopicVocabulary:
    """The vocabulary of `topic`, or a ValueError listing the known topics."""
    try:
        return TOPIC_VOCABULARIES[topic]
    except KeyError:
        raise ValueError(f"topic: must be one of {', '.join(TOPICS)}; got {topic!r}") from None


def topic_description(topic: str, n_nouns: int = 8) -> str:
    """`"technology: large language models, cloud computing costs, ..."`: a topic as a query text."""
    return f"{topic}: {', '.join(topic_vocabulary(topic).nouns[:n_nouns])}"


def interest_query_text(interest: str) -> str:
    """The text embedded for an interest: a known topic's description, else the interest itself.

    A bare word embeds ambiguously: "technology" alone put 5 technology posts in its top 10 on the
    synthetic corpus (the rest science and crypto); its description puts 10 (tests/test_retrieval_topics.py).
    """
    return topic_description(interest) if interest in TOPIC_VOCABULARIES else interest
