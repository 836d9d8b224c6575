"""Synthetic corpus generator, topic vocabularies, text templates and the corpus file loader."""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from validation_helpers import assert_refused

from prism_experiments.corpus import (
    MEDIA_DRAWS,
    REPLY_ARCHETYPES,
    REPLY_TEMPLATES,
    TEXT_DRAWS,
    TWEET_FORMATS,
    TWEET_TEMPLATES,
    CorpusFileError,
    SyntheticCorpusConfig,
    classify_reply_archetype,
    classify_tweet_format,
    generate_corpus,
    load_posts,
    new_media_description,
    new_post_text,
    save_posts,
)
from prism_experiments.corpus.authoring import (
    AUTHORING_DRAWS,
    MEDIA_KIND,
    WRITE,
    WRITE_MEDIA,
    WRITE_TIME,
    WRITE_TOPIC,
    original_post,
    reply_post,
    writers,
)
from prism_experiments.corpus.templates import DEFAULT_TEXT_POOL_SIZE, text_pool
from prism_experiments.domain import TOPIC_VOCABULARIES, TOPICS, Post

UTC = UTC
REFERENCE = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def corpus() -> list[Post]:
    return generate_corpus(SyntheticCorpusConfig(), seed=7)


def _dumps(posts: list[Post]) -> list[str]:
    return [post.model_dump_json() for post in posts]


# --- determinism ---------------------------------------------------------------------------------


def test_same_seed_gives_byte_identical_corpus(corpus: list[Post]) -> None:
    assert _dumps(generate_corpus(SyntheticCorpusConfig(), seed=7)) == _dumps(corpus)


def test_different_seeds_give_different_corpora(corpus: list[Post]) -> None:
    other = generate_corpus(SyntheticCorpusConfig(), seed=8)
    assert len(other) == len(corpus)
    differing_texts = sum(a.text != b.text for a, b in zip(corpus, other))
    assert differing_texts > 0.9 * len(corpus)
    assert [p.author_id for p in other] != [p.author_id for p in corpus]


def test_author_mapping_order_does_not_change_the_corpus() -> None:
    config = SyntheticCorpusConfig(n_posts=300)
    forward = {"ann": ["music", "crypto"], "bob": ["food"], "cat": ["travel", "health", "sports"]}
    backward = {"cat": ["sports", "travel", "health"], "bob": ["food"], "ann": ["crypto", "music"]}
    assert _dumps(generate_corpus(config, 3, forward)) == _dumps(generate_corpus(config, 3, backward))


def test_author_weights_draw_each_author_in_proportion_and_none_draws_as_before() -> None:
    config = SyntheticCorpusConfig(n_posts=3000)
    authors = {"ann": ["music"], "bob": ["food"], "cat": ["travel"]}
    plain = generate_corpus(config, 5, authors)
    assert _dumps(generate_corpus(config, 5, authors, None)) == _dumps(plain)
    weighted = generate_corpus(config, 5, authors, {"cat": 0.0, "ann": 3.0, "bob": 1.0})
    counts = Counter(post.author_id for post in weighted)
    assert counts["cat"] == 0 and counts["ann"] / len(weighted) == pytest.approx(0.75, abs=0.03)
    with pytest.raises(ValueError, match="no weight for 1 author"):
        generate_corpus(config, 5, authors, {"ann": 1.0, "bob": 1.0})
    with pytest.raises(ValueError, match="positive sum"):
        generate_corpus(config, 5, authors, {"ann": 0.0, "bob": 0.0, "cat": 0.0})


def test_changing_media_fraction_leaves_texts_and_times_unchanged() -> None:
    # Independent streams per component: media draws do not shift text or time draws.
    low = generate_corpus(SyntheticCorpusConfig(n_posts=500, media_fraction=0.1), seed=5)
    high = generate_corpus(SyntheticCorpusConfig(n_posts=500, media_fraction=0.9), seed=5)
    assert [(p.text, p.timestamp, p.author_id) for p in low] == [(p.text, p.timestamp, p.author_id) for p in high]
    assert sum(p.has_media for p in low) < sum(p.has_media for p in high)


# --- shape of the corpus -------------------------------------------------------------------------


def test_ids_are_zero_padded_in_order(corpus: list[Post]) -> None:
    assert len(corpus) == 5000
    assert [p.id for p in corpus] == [f"p{i:06d}" for i in range(5000)]


def test_generated_authors_have_one_to_three_topics(corpus: list[Post]) -> None:
    topics_by_author: dict[str, set[str]] = {}
    for post in corpus:
        topics_by_author.setdefault(post.author_id, set()).add(post.topic or "")
    assert set(topics_by_author) <= {f"author_{i:04d}" for i in range(200)}
    assert len(topics_by_author) > 190  # 5000 posts over 200 authors: nearly all post
    assert max(len(topics) for topics in topics_by_author.values()) <= 3
    assert {t for topics in topics_by_author.values() for t in topics} == set(TOPICS)


def test_reply_fraction_within_tolerance(corpus: list[Post]) -> None:
    share = sum(p.parent_id is not None for p in corpus) / len(corpus)
    assert abs(share - 0.15) < 0.02


def test_media_fraction_and_type_weights_within_tolerance(corpus: list[Post]) -> None:
    media = [p for p in corpus if p.has_media]
    assert abs(len(media) / len(corpus) - 0.3) < 0.03
    shares = Counter(p.media_type for p in media)
    for kind, weight in {"image": 0.6, "video": 0.25, "gif": 0.15}.items():
        assert abs(shares[kind] / len(media) - weight) < 0.05


def test_media_fields_are_consistent(corpus: list[Post]) -> None:
    for post in corpus:
        assert post.has_media == (post.media_type != "none") == (post.media_description is not None)
        assert post.media_description is None or "{" not in post.media_description


def test_hashtag_fraction_within_tolerance(corpus: list[Post]) -> None:
    tagged = [p for p in corpus if re.search(r" #\w+$", p.text)]
    assert abs(len(tagged) / len(corpus) - 0.3) < 0.03
    for post in tagged[:200]:
        tags = re.findall(r"#\w+", post.text)
        assert set(tags) <= set(TOPIC_VOCABULARIES[post.topic or ""].hashtags)


def test_no_media_no_replies_no_hashtags_when_fractions_are_zero() -> None:
    config = SyntheticCorpusConfig(n_posts=400, reply_fraction=0, media_fraction=0, hashtag_fraction=0)
    posts = generate_corpus(config, seed=1)
    assert not any(p.has_media or p.parent_id or "#" in p.text for p in posts)


def test_replies_point_to_earlier_posts_of_the_same_topic(corpus: list[Post]) -> None:
    index = {post.id: i for i, post in enumerate(corpus)}
    replies = [p for p in corpus if p.parent_id is not None]
    assert replies
    for reply in replies:
        parent = corpus[index[reply.parent_id]]
        assert index[parent.id] < index[reply.id]
        assert parent.topic == reply.topic
        assert parent.timestamp < reply.timestamp


def test_timestamps_strictly_increase_within_the_span(corpus: list[Post]) -> None:
    stamps = [p.timestamp for p in corpus]
    assert all(a < b for a, b in itertools.pairwise(stamps))
    assert stamps[0] > REFERENCE - timedelta(hours=72)
    assert stamps[-1] <= REFERENCE
    assert all(s.tzinfo is not None and s.utcoffset() == timedelta(0) for s in stamps)
    # Spread over the span, not bunched: each 24 h third holds roughly a third of the posts.
    thirds = Counter(int((REFERENCE - s) / timedelta(hours=24)) for s in stamps)
    assert all(abs(thirds[k] / len(stamps) - 1 / 3) < 0.05 for k in range(3))


def test_reference_time_and_span_are_respected() -> None:
    reference = datetime(2024, 6, 1, 12, 0)  # naive: read as UTC
    posts = generate_corpus(SyntheticCorpusConfig(n_posts=200, reference_time=reference, span_hours=2), seed=2)
    start = reference.replace(tzinfo=UTC) - timedelta(hours=2)
    assert all(start < p.timestamp <= reference.replace(tzinfo=UTC) for p in posts)


def test_every_format_occurs_and_is_the_classifier_output(corpus: list[Post]) -> None:
    assert all(post.format == classify_tweet_format(post.text) for post in corpus)
    counts = Counter(post.format for post in corpus)
    assert set(counts) == set(TWEET_FORMATS)
    assert min(counts.values()) > 0.05 * len(corpus)


def test_replies_cover_every_reply_archetype(corpus: list[Post]) -> None:
    archetypes = Counter(classify_reply_archetype(p.text) for p in corpus if p.parent_id is not None)
    assert set(archetypes) == set(REPLY_ARCHETYPES)


def test_composed_texts_are_almost_all_distinct_and_pooled_ones_still_varied(corpus: list[Post]) -> None:
    composed = generate_corpus(SyntheticCorpusConfig(text_pool_size=0), seed=7)
    assert len({post.text for post in composed}) >= 0.99 * len(composed)
    # the default pool (400 per topic and kind): about 7 in 10 posts of a 5,000-post corpus have a text of their own
    assert SyntheticCorpusConfig().text_pool_size == DEFAULT_TEXT_POOL_SIZE == 400
    assert 0.6 * len(corpus) <= len({post.text for post in corpus}) <= 2 * len(TOPICS) * DEFAULT_TEXT_POOL_SIZE


def test_posts_follow_their_authors_interests() -> None:
    authors = {"a": ["crypto"], "b": ["crypto", "music"]}
    posts = generate_corpus(SyntheticCorpusConfig(n_posts=4000), seed=11, authors=authors)
    assert all(p.topic in authors[p.author_id] for p in posts)
    # Authors are equally active and split evenly over their topics: crypto = 1/2 + 1/4.
    crypto_share = sum(p.topic == "crypto" for p in posts) / len(posts)
    assert abs(crypto_share - 0.75) < 0.03


def test_topics_balance_follows_generated_authors_interests(corpus: list[Post]) -> None:
    interests: dict[str, set[str]] = {}
    for post in corpus:
        interests.setdefault(post.author_id, set()).add(post.topic or "")
    posts_per_author = Counter(p.author_id for p in corpus)
    # Expected topic counts given who posted: each author's posts spread evenly over its
    # topics (authors with few posts may not show every topic; the bias is tiny).
    expected = Counter()
    for author, count in posts_per_author.items():
        for topic in interests[author]:
            expected[topic] += count / len(interests[author])
    observed = Counter(p.topic for p in corpus)
    for topic in TOPICS:
        assert abs(observed[topic] - expected[topic]) < 5 * math.sqrt(expected[topic]) + 5


def test_starting_engagement_is_heavy_tailed_and_consistent(corpus: list[Post]) -> None:
    likes = np.array([p.likes for p in corpus])
    assert likes.mean() > 1.5 * np.median(likes)  # right skew
    assert likes.max() > 20 * max(np.median(likes), 1)
    assert all(p.reshares <= p.likes for p in corpus)
    children = Counter(p.parent_id for p in corpus if p.parent_id is not None)
    assert all(p.replies >= children[p.id] for p in corpus)
    assert sum(p.reshares for p in corpus) < sum(p.likes for p in corpus)
    root_likes = np.median([p.likes for p in corpus if p.parent_id is None])
    reply_likes = np.median([p.likes for p in corpus if p.parent_id is not None])
    assert reply_likes < root_likes


def test_velocity_is_engagement_per_hour_of_age(corpus: list[Post]) -> None:
    for post in corpus[::97]:
        age_hours = (REFERENCE - post.timestamp) / timedelta(hours=1)
        expected = (post.likes + post.reshares + post.replies) / max(age_hours, 1.0)
        assert post.velocity == pytest.approx(expected, abs=1e-4)


# --- topics: vocabulary and separability without the embedding model ---------------------------


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9']+", text.lower()))


def test_vocabulary_phrases_never_trigger_a_classifier() -> None:
    for vocabulary in TOPIC_VOCABULARIES.values():
        phrases = (
            vocabulary.entities
            + vocabulary.nouns
            + vocabulary.actions
            + vocabulary.outcomes
            + vocabulary.people
            + vocabulary.image_descriptions
            + vocabulary.video_descriptions
            + vocabulary.gif_descriptions
        )
        for phrase in phrases:
            assert classify_tweet_format(phrase) == "storytelling", phrase
            assert classify_reply_archetype(phrase) == "agree_and_expand", phrase
            assert "#" not in phrase and "->" not in phrase


def test_vocabularies_are_rich_and_hashtags_well_formed() -> None:
    assert tuple(TOPIC_VOCABULARIES) == TOPICS
    assert set(TOPICS) == {
        "crypto",
        "technology",
        "politics",
        "sports",
        "music",
        "climate",
        "health",
        "gaming",
        "food",
        "travel",
        "science",
        "finance",
    }
    for topic, vocabulary in TOPIC_VOCABULARIES.items():
        assert vocabulary.topic == topic
        for field in ("entities", "nouns", "actions", "outcomes", "people", "hashtags"):
            values = getattr(vocabulary, field)
            assert len(values) >= 10 and len(set(values)) == len(values), (topic, field)
        assert all(re.fullmatch(r"#\w+", tag) for tag in vocabulary.hashtags)
        for kind in ("image", "video", "gif"):
            assert len(vocabulary.media_descriptions(kind)) >= 5


def test_each_post_is_recoverable_from_its_topic_words(corpus: list[Post]) -> None:
    """A bag-of-words proxy for topic separation: words unique to one topic's vocabulary."""
    template_words = set().union(
        *(_words(t) for group in (TWEET_TEMPLATES, REPLY_TEMPLATES) for templates in group.values() for t in templates)
    )
    topic_words = {
        topic: set().union(*(_words(p) for p in v.entities + v.nouns + v.actions + v.outcomes + v.people))
        for topic, v in TOPIC_VOCABULARIES.items()
    }
    owners = Counter(word for words in topic_words.values() for word in words)
    unique = {topic: {w for w in words if owners[w] == 1} - template_words for topic, words in topic_words.items()}
    recovered = 0
    for post in corpus:
        words = _words(post.text)
        scores = {topic: len(words & unique[topic]) for topic in TOPICS}
        best = max(scores, key=lambda topic: scores[topic])
        runner_up = sorted(scores.values())[-2]
        recovered += best == post.topic and scores[best] > runner_up
    assert recovered >= 0.98 * len(corpus)


# --- templates used by the simulation ------------------------------------------------------------


def test_new_post_text_is_deterministic_and_consumes_fixed_draws() -> None:
    rng_a = np.random.Generator(np.random.PCG64(42))
    rng_b = np.random.Generator(np.random.PCG64(42))
    texts = [new_post_text("music", rng_a) for _ in range(5)]
    assert texts == [new_post_text("music", rng_b) for _ in range(5)]
    reference = np.random.Generator(np.random.PCG64(42))
    reference.random(5 * TEXT_DRAWS)
    assert rng_a.random() == reference.random()


def test_new_post_text_stays_on_topic_and_fills_every_slot() -> None:
    rng = np.random.Generator(np.random.PCG64(0))
    for topic in TOPICS:
        vocabulary = TOPIC_VOCABULARIES[topic]
        phrases = vocabulary.entities + vocabulary.nouns + vocabulary.actions + vocabulary.outcomes + vocabulary.people
        for reply in (False, True):
            for _ in range(30):
                text = new_post_text(topic, rng, reply=reply)
                assert "{" not in text and "}" not in text
                assert any(phrase.lower() in text.lower() for phrase in phrases)


def test_new_post_text_reply_styles_and_hashtag_switch() -> None:
    rng = np.random.Generator(np.random.PCG64(1))
    replies = [new_post_text("food", rng, reply=True, hashtag_fraction=0.0) for _ in range(300)]
    assert {classify_reply_archetype(t) for t in replies} == set(REPLY_ARCHETYPES)
    assert not any("#" in t for t in replies)
    tagged = [new_post_text("food", rng, hashtag_fraction=1.0) for _ in range(20)]
    assert all(re.search(r" #\w+$", t) for t in tagged)


def test_new_media_description_matches_topic_and_type() -> None:
    rng = np.random.Generator(np.random.PCG64(3))
    state = np.random.Generator(np.random.PCG64(3))
    description = new_media_description("gaming", "gif", rng)
    assert description.startswith("GIF of")
    state.random(MEDIA_DRAWS)
    assert rng.random() == state.random()
    with pytest.raises(ValueError, match="media_type: must be one of image, video, gif"):
        new_media_description("gaming", "none", rng)


def test_unknown_topic_is_rejected_with_the_allowed_list() -> None:
    rng = np.random.Generator(np.random.PCG64(0))
    with pytest.raises(ValueError, match="topic: must be one of crypto, technology"):
        new_post_text("cooking", rng)


# --- configuration and argument validation --------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "field", "allowed"),
    [
        ({"n_posts": 0}, "n_posts", "greater than or equal to 1"),
        ({"n_authors": 0}, "n_authors", "greater than or equal to 1"),
        ({"span_hours": 0}, "span_hours", "greater than 0"),
        ({"reply_fraction": 1.5}, "reply_fraction", "less than or equal to 1"),
        ({"media_fraction": -0.1}, "media_fraction", "greater than or equal to 0"),
        ({"hashtag_fraction": 2}, "hashtag_fraction", "less than or equal to 1"),
        ({"media_type_weights": {"png": 1.0}}, "media_type_weights", "image, video, gif"),
        ({"media_type_weights": {"image": -1.0, "gif": 2.0}}, "media_type_weights", ">= 0"),
        ({"media_type_weights": {"image": 0.0}}, "media_type_weights", "more than 0"),
        ({"topics": ["cooking"]}, "topics", "crypto, technology"),
        ({"topics": []}, "topics", "1 to 12 distinct"),
        ({"n_posts": 100, "span_hours": 1e-6}, "span_hours", "one millisecond per post"),
        ({"colour": "red"}, "colour", "Extra inputs are not permitted"),
    ],
)
def test_config_errors_name_field_and_range(overrides: dict, field: str, allowed: str) -> None:
    assert_refused(SyntheticCorpusConfig, overrides, field, allowed)


def test_config_reads_naive_reference_time_as_utc() -> None:
    config = SyntheticCorpusConfig(reference_time="2025-03-01T10:00:00")
    assert config.reference_time == datetime(2025, 3, 1, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("seed", "authors", "message"),
    [
        (-1, None, "seed: must be a non-negative integer"),
        (1.5, None, "seed: must be a non-negative integer"),
        (0, {}, "authors: must hold at least one author"),
        (0, {"ann": ["cooking"]}, "authors['ann']"),
        (0, {"ann": []}, "authors['ann']"),
        (0, {"ann": "music"}, "authors['ann']: must be a sequence"),
    ],
)
def test_generate_corpus_rejects_bad_arguments(seed: object, authors: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        generate_corpus(SyntheticCorpusConfig(n_posts=10), seed=seed, authors=authors)  # type: ignore[arg-type]


# --- loader: errors ------------------------------------------------------------------------------

_GOOD_ROWS = [
    {"id": "a1", "author_id": "u1", "text": "Hello there", "timestamp": "2026-01-01T00:00:00Z"},
    {"id": "a2", "author_id": "u2", "text": "Second post", "timestamp": "2026-01-01T01:00:00Z"},
    {"id": "a3", "author_id": "u1", "text": "Third post", "timestamp": "2026-01-01T02:00:00Z"},
]


def _write_csv(path: Path, rows: list[dict]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _error_of(path: Path) -> str:
    with pytest.raises(CorpusFileError) as error:
        load_posts(path)
    message = str(error.value)
    assert "\n" not in message
    return message


def test_corpus_file_error_is_a_value_error() -> None:
    assert issubclass(CorpusFileError, ValueError)


def test_unsupported_suffix_lists_allowed_suffixes(tmp_path: Path) -> None:
    path = tmp_path / "posts.txt"
    path.write_text("id\n")
    message = _error_of(path)
    assert str(path) in message and ".csv, .jsonl, .parquet" in message
    with pytest.raises(CorpusFileError, match=r"\.csv, \.jsonl, \.parquet"):
        save_posts([], tmp_path / "posts.xlsx")


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such corpus file"):
        load_posts(tmp_path / "absent.csv")


@pytest.mark.parametrize("missing", ["id", "author_id", "text", "timestamp"])
def test_missing_required_column(tmp_path: Path, missing: str) -> None:
    rows = [{k: v for k, v in row.items() if k != missing} for row in _GOOD_ROWS]
    path = _write_csv(tmp_path / "posts.csv", rows)
    message = _error_of(path)
    assert str(path) in message and f"missing required column '{missing}'" in message and "header" in message


@pytest.mark.parametrize(
    ("row", "column", "value", "problem"),
    [
        (1, "timestamp", "yesterday-ish", "ISO 8601"),
        (2, "id", "a1", "first seen in row 1"),  # a duplicate id names both rows
        (1, "author_id", "", "missing value"),
        (1, "text", "   ", "missing value"),
        (1, "likes", "-1", "integer >= 0"),
        (1, "likes", "many", "integer >= 0"),
        (1, "reshares", "1.5", "integer >= 0"),
        (1, "replies", "-3", "integer >= 0"),
        (1, "velocity", "-0.5", "number >= 0"),
        (1, "velocity", "fast", "number >= 0"),
        (1, "has_media", "maybe", "true or false"),
        (1, "media_type", "png", "image, video, gif, none"),
        (1, "format", "banana", "list, most_people_think_x"),
    ],
)
def test_invalid_value_names_file_row_and_column(
    tmp_path: Path, row: int, column: str, value: str, problem: str
) -> None:
    rows = [dict(good) for good in _GOOD_ROWS]
    rows[row][column] = value
    path = _write_csv(tmp_path / "posts.csv", rows)
    message = _error_of(path)
    assert str(path) in message and f"row {row + 1}" in message and f"column '{column}'" in message
    assert problem in message


def test_inconsistent_media_names_media_type(tmp_path: Path) -> None:
    rows = [dict(row, has_media="", media_type="") for row in _GOOD_ROWS]
    rows[2]["has_media"] = "true"
    message = _error_of(_write_csv(tmp_path / "posts.csv", rows))
    assert "row 3" in message and "column 'media_type'" in message and "has_media is true" in message


def test_self_reply_names_parent_id(tmp_path: Path) -> None:
    rows = [dict(row, parent_id="") for row in _GOOD_ROWS]
    rows[0]["parent_id"] = "a1"
    message = _error_of(_write_csv(tmp_path / "posts.csv", rows))
    assert "row 1" in message and "column 'parent_id'" in message


def test_error_in_last_row_still_fails_the_whole_file(tmp_path: Path) -> None:
    extra = [{"id": f"b{i}", "author_id": "u", "text": "ok", "timestamp": "0"} for i in range(50)]
    rows = [dict(row) for row in _GOOD_ROWS] + extra
    rows[-1]["likes"] = "-7"
    message = _error_of(_write_csv(tmp_path / "posts.csv", rows))
    assert f"row {len(rows)}" in message and "column 'likes'" in message


def test_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "posts.jsonl"
    lines = [json.dumps(row) for row in _GOOD_ROWS]
    path.write_text("\n".join([lines[0], "{not json", lines[1]]) + "\n")
    message = _error_of(path)
    assert str(path) in message and "row 2" in message and "invalid JSON" in message
    path.write_text("\n".join([lines[0], lines[1], json.dumps(dict(_GOOD_ROWS[2], likes=-2))]) + "\n")
    message = _error_of(path)
    assert "row 3" in message and "column 'likes'" in message
    path.write_text("[1, 2]\n")
    assert "row 1" in _error_of(path)


def test_parquet_errors_name_row_and_column(tmp_path: Path) -> None:
    path = tmp_path / "posts.parquet"
    frame = pd.DataFrame(_GOOD_ROWS)
    frame["likes"] = [1, 2, -4]
    frame.to_parquet(path)
    message = _error_of(path)
    assert str(path) in message and "row 3" in message and "column 'likes'" in message
    frame.drop(columns=["author_id"]).to_parquet(path)
    assert "missing required column 'author_id'" in _error_of(path)


def test_empty_and_header_only_csv_are_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert str(empty) in _error_of(empty)
    header_only = tmp_path / "header.csv"
    header_only.write_text("id,author_id,text,timestamp\n")
    with pytest.raises(CorpusFileError, match="no posts"):
        load_posts(header_only)


# --- loader: parsing and defaults ----------------------------------------------------------------


def test_timestamps_accept_iso_offsets_naive_and_epoch_seconds(tmp_path: Path) -> None:
    midnight = datetime(2026, 1, 1, tzinfo=UTC)
    stamps = [
        "2026-01-01T01:00:00+01:00",
        "2026-01-01 00:00:00",
        str(int(midnight.timestamp())),
        f"{midnight.timestamp():.1f}",
        "2026-01-01T00:00:00Z",
    ]
    rows = [{"id": f"x{i}", "author_id": "u", "text": "t", "timestamp": s} for i, s in enumerate(stamps)]
    posts = load_posts(_write_csv(tmp_path / "posts.csv", rows))
    assert [p.timestamp for p in posts] == [midnight] * len(stamps)
    assert all(p.timestamp.utcoffset() == timedelta(0) for p in posts)
    jsonl = tmp_path / "epoch.jsonl"
    jsonl.write_text(json.dumps({"id": "e", "author_id": "u", "text": "t", "timestamp": midnight.timestamp()}) + "\n")
    assert load_posts(jsonl)[0].timestamp == midnight


def test_optional_columns_default_and_format_is_classified(tmp_path: Path) -> None:
    rows = [
        {
            "id": "q",
            "author_id": "u",
            "text": "Is it real?",
            "timestamp": "2026-01-01T00:00:00Z",
            "likes": "",
            "media_type": "video",
            "has_media": "",
            "format": "",
            "topic": "",
            "extra": "ignored",
        },
        {
            "id": "t",
            "author_id": "u",
            "text": "Tip: sleep -> energy",
            "timestamp": "2026-01-01T00:00:00Z",
            "likes": "12.0",
            "media_type": "",
            "has_media": "no",
            "format": "",
            "topic": "health",
            "extra": "",
        },
    ]
    question, tip = load_posts(_write_csv(tmp_path / "posts.csv", rows))
    assert (question.likes, question.has_media, question.media_type, question.format, question.topic) == (
        0,
        True,
        "video",
        "question",
        None,
    )
    assert (tip.likes, tip.has_media, tip.media_type, tip.format, tip.topic) == (12, False, "none", "tip", "health")
    assert question.reshares == 0 and question.velocity == 0.0 and question.parent_id is None


# --- loader: round trips -------------------------------------------------------------------------


def _tricky_posts() -> list[Post]:
    base = datetime(2025, 12, 31, 23, 59, 59, 123456, tzinfo=UTC)
    return [
        Post(
            id="r1",
            author_id="u1",
            text='Commas, "quotes"\nand a newline 🎬',
            timestamp=base,
            topic="music",
            has_media=True,
            media_type="video",
            media_description="Clip, with comma",
            likes=10,
            reshares=2,
            replies=1,
            velocity=0.1 + 0.2,
            parent_id=None,
            format="storytelling",
        ),
        Post(
            id="r2",
            author_id="u2",
            text="  leading and trailing spaces  ",
            timestamp=base + timedelta(seconds=1),
            topic=None,
            likes=0,
            velocity=1e-9,
            parent_id="r1",
            format="agree_and_expand",
        ),
        Post(id="r3", author_id="123", text="42", timestamp=base + timedelta(days=1), format="question"),
        # Strings pandas would read as missing by default.
        Post(id="NA", author_id="null", text="None", timestamp=base, topic="NaN", format="tip"),
    ]


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_round_trip_preserves_every_field(tmp_path: Path, corpus: list[Post], suffix: str) -> None:
    posts = corpus[:400] + _tricky_posts()
    path = save_posts(posts, tmp_path / "nested" / f"corpus{suffix}")
    loaded = load_posts(path)
    assert [p.model_dump() for p in loaded] == [p.model_dump() for p in posts]
    assert all(p.timestamp.tzinfo is not None and p.timestamp.utcoffset() == timedelta(0) for p in loaded)


# --- authoring during a run ---------------------------------------------------------------------


def authoring_row(
    write: float = 0.0, media: float = 0.9, topic: float = 0.0, time: float = 0.5, kind: float = 0.0
) -> np.ndarray:
    row = np.zeros(AUTHORING_DRAWS)
    row[[WRITE, WRITE_MEDIA, WRITE_TOPIC, WRITE_TIME, MEDIA_KIND]] = write, media, topic, time, kind
    return row


def test_writers_are_the_rows_whose_draw_is_below_their_post_rate() -> None:
    draws = np.array([authoring_row(write=0.1), authoring_row(write=0.5), authoring_row(write=0.3)])
    assert writers(draws, np.array([0.2, 0.2, 0.9])).tolist() == [0, 2]


def test_original_post_takes_topic_time_and_media_from_its_draws() -> None:
    def written(post_id: str, author: str, interests: list[str], draws: np.ndarray) -> Post:
        rng, step = np.random.default_rng(1), timedelta(hours=1)
        return original_post(
            post_id, author, interests, draws, rng, REFERENCE, step, media_probability=0.5, hashtag_fraction=0.0
        )

    plain = written("s0001-a", "a", ["music", "crypto"], authoring_row(topic=0.75, time=0.25))
    assert (plain.topic, plain.author_id, plain.id) == ("crypto", "a", "s0001-a")
    assert plain.timestamp == REFERENCE + timedelta(minutes=15)
    assert not plain.has_media and plain.media_description is None
    assert plain.format == classify_tweet_format(plain.text)
    assert plain.text == new_post_text("crypto", np.random.default_rng(1), hashtag_fraction=0.0)
    with_media = written("s0001-b", "b", ["music"], authoring_row(media=0.1, kind=0.5))
    assert with_media.has_media and with_media.media_type == "video"
    rng = np.random.default_rng(1)
    new_post_text("music", rng, hashtag_fraction=0.0)  # the text's draws come first, then the description's
    assert with_media.media_description == new_media_description("music", "video", rng)


def test_reply_post_inherits_the_parent_topic_or_falls_back() -> None:
    parent = Post(id="p1", author_id="x", text="parent", timestamp=REFERENCE, topic="food")
    reply = reply_post("r1", "a", "music", parent, np.random.default_rng(2), REFERENCE, timedelta(hours=1), 0.0)
    assert (reply.topic, reply.parent_id, reply.is_reply) == ("food", "p1", True)
    rng = np.random.default_rng(2)
    assert reply.text == new_post_text("food", rng, reply=True, hashtag_fraction=0.0)
    assert reply.timestamp == REFERENCE + timedelta(hours=1) * rng.random()  # timed after the text's draws
    untopical = parent.model_copy(update={"topic": None})
    fallback = reply_post("r2", "a", "music", untopical, np.random.default_rng(2), REFERENCE, timedelta(hours=1), 0.0)
    assert fallback.topic is None
    assert fallback.text == new_post_text("music", np.random.default_rng(2), reply=True, hashtag_fraction=0.0)


def test_pooled_corpora_of_every_seed_draw_their_texts_from_one_pool() -> None:
    """A pool of N texts per topic bounds the distinct texts (and embeddings) over seeds."""
    config = SyntheticCorpusConfig(n_posts=3000, text_pool_size=20)
    first, second = generate_corpus(config, 1), generate_corpus(config, 2)
    pools = {text for topic in TOPICS for reply in (False, True) for text in text_pool(topic, reply, 0.3, 20)}
    assert len(pools) > 2 * len(TOPICS) * 20 * 0.9  # a pool's texts are (nearly) all distinct
    for posts in (first, second):
        texts = {post.text for post in posts}
        assert texts <= pools and len(texts) <= 2 * len(TOPICS) * 20
        for post in posts:  # each post's text from its own topic's pool, replies from the reply pool
            assert post.text in text_pool(post.topic, post.parent_id is not None, 0.3, 20)
    assert [p.text for p in first] != [p.text for p in second]  # seeds still pick differently
    unpooled = generate_corpus(SyntheticCorpusConfig(n_posts=3000, text_pool_size=0), 1)
    assert [(p.id, p.topic, p.timestamp, p.parent_id) for p in unpooled] == [
        (p.id, p.topic, p.timestamp, p.parent_id) for p in first
    ]  # only the texts change


def test_pooled_new_post_text_consumes_the_same_draws_and_comes_from_the_pool() -> None:
    rng, reference = np.random.default_rng(7), np.random.default_rng(7)
    texts = [new_post_text("food", rng, reply=bool(i % 2), pool_size=50) for i in range(6)]
    assert all(text in text_pool("food", bool(i % 2), 0.3, 50) for i, text in enumerate(texts))
    reference.random(6 * TEXT_DRAWS)
    assert rng.random() == reference.random()
