"""The benchmark's own machinery: percentiles, recall, the exact reference, the probe and the report schema.

No figure is checked against a speed: figures are measured by `make bench`, never by tests.
"""

from __future__ import annotations

import gc
import json
import math
import sys
import weakref
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from prism_experiments.bench.cli import main, parse_sections
from prism_experiments.bench.exact import exact_top_k
from prism_experiments.bench.measure import frozen_heap, percentile, run_child, timed_in_turns
from prism_experiments.bench.probe.log import read_probe
from prism_experiments.bench.ranking import paired_throughput, recall_at_k
from prism_experiments.bench.report import BenchReport, Figure, Target, figure, render_table, report_path
from prism_experiments.ranking import KNOWN_MODES


# ------------------------------------------------------------------ helpers
def test_percentile_interpolates_linearly_between_order_statistics() -> None:
    values = list(range(1, 101))  # 1..100: rank (n-1)q/100 -> 50.5 and 95.05 by hand
    assert percentile(values, 50) == pytest.approx(50.5)
    assert percentile(values, 95) == pytest.approx(95.05)
    assert percentile([0.2, 0.1, 0.4, 0.3], 50) == pytest.approx(0.25)
    assert percentile([7.0], 95) == 7.0


@pytest.mark.parametrize("values, q", [([], 50), ([1.0], -1), ([1.0], 101)])
def test_percentile_rejects_bad_input(values: list[float], q: float) -> None:
    with pytest.raises(ValueError, match="values|q"):
        percentile(values, q)


def test_recall_at_k_on_hand_made_feeds() -> None:
    found = [["a", "b", "c"], ["x", "y"], ["p"]]
    exact = [["a", "b", "d"], ["x", "z"], []]  # the empty exact feed is skipped
    assert recall_at_k(found, exact, k=3) == pytest.approx((2 / 3 + 1 / 2) / 2)
    # only the first k of each list count: "c" is 3rd in found, cut by k=2
    assert recall_at_k([["a", "c", "b"]], [["a", "b", "c"]], k=2) == pytest.approx(0.5)
    assert recall_at_k([["b", "a"]], [["a", "b"]], k=10) == 1.0
    assert math.isnan(recall_at_k([[]], [[]]))
    with pytest.raises(ValueError, match="found"):
        recall_at_k([["a"]], [["a"], ["b"]])


def test_timed_in_turns_alternates_the_calls() -> None:
    order: list[str] = []
    seconds = timed_in_turns([lambda: order.append("a"), lambda: order.append("b")], repeats=3)
    assert order == ["a", "b", "a", "b", "a", "b"]  # in turns, never all of one side first
    assert [len(times) for times in seconds] == [3, 3] and all(t >= 0 for times in seconds for t in times)


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_frozen_heap_collects_then_freezes_what_lives_and_gives_it_back() -> None:
    # Judged by what the collector does to objects, never by gc.get_freeze_count() between two points:
    # frozen objects freed by reference counting (here or in another thread) lower that count at any time.
    gc.unfreeze()  # a known start: nothing frozen
    garbage = _Cycle()
    dead = weakref.ref(garbage)
    del garbage  # a cycle: only the cyclic collector frees it
    kept = _Cycle()
    kept_alive = weakref.ref(kept)
    with frozen_heap():
        assert dead() is None  # collected on entry, before anything is timed
        assert gc.get_freeze_count() > 0
        with frozen_heap():  # nested: freezes what was built since, leaves the outer freeze alone on exit
            pass
        del kept  # unreachable now, but frozen: the collector must leave it alone
        gc.collect()
        assert kept_alive() is not None  # the inner exit did not unfreeze the outer freeze
        new_garbage = _Cycle()
        new_dead = weakref.ref(new_garbage)
        del new_garbage
        gc.collect()
        assert new_dead() is None  # what the timed calls throw away is still collected
    assert gc.get_freeze_count() == 0  # everything back under the collector
    gc.collect()
    assert kept_alive() is None  # and what was frozen is collected again


def test_paired_throughput_times_the_rankers_in_turns_and_returns_the_warm_up_feeds() -> None:
    calls: list[str] = []

    class Recorder:
        def __init__(self, name: str) -> None:
            self.name = name

        def rank_many(self, agents: list[object], now: datetime) -> list[list[str]]:
            calls.append(self.name)
            return [[f"{self.name}{len(calls)}"] for _ in agents]

    agents: list[object] = ["agent 1", "agent 2"]
    (fps_a, feeds_a), (fps_b, feeds_b) = paired_throughput(
        [Recorder("a"), Recorder("b")],  # type: ignore[list-item]
        agents,  # type: ignore[arg-type]
        datetime(2026, 1, 1),
        repeats=2,
    )
    assert calls == ["a", "b", "a", "b", "a", "b"]  # one untimed call each, then two timed calls in turns
    assert feeds_a == [["a1"], ["a1"]] and feeds_b == [["b2"], ["b2"]]  # the untimed calls' feeds
    assert fps_a > 0 and fps_b > 0


def test_exact_top_k_orders_by_similarity_then_row() -> None:
    vectors = np.array([[1, 0], [0, 1], [1, 0], [-1, 0], [0.6, 0.8]], dtype=np.float32)
    ((rows, sims),) = exact_top_k(vectors, np.array([[1.0, 0.0]]), 4)
    assert rows.tolist() == [0, 2, 4, 1]  # rows 0 and 2 tie: lower row first
    assert sims == pytest.approx([1.0, 1.0, 0.8, 0.5])  # (1 + cos) / 2
    ((rows, _),) = exact_top_k(vectors, np.array([[1.0, 0.0]]), 99)
    assert rows.tolist() == [0, 2, 4, 1, 3]
    assert exact_top_k(vectors, np.array([[1.0, 0.0]]), 0)[0][0].size == 0


def test_target_and_figure_pass_or_miss() -> None:
    assert figure(3, "a", 4.0, "x", Target(op="<=", threshold=5)).passed is True
    assert figure(3, "a", 6.0, "x", Target(op="<=", threshold=5)).passed is False
    assert figure(3, "a", 0.9, "", Target(op=">=", threshold=0.95)).passed is False
    assert figure(1, "a", 0, "texts", Target(op="==", threshold=0)).passed is True
    assert figure(2, "a", float("nan"), "ms", Target(op="<", threshold=200)).passed is None
    assert figure(2, "a", 3.0, "ms").passed is None


def test_render_table_lists_every_figure_with_its_result() -> None:
    table = render_table(
        [
            figure(2, "store.feed_p50_ms@10000", 12.5, "ms", Target(op="<", threshold=200)),
            figure(3, "rank.x_algo.slowdown@10000", 7.0, "x", Target(op="<=", threshold=5)),
        ]
    )
    lines = table.splitlines()
    assert lines[0].split() == ["sec", "figure", "value", "unit", "target", "result"]
    assert "store.feed_p50_ms@10000" in lines[2] and lines[2].endswith("PASS")
    assert "rank.x_algo.slowdown@10000" in lines[3] and lines[3].endswith("MISS")


def test_report_path_never_overwrites(tmp_path: Path) -> None:
    moment = datetime(2026, 1, 2, 3, 4, 5)
    first = report_path(tmp_path, moment)
    assert first.name == "20260102-030405.json"
    first.write_text("{}")
    assert report_path(tmp_path, moment).name == "20260102-030405-1.json"


def test_parse_sections() -> None:
    assert parse_sections("3,1,3") == [1, 3]
    assert parse_sections("6") == [6]  # the cluster section, only when named
    assert parse_sections("7") == [7]  # the first hour
    assert parse_sections("research,scale") == [8, 9]  # by name (the research and scale sections)
    assert parse_sections("first_hour,2") == [2, 7]
    for bad in ("", "0", "10", "a", "scales"):
        with pytest.raises(Exception, match="--sections"):
            parse_sections(bad)


def test_probe_summary_counts_repeats(tmp_path: Path) -> None:
    lines = {
        "11.jsonl": [
            {"event": "model_load", "seconds": 2.0},
            {"event": "encode", "n": 2, "seconds": 0.1, "digests": ["aa", "bb"]},
            {"event": "index_build", "n": 300, "seconds": 1.0, "corpus": "c1"},
            {"event": "index_build", "n": 300, "seconds": 0.5, "corpus": "c1"},  # same worker, same corpus
        ],
        "12.jsonl": [
            {"event": "model_load", "seconds": 3.0},
            {"event": "encode", "n": 3, "seconds": 0.1, "digests": ["aa", "cc", "dd"]},  # "aa" again
            {"event": "index_build", "n": 300, "seconds": 1.0, "corpus": "c1"},  # another worker: not a rebuild
        ],
    }
    for name, events in lines.items():
        pid = int(name.split(".")[0])
        (tmp_path / name).write_text("".join(json.dumps(e | {"pid": pid}) + "\n" for e in events))
    summary = read_probe(tmp_path)
    assert (summary.processes, summary.model_loads, summary.model_load_s) == (2, 2, 5.0)
    assert (summary.encoded_texts, summary.distinct_encoded, summary.duplicate_encodes) == (5, 4, 1)
    assert (summary.index_builds, summary.distinct_corpora, summary.same_corpus_rebuilds) == (3, 1, 1)


def test_run_child_reports_the_childs_own_peak_memory(tmp_path: Path) -> None:
    run = run_child(
        [sys.executable, "-c", "x = bytearray(300_000_000); x[::4096] = b'1' * len(x[::4096])"], tmp_path / "child.log"
    )
    assert run.returncode == 0
    assert run.peak_rss_bytes >= 300_000_000
    failed = run_child([sys.executable, "-c", "print('boom'); raise SystemExit(3)"], tmp_path / "failed.log")
    assert failed.returncode == 3 and "boom" in failed.tail()


# ------------------------------------------------------- the real stack, tiny
@pytest.mark.integration
def test_exact_reference_and_chroma_store_agree_on_a_toy_corpus(embedder) -> None:
    from prism_experiments.bench.data import build_bench_world
    from prism_experiments.bench.exact import ExactRetriever
    from prism_experiments.bench.ranking import build_exact_store
    from prism_experiments.bench.section_inputs import drop_store
    from prism_experiments.bench.store import build_store

    world = build_bench_world(embedder, n_agents=20, corpus_posts=300, use_posts=300)
    chroma, exact = build_store(world, embedder, "test"), build_exact_store(world, embedder)
    try:
        queries = np.stack(
            [chroma.embed_interests(agent.interests) for agent in world.agents[:6]]
            + [world.vectors[i] for i in (0, 57, 123, 299)]
        )
        for (c_rows, c_sims), (e_rows, e_sims) in zip(chroma.query_rows(queries, 10), exact.query_rows(queries, 10)):
            assert set(c_rows.tolist()) == set(e_rows.tolist())
            assert c_sims == pytest.approx(e_sims, abs=1e-5)
            assert np.all(np.diff(e_sims) <= 0)  # best first
        assert isinstance(exact, ExactRetriever) and len(exact) == len(chroma) == 300
        with pytest.raises(ValueError, match="where"):
            exact.query_rows(queries[:1], 10, where={"author_id": "a0"})
    finally:
        drop_store(chroma)
        drop_store(exact)


@pytest.mark.integration
def test_tiny_bench_writes_a_report_that_validates(
    tmp_path: Path, session_cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "cache").symlink_to(session_cache_dir)  # share the session's embeddings with the test above
    assert main(["--tiny", "--runs-dir", str(runs), "--no-progress"]) == 0

    written = list((runs / "bench").glob("*.json"))
    assert len(written) == 1
    report = BenchReport.model_validate_json(written[0].read_text())
    assert report.mode == "tiny" and report.sections == [1, 2, 3] and report.errors == {}
    assert report.machine.cpu_count >= 1 and "numpy" in report.versions and report.git_commit
    names = {f.name for f in report.figures}
    assert {
        "embed.cold_texts_per_s",
        "embed.warm_encoded",
        "store.feed_p50_ms@300",
        "store.add_posts_per_s@300",
        "rank.x_algo.recall@10",
        "rank.context_rerank.slowdown@300",
        "rank.x_algo.feed_p95_ms@300",
    } <= names
    assert {f.section for f in report.figures} == {1, 2, 3}
    for f in report.figures:
        assert f.passed == (f.target.met_by(f.value) if f.target else None)
    # every mode's feeds from the exact reference and from Chroma agree on 300 posts
    recalls = [f.value for f in report.figures if f.name.endswith(".recall@10")]
    assert len(recalls) == len(KNOWN_MODES) and min(recalls) >= 0.95
    assert Figure.model_validate(json.loads(written[0].read_text())["figures"][0])
    assert "rank.x_algo.recall@10" in capsys.readouterr().out
    assert not list((runs / "bench").glob("work-*")), "the scratch directory is removed"


def test_shard_digests_reads_both_key_layouts() -> None:
    from prism_experiments.bench.sweep import shard_digests

    digests = [bytes(range(32)), bytes(31) + b"\x00", b"\x07" * 31 + b"\x00"]  # two end in a zero byte
    as_rows = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(3, 32)
    assert shard_digests(as_rows) == digests
    legacy = np.array(digests, dtype="S32")  # numpy drops the trailing zero bytes here
    assert shard_digests(legacy) == digests


def test_a_sweeps_started_jobs_are_those_hydra_ran_and_the_latest_sweep_is_the_newest(tmp_path: Path) -> None:
    from prism_experiments.bench.sweep import EXPERIMENT, latest_sweep_dir, started_jobs

    older, newer = (
        tmp_path / "hydra" / EXPERIMENT / "2026-11-26_10-00-00",
        tmp_path / "hydra" / EXPERIMENT / "2026-11-26_10-00-09",
    )
    for num in range(3):
        (newer / str(num)).mkdir(parents=True)
        (newer / str(num) / "prism_outcome.json").write_text("{}")
    (newer / "1" / ".hydra").mkdir()  # the one job the launcher ran
    (newer / "prism_sweep.json").write_text("{}")
    older.mkdir()
    assert latest_sweep_dir(tmp_path) == newer
    assert started_jobs(newer) == 1


def test_the_scaling_model_is_linear_up_to_the_cores_then_flat_and_capped_by_serial_work() -> None:
    from prism_experiments.bench.cluster import predicted_runs_per_hour

    assert predicted_runs_per_hour(1, 1.0, 2, run_s=4.0, serial_s_per_run=0.0) == 900
    assert predicted_runs_per_hour(2, 1.0, 2, run_s=4.0, serial_s_per_run=0.0) == 1800
    assert predicted_runs_per_hour(8, 1.0, 2, run_s=4.0, serial_s_per_run=0.0) == 1800  # 2 cores, 8 workers
    assert predicted_runs_per_hour(64, 1.0, 64, run_s=4.0, serial_s_per_run=0.5) == 7200  # the lock's cap
    assert predicted_runs_per_hour(4, 2.0, 8, run_s=4.0, serial_s_per_run=0.0) == 3600
    with pytest.raises(ValueError, match="workers"):
        predicted_runs_per_hour(0, 1.0, 2, run_s=4.0, serial_s_per_run=0.0)


def test_a_sweeps_overhead_per_run_is_the_worker_time_outside_simulate_and_log() -> None:
    from prism_experiments.bench.cluster import SweepTiming
    from prism_experiments.bench.hydra_runs import LoggedRun

    # 4 runs of 4 s each on 2 workers, started at 0, 0, 5 and 5 s (1 s each outside simulate + log)
    runs = [
        LoggedRun(str(i), {"prism.timing.simulate_s": "3.0", "prism.timing.log_s": "1.0"}, start, start + 5_000)
        for i, start in enumerate((0, 0, 5_000, 5_000))
    ]
    timing = SweepTiming(wall_s=25.0, runs=runs)
    assert timing.span_s == 10.0 and timing.startup_s == 15.0 and timing.runs_per_min == 24.0
    assert timing.overhead_per_run_s(workers=2) == pytest.approx(10 * 2 / 4 - 4)


def test_last_test_session_reads_what_the_conftest_hook_writes(tmp_path: Path) -> None:
    from prism_experiments.bench.first_hour import last_test_session

    assert last_test_session(tmp_path) is None
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "test-session.json").write_text('{"wall_s": 612.5, "passed": 3, "failed": 0}\n')
    assert last_test_session(tmp_path) == {"wall_s": 612.5, "passed": 3, "failed": 0}
    (tmp_path / "bench" / "test-session.json").write_text("{half")
    assert last_test_session(tmp_path) is None


@pytest.mark.integration
def test_first_hour_counts_the_first_sweeps_texts_and_times_the_ui(tmp_path: Path) -> None:
    """Section 7's count: ranking_modes' 40 runs take enough steps for the up-front pass to embed the whole text
    pool, which its 10 seeds' starting corpora share (under the pool's ceiling); and the real MLflow UI, started as
    `make ui` starts it, answers."""
    from prism_experiments.bench.first_hour import ranking_modes_upfront_texts, ui_first_answer_s
    from prism_experiments.bench.section_inputs import SectionInputs
    from prism_experiments.bench.sizes import SIZES
    from prism_experiments.config import ExperimentConfig
    from prism_experiments.corpus.templates import pooled_texts

    inputs = SectionInputs(mode="tiny", sizes=SIZES["tiny"], runs_dir=tmp_path, work_dir=tmp_path, show_progress=False)
    texts, ceiling = ranking_modes_upfront_texts(inputs)
    corpus = ExperimentConfig().corpus
    assert ceiling == 2 * 12 * 400 and texts == len(pooled_texts(corpus.topics, corpus.hashtag_fraction, 400)) == 9_578
    seconds = ui_first_answer_s(inputs, timeout_s=600)  # a safety net: the UI's start-up on a loaded machine
    assert seconds is not None and 0 < seconds < 600


def test_research_figures_compare_medians_of_each_side(tmp_path: Path) -> None:
    from prism_experiments.bench.measure import ChildRun
    from prism_experiments.bench.research import research_figures

    def run(wall: float, rank: float) -> tuple[ChildRun, dict[str, float]]:
        child = ChildRun(["python"], 0, wall, 2 * 10**9, tmp_path / "log")
        return child, {"rank_s": rank, "decide_s": 1.0, "index_new_s": 0.0, "world_s": 2.0}

    figures = {
        f.name: f
        for f in research_figures("x_algo", [run(90, 60), run(120, 80), run(100, 70)], [run(30, 10), run(40, 19)])
    }
    assert figures["research.x_algo.baseline_wall_s"].value == 100  # the median of three
    assert figures["research.x_algo.wall_s"].value == 35  # of two: their mean
    assert figures["research.x_algo.speedup"].value == pytest.approx(100 / 35)
    assert figures["research.x_algo.speedup"].passed is False  # x_algo's target is 3x
    assert figures["research.x_algo.loop_speedup"].value == pytest.approx(71 / 15.5)
    # the per-run overhead: wall minus the step loop (rank + decide + index new), and what is left of it
    # once the world (2 s) is taken out: index_s and log_s are absent here, so 0
    assert figures["research.x_algo.baseline_overhead_s"].value == pytest.approx(100 - 71)
    assert figures["research.x_algo.overhead_s"].value == pytest.approx((30 - 11 + 40 - 20) / 2)
    assert figures["research.x_algo.startup_s"].value == pytest.approx((30 - 11 - 2 + 40 - 20 - 2) / 2)


def test_the_research_scale_targets_are_the_requirements() -> None:
    """Each REQ-PERF target's threshold is the one docs/requirements.md states, and its figures cite it."""
    from prism_experiments.bench import ranking, research, scale, simulation, world_files

    targets = {
        "ranking.RATIO_TARGET": ranking.RATIO_TARGET,
        "simulation.RSS_TARGETS[huge]": simulation.RSS_TARGETS["huge"],
        **{f"research.SPEEDUP_TARGETS[{mode}]": target for mode, target in research.SPEEDUP_TARGETS.items()},
        "scale.RSS_TARGET": scale.RSS_TARGET,
        "scale.GROWTH_TARGET": scale.GROWTH_TARGET,
    }
    assert {name: (t.op, t.threshold, t.source) for name, t in targets.items()} == {
        "ranking.RATIO_TARGET": ("<=", 3.0, "REQ-PERF-1"),
        "simulation.RSS_TARGETS[huge]": ("<=", 8.0, "REQ-PERF-2"),
        "research.SPEEDUP_TARGETS[x_algo]": (">=", 3.0, "REQ-PERF-3"),
        "research.SPEEDUP_TARGETS[preference]": (">=", 2.0, "REQ-PERF-3"),
        "research.SPEEDUP_TARGETS[random]": (">=", 2.0, "REQ-PERF-3"),
        "research.SPEEDUP_TARGETS[chronological]": (">=", 2.0, "REQ-PERF-3"),
        "scale.RSS_TARGET": ("<=", 24.0, "REQ-PERF-4"),
        "scale.GROWTH_TARGET": ("<=", 2.0, "REQ-PERF-4"),
    }
    assert research.BASELINE_COMMIT == "db402cd"
    assert (world_files.WALL_TARGET_S, world_files.RSS_TARGET_GB) == (120.0, 4.0)  # REQ-PERF-5
