"""Section 7, the first hour of a new user: what a fresh clone meets first, in counts where a count exists.

- `first.ranking_modes.upfront_texts`: distinct texts a cold `make sweep EXPERIMENT=ranking_modes` embeds
  before its jobs start, its whole text pool (the same on every machine); `first.text_pool_ceiling`: at most
  this many post texts exist in any run of the default corpus (2 × topics × `corpus.text_pool_size`).
- `first.ui.first_answer_s`: `make ui` (prism_experiments.ops.ui) from start to its first HTTP 200.
- `first.llm.reload_s`: the local LLM's load in a new process once its de-quantised weights are cached.
- `first.make_test_s`: the wall time of the last full `make test` on this checkout (tests/conftest.py writes
  it to `<runs_dir>/bench/test-session.json`; a test run is too long to start from here).
- `first.setup_s` (`--setup`): `make setup` in a fresh clone of HEAD, with this machine's package cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from prism_experiments.bench.report import Figure, Target, figure
from prism_experiments.bench.section_inputs import SectionInputs
from prism_experiments.locations import PROJECT_ROOT, RunLayout
from prism_experiments.ops.daemons import free_port

SECTION = 7
ISSUE = "REQ-FIRSTHOUR (docs/requirements.md)"


def ranking_modes_upfront_texts(inputs: SectionInputs) -> tuple[int, int]:
    """Distinct texts the up-front pass of every `ranking_modes` job embeds (starting corpora, and the text pool when
    its runs take enough steps: harness/upfront_embedding.py), and the ceiling 2 × topics × pool size
    (docs/corpus.md, "Text pools")."""
    from prism_experiments.composition import compose_dictconfig, hydra_context
    from prism_experiments.embeddings.embedder import BATCH_SIZE
    from prism_experiments.harness.sweep import job_overrides, validated_job_configs
    from prism_experiments.harness.upfront_embedding import starting_texts_by_cache, sweep_pools

    with hydra_context():
        base = compose_dictconfig(
            ["experiment=ranking_modes", f"paths.runs_dir={inputs.work_dir / 'first_hour'}"], return_hydra_config=True
        )
        configs, _ = validated_job_configs(base, job_overrides(base))
    by_cache, _ = starting_texts_by_cache(configs, inputs.show_progress)
    groups = [*by_cache.values(), *sweep_pools(configs, BATCH_SIZE).values()]
    texts = {text for group in groups for text in group}
    corpus = configs[0].corpus
    ceiling = 2 * len(corpus.topics) * corpus.text_pool_size  # a pool of roots and one of replies per topic
    return len(texts), ceiling


def ui_first_answer_s(inputs: SectionInputs, timeout_s: float = 180.0) -> float | None:
    """Seconds from starting `prism_experiments.ops.ui` on a store with one FINISHED run to its first 200."""
    from prism_experiments.ops.ui import stop_group
    from prism_experiments.tracking.store import client_for

    store = inputs.work_dir / "first_hour_ui"
    store.mkdir(parents=True, exist_ok=True)
    uri = RunLayout(store).tracking_uri
    client = client_for(uri)
    run = client.create_run(client.create_experiment("first_hour"))
    client.log_metric(run.info.run_id, "feed_topic_entropy", 1.0)
    client.set_terminated(run.info.run_id, "FINISHED")
    port = free_port()
    started = time.perf_counter()
    ui = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "prism_experiments.ops.ui",
            "--port",
            str(port),
            "--no-browser",
            "--tracking-uri",
            uri,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        while time.perf_counter() - started < timeout_s and ui.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as answer:
                    if answer.status == 200:
                        return time.perf_counter() - started
            except OSError:
                time.sleep(0.2)
        return None
    finally:
        stop_group(ui)


LLM_LOAD = (
    "from prism_experiments.llm.backends.local import LocalChatModel, LocalLLMConfig\n"
    "import sys, time\n"
    "started = time.perf_counter()\n"
    "loaded = LocalChatModel(LocalLLMConfig(cache_dir=sys.argv[1])).loaded\n"
    "print(time.perf_counter() - started)\n"
)


def llm_reload_s(inputs: SectionInputs) -> float | None:
    """The local LLM's load in a new process with its de-quantised weights cached (a first load caches them)."""
    cache = str(inputs.cache_dir / "llm")
    seconds = None
    for _ in range(2):  # the first may de-quantise and save; the second is what every later process pays
        done = subprocess.run([sys.executable, "-c", LLM_LOAD, cache], capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            return None
        seconds = float(done.stdout.strip().splitlines()[-1])
    return seconds


def last_test_session(runs_dir: Path) -> dict | None:
    """What tests/conftest.py recorded about the last full test session, if any."""
    path = RunLayout(runs_dir).test_session_file
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None


def setup_s() -> float | None:
    """`make setup` in a fresh clone of HEAD (the package cache as this machine has it)."""
    with tempfile.TemporaryDirectory(prefix="prism-setup-") as clone:
        subprocess.run(["git", "clone", "-q", str(PROJECT_ROOT), clone], check=True)
        started = time.perf_counter()
        done = subprocess.run(["make", "setup"], cwd=clone, capture_output=True, env=os.environ | {"MAKEFLAGS": ""})
        return time.perf_counter() - started if done.returncode == 0 else None


def first_hour_figure(name: str, value: float | None, unit: str, at_most: float | None, note: str) -> Figure:
    """A figure of this section; `at_most`: its REQ-FIRSTHOUR ceiling (None: a figure without a target)."""
    target = None if at_most is None else Target(op="<=", threshold=at_most, source=ISSUE)
    return figure(SECTION, name, value, unit, target, note=note)


def first_hour_section(inputs: SectionInputs) -> list[Figure]:
    upfront, ceiling = ranking_modes_upfront_texts(inputs)
    figures = [
        first_hour_figure(
            "first.ranking_modes.upfront_texts",
            upfront,
            "texts",
            10_000,
            "a cold ranking_modes sweep's up-front embedding: its whole text pool (53,448 texts before the pool)",
        ),
        first_hour_figure(
            "first.text_pool_ceiling",
            ceiling,
            "texts",
            None,
            "2 x topics x corpus.text_pool_size: every post text any run can have",
        ),
        first_hour_figure(
            "first.ui.first_answer_s",
            ui_first_answer_s(inputs),
            "s",
            10,
            "make ui to its first HTTP 200 (196 s before, on a loaded 2-core EPYC with 4 workers)",
        ),
        first_hour_figure(
            "first.llm.reload_s",
            llm_reload_s(inputs),
            "s",
            10,
            "SmolLM2-135M from its cached float32 weights (20 s idle to 1.5 min loaded before: de-quantised)",
        ),
    ]
    session = last_test_session(inputs.runs_dir)
    session_note = (
        "not recorded yet: run make test"
        if session is None
        else f"pytest, {session['passed']} passed, {session['failed']} failed, {session['when']}, "
        f"commit {session['commit']}"
    )
    wall_s = None if session is None else session["wall_s"]
    figures.append(first_hour_figure("first.make_test_s", wall_s, "s", 600, session_note))
    if inputs.setup:
        figures.append(
            first_hour_figure("first.setup_s", setup_s(), "s", 180, "make setup in a fresh clone, warm package cache")
        )
    return figures
