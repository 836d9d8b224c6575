"""The benchmark report: machine, versions, commit and every figure; JSON on disk, a table on screen."""

from __future__ import annotations

import math
import os
import platform
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Comparison = Literal["<=", "<", ">=", "=="]


class Target(BaseModel):
    """A figure's goal: `value <op> threshold`, and where the goal comes from."""

    model_config = ConfigDict(extra="forbid")

    op: Comparison
    threshold: float
    source: str = "docs/bench.md"

    def met_by(self, value: float | None) -> bool | None:
        if value is None or math.isnan(value):
            return None
        if self.op == "<=":
            return value <= self.threshold
        if self.op == "<":
            return value < self.threshold
        if self.op == ">=":
            return value >= self.threshold
        return value == self.threshold

    def describe(self) -> str:
        return f"{self.op} {self.threshold:g}"


class Figure(BaseModel):
    """One measured number; `passed` is None when the figure has no target or could not be measured."""

    model_config = ConfigDict(extra="forbid")

    section: int = Field(ge=1, le=9)
    name: str = Field(min_length=1)
    value: float | None
    unit: str
    target: Target | None = None
    passed: bool | None = None
    note: str = ""


def figure(
    section: int, name: str, value: float | None, unit: str, target: Target | None = None, note: str = ""
) -> Figure:
    """A Figure with `passed` filled in from its target."""
    clean = None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
    return Figure(
        section=section,
        name=name,
        value=clean,
        unit=unit,
        target=target,
        passed=target.met_by(clean) if target is not None else None,
        note=note,
    )


class MachineInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cpu_count: int
    platform: str
    processor: str
    python: str
    total_memory_bytes: int | None


class BenchReport(BaseModel):
    """Everything `python -m prism_experiments.bench` measured in one invocation."""

    model_config = ConfigDict(extra="forbid")

    started_at: datetime
    mode: Literal["full", "quick", "tiny"]
    sections: list[int]
    machine: MachineInfo
    versions: dict[str, str]
    git_commit: str
    section_seconds: dict[str, float] = Field(default_factory=dict)
    #: sections that raised, "<n>.<name>" -> the error; their figures are missing
    errors: dict[str, str] = Field(default_factory=dict)
    figures: list[Figure]

    def missed(self) -> list[Figure]:
        return [f for f in self.figures if f.passed is False]


def total_memory_bytes() -> int | None:
    """MemTotal from /proc/meminfo (Linux); None elsewhere."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def machine_info() -> MachineInfo:
    return MachineInfo(
        cpu_count=os.cpu_count() or 1,
        platform=platform.platform(),
        processor=platform.machine(),
        python=sys.version.split()[0],
        total_memory_bytes=total_memory_bytes(),
    )


def report_path(bench_dir: Path, started_at: datetime) -> Path:
    """`<bench_dir>/<YYYYmmdd-HHMMSS>.json`, never overwriting an earlier report."""
    stem = started_at.strftime("%Y%m%d-%H%M%S")
    path = bench_dir / f"{stem}.json"
    suffix = 1
    while path.exists():
        path = bench_dir / f"{stem}-{suffix}.json"
        suffix += 1
    return path


def write_report(report: BenchReport, bench_dir: Path) -> Path:
    bench_dir.mkdir(parents=True, exist_ok=True)
    path = report_path(bench_dir, report.started_at)
    path.write_text(report.model_dump_json(indent=2) + "\n")
    return path


def format_value(value: float | None) -> str:
    if value is None:
        return "n/a"
    if value == int(value) and abs(value) < 1e12:
        return f"{int(value):,}"
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:,.0f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def render_table(figures: Sequence[Figure]) -> str:
    """One fixed-width table: section, figure, value, unit, target, result."""
    header = ("sec", "figure", "value", "unit", "target", "result")
    rows = [header] + [
        (
            str(f.section),
            f.name,
            format_value(f.value),
            f.unit,
            f.target.describe() if f.target else "",
            {True: "PASS", False: "MISS", None: ""}[f.passed] if f.target else "",
        )
        for f in figures
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    right = {2}  # values line up on the right
    lines = []
    for n, row in enumerate(rows):
        cells = [cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
