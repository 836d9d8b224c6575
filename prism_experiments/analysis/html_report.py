"""report.html: the comparison as one self-contained page (figures embedded as data URIs), summary first."""

from __future__ import annotations

import base64
import html
from collections.abc import Collection, Mapping
from pathlib import Path

import pandas as pd

from prism_experiments.analysis.compare import Comparison
from prism_experiments.analysis.field_sections import html_sections
from prism_experiments.analysis.report import (
    CascadeComparison,
    ReportProvenance,
    figure_key,
    format_number,
    format_p,
)
from prism_experiments.analysis.step_series import REPORT_SERIES
from prism_experiments.metrics.registry import metric_label
from prism_experiments.plotting import condition_styles

HTML_REPORT = "report.html"
#: Significant pairs a metric shows in the summary at most (the largest differences); the rest are in its table.
SUMMARY_PAIRS = 3
STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.5rem auto;max-width:1200px;padding:0 1rem;
color:#1a1a1a;line-height:1.45}
h1{font-size:1.6rem}h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem}th,td{border:1px solid #ccc;padding:.25rem .5rem;
text-align:left}th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.figures{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start}.figures figure{margin:0;flex:1 1 420px}
.figures img{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:.8rem;color:#555}
ul.summary li{margin:.3rem 0}.sig{font-weight:600}.muted{color:#666}
.swatch{display:inline-block;width:.9rem;height:.9rem;border-radius:2px;vertical-align:middle;margin-right:.3rem}
"""


def metric_name(metric: str) -> str:
    """`in-network share (inn_share)`: the registered metric's plain name (metrics/registry.py), or the key itself
    when it has none."""
    label = metric_label(metric)
    return f"{label} ({metric})" if label else metric


def data_uri(path: Path) -> str:
    """A PNG file as a `data:` URI, so the page needs no other file."""
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def summary_sentence(row: pd.Series, comparison: Comparison) -> str:
    """One result in the README's style: effect, direction, CI, test and adjusted p, seeds (or runs)."""
    settings, paired = comparison.settings, comparison.design.paired
    difference = float(row["difference"])
    verb = "raises" if difference > 0 else "lowers" if difference < 0 else "does not change"
    method = "Holm" if settings.correction == "holm" else "BH"
    test = "paired Wilcoxon" if paired else "Mann-Whitney"
    size = f"{int(row['n_pairs'])} seeds" if paired else f"{int(row['n_a'])} and {int(row['n_b'])} runs"
    verdict = "" if bool(row["significant"]) else f"; not significant at alpha {settings.alpha:g}"
    if difference == 0:
        return (
            f"{row['condition_a']} and {row['condition_b']} do not differ in {metric_name(str(row['metric']))} "
            f"({test}, {method}-adjusted p = {format_p(row[settings.adjusted_column])}, {size}){verdict}."
        )
    return (
        f"{row['condition_a']} {verb} {metric_name(str(row['metric']))} by {format_number(abs(difference))} "
        f"against {row['condition_b']} ({settings.confidence:.0%} CI of the difference "
        f"{format_number(row['diff_ci_low'])} to {format_number(row['diff_ci_high'])}; {test}, "
        f"{method}-adjusted p = {format_p(row[settings.adjusted_column])}, {size}){verdict}."
    )


def summary_rows(comparison: Comparison, most: int = SUMMARY_PAIRS) -> pd.DataFrame:
    """Per metric its `most` significant pairs with the largest |difference|, else its pair with the largest
    |effect|; column `more`: how many significant pairs of the metric are left out."""
    chosen = []
    for metric in comparison.metrics:
        pairs = comparison.pairwise.loc[comparison.pairwise["metric"] == metric]
        significant = pairs.loc[pairs["significant"].astype(bool)]
        if len(significant):
            order = significant["difference"].abs().sort_values(ascending=False, kind="stable").index
            kept = significant.loc[order[:most]].assign(more=0)
            kept.loc[kept.index[-1], "more"] = max(0, len(significant) - most)
            chosen.append(kept)
        elif len(pairs) and pairs["effect_size"].notna().any():
            chosen.append(pairs.loc[[pairs["effect_size"].abs().idxmax()]].assign(more=0))
    return pd.concat(chosen) if chosen else comparison.pairwise.iloc[0:0].assign(more=0)


def table(
    headers: list[str],
    rows: list[list[object]],
    numeric_from: int = 0,
    attrs: str = "",
    numeric_columns: Collection[int] | None = None,
) -> str:
    """An HTML table; cells from column `numeric_from` on, or exactly those of `numeric_columns` when given, are
    right-aligned numbers (text columns stay left-aligned)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    numeric = ' class="num"'
    chosen = None if numeric_columns is None else set(numeric_columns)
    body = "".join(
        "<tr>" + "".join(f"<td{numeric if (i >= numeric_from if chosen is None else i in chosen) else ''}>"
                         f"{html.escape(str(v))}</td>"
                         for i, v in enumerate(row)) + "</tr>"
        for row in rows
    )  # fmt: skip
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure_block(directory: Path, figures: Mapping[str, str], keys: list[str], captions: list[str]) -> str:
    """The figures named by `keys`, side by side, each embedded with its source path in `data-source`."""
    items = []
    for key, caption in zip(keys, captions, strict=True):
        if key not in figures:
            continue
        relative = figures[key]
        items.append(
            f'<figure><img src="{data_uri(directory / relative)}" alt="{html.escape(caption)}" '
            f'data-source="{html.escape(relative)}"><figcaption>{html.escape(caption)}</figcaption></figure>'
        )
    return f'<div class="figures">{"".join(items)}</div>' if items else ""


def legend(comparison: Comparison) -> str:
    """The condition key shared by every figure: colour swatch, marker and line style."""
    styles = condition_styles(comparison.conditions)
    marker_names = {"o": "circle", "s": "square", "^": "triangle", "D": "diamond", "v": "down triangle",
                    "P": "plus", "X": "cross", "*": "star", "<": "left triangle", ">": "right triangle",
                    "h": "hexagon", "p": "pentagon"}  # fmt: skip
    line_names = {"-": "solid", "--": "dashed", "-.": "dash-dot", ":": "dotted"}
    items = "".join(
        f'<li><span class="swatch" style="background:{style.color}"></span>{html.escape(condition)}: '
        f"{marker_names[style.marker]} markers, {line_names[style.linestyle]} line</li>"
        for condition, style in styles.items()
    )
    return f"<p>Conditions (the same colour, marker and line in every figure):</p><ul>{items}</ul>"


def metric_section(directory: Path, comparison: Comparison, metric: str, figures: Mapping[str, str]) -> str:
    """Condition means, the pairwise table (numbers as in results.csv), forest plot beside the paired plot."""
    settings = comparison.settings
    ci = f"{settings.confidence:.0%} CI"
    summary = comparison.summary.loc[comparison.summary["metric"] == metric]
    means = table(["condition", "n", "mean", ci, "sd"], [
        [r.condition, r.n, format_number(r.mean), f"{format_number(r.ci_low)} to {format_number(r.ci_high)}",
         format_number(r.sd)] for r in summary.itertuples(index=False)], numeric_from=1)  # fmt: skip
    pairs = comparison.pairwise.loc[comparison.pairwise["metric"] == metric]
    adjusted = settings.adjusted_column
    rows = [[r.condition_a, r.condition_b, r.n_pairs if comparison.design.paired else f"{r.n_a}/{r.n_b}",
             format_number(r.difference), f"{format_number(r.diff_ci_low)} to {format_number(r.diff_ci_high)}",
             format_p(r.p_value), format_p(getattr(r, adjusted)) + (" *" if r.significant else ""),
             format_number(r.effect_size)] for r in pairs.itertuples(index=False)]  # fmt: skip
    pairwise = table(
        ["A", "B", "n", "mean A − B", ci, "p", adjusted, r_name(comparison)],
        rows,
        numeric_from=2,
        attrs=f' class="pairwise" data-metric="{html.escape(metric)}"',
    )
    block = figure_block(
        directory,
        figures,
        [figure_key("forest", metric), figure_key("box", metric)],
        [
            f"{metric}: pairwise differences with {ci}",
            f"{metric} per run ({'paired by seed' if comparison.design.paired else 'independent'})",
        ],
    )
    return f"<h3>{html.escape(metric_name(metric))}</h3>{means}{pairwise}{block}"


def r_name(comparison: Comparison) -> str:
    return "r" if comparison.design.paired else "Cliff's δ"


def cascade_section(directory: Path, cascades: CascadeComparison | None, figures: Mapping[str, str]) -> str:
    if cascades is None:
        return "<h2>Cascade sizes</h2><p>Not compared (--no-cascades).</p>"
    rows = [[r.condition_a, r.condition_b, r.n_a, r.n_b, format_number(r.ks_statistic), format_p(r.p_value),
             format_p(r.p_holm)] for r in cascades.ks.itertuples(index=False)]  # fmt: skip
    return ("<h2>Cascade sizes</h2><p>Cascade sizes pooled per condition (cascades of one run are not independent: "
            "the KS p-values are optimistic).</p>"
            + figure_block(directory, figures, [figure_key("ccdf")], ["Cascade-size CCDF per condition (log–log)"])
            + table(["A", "B", "n A", "n B", "KS D", "p", "p_holm"], rows, numeric_from=2))  # fmt: skip


def excluded_section(provenance: ReportProvenance, warnings: list[str]) -> str:
    excluded = provenance.excluded
    rows = [[r.run_id, r.status, "–" if pd.isna(r.seed) else int(r.seed), r.condition or "–", r.reason]
            for r in excluded.itertuples(index=False)]  # fmt: skip
    runs = (table(["run id", "status", "seed", "condition", "reason"], rows, numeric_from=99) if rows
            else "<p>No runs excluded.</p>")  # fmt: skip
    items = "".join(f"<li>{html.escape(w)}</li>" for w in warnings) or "<li>None.</li>"
    return f"<h2>Excluded runs ({len(excluded)})</h2>{runs}<h2>Warnings</h2><ul>{items}</ul>"


def render_html(directory: Path, provenance: ReportProvenance, comparison: Comparison, n_runs: int,
                figures: Mapping[str, str], cascades: CascadeComparison | None) -> str:  # fmt: skip
    """The whole page: summary, conditions, per metric tables and figures, per-step series, CCDF, the field-study
    sections, exclusions."""
    warnings = [*provenance.warnings, *comparison.design.warnings, *comparison.warnings]
    sentences = [summary_sentence(row, comparison)
                 + (f" (and {int(row['more'])} more significant pairs in its table)" if row["more"] else "")
                 for _, row in summary_rows(comparison).iterrows()]  # fmt: skip
    summary = "".join(
        f'<li class="{"sig" if "not significant" not in s else "muted"}">{html.escape(s)}</li>' for s in sentences
    )
    design = comparison.design
    seeds = ", ".join(map(str, design.seeds))
    title = f"Comparison of conditions: {provenance.experiment}"
    series = figure_block(
        directory,
        figures,
        [figure_key("series", name) for name, _ in REPORT_SERIES],
        [
            f"{label} per step: mean across seeds with its {comparison.settings.confidence:.0%} CI band"
            for _, label in REPORT_SERIES
        ],
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="muted">Generated {provenance.generated_at:%Y-%m-%d %H:%M:%S} by prism-compare'
        + (f"; MLflow analysis run {html.escape(provenance.analysis_run_id)}" if provenance.analysis_run_id else "")
        + f". {n_runs} runs, {len(comparison.conditions)} conditions, {html.escape(design.name)}; seeds {seeds}."
        "</p>",
        "<h2>Summary</h2>",
        f'<ul class="summary">{summary or "<li>No pairwise comparison could be made.</li>"}</ul>',
        f'<p class="muted">Per metric: its significant pairs (at most {SUMMARY_PAIRS}, the largest differences), '
        "else the pair with the largest effect. "
        f"Details, design and power: report.md; every number: results.csv.</p>",
        legend(comparison),
        "<h2>Metrics</h2>",
        *[metric_section(directory, comparison, metric, figures) for metric in comparison.metrics],
        "<h2>Per-step series</h2>",
        series or "<p>No per-step series (the runs logged no <code>step/</code> metrics).</p>",
        cascade_section(directory, cascades, figures),
        # the field-study sections (amplification, size-matched, crossover) from the CSVs written beside this page
        html_sections(directory),
        excluded_section(provenance, warnings),
        "</body></html>",
    ]
    return "\n".join(parts)


def write_html_report(directory: Path, provenance: ReportProvenance, comparison: Comparison, n_runs: int,
                      figures: Mapping[str, str], cascades: CascadeComparison | None) -> Path:  # fmt: skip
    """Write report.html into `directory` (beside report.md) and return its path."""
    path = directory / HTML_REPORT
    path.write_text(render_html(directory, provenance, comparison, n_runs, figures, cascades), encoding="utf-8")
    return path
