"""The report directory: report.md, results.csv (one row per metric x pair), supporting CSVs, PNG figures."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pandas as pd

from prism_experiments.analysis.compare import Comparison
from prism_experiments.analysis.figures import ccdf_figure, metric_figure

FIGURES_DIR = "figures"
CCDF_FIGURE = "cascade_size_ccdf.png"
COMPARED_RUNS_FILE = "compared_runs.txt"
CONSOLE_EXCLUDED_LINES = 10


@dataclass(frozen=True)
class ReportContext:
    """What the report says about where its runs came from."""

    experiment: str
    generated_at: datetime
    tracking_uri: str
    requested_sweep_id: str | None
    sweep_ids: tuple[str, ...]
    condition_keys: tuple[str, ...]
    seed_tracking_keys: tuple[str, ...]
    excluded: pd.DataFrame
    warnings: tuple[str, ...]
    analysis_run_id: str | None


@dataclass(frozen=True)
class CascadeComparison:
    """Pooled cascade sizes (condition, run_id, size) and their pairwise KS table."""

    pooled: pd.DataFrame
    ks: pd.DataFrame


@dataclass(frozen=True)
class ReportFiles:
    directory: Path
    report: Path
    results: Path
    tables: tuple[Path, ...]
    figures: tuple[Path, ...]


def safe_name(name: str) -> str:
    """`name` usable as one path component."""
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", name).strip("._") or "unnamed"


def format_number(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def format_p(value: float) -> str:
    if value is None or math.isnan(value):
        return "–"
    return f"{value:.1e}" if value < 1e-4 else f"{value:.3g}"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(value: object) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(map(cell, headers)) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in rows]
    return "\n".join(lines)


def reading(row: pd.Series, confidence: float) -> str:
    """One plain-English sentence for a significant pairwise result."""
    difference = float(row["difference"])
    direction = "higher than" if difference > 0 else "lower than" if difference < 0 else "different from"
    effect = "r" if row["effect_size_name"] == "rank-biserial r" else "Cliff's delta"
    test = "Wilcoxon" if row["design"] == "paired" else "Mann-Whitney"
    return (
        f"{row['metric']}: {row['condition_a']} is {direction} {row['condition_b']} by "
        f"{format_number(abs(difference))} ({confidence:.0%} CI {format_number(row['diff_ci_low'])} to "
        f"{format_number(row['diff_ci_high'])}; {test} p_holm = {format_p(row['p_holm'])}, "
        f"{effect} = {row['effect_size']:.2f})"
    )


def significant_readings(comparison: Comparison) -> list[str]:
    significant = comparison.pairwise.loc[comparison.pairwise["significant"].astype(bool)]
    return [reading(row, comparison.settings.confidence) for _, row in significant.iterrows()]


def design_section(comparison: Comparison) -> list[str]:
    design, settings = comparison.design, comparison.settings
    k = len(comparison.conditions)
    omnibus = (
        f"{design.omnibus_test} across the {k} conditions"
        if k >= 3
        else f"none separate: with 2 conditions the omnibus is the {design.pairwise_test} test itself"
    )
    return [
        "## Design",
        "",
        f"**{design.name}**: {'; '.join(design.reasons)}.",
        "",
        f"- Omnibus: {omnibus}.",
        f"- Pairwise: two-sided {design.pairwise_test}; effect size {design.effect_size} "
        + ("(Kerby 2014)." if design.paired else "(Cliff 1993)."),
        "- Multiple comparisons: Holm (1979) over the pairwise tests of each metric (not across metrics); "
        f"significant means p_holm < {settings.alpha:g}.",
        f"- Confidence intervals: {settings.confidence:.0%} bootstrap (scipy.stats.bootstrap, BCa, percentile "
        f"where BCa is undefined; {settings.n_resamples} resamples, seed {settings.bootstrap_seed}) of each "
        "condition mean and of each difference"
        + (" (mean of the per-seed differences)." if design.paired else " (difference of means)."),
        "- Numeric factors with at least 3 levels: Spearman trend over the levels, within each combination of "
        "the other factors"
        + (", and Page's L test (Page 1963, two-sided) on the seeds, which uses the pairing" if design.paired else "")
        + " (raw p, not adjusted).",
        "",
    ]


def runs_section(context: ReportContext, comparison: Comparison, n_runs: int) -> list[str]:
    keys = ", ".join(f"`{key}`" for key in context.condition_keys) or "(none)"
    sweeps = ", ".join(context.sweep_ids) or "(no sweep id)"
    lines = [
        "## Runs",
        "",
        f"- Tracking store: `{context.tracking_uri}`; experiment `{context.experiment}`"
        + (f"; sweep `{context.requested_sweep_id}`." if context.requested_sweep_id else f"; sweeps: {sweeps}."),
        f"- {n_runs} FINISHED simulation runs compared in {len(comparison.conditions)} conditions, "
        f"defined by {keys}.",
        "- Runs per condition: "
        + "; ".join(f"{c}: {n}" for c, n in comparison.design.group_sizes.items())
        + f"; seeds: {', '.join(map(str, comparison.design.seeds))}.",
    ]
    if context.seed_tracking_keys:
        lines.append(f"- Params that follow the seed, not used as conditions: {', '.join(context.seed_tracking_keys)}.")
    excluded = context.excluded
    if len(excluded):
        lines += ["", f"Excluded runs ({len(excluded)}):", ""]
        lines.append(
            markdown_table(
                ["run id", "status", "seed", "condition", "reason"],
                [
                    [row.run_id, row.status, "–" if pd.isna(row.seed) else int(row.seed), row.condition or "–",
                     row.reason]
                    for row in excluded.itertuples(index=False)
                ],  # fmt: skip
            )
        )
    else:
        lines.append("- No runs excluded.")
    return [*lines, ""]


def metric_section(comparison: Comparison, metric: str, figure: str) -> list[str]:
    settings = comparison.settings
    ci_header = f"{settings.confidence:.0%} CI"
    omnibus = comparison.omnibus.loc[comparison.omnibus["metric"] == metric].iloc[0]
    lines = [
        f"### {metric}",
        "",
        f"Omnibus: {omnibus['test']}, statistic = {format_number(omnibus['statistic'])}, "
        f"p = {format_p(omnibus['p_value'])} (n = {omnibus['n']})"
        + (f"; {omnibus['note']}" if isinstance(omnibus["note"], str) and omnibus["note"] else "")
        + ".",
        "",
    ]
    summary = comparison.summary.loc[comparison.summary["metric"] == metric]
    lines.append(
        markdown_table(
            ["condition", "n", "mean", ci_header, "sd"],
            [
                [row.condition, row.n, format_number(row.mean),
                 f"{format_number(row.ci_low)} to {format_number(row.ci_high)}", format_number(row.sd)]
                for row in summary.itertuples(index=False)
            ],  # fmt: skip
        )
    )
    pairs = comparison.pairwise.loc[comparison.pairwise["metric"] == metric]
    effect = "r" if comparison.design.paired else "Cliff's δ"
    tests = f"{len(pairs)} test" + ("s" if len(pairs) != 1 else "")
    lines += ["", f"Pairwise ({comparison.design.pairwise_test}, Holm over {tests}):", ""]
    lines.append(
        markdown_table(
            ["A", "B", "n", "mean A − B", ci_header, "statistic", "p", "p_holm", effect, "note"],
            [
                [row.condition_a, row.condition_b,
                 row.n_pairs if comparison.design.paired else f"{row.n_a}/{row.n_b}",
                 format_number(row.difference),
                 f"{format_number(row.diff_ci_low)} to {format_number(row.diff_ci_high)}",
                 format_number(row.statistic), format_p(row.p_value),
                 format_p(row.p_holm) + (" *" if row.significant else ""),
                 format_number(row.effect_size), row.note or ""]
                for row in pairs.itertuples(index=False)
            ],  # fmt: skip
        )
    )
    trends = comparison.trends.loc[comparison.trends["metric"] == metric]
    if len(trends):
        lines.append("")
        for row in trends.itertuples(index=False):
            lines.append(
                f"Trend over `{row.factor}` ({row.stratum}): Spearman ρ = {format_number(row.rho)}, "
                f"p = {format_p(row.p_value)} (n = {row.n}, {row.n_levels} levels)"
                + (
                    f"; Page L = {format_number(row.page_l)}, two-sided p = {format_p(row.page_p)} "
                    f"over {format_number(row.page_n_seeds)} seeds"
                    if comparison.design.paired
                    else ""
                )
                + (f"; {row.note}" if isinstance(row.note, str) and row.note else "")
                + "."
            )
    return [*lines, "", f"![{metric}]({figure})", ""]


def cascade_section(cascades: CascadeComparison | None, confidence_alpha: float) -> list[str]:
    lines = ["## Cascade sizes", ""]
    if cascades is None:
        return [*lines, "Not compared (--no-cascades).", ""]
    counts = cascades.pooled.groupby("condition")["size"].size()
    lines += [
        f"Cascade sizes pooled per condition from each run's `tables/cascades.parquet` "
        f"({', '.join(f'{c} {n}' for c, n in counts.items()) or 'no cascades'}). Two-sample KS test per pair, "
        "Holm over the pairs. Cascades of one run share its population and graph, so they are not independent "
        "and these p-values are optimistic; read them next to the per-run cascade metrics above.",
        "",
        markdown_table(
            ["A", "B", "n A", "n B", "KS D", "p", "p_holm", "note"],
            [
                [row.condition_a, row.condition_b, row.n_a, row.n_b, format_number(row.ks_statistic),
                 format_p(row.p_value), format_p(row.p_holm) + (" *" if row.p_holm < confidence_alpha else ""),
                 row.note or ""]
                for row in cascades.ks.itertuples(index=False)
            ],  # fmt: skip
        ),
        "",
        f"![cascade size CCDF]({FIGURES_DIR}/{CCDF_FIGURE})",
        "",
    ]
    return lines


def render_markdown(
    context: ReportContext,
    comparison: Comparison,
    n_runs: int,
    figures: dict[str, str],
    cascades: CascadeComparison | None,
) -> str:
    """The whole report.md text; `figures` maps metric -> relative PNG path."""
    readings = significant_readings(comparison)
    warnings = [*context.warnings, *comparison.design.warnings, *comparison.warnings]
    lines = [
        f"# Comparison of conditions: {context.experiment}",
        "",
        f"Generated {context.generated_at:%Y-%m-%d %H:%M:%S} by `prism-compare`"
        + (f"; MLflow analysis run `{context.analysis_run_id}`." if context.analysis_run_id else "."),
        "",
        *runs_section(context, comparison, n_runs),
        *design_section(comparison),
        "## Warnings",
        "",
        *([f"- {warning}" for warning in warnings] or ["- None."]),
        "",
        f"## Significant results (p_holm < {comparison.settings.alpha:g})",
        "",
        *([f"- {line}" for line in readings] or ["- None of the pairwise differences is significant."]),
        "",
        "## Metrics",
        "",
    ]
    for metric in comparison.metrics:
        lines += metric_section(comparison, metric, figures[metric])
    lines += cascade_section(cascades, comparison.settings.alpha)
    return "\n".join(lines)


def write_report(
    directory: Path,
    context: ReportContext,
    comparison: Comparison,
    tidy: pd.DataFrame,
    cascades: CascadeComparison | None,
) -> ReportFiles:
    """Write report.md, results.csv, conditions/omnibus/trends/runs CSVs and the PNG figures into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / FIGURES_DIR).mkdir(exist_ok=True)
    figures: dict[str, str] = {}
    figure_paths: list[Path] = []
    for metric in comparison.metrics:
        relative = f"{FIGURES_DIR}/{safe_name(metric)}.png"
        values = tidy[["condition", "seed", metric]].rename(columns={metric: "value"})
        figure_paths.append(
            metric_figure(values, comparison.conditions, metric, comparison.design.paired, directory / relative)
        )
        figures[metric] = relative
    if cascades is not None:
        figure_paths.append(ccdf_figure(cascades.pooled, comparison.conditions, directory / FIGURES_DIR / CCDF_FIGURE))

    results = directory / "results.csv"
    comparison.pairwise.to_csv(results, index=False)
    tables = {
        "conditions.csv": comparison.summary,
        "omnibus.csv": comparison.omnibus,
        "trends.csv": comparison.trends,
        "runs.csv": tidy.reindex(columns=["run_id", "seed", "sweep_id", "condition", *comparison.metrics]),
        "excluded_runs.csv": context.excluded,
    }
    if cascades is not None:
        tables["cascade_ks.csv"] = cascades.ks
    table_paths = []
    for name, table in tables.items():
        table.to_csv(directory / name, index=False)
        table_paths.append(directory / name)
    compared = directory / COMPARED_RUNS_FILE
    compared.write_text("\n".join(tidy["run_id"].astype(str)) + "\n")
    table_paths.append(compared)

    report = directory / "report.md"
    report.write_text(render_markdown(context, comparison, len(tidy), figures, cascades), encoding="utf-8")
    return ReportFiles(directory, report, results, tuple(table_paths), tuple(figure_paths))


def console_summary(context: ReportContext, comparison: Comparison, n_runs: int, files: ReportFiles) -> str:
    """A few lines for the terminal: what was compared, what is significant, where the report is."""
    readings = significant_readings(comparison)
    n_warnings = len(context.warnings) + len(comparison.design.warnings) + len(comparison.warnings)
    lines = [
        f"prism-compare: {context.experiment}: {n_runs} runs, {len(comparison.conditions)} conditions, "
        f"{comparison.design.name}",
        f"excluded runs: {len(context.excluded)}"
        + "".join(
            f"\n  {row.run_id} ({row.reason})"
            for row in context.excluded.head(CONSOLE_EXCLUDED_LINES).itertuples(index=False)
        )
        + (
            f"\n  ... and {len(context.excluded) - CONSOLE_EXCLUDED_LINES} more (excluded_runs.csv)"
            if len(context.excluded) > CONSOLE_EXCLUDED_LINES
            else ""
        ),
        f"significant after Holm (alpha {comparison.settings.alpha:g}): {len(readings)} of {len(comparison.pairwise)}",
        *[f"  {line}" for line in readings],
        f"warnings: {n_warnings} (listed in the report)",
        f"report: {files.report}",
    ]
    if context.analysis_run_id:
        lines.append(f"MLflow analysis run: {context.analysis_run_id}")
    return "\n".join(lines)
