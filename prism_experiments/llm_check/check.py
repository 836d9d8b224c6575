"""Running the fitness test: every probe through one backend and prompt style, answers cached like a run's, the
figures logged to MLflow as a run of `prism.kind=llm_check` tagged with the model's identity."""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from prism_experiments.llm import CallStats, LLMAgents
from prism_experiments.llm.backend import BackendConfig
from prism_experiments.llm.prompt import EXAMPLE
from prism_experiments.llm_check.probes import PROBE_SET_VERSION, PROBE_TIME, Probe, probe_set
from prism_experiments.llm_check.scoring import Figure, echoes, figures_table, fitness_figures
from prism_experiments.tracking.tags import (
    KIND_TAG,
    LLM_CHECK_KIND,
    LLM_CHECK_PROBE_SET_TAG,
    LLM_CHECK_PROMPT_STYLE_TAG,
    LLM_CHECK_VERDICT_TAG,
    LLM_MODEL_TAG,
)

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

#: the check's experiment in the tracking store
EXPERIMENT = "llm_check"
#: the prompt cap the simulation uses (rag.prompt_max_chars); every probe's 8 posts fit under it
PROMPT_MAX_CHARS = 2000
#: the check's sampling seeds come from this run seed (as a simulation's from its seed)
CHECK_SEED = 7


@dataclass(frozen=True)
class CheckResult:
    """The figures, the tables they came from, and what producing them took."""

    identity: str
    prompt_style: str
    figures: list[Figure]
    impressions: pd.DataFrame
    answers: pd.DataFrame
    stats: dict[str, float]
    seconds: float

    @property
    def passed(self) -> bool:
        return all(figure.passed for figure in self.figures)

    def verdict(self) -> str:
        """`PASS`, or `FAIL: <figure> <value> (needs <threshold>); ...`."""
        failed = [f"{f.name} {f.value:.3g} (needs {f.threshold})" for f in self.figures if not f.passed]
        return "PASS" if not failed else "FAIL: " + "; ".join(failed)


def normalized(text: str) -> str:
    """An answer as canonical JSON (key order and spacing do not make two answers different)."""
    try:
        return json.dumps(json.loads(text), sort_keys=True)
    except ValueError:
        return text.strip()


def run_check(
    cfg: BackendConfig,
    prompt_style: str,
    cache_dir: Path,
    show_progress: bool = False,
    probes: list[Probe] | None = None,
) -> CheckResult:
    """Ask every probe and score the answers."""
    probes = probes if probes is not None else probe_set()
    agents = LLMAgents(cfg, cache_dir, show_progress, prompt_style=prompt_style)
    stats = CallStats()
    started = time.perf_counter()
    answers = agents.answer(
        CHECK_SEED,
        0,
        PROBE_TIME,
        [(i, p.agent) for i, p in enumerate(probes)],
        [p.posts for p in probes],
        PROMPT_MAX_CHARS,
        stats,
    )
    seconds = time.perf_counter() - started
    impression_rows, answer_rows = [], []
    for probe, answer in zip(probes, answers, strict=True):
        acts = answer.actions
        engaged = set(acts.like) | set(acts.reshare) | ({acts.reply.to} if acts.reply else set())
        prompt_text = "\n".join(m["content"] for m in answer.prompt.messages)
        echoed = echoes(acts.reply.text if acts.reply else None, prompt_text) or echoes(acts.post, prompt_text)
        answer_rows.append(
            {
                "probe_id": probe.probe_id,
                "answer": normalized(answer.text),
                "echoed": echoed,
                "malformed": answer.malformed,
                "repaired": answer.repaired,
                "no_action": answer.no_action,
            }
        )
        for position, (post, on_topic) in enumerate(zip(probe.posts, probe.on_topic, strict=True), start=1):
            if position > answer.prompt.n_posts:
                break
            impression_rows.append(
                {
                    "probe_id": probe.probe_id,
                    "position": position,
                    "on_topic": on_topic,
                    "has_media": post.has_media,
                    "engaged": position in engaged,
                }
            )
    impressions, answer_table = pd.DataFrame(impression_rows), pd.DataFrame(answer_rows)
    example = json.dumps(EXAMPLE, sort_keys=True) if prompt_style == "example" else None
    identity = agents.chat.model.identity
    return CheckResult(
        identity,
        prompt_style,
        fitness_figures(impressions, answer_table, example),
        impressions,
        answer_table,
        stats.as_dict(),
        seconds,
    )


def log_check(client: MlflowClient, experiment_id: str, result: CheckResult, params: dict[str, str]) -> str:
    """The result as a FINISHED MLflow run (figures as metrics, tables as artifacts); returns its id."""
    from prism_experiments.tracking.run_logger import log_params

    tags = {
        KIND_TAG: LLM_CHECK_KIND,
        LLM_MODEL_TAG: result.identity,
        LLM_CHECK_VERDICT_TAG: result.verdict(),
        LLM_CHECK_PROMPT_STYLE_TAG: result.prompt_style,
        LLM_CHECK_PROBE_SET_TAG: PROBE_SET_VERSION,
    }
    run_id = client.create_run(experiment_id, run_name=f"llm-check {result.identity}", tags=tags).info.run_id
    log_params(client, run_id, params)
    for figure in result.figures:
        for suffix, value in (("", figure.value), ("_low", figure.low), ("_high", figure.high)):
            client.log_metric(run_id, f"{figure.name}{suffix}", value)
        client.log_metric(run_id, f"{figure.name}_passed", float(figure.passed))
    for name, value in result.stats.items():
        client.log_metric(run_id, f"llm/{name}", value)
    client.log_metric(run_id, "seconds", result.seconds)
    client.log_metric(run_id, "passed", float(result.passed))
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        figures_table(result.figures).to_csv(folder / "figures.csv", index=False)
        result.impressions.to_parquet(folder / "impressions.parquet", index=False)
        result.answers.to_parquet(folder / "answers.parquet", index=False)
        client.log_artifacts(run_id, str(folder))
    client.set_terminated(run_id, "FINISHED")
    return run_id


def last_check(client: MlflowClient, identity: str) -> tuple[str, str] | None:
    """(verdict, run id) of the newest FINISHED check of the model `identity`, or None if it was never checked."""
    experiment = client.get_experiment_by_name(EXPERIMENT)
    if experiment is None:
        return None
    runs = client.search_runs(
        [experiment.experiment_id],
        filter_string=f"tags.`{LLM_MODEL_TAG}` = '{identity}' and attributes.status = 'FINISHED'",
        order_by=["attributes.start_time DESC"],
        max_results=1,
    )
    if not runs:
        return None
    return runs[0].data.tags.get(LLM_CHECK_VERDICT_TAG, "?"), runs[0].info.run_id
