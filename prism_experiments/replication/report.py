"""The replication's report directory: report.md, report.html (the forest plot first), forest.png, verdicts.csv,
findings.csv, seeds.csv, and the console summary. The headline counts evidence claims only; consistency checks are
shown apart and never counted."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

import pandas as pd

from prism_experiments.analysis.field_sections import VERDICTS_CSV
from prism_experiments.analysis.report import format_number, format_p, markdown_table
from prism_experiments.replication.forest import FOREST_PNG, forest_figure
from prism_experiments.replication.model import NOT_RUN_FULL, SMOKE, ClaimResult
from prism_experiments.replication.suite import SuiteResult
from prism_experiments.replication.verdicts import ALPHA, POWER, headline

FINDINGS_CSV = "findings.csv"
SEEDS_CSV = "seeds.csv"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
VERDICT_COLUMNS: tuple[str, ...] = (
    "finding", "claim", "role", "kind", "verdict", "metric", "published", "verification", "how_it_could_fail",
    "sign", "low", "high", "margin", "margin_reason", "n_seeds", "effect", "ci_low", "ci_high", "ci_method", "x_mean",
    "y_mean", "p_value", "p_holm", "seeds_80", "seeds_80_normal", "reason",
)  # fmt: skip
EVIDENCE_HEADERS = ["claim", "verdict", "effect (95% CI)", "against", "p / p_holm",
                    f"seeds (for power {POWER:g})", "verified in", "why"]  # fmt: skip
CONSISTENCY_HEADERS = ["claim", "verdict", "effect (95% CI)", "against", "p", "seeds", "why it cannot fail", "why"]


def verdict_table(result: SuiteResult) -> pd.DataFrame:
    """One row per claim (VERDICT_COLUMNS)."""
    rows = [{key: value for key, value in asdict(r).items() if key != "values"} for r in result.results]
    return pd.DataFrame(rows).reindex(columns=list(VERDICT_COLUMNS))


def finding_table(result: SuiteResult) -> pd.DataFrame:
    """One row per finding: its verdict (from its evidence claims), title, experiment file, arms and seeds; at
    --full, then one per finding without a full size, "not run at --full size" and no seeds."""
    return pd.DataFrame(
        [
            {"finding": f.name, "verdict": result.verdicts[f.name], "title": f.title,
             "experiment": f"conf/experiment/{f.experiment}.yaml", "arms": ", ".join(a.name for a in f.arms),
             "seeds": result.options.seeds_of(f)}
            for f in result.findings
        ] + [
            {"finding": f.name, "verdict": NOT_RUN_FULL, "title": f.title,
             "experiment": f"conf/experiment/{f.experiment}.yaml", "arms": ", ".join(a.name for a in f.arms),
             "seeds": 0}
            for f in result.not_run
        ]
    )  # fmt: skip


def full_size_statement(result: SuiteResult) -> str:
    """At --full: what ran at which size, where, and which findings were left out (empty otherwise)."""
    if not result.options.full:
        return ""
    sizes = "; ".join(f"{f.name}: {' '.join(f.full_overrides)}" for f in result.findings)
    left_out = ", ".join(f.name for f in result.not_run)
    return (
        f"--full ran only the findings with a full size, at that size ({sizes}), in the MLflow experiment "
        "replication_full, apart from the runs at the experiment files' size."
        + (f" {NOT_RUN_FULL.capitalize()} (no full size; not judged, their evidence claims count as p = 1 in the "
           f"family): {left_out}." if left_out else "")
    )  # fmt: skip


def family_statement(result: SuiteResult) -> str:
    """The one family every evidence verdict is adjusted in, and how consistency checks are decided."""
    return (
        f"Family: Holm (1979) over the {result.family_size} evidence claims of replication set v{result.version} "
        "(every evidence claim of every finding, tested in this run or not; an untested claim counts as p = 1, so a "
        f"partial run is never more permissive than the whole suite); an evidence claim holds when p_holm < "
        f"{ALPHA:g}. Consistency checks (inputs, truths by construction, identities) are decided on their raw p < "
        f"{ALPHA:g}, outside the family, and never count as replication. Contrasts: two-sided paired Wilcoxon "
        "signed-rank over seeds, and the effect must have the published sign. Bands: both one-sided Wilcoxon tests "
        "against the band's edges. Equivalences: both one-sided Wilcoxon tests of the paired difference against "
        "−margin and +margin (two one-sided tests, Schuirmann 1987). Effects with 95% BCa bootstrap CIs over seeds; "
        f"seeds for power {POWER:g} simulated through the same test at alpha / {result.family_size} (evidence) or "
        "alpha (consistency)."
    )


def seeds_text(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return "> 100" if math.isinf(value) else f"{value:.0f}"


def reference_text(r: ClaimResult) -> str:
    """What the effect is read against: the published sign (contrast), the band, or ±margin (equivalence)."""
    if r.kind == "contrast":
        return "< 0 (published sign)" if r.sign < 0 else "> 0 (published sign)"
    if r.kind == "equivalence":
        return f"±{format_number(r.margin)} (margin)"
    if math.isnan(r.high):
        return f">= {format_number(r.low)}"
    if math.isnan(r.low):
        return f"<= {format_number(r.high)}"
    return f"[{format_number(r.low)}, {format_number(r.high)}]"


def effect_text(r: ClaimResult) -> str:
    return f"{format_number(r.effect)} ({format_number(r.ci_low)} to {format_number(r.ci_high)})"


def claim_name(r: ClaimResult) -> str:
    return f"{r.finding} · {r.claim}"


def evidence_rows(results: Sequence[ClaimResult]) -> list[list[object]]:
    return [[claim_name(r), r.verdict, effect_text(r), reference_text(r),
             f"{format_p(r.p_value)} / {format_p(r.p_holm)}", f"{r.n_seeds} ({seeds_text(r.seeds_80)})",
             r.verification, r.reason or "–"] for r in results if r.evidence]  # fmt: skip


def consistency_rows(results: Sequence[ClaimResult]) -> list[list[object]]:
    return [[claim_name(r), r.verdict, effect_text(r), reference_text(r), format_p(r.p_value), r.n_seeds,
             r.how_it_could_fail, r.reason or "–"] for r in results if not r.evidence]  # fmt: skip


def headline_text(result: SuiteResult) -> str:
    """The report's first sentence: evidence claims reproduced, consistency checks that hold (never counted)."""
    return headline(result.results)


def render_markdown(result: SuiteResult, generated: datetime, run_id: str | None) -> str:
    """The whole report.md."""
    quick = result.options.quick
    lines = [
        f"# Replication suite v{result.version}"
        + (" — SMOKE SIZE (--quick): no verdicts" if quick else "")
        + (" — FULL SIZE (--full)" if result.options.full else ""),
        "",
        f"**{headline_text(result)}.**",
        "",
        f"![Forest plot of every claim]({FOREST_PNG})",
        "",
        FOREST_CAPTION,
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
    if result.options.full:
        lines += [f"**{full_size_statement(result)}**", ""]
    if result.failed_sweeps:
        lines += ["Sweeps that failed (their finished runs are used):", "",
                  *[f"- `{c}`" for c in result.failed_sweeps], ""]  # fmt: skip
    lines += ["## Findings", "", "A finding's verdict is its weakest evidence claim's; consistency checks never count.",
              "", markdown_table(
        ["finding", "verdict", "arms", "seeds", "experiment"],
        [[r.finding, r.verdict, r.arms, r.seeds, r.experiment] for r in finding_table(result).itertuples()],
    ), "", f"## Evidence claims (Holm over {result.family_size})", "",
              markdown_table(EVIDENCE_HEADERS, evidence_rows(result.results)), "",
              "## Consistency checks (raw p, outside the family, never counted as replication)", "",
              markdown_table(CONSISTENCY_HEADERS, consistency_rows(result.results)), "",
              "## What each claim measures", ""]  # fmt: skip
    for finding in result.findings:
        lines += [f"### {finding.title}", ""]
        for claim in finding.claims:
            lines += [
                f"- **{claim.name}** ({claim.kind}, {claim.role}): {claim.metric}. Published: {claim.published}.",
                f"  Source: {claim.source.citation}. Its words: {claim.source.statement} "
                f"(verified in: {claim.source.verification}; {claim.source.checked_at}).",
                f"  {'How it could fail' if claim.evidence else 'Why it cannot fail'}: {claim.how_it_could_fail}",
            ]
            if claim.kind == "equivalence":
                lines.append(f"  Margin ±{claim.margin:.3g}: {claim.margin_reason}")
        figures = result.figures.get(finding.name, {})
        if figures:
            lines += ["", "Descriptive figures (means over seeds): "
                      + "; ".join(f"{k} {format_number(v)}" for k, v in figures.items()) + "."]  # fmt: skip
        lines.append("")
    return "\n".join(lines)


FOREST_CAPTION = (
    "Every claim against what it is read against: a contrast against 0, a band against its shaded edges, an "
    "equivalence against its shaded ±margin. Each row has its own x axis, in the claim's own units. The colour is "
    "the verdict; an open marker does not hold."
)


#: the claim tables: full width, cells top-aligned, numbers never wrapped, the long text columns given room
CLAIM_TABLE_STYLE = (
    "figure.forest{margin:1rem 0}figure.forest img{max-width:100%;height:auto;border:1px solid #eee}"
    "table.claims td{vertical-align:top}table.claims td.num{white-space:nowrap}"
    "table.evidence td:nth-child(8),table.consistency td:nth-child(7){min-width:16rem}"
    "table.consistency td:nth-child(8){min-width:8rem}p.headline{font-size:1.1rem}"
)


def render_html(result: SuiteResult, generated: datetime, run_id: str | None, forest: Path | None = None) -> str:
    """report.html: the headline, the forest plot (`forest`, embedded), then the tables (evidence, then consistency),
    every text column left-aligned."""
    from prism_experiments.analysis.html_report import STYLE, data_uri, table

    quick = result.options.quick
    title = f"Replication suite v{result.version}" + (" (smoke size: no verdicts)" if quick else "")
    title += " (full size: --full)" if result.options.full else ""
    logged = f"; MLflow run {run_id} (prism.kind=replication)" if run_id else "; not logged to MLflow"
    # numbers right-aligned, every text column (verdicts, sources, the reasons) left-aligned
    evidence_numeric = {2, 4, 5}
    consistency_numeric = {2, 4, 5}
    parts = [
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{STYLE}{CLAIM_TABLE_STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
        f'<p class="headline"><strong>{html.escape(headline_text(result))}.</strong></p>',
        f'<p class="muted">Generated {generated:%Y-%m-%d %H:%M:%S} by prism-replicate{html.escape(logged)}; '
        f"{len(result.run_ids)} simulation runs read. What each verdict supports: docs/validation.md.</p>"
        + (f"\n<p><strong>{html.escape(full_size_statement(result))}</strong></p>" if result.options.full else ""),
        "" if forest is None else
        f'<figure class="forest"><img src="{data_uri(forest)}" alt="Forest plot of every claim" '
        f'data-source="{html.escape(forest.name)}">'
        f"<figcaption>{html.escape(FOREST_CAPTION)}</figcaption></figure>",
        f'<h2>Evidence claims (Holm over {result.family_size})</h2>',
        table(EVIDENCE_HEADERS, evidence_rows(result.results), numeric_columns=evidence_numeric,
              attrs=' class="claims evidence"'),
        "<h2>Consistency checks</h2>",
        '<p class="muted">Inputs, truths by construction and identities: run and shown, decided on their raw p, '
        "never counted as replication.</p>",
        table(CONSISTENCY_HEADERS, consistency_rows(result.results), numeric_columns=consistency_numeric,
              attrs=' class="claims consistency"'),
        "<h2>Findings</h2>",
        table(["finding", "verdict", "arms", "seeds", "experiment"],
              [[r.finding, r.verdict, r.arms, r.seeds, r.experiment] for r in finding_table(result).itertuples()],
              numeric_columns={3}),
        f'<p class="muted">{html.escape(family_statement(result))}</p>',
        "</body></html>",
    ]  # fmt: skip
    return "\n".join(parts)


def write_report(directory: Path, result: SuiteResult, generated: datetime, run_id: str | None) -> Path:
    """Write the report directory; returns report.md's path."""
    directory.mkdir(parents=True, exist_ok=True)
    verdict_table(result).to_csv(directory / VERDICTS_CSV, index=False)
    finding_table(result).to_csv(directory / FINDINGS_CSV, index=False)
    result.seed_table.to_csv(directory / SEEDS_CSV, index=False)
    title = f"Replication set v{result.version}: each claim's effect with its 95% CI, against its reference"
    forest = forest_figure(result.results, title, result.family_size, directory / FOREST_PNG)
    report = directory / REPORT_MD
    report.write_text(render_markdown(result, generated, run_id), encoding="utf-8")
    (directory / REPORT_HTML).write_text(render_html(result, generated, run_id, forest), encoding="utf-8")
    return report


def console_summary(result: SuiteResult, directory: Path, run_id: str | None) -> str:
    """A few lines: the headline, each finding's verdict and its claims (evidence or consistency), the report, and
    the family."""
    lines = [f"replication set v{result.version}: {headline_text(result)}"]  # a smoke run's headline says so
    for finding in result.findings:
        lines.append(f"  {finding.name:<18} {result.verdicts[finding.name]}")
        for r in (r for r in result.results if r.finding == finding.name):
            p = f"p_holm {format_p(r.p_holm)}" if r.evidence else f"p {format_p(r.p_value)}"
            detail = (f"effect {format_number(r.effect)} [{format_number(r.ci_low)}, {format_number(r.ci_high)}] "
                      f"against {reference_text(r)}, {p}, {r.n_seeds} seeds, {seeds_text(r.seeds_80)} for power "
                      f"{POWER:g}") if r.tested else r.reason  # fmt: skip
            role = "evidence" if r.evidence else "consistency"
            lines.append(f"    {r.claim:<24} [{role}] {r.verdict if r.verdict != SMOKE else 'smoke'}: {detail}")
    for finding in result.not_run:
        lines.append(f"  {finding.name:<18} {NOT_RUN_FULL}")
    lines.append(f"Holm over the {result.family_size} evidence claims of set v{result.version} (consistency checks: "
                 f"raw p, never counted); report: {directory / REPORT_MD}")  # fmt: skip
    if run_id:
        lines.append(f"MLflow run {run_id} (prism.kind=replication)")
    return "\n".join(lines)
