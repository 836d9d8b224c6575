"""The classification heuristics (REQ-RETRIEVAL-6, REQ-RETRIEVAL-7): every trigger, every fallback, the table order."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prism_experiments.corpus.formats import (
    REPLY_ARCHETYPES,
    TIP_MAX_CHARS,
    TWEET_FORMATS,
    classify_reply_archetype,
    classify_tweet_format,
)

# --- tweet formats: each trigger alone ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Two habits: 1. sleep early 2. walk daily", "list"),
        ("Most people think the market is random.", "most_people_think_x"),
        ("Everyone says the album is great.", "most_people_think_x"),
        ("Actually, the idea is fine but late.", "contrarian_take"),
        ("Before: chaos every morning.", "before_after"),
        ("After: calm every morning.", "before_after"),
        ("Mornings before -> chaos, now calm.", "before_after"),
        ("Mornings before → chaos, now calm.", "before_after"),
        ("Is this the best season yet?", "question"),
        ("Tip: walk after lunch.", "tip"),
        ("Pro tip: walk after lunch.", "tip"),
        ("Walk after lunch -> better sleep.", "tip"),
        ("Walk after lunch → better sleep.", "tip"),
        ("I walked to the harbour and watched the boats come in.", "storytelling"),
        ("", "storytelling"),
    ],
)
def test_each_tweet_trigger_alone_gives_its_format(text: str, expected: str) -> None:
    assert classify_tweet_format(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Step 1. was the hardest part.",  # "1." without "2."
        "Version 2.0 is out.",  # "2." without "1."
        "Actually, that was fun.",  # "actually," without "but"
        "It was fine but late.",  # "but" without "actually,"
        "Actually the idea is fine but late.",  # "actually" without the comma
        "Is it? I doubt it, said nobody.",  # "?" not at the end
        "Tips: walk after lunch.",  # not "tip:"
        "Most people thought otherwise.",  # not "most people think"
    ],
)
def test_half_a_trigger_falls_back_to_storytelling(text: str) -> None:
    assert classify_tweet_format(text) == "storytelling"


def test_tweet_matching_ignores_case_and_surrounding_whitespace() -> None:
    assert classify_tweet_format("MOST PEOPLE THINK so") == "most_people_think_x"
    assert classify_tweet_format("  Is it?  \n") == "question"
    assert classify_tweet_format("\n  PRO TIP: stretch daily") == "tip"


def test_word_triggers_match_whole_words_only() -> None:
    # "button" contains "but", "factually," contains "actually,", "11." contains "1.".
    assert classify_tweet_format("Actually, the button works.") == "storytelling"
    assert classify_tweet_format("Factually, it works but slowly.") == "storytelling"
    assert classify_tweet_format("Chapter 11. and chapter 2. were long") == "storytelling"
    assert classify_tweet_format("Beforehand: nothing to report.") == "storytelling"


@pytest.mark.parametrize(("length", "expected"), [(TIP_MAX_CHARS - 1, "tip"), (TIP_MAX_CHARS, "storytelling")])
def test_tip_must_be_shorter_than_200_characters(length: int, expected: str) -> None:
    text = "Tip: " + "a" * (length - len("Tip: "))
    assert len(text) == length
    assert classify_tweet_format(text) == expected


def test_tip_length_is_measured_after_stripping_whitespace() -> None:
    text = "Tip: " + "a" * (TIP_MAX_CHARS - 1 - len("Tip: "))
    assert classify_tweet_format("   " + text + "   \n") == "tip"


def test_arrow_tip_over_200_characters_is_storytelling() -> None:
    assert classify_tweet_format("walk -> " + "b" * 200) == "storytelling"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Most people think 1. is enough 2. is too much", "list"),
        ("Everyone says actually, it works but slowly", "most_people_think_x"),
        ("Actually, before: it was slow but fine", "contrarian_take"),
        ("Before: was it slow?", "before_after"),
        ("Tip: would you walk -> sleep?", "question"),
        ("Tip: 1. walk 2. sleep", "list"),
    ],
)
def test_tweet_table_order_first_match_wins(text: str, expected: str) -> None:
    assert classify_tweet_format(text) == expected


# --- reply archetypes: each trigger alone ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("That really works?", "ask_question"),
        ("What a great thread.", "ask_question"),
        ("How true that is.", "ask_question"),
        ("Why not both.", "ask_question"),
        ("Have you seen the sequel.", "ask_question"),
        ("Do you agree with this.", "ask_question"),
        ("I've found the same thing.", "share_experience"),
        ("I've noticed the same thing.", "share_experience"),
        ("I've experienced the same thing.", "share_experience"),
        ("In my experience it works.", "share_experience"),
        ("The data shows it works.", "add_data"),
        ("The stats show it works.", "add_data"),
        ("A study shows it works.", "add_data"),
        ("New research shows it works.", "add_data"),
        ("Several studies show it works.", "add_data"),
        ("According to the report it works.", "add_data"),
        ("Almost 40% of people agree.", "add_data"),
        ("Great point, and it goes further.", "agree_and_expand"),
        ("", "agree_and_expand"),
    ],
)
def test_each_reply_trigger_alone_gives_its_archetype(text: str, expected: str) -> None:
    assert classify_reply_archetype(text) == expected


@pytest.mark.parametrize("hedge", ["actually", "however", "but"])
@pytest.mark.parametrize("stance", ["I think", "I'd argue", "not sure"])
def test_respectful_disagree_needs_a_hedge_and_a_stance(hedge: str, stance: str) -> None:
    assert classify_reply_archetype(f"Well {hedge} {stance} it is different.") == "respectful_disagree"
    assert classify_reply_archetype(f"Well {hedge} it is different.") == "agree_and_expand"
    assert classify_reply_archetype(f"Well {stance} it is different.") == "agree_and_expand"


def test_reply_matching_ignores_case_whitespace_and_curly_apostrophes() -> None:
    assert classify_reply_archetype("  WHAT a day  ") == "ask_question"
    assert classify_reply_archetype("I’ve found it works") == "share_experience"
    assert classify_reply_archetype("Fine, I’d argue, but later.") == "respectful_disagree"


def test_question_start_words_are_whole_words() -> None:
    # "However" starts with "how" and "Whatever" with "what": neither is a question.
    assert classify_reply_archetype("However, I think it is different.") == "respectful_disagree"
    assert classify_reply_archetype("Whatever happens, this is great.") == "agree_and_expand"
    assert classify_reply_archetype("Do youthful fans care.") == "agree_and_expand"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I've found it works, have you?", "ask_question"),
        ("In my experience, 40% of them agree.", "share_experience"),
        ("According to the report, but I think otherwise.", "add_data"),
        ("I think the study shows nothing, but fine.", "add_data"),
        ("Not sure, but I've noticed the opposite.", "share_experience"),
    ],
)
def test_reply_table_order_first_match_wins(text: str, expected: str) -> None:
    assert classify_reply_archetype(text) == expected


@given(st.text(max_size=300))
def test_classifiers_always_return_a_known_label(text: str) -> None:
    assert classify_tweet_format(text) in TWEET_FORMATS
    assert classify_reply_archetype(text) in REPLY_ARCHETYPES
