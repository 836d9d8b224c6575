"""The answer format of LLM agents: parsing, the one repair turn, no action after that, the response cache."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prism_experiments.llm import (
    NO_ACTION,
    ActionError,
    CallStats,
    ChatRequest,
    ChatResponse,
    FeedActions,
    LLMAgents,
    ResponseCache,
    action_schema,
    parse_actions,
    request_key,
)
from prism_experiments.llm.actions import Reply, close_cut_answer
from prism_experiments.llm.backends.local import LocalLLMConfig

N_POSTS, MAX_CHARS = 6, 40
numbers = st.lists(st.integers(1, N_POSTS), unique=True, max_size=N_POSTS)
texts = st.text(min_size=1, max_size=MAX_CHARS)
valid_answers = st.fixed_dictionaries(
    {
        "like": numbers,
        "reshare": numbers,
        "follow": numbers,
        "reply": st.none() | st.fixed_dictionaries({"to": st.integers(1, N_POSTS), "text": texts}),
        "post": st.none() | texts,
    }
)


@given(valid_answers)
def test_every_valid_answer_parses_to_what_it_says(answer: dict) -> None:
    parsed = parse_actions(json.dumps(answer), N_POSTS, MAX_CHARS)
    assert parsed.model_dump() == answer


@given(st.text(max_size=200))
def test_any_text_parses_or_raises_action_error_only(raw: str) -> None:
    try:
        parsed = parse_actions(raw, N_POSTS, MAX_CHARS)
    except ActionError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(parsed, FeedActions)


@given(valid_answers, st.integers(N_POSTS + 1, 10**6) | st.integers(-(10**6), 0))
def test_a_post_number_outside_the_feed_is_rejected(answer: dict, bad: int) -> None:
    answer = {**answer, "like": [*answer["like"], bad] if bad not in answer["like"] else answer["like"]}
    with pytest.raises(ActionError, match="post numbers"):
        parse_actions(json.dumps(answer), N_POSTS, MAX_CHARS)


@given(valid_answers, st.data())
def test_a_truncated_answer_is_rejected(answer: dict, data: st.DataObject) -> None:
    raw = json.dumps(answer)
    cut = data.draw(st.integers(0, len(raw) - 1))
    with pytest.raises(ActionError):
        parse_actions(raw[:cut], N_POSTS, MAX_CHARS)


@pytest.mark.parametrize(
    "raw, error",
    [
        ('{"like": [], "reshare": [], "follow": [], "reply": null, "post": null, "extra": 1}', "extra"),
        ("[1, 2]", "not a JSON object"),
        ('{"like": [], "reshare": [], "follow": [], "reply": null, "post": "' + "x" * 41 + '"}', "at most 40"),
    ],
)
def test_malformed_answers_name_what_is_wrong(raw: str, error: str) -> None:
    with pytest.raises(ActionError, match=error):
        parse_actions(raw, N_POSTS, MAX_CHARS)


def test_a_post_named_twice_in_a_list_is_one_action_on_it() -> None:
    raw = '{"like": [3, 1, 3, 1], "reshare": [2, 2], "follow": [], "reply": null, "post": null}'
    actions = parse_actions(raw, N_POSTS, MAX_CHARS)
    assert (actions.like, actions.reshare) == ([3, 1], [2])


def test_the_schema_bounds_post_numbers_by_the_feed() -> None:
    schema = action_schema(3, 50)
    number = schema["properties"]["like"]["items"]
    assert (number["minimum"], number["maximum"]) == (1, 3)
    assert schema["properties"]["post"]["anyOf"][0]["maxLength"] == 50


class ScriptedModel:
    """A unit-test double: answers each prompt with the next scripted text, and records what it was asked."""

    identity = "scripted"

    def __init__(self, answers: list[str], output_tokens: int = 5) -> None:
        self.answers = list(answers)
        self.output_tokens = output_tokens
        self.asked: list[ChatRequest] = []

    def complete_many(self, requests: Sequence[ChatRequest]) -> list[ChatResponse]:
        self.asked += requests
        return [ChatResponse(self.answers.pop(0), 10, self.output_tokens, 0.0) for _ in requests]


def ask(tmp_path: Path, answers: list[str], output_tokens: int = 5) -> tuple[FeedActions, CallStats, ScriptedModel]:
    from datetime import datetime

    from prism_experiments.agents import SocialAgent
    from prism_experiments.domain import Post

    now = datetime(2025, 1, 1, tzinfo=UTC)
    feed = [Post(id=f"p{i}", author_id="a", text=f"post {i}", timestamp=now) for i in range(3)]
    model = ScriptedModel(answers, output_tokens)
    agents = LLMAgents(LocalLLMConfig(cache_dir=tmp_path, max_new_tokens=64), tmp_path, model=model)
    stats = CallStats()
    (answer,) = agents.answer(0, 0, now, [(0, SocialAgent(id="u1", interests=["music"]))], [feed], 2000, stats)
    return answer.actions, stats, model


GOOD = '{"like": [2], "reshare": [], "follow": [], "reply": null, "post": null}'


def test_a_malformed_answer_gets_one_repair(tmp_path: Path) -> None:
    actions, stats, model = ask(tmp_path, ["Sure! I like post 2.", GOOD])
    assert actions.like == [2]
    assert (stats.malformed, stats.repaired, stats.no_action, stats.model_calls) == (1, 1, 0, 2)
    assert model.asked[1].messages[-2] == {"role": "assistant", "content": "Sure! I like post 2."}


@given(valid_answers, st.data())
def test_an_answer_cut_inside_its_reply_text_closes_to_what_was_decided(answer: dict, data: st.DataObject) -> None:
    # constrained decoding writes the keys in the schema's order, so the reply comes after the lists
    answer = {key: answer[key] for key in ("like", "reshare", "follow")} | {"reply": {"to": 1, "text": "a long reply"}}
    raw = json.dumps(answer)
    start = raw.index('"a long reply"') + 1
    cut = data.draw(st.integers(start + 1, start + len("a long reply") - 1))
    closed = close_cut_answer(raw[:cut], N_POSTS, MAX_CHARS)
    assert closed is not None
    assert (closed.like, closed.reshare, closed.follow) == (answer["like"], answer["reshare"], answer["follow"])
    assert closed.reply is not None and "a long reply".startswith(closed.reply.text) and closed.post is None


def test_an_answer_cut_at_the_token_budget_is_closed_without_a_model_call(tmp_path: Path) -> None:
    cut = '{"like": [2], "reshare": [], "follow": [3], "reply": {"to": 1, "text": "so tru'
    actions, stats, _ = ask(tmp_path, [cut], output_tokens=64)
    assert (actions.like, actions.follow, actions.reply) == ([2], [3], Reply(to=1, text="so tru"))
    assert (stats.malformed, stats.repaired, stats.no_action, stats.model_calls) == (1, 1, 0, 1)


def test_an_invalid_answer_under_the_budget_is_not_closed_but_repaired_by_the_model(tmp_path: Path) -> None:
    cut = '{"like": [2], "reshare": [], "follow": [3], "reply": {"to": 1, "text": "so tru'
    actions, stats, _ = ask(tmp_path, [cut, GOOD], output_tokens=20)
    assert actions.like == [2] and actions.follow == [] and stats.model_calls == 2


def test_two_malformed_answers_are_no_action_not_a_crash(tmp_path: Path) -> None:
    actions, stats, _ = ask(tmp_path, ["{", '{"like": [9]}'])
    assert actions == NO_ACTION
    assert (stats.malformed, stats.repaired, stats.no_action) == (1, 0, 1)


def test_a_repeated_step_is_answered_from_the_cache(tmp_path: Path) -> None:
    ask(tmp_path, [GOOD])
    actions, stats, model = ask(tmp_path, [])
    assert actions.like == [2] and model.asked == [] and stats.cache_hits == 1


def test_the_cache_key_covers_model_prompt_sampling_and_seed(tmp_path: Path) -> None:
    request = ChatRequest(({"role": "user", "content": "hi"},), action_schema(3, 50), 64, 0.0, 7)
    key = request_key("m", request)
    variants = [
        request_key("m2", request),
        request_key("m", replace(request, messages=({"role": "user", "content": "ho"},))),
        request_key("m", replace(request, temperature=0.5)),
        request_key("m", replace(request, seed=8)),
        request_key("m", replace(request, max_new_tokens=65)),
        request_key("m", replace(request, schema=action_schema(4, 50))),
    ]
    assert key not in variants and len(set(variants)) == len(variants)
    cache = ResponseCache(tmp_path)
    assert cache.get(key) is None
    cache.put(key, ChatResponse("{}", 1, 2, 0.5))
    assert cache.get(key) == ChatResponse("{}", 1, 2, 0.5)
    assert not list(tmp_path.rglob(".tmp-*"))
