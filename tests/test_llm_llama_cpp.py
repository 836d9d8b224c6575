"""The llama.cpp backend (cyllama): config validation, and on the packaged SmolLM2 GGUF schema-valid answers that
depend neither on the batch, nor on prefix reuse, and seeded sampling."""

from __future__ import annotations

import dataclasses
import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from prism_experiments.domain import Post
from prism_experiments.feed_store import format_feed_for_prompt
from prism_experiments.llm.actions import action_schema, parse_actions
from prism_experiments.llm.backends.llama_cpp import LlamaCppChatModel, LlamaCppLLMConfig, chunks, common_prefix
from prism_experiments.llm.chat import ChatRequest, ChatResponse, LLMUnavailable

#: short texts keep the worst-case answer (every post named, both texts full of emoji) well under MAX_NEW_TOKENS
MAX_TEXT_CHARS = 8
MAX_NEW_TOKENS = 160
NOW = datetime(2025, 6, 1, 12, tzinfo=UTC)
#: what every agent's prompt starts with, as in the harness: the answer's form in words
RULES = (
    "You are scrolling your social media feed. Read the numbered posts and decide what to do with each. Most posts "
    "get no reaction: act only on posts you care about. Answer with a JSON object. Its keys like, reshare and follow "
    "each hold a list of post numbers, often empty. Its key reply holds null, or the number of one post and a short "
    "reply. Its key post holds null, or a short new post of your own."
)
TOPICS = ("cooking", "crypto", "hiking", "music")
TEXTS = (
    "Slow-braised short ribs this weekend: they fell apart at the touch of a fork.",
    "Bitcoin broke its resistance level again and funding rates are getting silly.",
    "Summited the ridge at dawn; the fog rolled out below us like a white ocean.",
    "The new album closes with a ten-minute track that earns every second.",
)


def feed_request(agent: int, temperature: float = 0.0, seed: int = 0, system: str = RULES) -> ChatRequest:
    """One agent's prompt, shaped like the harness's: shared rules, then its persona and a two-post feed."""
    posts = [
        Post(
            id=f"p{agent}-{i}",
            author_id=f"{TOPICS[(agent + i) % 4]}_fan",
            text=TEXTS[(agent + i) % 4],
            timestamp=NOW - timedelta(minutes=7 * (i + 1)),
            likes=3 * i,
        )
        for i in range(2)
    ]
    persona = f"You are @user{agent}. You are interested in {TOPICS[agent % 4]} and {TOPICS[(agent + 1) % 4]}."
    user = f"{persona}\n\nYour feed:\n\n{format_feed_for_prompt(posts, NOW)}\n\nYour answer:"
    return ChatRequest(
        messages=({"role": "system", "content": system}, {"role": "user", "content": user}),
        schema=action_schema(len(posts), MAX_TEXT_CHARS),
        max_new_tokens=MAX_NEW_TOKENS,
        temperature=temperature,
        seed=seed,
    )


def texts(answers: list[ChatResponse]) -> list[str]:
    return [a.text for a in answers]


# -- config --------------------------------------------------------------------------------------------------------


def test_the_defaults_name_the_packaged_model_and_every_core() -> None:
    cfg = LlamaCppLLMConfig()
    assert (cfg.backend, cfg.model, cfg.model_path, cfg.threads) == ("llama_cpp", "smollm2-135m-instruct", None, None)
    assert cfg.prompts_per_call == cfg.batch_size == 8
    assert cfg.context_tokens >= 2048


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"model_path": "/nonexistent/model.gguf"}, "model_path"),
        ({"model": "llama-70b"}, "model"),
        ({"threads": 0}, "threads"),
        ({"batch_size": 0}, "batch_size"),
        ({"context_tokens": 16}, "context_tokens"),
        ({"backend": "local"}, "backend"),
        ({"n_gpu_layers": 10}, "n_gpu_layers"),
    ],
)
def test_bad_settings_fail_validation_naming_the_field(fields: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        LlamaCppLLMConfig.model_validate(fields)


def test_another_gguf_needs_only_model_path(tmp_path: Path) -> None:
    weights = tmp_path / "other.gguf"
    weights.write_bytes(b"GGUF")
    assert LlamaCppLLMConfig(model="other", model_path=weights).model_path == weights


def test_common_prefix() -> None:
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix([], [1]) == 0
    assert common_prefix([7, 8], [7, 8]) == 2


def test_prompts_are_decoded_in_steps_of_at_most_512_tokens_never_of_one() -> None:
    assert chunks(0, 512) == [(0, 512)]
    assert chunks(0, 513) == [(0, 511), (511, 513)]
    assert chunks(100, 102) == [(100, 102)]
    assert chunks(7, 7) == []
    for start, end in [(0, 1025), (3, 2000), (0, 5)]:
        steps = chunks(start, end)
        assert steps[0][0] == start and steps[-1][1] == end
        assert all(a < b <= a + 512 and b - a >= 2 for a, b in steps)
        assert all(prev[1] == nxt[0] for prev, nxt in itertools.pairwise(steps))


# -- cyllama, no model -----------------------------------------------------------------------------------------------


def test_the_grammar_spaces_answers_as_the_prompts_example() -> None:
    pytest.importorskip("cyllama")
    from prism_experiments.llm.backends.llama_cpp import schema_grammar

    grammar = schema_grammar(action_schema(3, MAX_TEXT_CHARS))
    assert 'space ::= ""' in grammar
    assert '", "' in grammar and '": "' in grammar
    assert "[1-3]" in grammar and f"char{{1,{MAX_TEXT_CHARS}}}" in grammar


def test_a_file_llama_cpp_cannot_load_is_one_line_llm_unavailable(tmp_path: Path) -> None:
    pytest.importorskip("cyllama")
    weights = tmp_path / "broken.gguf"
    weights.write_bytes(b"not a gguf file at all")
    model = LlamaCppChatModel(LlamaCppLLMConfig(model="broken", model_path=weights))
    assert model.identity.startswith("llama.cpp:broken:")
    with pytest.raises(LLMUnavailable, match=r"model_path: llama\.cpp cannot load") as caught:
        model.complete_many([feed_request(0)])
    assert "\n" not in str(caught.value)


# -- the packaged SmolLM2 GGUF ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def packaged() -> Path:
    pytest.importorskip("cyllama")
    from prism_experiments.llm.backends.local import packaged_model_path

    try:
        path = packaged_model_path()
    except LLMUnavailable as exc:
        pytest.skip(str(exc))
    if not path.is_file():
        pytest.skip(f"no packaged model at {path}")
    return path


@pytest.fixture(scope="module")
def alone(packaged: Path) -> LlamaCppChatModel:
    """One prompt per call, whole prompts decoded: the reference answers."""
    return LlamaCppChatModel(LlamaCppLLMConfig(batch_size=1, reuse_prefix=False, threads=1))


@pytest.fixture(scope="module")
def batched(packaged: Path) -> LlamaCppChatModel:
    # 1 thread: tests run beside other tests' processes, and llama.cpp's threads spin while they wait for a core
    return LlamaCppChatModel(LlamaCppLLMConfig(batch_size=4, threads=1))


@pytest.fixture(scope="module")
def greedy_requests() -> list[ChatRequest]:
    return [feed_request(agent) for agent in range(3)]


@pytest.fixture(scope="module")
def reference(alone: LlamaCppChatModel, greedy_requests: list[ChatRequest]) -> list[ChatResponse]:
    return alone.complete_many(greedy_requests)


@pytest.mark.integration
def test_every_answer_fits_the_answer_schema(
    alone: LlamaCppChatModel, reference: list[ChatResponse], greedy_requests: list[ChatRequest]
) -> None:
    for answer, request in zip(reference, greedy_requests):
        parse_actions(answer.text, 2, MAX_TEXT_CHARS)
        assert answer.text.startswith('{"like": [')
        assert 0 < answer.output_tokens < MAX_NEW_TOKENS
        assert answer.input_tokens == len(alone.prompt_tokens(request)) > 100
        assert answer.latency_s > 0


@pytest.mark.integration
def test_the_identity_names_llama_cpp_and_the_weights(alone: LlamaCppChatModel, packaged: Path) -> None:
    from prism_experiments.llm.backends.local import file_digest

    assert alone.identity == f"llama.cpp:smollm2-135m-instruct:{file_digest(packaged)[:16]}"


@pytest.mark.integration
def test_batches_and_prefix_reuse_give_the_answers_of_whole_prompts_alone(
    batched: LlamaCppChatModel,
    alone: LlamaCppChatModel,
    greedy_requests: list[ChatRequest],
    reference: list[ChatResponse],
) -> None:
    first = batched.complete_many(greedy_requests)
    assert texts(first) == texts(reference)
    assert [a.input_tokens for a in first] == [a.input_tokens for a in reference]
    kept = batched._prefix
    assert len(kept) > 60  # the rules were decoded once, and kept
    # again, in another order and with a token limit on one: the prefix kept from the last call is reused
    short = dataclasses.replace(greedy_requests[1], max_new_tokens=12)
    again = batched.complete_many([greedy_requests[2], short, greedy_requests[0]])
    assert batched._prefix is kept
    assert [again[2].text, again[0].text] == [reference[0].text, reference[2].text]
    assert again[1].output_tokens == 12 and reference[1].text.startswith(again[1].text)
    # with a prompt of other rules, the kept prefix is cut back to what the two share
    other = feed_request(1, system="You read a social feed. Reply with JSON only.")
    mixed = batched.complete_many([greedy_requests[0], other])
    assert len(batched._prefix) < 10
    assert texts(mixed) == [reference[0].text, alone.complete_many([other])[0].text]


@pytest.mark.integration
def test_prompts_asked_one_at_a_time_share_the_prefix_too(
    packaged: Path, greedy_requests: list[ChatRequest], reference: list[ChatResponse]
) -> None:
    single = LlamaCppChatModel(LlamaCppLLMConfig(batch_size=1, threads=1))
    assert texts(single.complete_many(greedy_requests[:2])) == texts(reference[:2])
    assert len(single._prefix) > 60


@pytest.mark.integration
def test_a_seed_repeats_its_sample_and_other_seeds_can_differ(
    batched: LlamaCppChatModel, alone: LlamaCppChatModel
) -> None:
    sampled = [feed_request(3, temperature=1.0, seed=seed) for seed in (11, 12, 13, 11)]
    answers = batched.complete_many(sampled)
    assert answers[0].text == answers[3].text
    assert len(set(texts(answers[:3]))) > 1
    # the same seed, asked alone (whole prompt, no batch-mates), draws the same answer
    assert alone.complete_many([sampled[1]])[0].text == answers[1].text
