"""The report directory: report.md, results.csv (one row per metric x pair), supporting CSVs, PNG figures."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from prism_experiments.analysis.compare import Comparison, ComparisonSettings
from prism_experiments.analysis.figures import ccdf_figure, forest_figure, metric_figure, series_figure
from prism_experiments.analysis.power import MAX_SEEDS, MDE_POWER, TARGET_POWERS
from prism_experiments.analysis.selection import empty_runs_line
from prism_experiments.analysis.step_series import REPORT_SERIES
from prism_experiments.deprecation import renamed

FIGURES_DIR = "figures"
CCDF_FIGURE = "cascade_size_ccdf.png"
COMPARED_RUNS_FILE = "compared_runs.txt"
CONSOLE_EXCLUDED_LINES = 10


@dataclass(frozen=True)
class ReportProvenance:
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
    #: `<model>: <verdict>` of each model the compared runs' LLM agents asked (docs/llm.md, "Fitness")
    llm_checks: tuple[str, ...] = ()


@dataclass(frozen=True)
class CascadeComparison:
    """Pooled cascade sizes (condition, run_id, size) and their pairwise KS table."""

    pooled: pd.DataFrame
    ks: pd.DataFrame


@dataclass(frozen=True)
class ReportFiles:
    """What `write_report` wrote; `figure_map` maps a figure key (figure_key) to its path relative to `directory`."""

    directory: Path
    report: Path
    results: Path
    tables: tuple[Path, ...]
    figures: tuple[Path, ...]
    figure_map: dict[str, str] = field(default_factory=dict)
    html: Path | None = None


def figure_key(kind: str, name: str = "") -> str:
    """`box/<metric>`, `forest/<metric>`, `series/<series>` or `ccdf`."""
    return f"{kind}/{name}" if name else kind


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


def reading(row: pd.Series, confidence: float, adjusted: str = "p_holm") -> str:
    """One plain-English sentence for a significant pairwise result (`adjusted`: the adjusted p column)."""
    difference = float(row["difference"])
    direction = "higher than" if difference > 0 else "lower than" if difference < 0 else "different from"
    effect = "r" if row["effect_size_name"] == "rank-biserial r" else "Cliff's delta"
    test = "Wilcoxon" if row["design"] == "paired" else "Mann-Whitney"
    return (
        f"{row['metric']}: {row['condition_a']} is {direction} {row['condition_b']} by "
        f"{format_number(abs(difference))} ({confidence:.0%} CI {format_number(row['diff_ci_low'])} to "
        f"{format_number(row['diff_ci_high'])}; {test} {adjusted} = {format_p(row[adjusted])}, "
        f"{effect} = {row['effect_size']:.2f})"
    )


def significant_readings(comparison: Comparison) -> list[str]:
    significant = comparison.pairwise.loc[comparison.pairwise["significant"].astype(bool)]
    adjusted = comparison.settings.adjusted_column
    return [reading(row, comparison.settings.confidence, adjusted) for _, row in significant.iterrows()]


#: the condition key of an A/A check (conf/experiment/aa.yaml): one config under labels the simulation never reads
AA_KEY = "arm"


def false_finding_budget(settings: ComparisonSettings, n_tests: int, n_metrics: int) -> str:
    """How many false findings this report can hold if no condition differs at all (the global null)."""
    alpha = settings.alpha
    if settings.family == "report":
        return (f"False-finding budget: if no condition differs, P(any significant line in this report) <= {alpha:g} "
                f"({'Holm' if settings.correction == 'holm' else 'BH'} over all {n_tests} tests).")  # fmt: skip
    expected = n_metrics * alpha
    anyone = 1.0 - (1.0 - alpha) ** n_metrics
    return (
        f"False-finding budget: the family is each metric, so if no condition differs this report holds up to "
        f"{alpha:g} false findings per metric, about {expected:.2g} over its {n_metrics} metrics (P(at least one) up "
        f"to {anyone:.2f} if the metrics were independent); --family report keeps P(any) <= {alpha:g}."
    )


def is_aa_check(condition_keys: Sequence[str]) -> bool:
    """True for an A/A comparison: the conditions differ only in `arm`, a label the simulation never reads."""
    return tuple(condition_keys) == (AA_KEY,)


AA_NOTE = (
    "A/A check: the conditions are one config under labels the simulation never reads; any significant line is a "
    "false positive, not a finding."
)


def correction_text(settings: ComparisonSettings, n_tests: int = 0, n_metrics: int = 0) -> str:
    """The multiple-comparisons line of the design section, with the report's false-finding budget."""
    method = "Holm (1979)" if settings.correction == "holm" else "Benjamini-Hochberg (1995, false discovery rate)"
    family = ("the pairwise tests of each metric (not across metrics)" if settings.family == "metric"
              else "every pairwise test in this report (all metrics together)")  # fmt: skip
    return (f"- Multiple comparisons: {method} over {family}; significant means {settings.adjusted_column} < "
            f"{settings.alpha:g}. {false_finding_budget(settings, n_tests, n_metrics)}")  # fmt: skip


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
        correction_text(settings, len(comparison.pairwise), len(comparison.metrics)),
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


def runs_section(provenance: ReportProvenance, comparison: Comparison, n_runs: int) -> list[str]:
    keys = ", ".join(f"`{key}`" for key in provenance.condition_keys) or "(none)"
    sweeps = ", ".join(provenance.sweep_ids) or "(no sweep id)"
    lines = [
        "## Runs",
        "",
        f"- Tracking store: `{provenance.tracking_uri}`; experiment `{provenance.experiment}`"
        + (f"; sweep `{provenance.requested_sweep_id}`." if provenance.requested_sweep_id else f"; sweeps: {sweeps}."),
        f"- {n_runs} FINISHED simulation runs compared in {len(comparison.conditions)} conditions, defined by {keys}.",
        "- Runs per condition: "
        + "; ".join(f"{c}: {n}" for c, n in comparison.design.group_sizes.items())
        + f"; seeds: {', '.join(map(str, comparison.design.seeds))}.",
    ]
    if provenance.seed_tracking_keys:
        lines.append(
            f"- Params that follow the seed, not used as conditions: {', '.join(provenance.seed_tracking_keys)}."
        )
    excluded = provenance.excluded
    if len(excluded):
        lines += ["", f"Excluded runs ({len(excluded)}):", ""]
        lines.append(
            markdown_table(
                ["run id", "status", "seed", "condition", "reason"],
                [
                    [
                        row.run_id,
                        row.status,
                        "–" if pd.isna(row.seed) else int(row.seed),
                        row.condition or "–",
                        row.reason,
                    ]
                    for row in excluded.itertuples(index=False)
                ],
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
                [
                    row.condition,
                    row.n,
                    format_number(row.mean),
                    f"{format_number(row.ci_low)} to {format_number(row.ci_high)}",
                    format_number(row.sd),
                ]
                for row in summary.itertuples(index=False)
            ],
        )
    )
    pairs = comparison.pairwise.loc[comparison.pairwise["metric"] == metric]
    effect = "r" if comparison.design.paired else "Cliff's δ"
    tests = f"{len(pairs)} test" + ("s" if len(pairs) != 1 else "")
    adjusted = settings.adjusted_column
    method = "Holm" if settings.correction == "holm" else "BH"
    over = f"{method} over {tests}"
    if settings.family == "report":
        over = f"{method} over all {len(comparison.pairwise)} tests of the report"
    lines += ["", f"Pairwise ({comparison.design.pairwise_test}, {over}):", ""]
    lines.append(
        markdown_table(
            ["A", "B", "n", "mean A − B", ci_header, "statistic", "p", adjusted, effect, "note"],
            [
                [
                    row.condition_a,
                    row.condition_b,
                    row.n_pairs if comparison.design.paired else f"{row.n_a}/{row.n_b}",
                    format_number(row.difference),
                    f"{format_number(row.diff_ci_low)} to {format_number(row.diff_ci_high)}",
                    format_number(row.statistic),
                    format_p(row.p_value),
                    format_p(getattr(row, adjusted)) + (" *" if row.significant else ""),
                    format_number(row.effect_size),
                    row.note or "",
                ]
                for row in pairs.itertuples(index=False)
            ],
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
                [
                    row.condition_a,
                    row.condition_b,
                    row.n_a,
                    row.n_b,
                    format_number(row.ks_statistic),
                    format_p(row.p_value),
                    format_p(row.p_holm) + (" *" if row.p_holm < confidence_alpha else ""),
                    row.note or "",
                ]
                for row in cascades.ks.itertuples(index=False)
            ],
        ),
        "",
        f"![cascade size CCDF]({FIGURES_DIR}/{CCDF_FIGURE})",
        "",
    ]
    return lines


def render_markdown(
    provenance: ReportProvenance,
    comparison: Comparison,
    n_runs: int,
    figures: dict[str, str],
    cascades: CascadeComparison | None,
) -> str:
    """The whole report.md text; `figures` maps metric -> relative PNG path."""
    readings = significant_readings(comparison)
    warnings = [*provenance.warnings, *comparison.design.warnings, *comparison.warnings]
    lines = [
        f"# Comparison of conditions: {provenance.experiment}",
        "",
        f"Generated {provenance.generated_at:%Y-%m-%d %H:%M:%S} by `prism-compare`"
        + (f"; MLflow analysis run `{provenance.analysis_run_id}`." if provenance.analysis_run_id else "."),
        "",
        *runs_section(provenance, comparison, n_runs),
        *design_section(comparison),
        *(
            ["## LLM fitness", "", *[f"- {line}" for line in provenance.llm_checks], ""]
            if provenance.llm_checks
            else []
        ),
        "## Warnings",
        "",
        *([f"- {warning}" for warning in warnings] or ["- None."]),
        "",
        f"## Significant results ({comparison.settings.adjusted_column} < {comparison.settings.alpha:g})",
        "",
        *([f"**{AA_NOTE}**", ""] if is_aa_check(provenance.condition_keys) else []),
        *([f"- {line}" for line in readings] or ["- None of the pairwise differences is significant."]),
        "",
        "## Metrics",
        "",
    ]
    for metric in comparison.metrics:
        lines += metric_section(comparison, metric, figures[metric])
    lines += cascade_section(cascades, comparison.settings.alpha)
    lines += power_section(comparison)
    return "\n".join(lines)


def format_seeds(value: float) -> str:
    """Seeds needed: an integer, `> cap` when not reached, `–` when undefined."""
    if value is None or math.isnan(value):
        return "–"
    return f"> {MAX_SEEDS}" if math.isinf(value) and value > 0 else f"{value:.0f}" if math.isfinite(value) else "∞"


def power_table_rows(power: pd.DataFrame) -> list[list[object]]:
    """The rows of the power table shown in report.md and by `prism-compare --power`."""
    return [
        [row.metric, row.condition_a, row.condition_b, format_number(row.difference), format_number(row.effect),
         f"{row.power_now_sim:.2f}" if not math.isnan(row.power_now_sim) else "–",
         format_number(row.mde_sim), format_number(row.mde_normal),
         *[f"{format_seeds(getattr(row, f'seeds_{p}_sim'))} ({format_seeds(getattr(row, f'seeds_{p}_rank'))})"
           for p in (round(t * 100) for t in TARGET_POWERS)],
         row.note or ""]
        for row in power.itertuples(index=False)
    ]  # fmt: skip


POWER_HEADERS = ("metric", "A", "B", "A − B", "effect", "power now", f"MDE ({MDE_POWER:.0%}) sim", "MDE normal",
                 *[f"seeds for {t:.0%} sim (normal/ARE)" for t in TARGET_POWERS], "note")  # fmt: skip


def power_console(comparison: Comparison) -> str:
    """`prism-compare --power`: the power table alone, as Markdown."""
    return "\n".join(power_section(comparison)[2:]).rstrip() or "no power figures (no pairs to compare)"


def power_section(comparison: Comparison) -> list[str]:
    """Minimum detectable effects and seeds needed per metric and pair (power.csv)."""
    power, settings = comparison.power, comparison.settings
    if power.empty:
        return []
    unit = "pairs of runs (seeds)" if comparison.design.paired else "runs per condition"
    effect = ("the observed difference A − B" if settings.effect is None
              else f"{settings.effect:g} sd (Cohen's {'d_z' if comparison.design.paired else 'd'})")  # fmt: skip
    alpha_test = power["alpha_test"].iloc[0]
    return [
        "## Power",
        "",
        f"Per test at alpha {alpha_test:.3g} (alpha / the {settings.correction} family size, conservative for "
        f"the step-wise correction). **MDE**: the smallest |A − B| detected with power {MDE_POWER:g} at the "
        f"current {unit}. **Seeds**: {unit} needed to detect {effect}; simulated (in brackets: the normal "
        f"approximation divided by the rank test's efficiency 3/π). Simulation: {settings.power_replicates} "
        "smoothed-bootstrap resamples of the pilot residuals, shifted by the effect, through the report's own "
        f"test; `> {MAX_SEEDS}`: not reached within {MAX_SEEDS}. All figures in `power.csv`.",
        "",
        markdown_table(POWER_HEADERS, power_table_rows(power)),
        "",
    ]


def write_report(
    directory: Path,
    provenance: ReportProvenance,
    comparison: Comparison,
    tidy: pd.DataFrame,
    cascades: CascadeComparison | None,
    bands: pd.DataFrame | None = None,
) -> ReportFiles:
    """Write report.md, results.csv, conditions/omnibus/trends/runs CSVs and the PNG figures into `directory`;
    `bands` (step_series.BAND_COLUMNS) adds the per-step series figures."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / FIGURES_DIR).mkdir(exist_ok=True)
    figure_map = write_figures(directory, comparison, tidy, cascades, bands)
    figures = {metric: figure_map[figure_key("box", metric)] for metric in comparison.metrics}
    figure_paths = [directory / relative for relative in figure_map.values()]

    results = directory / "results.csv"
    comparison.pairwise.to_csv(results, index=False)
    tables = {
        "conditions.csv": comparison.summary,
        "omnibus.csv": comparison.omnibus,
        "trends.csv": comparison.trends,
        "power.csv": comparison.power,
        "runs.csv": tidy.reindex(columns=["run_id", "seed", "sweep_id", "condition", *comparison.metrics]),
        "excluded_runs.csv": provenance.excluded,
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
    report.write_text(render_markdown(provenance, comparison, len(tidy), figures, cascades), encoding="utf-8")
    return ReportFiles(directory, report, results, tuple(table_paths), tuple(figure_paths), figure_map)


def write_figures(directory: Path, comparison: Comparison, tidy: pd.DataFrame, cascades: CascadeComparison | None,
                  bands: pd.DataFrame | None) -> dict[str, str]:  # fmt: skip
    """Every report figure under `directory/figures`, keyed by figure_key; paths relative to `directory`."""
    written: dict[str, str] = {}

    def target(key: str, name: str) -> Path:
        written[key] = f"{FIGURES_DIR}/{name}"
        return directory / written[key]

    for metric in comparison.metrics:
        values = tidy[["condition", "seed", metric]].rename(columns={metric: "value"})
        metric_figure(
            values,
            comparison.conditions,
            metric,
            comparison.design.paired,
            target(figure_key("box", metric), f"{safe_name(metric)}.png"),
        )
        pairs = comparison.pairwise.loc[comparison.pairwise["metric"] == metric]
        forest_figure(
            pairs,
            metric,
            comparison.settings.confidence,
            target(figure_key("forest", metric), f"forest_{safe_name(metric)}.png"),
        )
    if bands is not None:
        for name, label in REPORT_SERIES:
            series_figure(
                bands.loc[bands["series"] == name],
                comparison.conditions,
                f"{label}\n(mean across seeds, {comparison.settings.confidence:.0%} CI band)",
                f"{name} per step",
                target(figure_key("series", name), f"series_{name}.png"),
            )
    if cascades is not None:
        ccdf_figure(cascades.pooled, comparison.conditions, target(figure_key("ccdf"), CCDF_FIGURE))
    return written


def console_summary(provenance: ReportProvenance, comparison: Comparison, n_runs: int, files: ReportFiles) -> str:
    """A few lines for the terminal: what was compared, what is significant, where the report is."""
    readings = significant_readings(comparison)
    n_warnings = len(provenance.warnings) + len(comparison.design.warnings) + len(comparison.warnings)
    lines = [
        f"prism-compare: {provenance.experiment}: {n_runs} runs, {len(comparison.conditions)} conditions, "
        f"{comparison.design.name}",
        f"excluded runs: {len(provenance.excluded)}"
        + "".join(
            f"\n  {row.run_id} ({row.reason})"
            for row in provenance.excluded.head(CONSOLE_EXCLUDED_LINES).itertuples(index=False)
        )
        + (
            f"\n  ... and {len(provenance.excluded) - CONSOLE_EXCLUDED_LINES} more (excluded_runs.csv)"
            if len(provenance.excluded) > CONSOLE_EXCLUDED_LINES
            else ""
        ),
        # REQ-FAULT-2: runs that gave no metric are left out, and this is the line that says so
        *([line] if (line := empty_runs_line(provenance.excluded)) is not None else []),
        *([AA_NOTE] if is_aa_check(provenance.condition_keys) else []),
        f"significant after {'Holm' if comparison.settings.correction == 'holm' else 'BH'}"
        + (" over the whole report" if comparison.settings.family == "report" else " within each metric")
        + f" (alpha {comparison.settings.alpha:g}): {len(readings)} of {len(comparison.pairwise)}",
        *[f"  {line}" for line in readings],
        false_finding_budget(comparison.settings, len(comparison.pairwise), len(comparison.metrics)),
        f"warnings: {n_warnings} (listed in the report)",
        *[f"LLM fitness of {line}" for line in provenance.llm_checks],
        f"report: {files.report}",
    ]
    if provenance.analysis_run_id:
        lines.append(f"MLflow analysis run: {provenance.analysis_run_id}")
    return "\n".join(lines)


if not TYPE_CHECKING:
    #: the old name, deprecated for one release (prism_experiments/deprecation.py)
    __getattr__ = renamed(__name__, {"ReportContext": ReportProvenance})
