"""The neutral vocabulary every package shares: posts, topics, timestamps and the event-log schema.

It imports no other package of ours (tests/test_imports.py), so corpus, rag, ranking, metrics,
simulation and tracking can all depend on it without depending on each other.
"""

from prism_experiments.domain.event_log import (
    ACTIONS,
    CASCADE_EDGES_COLUMNS,
    COMPONENT_PREFIX,
    ENGAGEMENTS_COLUMNS,
    EVENT_TABLES,
    EXPOSURE_SOURCES,
    EXPOSURES_COLUMNS,
    FEED_KEYS,
    FOLLOWS_COLUMNS,
    POSTS_COLUMNS,
    PROPENSITY_COLUMNS,
    SERVING_CANDIDATES,
    SERVING_CANDIDATES_COLUMNS,
    TABLE_COLUMNS,
    TARGET_PREFIX,
    EventLog,
    empty_table,
    typed,
)
from prism_experiments.domain.post import MEDIA_TYPES, POST_FORMATS, MediaType, Post
from prism_experiments.domain.recorder import EventRecorder
from prism_experiments.domain.timestamps import EPOCH, as_utc, epoch_microseconds, from_epoch_microseconds
from prism_experiments.domain.topics import (
    TOPIC_VOCABULARIES,
    TOPICS,
    TopicVocabulary,
    interest_query_text,
    topic_description,
    topic_vocabulary,
)

__all__ = [
    "ACTIONS",
    "CASCADE_EDGES_COLUMNS",
    "COMPONENT_PREFIX",
    "ENGAGEMENTS_COLUMNS",
    "EPOCH",
    "EVENT_TABLES",
    "EXPOSURES_COLUMNS",
    "EXPOSURE_SOURCES",
    "FEED_KEYS",
    "FOLLOWS_COLUMNS",
    "MEDIA_TYPES",
    "POSTS_COLUMNS",
    "POST_FORMATS",
    "PROPENSITY_COLUMNS",
    "SERVING_CANDIDATES",
    "SERVING_CANDIDATES_COLUMNS",
    "TABLE_COLUMNS",
    "TARGET_PREFIX",
    "TOPICS",
    "TOPIC_VOCABULARIES",
    "EventLog",
    "EventRecorder",
    "MediaType",
    "Post",
    "TopicVocabulary",
    "as_utc",
    "empty_table",
    "epoch_microseconds",
    "from_epoch_microseconds",
    "interest_query_text",
    "topic_description",
    "topic_vocabulary",
    "typed",
]
