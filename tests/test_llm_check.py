"""The LLM fitness test: its probe set, its figures by hand, its verdict on test-double models that behave well and
badly, and the verdict a later LLM run carries (a real sqlite MLflow store)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from prism_experiments.llm import ChatResponse
from prism_experiments.llm.backends.local import LocalLLMConfig
from prism_experiments.llm_check import check as check_module
from prism_experiments.llm_check.check import last_check, log_check, run_check
from prism_experiments.llm_check.probes import FEEDS_PER_PERSONA, ON_TOPIC, TOPIC_PAIRS, probe_set
from prism_experiments.llm_check.scoring import (
    answer_diversity,
    copy_rate,
    echoes,
    media_effect,
    persona_lift,
    position_curve,
    wilson,
)


def test_the_probe_set_is_fixed_balanced_and_shuffled() -> None:
    probes = probe_set()
    assert len(probes) == len(TOPIC_PAIRS) * FEEDS_PER_PERSONA >= 50
    assert [p.posts for p in probes] == [p.posts for p in probe_set()], "the same set every time"
    for probe in probes:
        assert sum(probe.on_topic) == ON_TOPIC and len(probe.posts) == 2 * ON_TOPIC
        assert all((post.topic == probe.agent.interests[0]) == on for post, on in zip(probe.posts, probe.on_topic))
        assert sum(post.has_media for post in probe.posts) == ON_TOPIC  # half of each topic's posts
    first_positions = {probe.on_topic.index(True) for probe in probes}
    assert len(first_positions) > 2, "on-topic posts are not always at the top"


def table(rows: list[tuple[str, int, bool, bool, bool]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["probe_id", "position", "on_topic", "has_media", "engaged"])


def test_persona_lift_media_effect_and_position_curve_by_hand() -> None:
    rows = []
    for probe in range(10):  # on-topic at 1-4 engaged 3 of 4 times, off-topic at 5-8 once in 4
        for position in range(1, 9):
            on = position <= 4
            rows.append((f"p{probe}", position, on, position % 2 == 1, (on and position != 4) or position == 8))
    impressions = table(rows)
    lift = persona_lift(impressions)
    assert lift.value == pytest.approx((3 / 4) / (1 / 4)) and lift.passed and lift.low > 1
    curve = position_curve(impressions)
    assert curve.value == pytest.approx(1.0 / (1 / 3)) and curve.passed  # 3 of 3 on top, 1 of 3 at the bottom
    media = media_effect(impressions)  # on-topic: positions 1, 3 with media (both engaged), 2 and 4 without (1 of 2)
    assert media.value == pytest.approx(1.0 / 0.5) and media.passed


def test_a_curve_that_drops_to_zero_after_position_3_fails() -> None:
    rows = [(f"p{i}", pos, pos % 2 == 0, False, pos <= 3) for i in range(5) for pos in range(1, 9)]
    curve = position_curve(table(rows))
    assert math.isinf(curve.value) and not curve.passed and "after position 3: 0.000" in curve.note


def test_copying_and_diversity() -> None:
    prompt = "Example answer: reply Great point, thanks for sharing! ... Post: the sourdough loaf has an open crumb"
    assert echoes("Great point, thanks for sharing!", prompt)
    assert echoes("the sourdough loaf has an open crumb", prompt)
    assert not echoes("I bake bread every Sunday, love this", prompt) and not echoes(None, prompt)
    example = json.dumps({"like": [2]}, sort_keys=True)
    answers = pd.DataFrame({"answer": [example, example, '{"like": []}', '{"like": [1]}'],
                            "echoed": [False, False, True, False]})  # fmt: skip
    copied = copy_rate(answers, example)
    assert copied.value == 0.75 and not copied.passed
    diversity = answer_diversity(answers)
    assert diversity.value == 0.75 and diversity.passed and "most common answer: 0.50" in diversity.note
    low, high = wilson(3, 4)
    assert 0 < low < 0.75 < high < 1


class TopicModel:
    """A unit-test double that likes the posts on the persona's topic, by reading its prompt: what a model that
    behaves like its persona does."""

    identity = "double:topic-reader"

    def __init__(self, behave: bool) -> None:
        self.behave = behave
        self.topic_of = {post.text: post.topic for probe in probe_set() for post in probe.posts}

    def complete_many(self, requests):
        answers = []
        for request in requests:
            system, user = request.messages[0]["content"], request.messages[-1]["content"]
            interest = re.search(r"interested in (\w+)", system + user).group(1)
            texts = re.findall(r"^\d+\. @\S+ · [^\n]*\n   ([^\n]+)", user, re.M)
            likes = [i for i, text in enumerate(texts, start=1) if self.topic_of.get(text) == interest]
            answer = {"like": likes if self.behave else [2], "reshare": [], "follow": [],
                      "reply": {"to": 2, "text": "Great point, thanks for sharing!"}, "post": None}  # fmt: skip
            answers.append(ChatResponse(json.dumps(answer), 100, 20, 0.0))
        return answers


@pytest.mark.parametrize("behave", [True, False])
def test_the_check_passes_a_model_that_reads_its_persona_and_fails_one_that_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, behave: bool
) -> None:
    import prism_experiments.llm.agents as llm_agents

    monkeypatch.setattr(llm_agents, "build_chat_model", lambda cfg: TopicModel(behave))
    result = run_check(LocalLLMConfig(cache=False), "example", tmp_path)
    figures = {figure.name: figure for figure in result.figures}
    if behave:
        assert figures["persona_lift"].value > 2 and figures["persona_lift"].passed  # its reply to post 2 counts too
        assert figures["answer_diversity"].passed and figures["invalid_after_repair"].value == 0
        assert not figures["example_copy_rate"].passed  # its reply is still the example's text
    else:
        assert figures["example_copy_rate"].value == 1.0 and not figures["persona_lift"].passed
        assert figures["answer_diversity"].value == pytest.approx(1 / 54) and not result.passed
        assert result.verdict().startswith("FAIL: example_copy_rate 1 (needs <= 0.05)")
    assert len(result.answers) == 54 and len(result.impressions) == 54 * 8


@pytest.mark.integration
def test_a_run_carries_the_verdict_of_its_models_newest_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import prism_experiments.llm.agents as llm_agents
    from prism_experiments.harness.job import llm_check_tags

    monkeypatch.setattr(llm_agents, "build_chat_model", lambda cfg: TopicModel(False))
    client = MlflowClient(f"sqlite:///{tmp_path}/mlflow.db")
    assert llm_check_tags(client, "double:topic-reader")["prism.llm_check"] == "never checked: make llm-check"
    experiment = client.create_experiment(check_module.EXPERIMENT, artifact_location=str(tmp_path / "artifacts"))
    result = run_check(LocalLLMConfig(cache=False), "example", tmp_path, probes=probe_set()[:6])
    run_id = log_check(client, experiment, result, {"overrides": ""})
    verdict, found = last_check(client, "double:topic-reader")
    assert found == run_id and verdict == result.verdict() and verdict.startswith("FAIL")
    tags = llm_check_tags(client, "double:topic-reader")
    assert tags == {"prism.llm_model": "double:topic-reader", "prism.llm_check": f"{verdict} (check run {run_id})"}
    assert client.get_run(run_id).data.metrics["persona_lift_passed"] == 0.0
