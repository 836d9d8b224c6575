"""HTML sections that compare the harness with field findings, rendered from the CSVs of a report directory:
the amplification ratio (`amplification.csv`), the size-matched cascade comparison (`size_matched.csv`) and the
switching crossover (`crossover.csv`). A section whose CSV is absent is left out.

`html_sections(directory)` is the one call report.html makes (analysis/html_report.py). The replication's verdicts
(`verdicts.csv`) have their own page (replication/report.py).
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from prism_experiments.analysis.report import format_number, format_p

#: the replication's per-claim table (replication/report.py writes it; its page is its own)
VERDICTS_CSV = "verdicts.csv"
AMPLIFICATION_CSV = "amplification.csv"
SIZE_MATCHED_CSV = "size_matched.csv"
CROSSOVER_CSV = "crossover.csv"
AMPLIFICATION_HEADERS = ["condition", "grouping", "group", "reach", "reach (control)", "amplification", "95% CI",
                         "seeds"]  # fmt: skip
SIZE_MATCHED_HEADERS = ["property", "A", "B", "pooled A − B", "p_holm", "matched A − B", "p_holm", "seeds",
                        "disagree"]  # fmt: skip


def _table(headers: list[str], rows: list[list[object]], numeric_from: int) -> str:
    from prism_experiments.analysis.html_report import table

    return table(headers, rows, numeric_from=numeric_from)


def _read(directory: Path, name: str) -> pd.DataFrame | None:
    path = directory / name
    return pd.read_csv(path, keep_default_na=True) if path.is_file() else None


def _interval(low: float, high: float) -> str:
    return f"{format_number(low)} to {format_number(high)}"


def amplification_rows(table: pd.DataFrame) -> list[list[object]]:
    return [[r.condition, r.grouping, r.group, format_number(r.reach), format_number(r.reach_control),
             format_number(r.amplification), _interval(r.ci_low, r.ci_high), int(r.n_seeds)]
            for r in table.itertuples()]  # fmt: skip


def size_matched_rows(table: pd.DataFrame) -> list[list[object]]:
    return [[r.property, r.condition_a, r.condition_b, format_number(r.pooled), format_p(r.pooled_p_holm),
             format_number(r.matched), format_p(r.matched_p_holm), int(r.n_seeds),
             "yes" if bool(r.disagree) else "no"] for r in table.itertuples()]  # fmt: skip


CROSSOVER_HEADERS = ["series", "switch", "switching", "constant", "from step", "effect", "95% CI", "p_holm", "seeds",
                     "asymmetric"]  # fmt: skip


def crossover_rows(table: pd.DataFrame) -> list[list[object]]:
    return [[r.series, f"{r.from_mode} → {r.to_mode}", r.switching, r.constant, int(r.switch_step),
             format_number(r.effect), _interval(r.effect_ci_low, r.effect_ci_high), format_p(r.p_holm),
             int(r.n_seeds), "yes" if bool(r.asymmetric) else "no"] for r in table.itertuples()]  # fmt: skip


#: the sections: CSV, title, the note under the title, headers, the rows of a table
SECTIONS = (
    (AMPLIFICATION_CSV, "Amplification ratio (Huszár et al. 2022)",
     "Reach of an author group (share of the agents served any feed who saw at least one of its posts) under a "
     "ranker ÷ its reach under the chronological control of the same seeds, minus 1; 95% paired bootstrap CI over "
     "seeds. 0 = the ranker gives the group the reach chronological order gives it. A metric, not a test.",
     AMPLIFICATION_HEADERS, amplification_rows),
    (SIZE_MATCHED_CSV, "Cascade structure at matched size (Juul & Ugander 2021)",
     "Mean A − B over all cascades (pooled) and within cascades of the same size (matched: exact sizes, each "
     "weighted by the smaller of its two counts); paired Wilcoxon against 0 over seeds, Holm over this table's "
     "tests. A disagreement (one significant and not the other, or opposite signs) means the pooled difference is "
     "partly a difference in how large the cascades grew.",
     SIZE_MATCHED_HEADERS, size_matched_rows),
    (CROSSOVER_CSV, "Switching the ranker on and off (crossover, Gauthier et al. 2026)",
     "Per step series, its mean from the switch step on: a switching condition minus the condition served "
     "throughout by the mode it switched from, paired over seeds; Wilcoxon against 0, Holm over this table's tests. "
     "Asymmetric: one direction's effect is significant and the other's is not.",
     CROSSOVER_HEADERS, crossover_rows),
)  # fmt: skip


def html_section(directory: Path, csv: str) -> str:
    """One section as HTML, or "" when its CSV is absent or empty."""
    for name, title, note, headers, rows in SECTIONS:
        table = _read(directory, name) if name == csv else None
        if table is not None and not table.empty:
            return (f"<h2>{html.escape(title)}</h2><p class=\"muted\">{html.escape(note)}</p>"
                    + _table(headers, rows(table), numeric_from=3))  # fmt: skip
    return ""


def html_sections(directory: Path) -> str:
    """Every field section the report directory has data for (empty when it has none)."""
    return "".join(html_section(directory, name) for name, *_ in SECTIONS)


def markdown_sections(
    directory: Path, names: tuple[str, ...] = (AMPLIFICATION_CSV, SIZE_MATCHED_CSV, CROSSOVER_CSV)
) -> list[str]:
    """report.md's lines for the sections of `names` the directory has CSVs for (none when absent)."""
    from prism_experiments.analysis.report import markdown_table

    lines: list[str] = []
    for name, title, note, headers, rows in SECTIONS:
        table = _read(directory, name) if name in names else None
        if table is not None and not table.empty:
            lines += [f"## {title}", "", f"{note} All columns: `{name}`.", "", markdown_table(headers, rows(table)), ""]
    return lines
