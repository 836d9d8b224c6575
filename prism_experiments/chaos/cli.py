"""`make chaos`: run a seeded schedule of faulted sweeps, check the invariants, report and log the results.

make chaos                                  # 30 rounds, every fault at least 3 times, seed 0
make chaos ARGS="--seed 7 --rounds 40"      # another schedule
make chaos ARGS="--seed 7 --only 12"        # round 12 of seed 7's schedule alone (a failure's reproduction)
make chaos ARGS="--rounds 3 --targets replication --target-each 3"   # replication rounds only
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from prism_experiments.chaos.runner import Results, final_rerun, run_round
from prism_experiments.chaos.schedule import FAULTS, LAUNCHERS, TARGET_EACH, TARGETS, Round, build_schedule
from prism_experiments.chaos.world import HARNESS_HTTP_BUDGET, disk_available, job_overrides, stores_for
from prism_experiments.embeddings.embedder import cache_directory
from prism_experiments.embeddings.model import DEFAULT_MODEL
from prism_experiments.locations import RunLayout, cache_dir, default_runs_dir
from prism_experiments.tracking.errors import error_line
from prism_experiments.tracking.tags import CHAOS_KIND, KIND_TAG

log = logging.getLogger("prism_experiments.chaos")


def available_faults(faults: tuple[str, ...], work: Path) -> tuple[tuple[str, ...], list[str]]:
    """The faults this machine can inject, and a note for each left out (no PostgreSQL, no tmpfs mount)."""
    notes, kept = [], list(faults)
    try:
        from prism_experiments.ops.postgres import postgres_bin

        postgres_bin()
    except Exception as error:
        kept = [f for f in kept if f not in ("kill_mlflow", "kill_postgres")]
        notes.append(f"no tracking-server faults: {error}")
    if "full_disk" in kept and not disk_available(work):
        kept.remove("full_disk")
        notes.append("no full-disk fault: a tmpfs cannot be mounted here (needs root)")
    return tuple(kept), notes


def faults_allow_server(notes: list[str]) -> bool:
    """Whether PostgreSQL was found (the tracking server store runs on it)."""
    return not any(note.startswith("no tracking-server faults") for note in notes)


def seed_cache(source: Path, target: Path) -> None:
    """The chaos cache starts as a copy of `source`'s vectors of the default model: its faults damage the copy."""
    origin, copy = cache_directory(source, DEFAULT_MODEL), cache_directory(target, DEFAULT_MODEL)
    if origin.is_dir():
        shutil.copytree(origin, copy, ignore=shutil.ignore_patterns(".lock", "quarantine"), dirs_exist_ok=True)


def warm_text_pool(cache: Path, work: Path, n_steps: int) -> None:
    """Every text the rounds' runs can post, embedded at once in full batches: cold, each round's reference runs
    sent a step's few new texts as a padded batch of 32 (embeddings/embedder.py) and spent most of a round there."""
    from prism_experiments.bench.scale import warm_pool

    overrides = [*job_overrides(0, "x_algo", n_steps), f"rag.cache_dir={cache}", f"paths.runs_dir={work / 'warm'}"]
    encoded = warm_pool(overrides, show_progress=True)
    if encoded:
        print(f"chaos: embedded {encoded} texts of the text pool into the rounds' cache", flush=True)


def run(args: argparse.Namespace) -> int:
    os.environ.update(HARNESS_HTTP_BUDGET)
    work = args.work_dir or RunLayout(default_runs_dir()).chaos_dir / time.strftime("%Y-%m-%d_%H-%M-%S")
    work.mkdir(parents=True, exist_ok=True)
    faults, notes = available_faults(tuple(args.faults), work)
    for note in notes:
        print(f"chaos: {note}", file=sys.stderr)
    kinds = tuple(store for store in args.stores if store != "server" or faults_allow_server(notes))
    schedule = build_schedule(
        args.seed,
        args.rounds,
        faults,
        tuple(args.launchers),
        args.each,
        args.n_steps,
        kinds,
        tuple(args.targets),
        args.target_each,
    )
    if args.only is not None:
        schedule = [r for r in schedule if r.index == args.only]
    cache = work / "cache"
    seed_cache(args.cache_from or cache_dir(), cache)
    results, started = Results(), time.monotonic()
    print(f"chaos: seed {args.seed}, {len(schedule)} rounds, work dir {work}", flush=True)
    warm_text_pool(cache, work, args.n_steps)
    with stores_for(work, cache, schedule) as stores:
        for round_ in schedule:
            try:
                result = run_round(round_, stores, args.seed)
            except Exception as error:  # the harness itself: reported as the round's failure, the schedule goes on
                from prism_experiments.chaos.faults import Injection
                from prism_experiments.chaos.runner import RoundResult

                result = RoundResult(round_, Injection(False, ""), [], [f"the round failed: {error_line(error)}"], 0.0)
            results.rounds.append(result)
            print(_round_line(result, len(schedule)), flush=True)
            for violation in result.violations:
                print(f"  VIOLATION: {violation}", flush=True)
        results.final_violations = final_rerun(results, stores)
    seconds = time.monotonic() - started
    report = summary(results, args.seed, seconds)
    print(report)
    _log_results(results, args, seconds, report)
    if results.violations:
        failing = sorted({r.round.index for r in results.rounds if r.violations})
        only = f" --only {failing[0]}" if failing else ""
        print(f'chaos: reproduce with make chaos ARGS="--seed {args.seed} --rounds {args.rounds}{only}"')
        return 1
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _round_line(result: object, total: int) -> str:
    from prism_experiments.chaos.runner import RoundResult

    assert isinstance(result, RoundResult)
    r = result.round
    launchers = ",".join(sorted({s.launcher for s in r.sweeps}))
    outcome = ("hit: " if result.injection.hit else "missed: ") + result.injection.detail
    exits = [e.code for e in result.exits]
    phases = ", ".join(f"{name} {seconds:.0f}" for name, seconds in result.phases.items())
    store = "own sqlite" if r.target == "replication" else r.store
    return (
        f"round {r.index} ({total} in all): {r.target}: {r.fault} at '{r.trigger}' "
        f"({store}, {launchers}, {len(r.sweeps)} {'suite' if r.target == 'replication' else 'sweep(s)'}): "
        f"{outcome}; exits {exits}; {len(result.violations)} violation(s); {result.seconds:.0f} s"
        + (f" ({phases})" if phases else "")
    )


def summary(results: Results, seed: int, seconds: float) -> str:
    """The results table: rounds, faults by kind (injected, reached a live target), violations."""
    faults, hits = results.faults(), results.hits()
    lines = [
        f"chaos seed {seed}: {len(results.rounds)} rounds in {seconds / 60:.1f} min, "
        f"{len(results.violations)} invariant violation(s)",
        "| fault | rounds | reached a live target |",
        "|---|---|---|",
    ]
    lines += [f"| {kind} | {faults[kind]} | {hits[kind]} |" for kind in FAULTS if faults[kind]]
    targets = results.targets()
    lines.append("rounds by target: " + ", ".join(f"{kind} {targets[kind]}" for kind in TARGETS if targets[kind]))
    lines += [f"- {violation}" for violation in results.violations]
    return "\n".join(lines)


def _log_results(results: Results, args: argparse.Namespace, seconds: float, report: str) -> None:
    """The results as one MLflow run (`prism.kind=chaos`) in the project's store, experiment `chaos`."""
    from prism_experiments.locations import artifact_root, tracking_uri_for
    from prism_experiments.tracking.store import client_for, ensure_experiment

    runs_dir = default_runs_dir()
    uri = tracking_uri_for(None, runs_dir)
    try:
        client = client_for(uri)
        experiment_id = ensure_experiment(uri, "chaos", artifact_root(runs_dir))
        run = client.create_run(experiment_id, run_name=f"chaos seed {args.seed}", tags={KIND_TAG: CHAOS_KIND})
        run_id = run.info.run_id
        for key, value in {
            "seed": args.seed,
            "rounds": args.rounds,
            "each": args.each,
            "n_steps": args.n_steps,
            "only": args.only,
            "faults": ",".join(args.faults),
            "launchers": ",".join(args.launchers),
            "targets": ",".join(args.targets),
            "target_each": args.target_each,
        }.items():
            client.log_param(run_id, key, str(value))
        client.log_metric(run_id, "rounds", len(results.rounds))
        client.log_metric(run_id, "violations", len(results.violations))
        client.log_metric(run_id, "minutes", seconds / 60)
        for kind, count in results.faults().items():
            client.log_metric(run_id, f"faults.{kind}", count)
            client.log_metric(run_id, f"hits.{kind}", results.hits()[kind])
        for kind, count in results.targets().items():
            client.log_metric(run_id, f"targets.{kind}", count)
        rounds = "\n".join(_round_line(r, len(results.rounds)) for r in results.rounds)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "report.md"
            path.write_text(f"{report}\n\n{rounds}\n")
            client.log_artifact(run_id, str(path), "chaos")
        client.set_terminated(run_id, "FAILED" if results.violations else "FINISHED")
        print(f"chaos: results logged as MLflow run {run_id} (experiment 'chaos' in {uri})")
    except Exception as error:  # the results are printed above either way
        print(f"chaos: could not log the results to {uri} ({error_line(error)})", file=sys.stderr)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="chaos", description=(__doc__ or "").splitlines()[0])
    p.add_argument("--seed", type=int, default=0, help="the schedule's seed (a failing seed reproduces its failure)")
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--each", type=int, default=3, help="every fault at least this many times (rounds allowing)")
    p.add_argument("--faults", type=lambda s: s.split(","), default=list(FAULTS), help=",".join(FAULTS))
    p.add_argument("--launchers", type=lambda s: s.split(","), default=list(LAUNCHERS), help=",".join(LAUNCHERS))
    p.add_argument(
        "--stores",
        type=lambda s: s.split(","),
        default=["sqlite", "server"],
        help="sqlite,server: the stores a round draws from (a server or full-disk fault picks its own)",
    )
    p.add_argument(
        "--targets",
        type=lambda s: s.split(","),
        default=list(TARGETS),
        help=f"{','.join(TARGETS)}: what rounds run (smoke sweeps, on world files, with a ranking schedule, or a "
        "replication finding's quick suite, resumed after its fault)",
    )
    p.add_argument(
        "--target-each",
        type=int,
        default=TARGET_EACH,
        help="every target but smoke on at least this many rounds (rounds allowing)",
    )
    p.add_argument("--n-steps", type=int, default=4, help="simulation.n_steps of every job")
    p.add_argument("--only", type=int, default=None, help="run only this round (0-based) of the schedule")
    p.add_argument("--work-dir", type=Path, default=None, help="default: <runs dir>/chaos/<time>")
    p.add_argument("--cache-from", type=Path, default=None, help="embedding cache to copy (default: the project's)")
    p.add_argument("--keep", action="store_true", help="keep the work dir of a schedule that found no violation")
    return p


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    args = parser().parse_args(argv)
    unknown = [f for f in args.faults if f not in FAULTS] + [x for x in args.launchers if x not in LAUNCHERS]
    unknown += [store for store in args.stores if store not in ("sqlite", "server")]
    unknown += [target for target in args.targets if target not in TARGETS]
    if unknown:
        print(
            f"chaos: --faults / --launchers / --targets: unknown {unknown}; "
            f"allowed {FAULTS}, {LAUNCHERS} and {TARGETS}",
            file=sys.stderr,
        )
        return 2
    return run(args)


def describe(schedule: list[Round]) -> str:
    return "\n".join(r.describe() for r in schedule)
