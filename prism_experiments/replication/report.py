"""The replication's report directory: report.md, report.html, verdicts.csv, findings.csv, seeds.csv, and the
console summary."""

from __future__ import annotations

import math
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

import pandas as pd

from prism_experiments.analysis.field_sections import VERDICTS_CSV, standalone_page
from prism_experiments.analysis.report import format_number, format_p, markdown_table
from prism_experiments.replication.model import SMOKE
from prism_experiments.replication.suite import SuiteResult
from prism_experiments.replication.verdicts import ALPHA, POWER

FINDINGS_CSV = "findings.csv"
SEEDS_CSV = "seeds.csv"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
VERDICT_COLUMNS: tuple[str, ...] = (
    "finding", "claim", "kind", "verdict", "metric", "published", "verification", "calibration_input", "n_seeds",
    "effect", "ci_low", "ci_high", "ci_method", "x_mean", "y_mean", "p_value", "p_holm", "seeds_80",
    "seeds_80_normal", "reason",
)  # fmt: skip


def verdict_table(result: SuiteResult) -> pd.DataFrame:
    """One row per claim (VERDICT_COLUMNS)."""
    rows = [{key: value for key, value in asdict(r).items() if key != "values"} for r in result.results]
    return pd.DataFrame(rows).reindex(columns=list(VERDICT_COLUMNS))


def finding_table(result: SuiteResult) -> pd.DataFrame:
    """One row per finding: its verdict, title, experiment file, arms and seeds."""
    return pd.DataFrame(
        [
            {"finding": f.name, "verdict": result.verdicts[f.name], "title": f.title,
             "experiment": f"conf/experiment/{f.experiment}.yaml", "arms": ", ".join(a.name for a in f.arms),
             "seeds": result.options.seeds_of(f)}
            for f in result.findings
        ]
    )  # fmt: skip


def family_statement(result: SuiteResult) -> str:
    """The one family every verdict is adjusted in, stated as the report states it."""
    return (
        f"Family: Holm (1979) over the {result.family_size} claims of replication set v{result.version} (every "
        f"claim of every finding, tested in this run or not; an untested claim counts as p = 1, so a partial run "
        f"is never more permissive than the whole suite); a claim holds when p_holm < {ALPHA:g}. Contrasts: "
        "two-sided paired Wilcoxon signed-rank over seeds, and the effect must have the published sign. Bands: "
        "both one-sided Wilcoxon tests against the band's edges (two one-sided tests). Effects with 95% BCa "
        f"bootstrap CIs over seeds; seeds for power {POWER:g} simulated through the same test at alpha / "
        f"{result.family_size}."
    )


def seeds_text(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return "> 100" if math.isinf(value) else f"{value:.0f}"


def render_markdown(result: SuiteResult, generated: datetime, run_id: str | None) -> str:
    """The whole report.md."""
    quick = result.options.quick
    table = verdict_table(result)
    lines = [
        f"# Replication suite v{result.version}" + (" — SMOKE SIZE (--quick): no verdicts" if quick else ""),
        "",
        f"Generated {generated:%Y-%m-%d %H:%M:%S} by `prism-replicate`"
        + (f"; MLflow run `{run_id}` (prism.kind=replication)." if run_id else "; not logged to MLflow.")
        + f" {len(result.run_ids)} simulation runs read. What each verdict supports: docs/validation.md.",
        "",
        family_statement(result),
        "",
    ]
    if quick:
        lines += ["**--quick ran every finding at a smoke size to check the plumbing. Nothing below is a "
                  "verdict.**", ""]  # fmt: skip
    if result.failed_sweeps:
        lines += ["Sweeps that failed (their finished runs are used):", "",
                  *[f"- `{c}`" for c in result.failed_sweeps], ""]  # fmt: skip
    lines += ["## Findings", "", markdown_table(
        ["finding", "verdict", "arms", "seeds", "experiment"],
        [[r.finding, r.verdict, r.arms, r.seeds, r.experiment] for r in finding_table(result).itertuples()],
    ), "", "## Claims", ""]  # fmt: skip
    lines.append(
        markdown_table(
            ["finding", "claim", "verdict", "effect (95% CI)", "p", "p_holm", "seeds", f"seeds for power {POWER:g}",
             "verified in", "why"],
            [[r.finding, r.claim + (" (calibration input)" if r.calibration_input else ""), r.verdict,
              f"{format_number(r.effect)} ({format_number(r.ci_low)} to {format_number(r.ci_high)})",
              format_p(r.p_value), format_p(r.p_holm), r.n_seeds, seeds_text(r.seeds_80), r.verification,
              r.reason or "–"] for r in table.itertuples()],
        )
    )  # fmt: skip
    lines += ["", "## What each claim measures", ""]
    for finding in result.findings:
        lines += [f"### {finding.title}", ""]
        for claim in finding.claims:
            lines += [
                f"- **{claim.name}** ({claim.kind}): {claim.metric}. Published: {claim.published}.",
                f"  Source: {claim.source.citation}. Its words: {claim.source.statement} "
                f"(verified in: {claim.source.verification}; {claim.source.checked_at}).",
            ]
        figures = result.figures.get(finding.name, {})
        if figures:
            lines += ["", "Descriptive figures (means over seeds): "
                      + "; ".join(f"{k} {format_number(v)}" for k, v in figures.items()) + "."]  # fmt: skip
        lines.append("")
    return "\n".join(lines)


def write_report(directory: Path, result: SuiteResult, generated: datetime, run_id: str | None) -> Path:
    """Write the report directory; returns report.md's path."""
    directory.mkdir(parents=True, exist_ok=True)
    verdict_table(result).to_csv(directory / VERDICTS_CSV, index=False)
    finding_table(result).to_csv(directory / FINDINGS_CSV, index=False)
    result.seed_table.to_csv(directory / SEEDS_CSV, index=False)
    report = directory / REPORT_MD
    report.write_text(render_markdown(result, generated, run_id), encoding="utf-8")
    title = f"Replication suite v{result.version}" + (" (smoke size: no verdicts)" if result.options.quick else "")
    (directory / REPORT_HTML).write_text(standalone_page(directory, title, family_statement(result)),
                                         encoding="utf-8")  # fmt: skip
    return report


def console_summary(result: SuiteResult, directory: Path, run_id: str | None) -> str:
    """A few lines: each finding's verdict, where the report is, and the family."""
    lines = [f"replication set v{result.version}" + (" — smoke size (--quick), not verdicts" if result.options.quick
                                                    else "") + ":"]  # fmt: skip
    for finding in result.findings:
        verdict = result.verdicts[finding.name]
        lines.append(f"  {finding.name:<18} {verdict}")
        for r in (r for r in result.results if r.finding == finding.name):
            detail = (f"effect {format_number(r.effect)} [{format_number(r.ci_low)}, {format_number(r.ci_high)}], "
                      f"p_holm {format_p(r.p_holm)}, {r.n_seeds} seeds, {seeds_text(r.seeds_80)} for power "
                      f"{POWER:g}") if r.tested else r.reason  # fmt: skip
            lines.append(f"    {r.claim:<24} {r.verdict if r.verdict != SMOKE else 'smoke'}: {detail}")
    lines.append(f"Holm over the {result.family_size} claims of set v{result.version}; report: {directory / REPORT_MD}")
    if run_id:
        lines.append(f"MLflow run {run_id} (prism.kind=replication)")
    return "\n".join(lines)
