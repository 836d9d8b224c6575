"""`python -m prism_experiments.bench`: run the sections, print one table, write `<runs_dir>/bench/<ts>.json`."""

from __future__ import annotations

import argparse
import cProfile
import importlib
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import cast

from prism_experiments.bench.report import BenchReport, Figure, machine_info, render_table, write_report
from prism_experiments.bench.section_inputs import SectionInputs
from prism_experiments.bench.sizes import SIZES, Mode
from prism_experiments.locations import RunLayout, default_runs_dir

Section = Callable[[SectionInputs], list[Figure]]
SECTION_NAMES = {
    1: "embedding",
    2: "store",
    3: "ranking",
    4: "simulation",
    5: "sweep",
    6: "cluster",
    7: "first hour",
    8: "research",
    9: "scale",
}
QUICK_SECTIONS = (1, 2, 3)
#: section 6 (launchers, PostgreSQL, cold sweeps) runs only when named: it takes 15+ minutes; so do 8 (the research
#: run at the baseline commit and here, ~10 minutes) and 9 (the scale curve up to a million agents, over an hour)
FULL_SECTIONS = (1, 2, 3, 4, 5, 7)


def section_function(number: int) -> Section:
    """Imported on demand: sections 4-5 pull in Hydra and MLflow, which quick runs never need. Section "first hour"
    is `prism_experiments.bench.first_hour.first_hour_section`, and so on for each name."""
    module = SECTION_NAMES[number].replace(" ", "_")
    return cast(Section, getattr(importlib.import_module(f"prism_experiments.bench.{module}"), f"{module}_section"))


def parse_sections(text: str) -> list[int]:
    """Section numbers, or names ("research", "scale", ...), comma-separated."""
    by_name = {name.replace(" ", "_"): number for number, name in SECTION_NAMES.items()}
    try:
        numbers = sorted({by_name.get(part.strip()) or int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--sections: comma-separated numbers from 1 to 9 or names, got {text!r}"
        ) from None
    if not numbers or any(n not in SECTION_NAMES for n in numbers):
        raise argparse.ArgumentTypeError(f"--sections: comma-separated numbers from 1 to 9 or names, got {text!r}")
    return numbers


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m prism_experiments.bench", description=__doc__)
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="sections 1-3 at reduced size (under a minute)")
    size.add_argument("--tiny", action="store_true", help="toy sizes, for the benchmark's own tests")
    p.add_argument(
        "--sections",
        type=parse_sections,
        default=None,
        help="sections to run (default: 1-5 and 7; 1-3 with --quick; 6, the cluster path, only when named)",
    )
    p.add_argument("--runs-dir", type=Path, default=None, help="runs directory (default: $PRISM_RUNS_DIR or ./runs)")
    large = p.add_mutually_exclusive_group()
    large.add_argument(
        "--large",
        dest="large",
        action="store_true",
        default=None,
        help="include section 4's large preset (the default in a full run)",
    )
    large.add_argument(
        "--no-large",
        dest="large",
        action="store_false",
        help="skip section 4's large preset (10K agents, 100K posts; ~15+ min)",
    )
    p.add_argument(
        "--huge",
        action="store_true",
        help="section 4: also run the huge preset (100K agents, 1M posts; ~20 min, first run ~10 more)",
    )
    p.add_argument(
        "--cold-sweep",
        action="store_true",
        help="section 6: also time a cold ranking_modes sweep with and without up-front embedding (~30 min)",
    )
    p.add_argument(
        "--encoder-backends",
        action="store_true",
        help="section 1: also time the encoder under ONNX Runtime and OpenVINO, fp32 and int8, with recall@10 vs torch "
        "(the 'encoders' extra, which make setup installs; first run ~2 min more for the exports)",
    )
    p.add_argument(
        "--setup",
        action="store_true",
        help="section 7: also time `make setup` in a fresh clone of HEAD (~45 s with warm package caches)",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="write a cProfile of each section to <runs_dir>/bench/<ts>-section<N>.prof",
    )
    p.add_argument(
        "--research-repeats",
        type=int,
        default=1,
        help="section 8 (research): runs per mode and commit, alternating baseline and this checkout (default 1)",
    )
    p.add_argument(
        "--scale-agents",
        type=lambda text: tuple(int(part) for part in text.split(",")),
        default=None,
        help="section 9 (scale): agent counts (default 1000,10000,100000,1000000)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def run_section(number: int, inputs: SectionInputs, profile_path: Path | None) -> list[Figure]:
    """One section's figures; under cProfile (stats written to `profile_path`) when a path is given."""
    run = section_function(number)
    if profile_path is None:
        return run(inputs)
    profiler = cProfile.Profile()
    try:
        return profiler.runcall(run, inputs)
    finally:
        profiler.dump_stats(profile_path)


def run_bench(
    mode: Mode,
    sections: Sequence[int],
    runs_dir: Path,
    include_large: bool,
    profile: bool = False,
    show_progress: bool = True,
    cold_sweep: bool = False,
    include_huge: bool = False,
    encoder_backends: bool = False,
    setup: bool = False,
    research_repeats: int = 1,
    scale_agents: tuple[int, ...] | None = None,
) -> tuple[BenchReport, Path]:
    """Run the sections in order, write the JSON report, return it and its path."""
    from prism_experiments.tracking.provenance import git_commit, package_versions

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    started_at = datetime.now()
    bench_dir = RunLayout(runs_dir).bench_dir
    bench_dir.mkdir(parents=True, exist_ok=True)
    work_dir = Path(tempfile.mkdtemp(prefix="work-", dir=bench_dir))
    inputs = SectionInputs(
        mode=mode,
        sizes=SIZES[mode],
        runs_dir=runs_dir,
        work_dir=work_dir,
        include_large=include_large,
        include_huge=include_huge,
        show_progress=show_progress,
        cold_sweep=cold_sweep,
        encoder_backends=encoder_backends,
        setup=setup,
        research_repeats=research_repeats,
        scale_agents=scale_agents or SectionInputs.scale_agents,
    )
    figures: list[Figure] = []
    seconds: dict[str, float] = {}
    errors: dict[str, str] = {}
    try:
        for number in sections:
            name = SECTION_NAMES[number]
            print(f"== section {number}: {name}", file=sys.stderr, flush=True)
            tick = time.perf_counter()
            try:
                figures += run_section(
                    number, inputs, bench_dir / f"{started_at:%Y%m%d-%H%M%S}-section{number}.prof" if profile else None
                )
            except Exception as exc:  # one broken section must not cost the figures of the others
                errors[f"{number}.{name}"] = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
            seconds[f"{number}.{name}"] = time.perf_counter() - tick
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    report = BenchReport(
        started_at=started_at,
        mode=mode,
        sections=list(sections),
        machine=machine_info(),
        versions=package_versions(),
        git_commit=git_commit(),
        section_seconds=seconds,
        errors=errors,
        figures=figures,
    )
    return report, write_report(report, bench_dir)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    mode: Mode = "quick" if args.quick else "tiny" if args.tiny else "full"
    sections = args.sections or list(QUICK_SECTIONS if mode != "full" else FULL_SECTIONS)
    runs_dir = (args.runs_dir or default_runs_dir()).expanduser().resolve()
    include_large = args.large if args.large is not None else mode == "full"
    started = time.perf_counter()
    report, path = run_bench(
        mode,
        sections,
        runs_dir,
        include_large,
        args.profile,
        not args.no_progress,
        args.cold_sweep,
        args.huge,
        args.encoder_backends,
        args.setup,
        args.research_repeats,
        args.scale_agents,
    )
    print(render_table(report.figures))
    missed = report.missed()
    print(
        f"\n{len(report.figures)} figures, {len(missed)} targets missed"
        + (f": {', '.join(f.name for f in missed)}" if missed else "")
        + f"; {time.perf_counter() - started:.0f} s; report: {path}"
    )
    for section, error in report.errors.items():
        print(f"section {section} FAILED: {error}")
    return 1 if report.errors else 0
