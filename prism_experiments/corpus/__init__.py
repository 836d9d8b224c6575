"""The starting corpus: a deterministic synthetic generator or a user's file, as list[Post] with topics.

Also the post-format and reply-archetype classifiers (REQ-RETRIEVAL-6, REQ-RETRIEVAL-7), and the text
templates the simulation uses to author new posts.
"""

from prism_experiments.corpus.formats import (
    REPLY_ARCHETYPES,
    TIP_MAX_CHARS,
    TWEET_FORMATS,
    classify_reply_archetype,
    classify_tweet_format,
)
from prism_experiments.corpus.loader import (
    COLUMNS,
    REQUIRED_COLUMNS,
    SUFFIXES,
    CorpusFileError,
    load_posts,
    save_posts,
)
from prism_experiments.corpus.synthetic import SyntheticCorpusConfig, generate_corpus
from prism_experiments.corpus.templates import (
    MEDIA_DRAWS,
    REPLY_TEMPLATES,
    TEXT_DRAWS,
    TWEET_TEMPLATES,
    new_media_description,
    new_post_text,
)

__all__ = [
    "COLUMNS",
    "MEDIA_DRAWS",
    "REPLY_ARCHETYPES",
    "REPLY_TEMPLATES",
    "REQUIRED_COLUMNS",
    "SUFFIXES",
    "TEXT_DRAWS",
    "TIP_MAX_CHARS",
    "TWEET_FORMATS",
    "TWEET_TEMPLATES",
    "CorpusFileError",
    "SyntheticCorpusConfig",
    "classify_reply_archetype",
    "classify_tweet_format",
    "generate_corpus",
    "load_posts",
    "new_media_description",
    "new_post_text",
    "save_posts",
]
