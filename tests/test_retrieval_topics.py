"""The plain-retrieval criteria (REQ-FEED-5) on the synthetic corpus with the real model and Chroma."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from prism_experiments.corpus import SyntheticCorpusConfig, generate_corpus
from prism_experiments.domain import TOPICS
from prism_experiments.feed_store import FeedRetriever, FeedStoreConfig
from prism_experiments.metrics import shannon_entropy

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def retriever(embedder) -> FeedRetriever:
    store = FeedRetriever(
        FeedStoreConfig(collection_name="retrieval_topics", retrieval_window_hours=72), embedder=embedder
    )
    store.add_posts(generate_corpus(SyntheticCorpusConfig(n_posts=1200, span_hours=48), seed=4))
    return store


def test_crypto_and_technology_agent_gets_mostly_its_topics(retriever: FeedRetriever) -> None:
    feed = retriever.get_feed(["crypto", "technology"], mode="preference", n=10)
    assert len(feed) == 10
    assert sum(post.topic in ("crypto", "technology") for post in feed) >= 8


@pytest.mark.parametrize("topic", TOPICS)
def test_every_single_topic_agent_gets_mostly_its_topic(retriever: FeedRetriever, topic: str) -> None:
    feed = retriever.get_feed([topic], mode="preference", n=10)
    assert sum(post.topic == topic for post in feed) >= 8, [post.topic for post in feed]


def test_random_feeds_are_more_diverse_than_preference_feeds(retriever: FeedRetriever) -> None:
    rng = np.random.default_rng(0)
    interests = [[t] for t in TOPICS] + [[a, b] for a, b in itertools.pairwise(TOPICS)]
    preference = [shannon_entropy(p.topic for p in retriever.get_feed(i, mode="preference")) for i in interests]
    random = [shannon_entropy(p.topic for p in retriever.get_feed(i, mode="random", rng=rng)) for i in interests]
    assert np.mean(random) > np.mean(preference) + 1.0
