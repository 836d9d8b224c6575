"""Sections that compare the harness with field findings, rendered from the CSVs of a report directory: the
amplification ratio of author groups and the amplification of single accounts and small groups (`amplification.csv`,
its figure from `amplification_units.csv`), the size-matched cascade comparison (`size_matched.csv`) and the
switching crossover (`crossover.csv`). A section whose CSV is absent, or has none of its rows, is left out.

`html_sections(directory)` is the one call report.html makes (analysis/html_report.py), `markdown_sections` report.md's.
The replication's verdicts (`verdicts.csv`) have their own page (replication/report.py).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from prism_experiments.analysis.amplification import (
    MAXIMUM,
    MEDIAN,
    Q25,
    Q75,
    RATIO,
    SATURATED_REACH,
    SHARE_BELOW_0,
    UNIT_GROUPINGS,
)
from prism_experiments.analysis.report import FIGURES_DIR, format_number, format_p

#: the replication's per-claim table (replication/report.py writes it; its page is its own)
VERDICTS_CSV = "verdicts.csv"
AMPLIFICATION_CSV = "amplification.csv"
#: one row per condition, seed and unit of the distribution rows: the top-1 % accounts' figure is drawn from it
AMPLIFICATION_UNITS_CSV = "amplification_units.csv"
#: the figure of the top-1 % accounts' amplification (figures.account_amplification_figure), under FIGURES_DIR
AMPLIFICATION_FIGURE = "amplification_top_accounts.png"
SIZE_MATCHED_CSV = "size_matched.csv"
CROSSOVER_CSV = "crossover.csv"
AMPLIFICATION_HEADERS = ["condition", "grouping", "group", "reach", "reach (control)", "amplification", "95% CI",
                         "seeds", "saturated"]  # fmt: skip
UNIT_HEADERS = ["condition", "units", "per seed", "median", "95% CI", "quartiles", "max", "95% CI", "share < 0",
                "95% CI", "median reach", "(control)", "seeds"]  # fmt: skip
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


def group_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The group rows of amplification.csv (a report written before the distribution rows has only those)."""
    return table if "statistic" not in table.columns else table.loc[table["statistic"] == RATIO]


def unit_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The distribution rows of amplification.csv: single accounts and small random groups."""
    return table.iloc[0:0] if "statistic" not in table.columns else table.loc[table["statistic"] != RATIO]


def _flag(value: object) -> str:
    return "yes" if str(value).lower() == "true" else "no"


def amplification_rows(table: pd.DataFrame) -> list[list[object]]:
    return [[r.condition, r.grouping, r.group, format_number(r.reach), format_number(r.reach_control),
             format_number(r.amplification), _interval(r.ci_low, r.ci_high), int(r.n_seeds),
             _flag(getattr(r, "saturated", False))] for r in table.itertuples()]  # fmt: skip


def saturation_remark(table: pd.DataFrame) -> str:
    """Which groups are saturated, so that a ratio near 0 there is not read as "no amplification"."""
    if "saturated" not in table.columns:
        return ""
    flagged = table.loc[table["saturated"].map(_flag) == "yes"]
    if flagged.empty:
        return f"No group reaches {SATURATED_REACH:g} or more of the population under both arms (none saturated)."
    names = "; ".join(
        f"{condition}: " + ", ".join(f"{r.grouping} {r.group}" for r in part.itertuples())
        for condition, part in flagged.groupby("condition", sort=False)
    )
    return (
        f"Saturated (reach >= {SATURATED_REACH:g} under both arms): {names}. Both rankers show these groups to almost "
        "everyone, so their ratio is near 0 by construction: it does not mean the ranker does not amplify them. "
        "Read the single accounts and small groups below instead."
    )


def unit_table_rows(table: pd.DataFrame) -> list[list[object]]:
    """One line per condition and distribution grouping: median, quartiles, maximum and share below 0."""
    order = {grouping: i for i, grouping in enumerate(UNIT_GROUPINGS)}
    keyed = table.assign(_order=table["grouping"].map(order).fillna(len(order)))
    lines = []
    for _, part in keyed.sort_values(["condition", "_order"], kind="stable").groupby(
        ["condition", "_order"], sort=False
    ):
        by = part.set_index("statistic")
        first = part.iloc[0]
        lines.append([first["condition"], first["group"], format_number(first["n_units"]),
                      _value(by, MEDIAN), _value_ci(by, MEDIAN), f"{_value(by, Q25)} to {_value(by, Q75)}",
                      _value(by, MAXIMUM), _value_ci(by, MAXIMUM), _value(by, SHARE_BELOW_0),
                      _value_ci(by, SHARE_BELOW_0), format_number(first["reach"]),
                      format_number(first["reach_control"]), int(part["n_seeds"].max())])  # fmt: skip
    return lines


def _value(by_statistic: pd.DataFrame, statistic: str) -> str:
    return format_number(by_statistic.at[statistic, "amplification"]) if statistic in by_statistic.index else "–"


def _value_ci(by_statistic: pd.DataFrame, statistic: str) -> str:
    if statistic not in by_statistic.index:
        return "–"
    return _interval(by_statistic.at[statistic, "ci_low"], by_statistic.at[statistic, "ci_high"])


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


@dataclass(frozen=True)
class Section:
    """One field section: its CSV, title, the note under the title, table headers and rows, which of the CSV's rows
    it shows, a remark computed from them, and a figure (under FIGURES_DIR) shown after the table when present."""

    csv: str
    title: str
    note: str
    headers: list[str]
    rows: Callable[[pd.DataFrame], list[list[object]]]
    numeric_from: int = 3
    select: Callable[[pd.DataFrame], pd.DataFrame] = lambda table: table
    remark: Callable[[pd.DataFrame], str] = lambda table: ""
    figure: str = ""
    caption: str = ""


SECTIONS = (
    Section(AMPLIFICATION_CSV, "Amplification ratio (Huszár et al. 2022)",
            "Reach of an author group (share of the agents shown any post who saw at least one of its posts) under a "
            "ranker ÷ its reach under the chronological control of the same seeds, minus 1; 95% paired bootstrap CI "
            "over seeds. 0 = the ranker gives the group the reach chronological order gives it. A metric, not a "
            "test. Saturated: the group's reach is at least "
            f"{SATURATED_REACH:g} under both arms, so its ratio cannot show amplification.",
            AMPLIFICATION_HEADERS, amplification_rows, select=group_rows, remark=saturation_remark),
    Section(AMPLIFICATION_CSV, "Amplification of single accounts and small groups (Huszár et al. 2022)",
            "Per seed, each unit's reach under the ranker ÷ its reach under the chronological control − 1: each "
            "account of the top 1% by followers at the start alone (the paper's individual amplification), and "
            "random groups of 10 accounts (seeded draw; of all accounts, and of the top follower decile), too small "
            "to reach everyone. Over the units of a seed: median, quartiles, maximum and share below 0; each the "
            "mean over seeds with a 95% bootstrap CI over seeds. Units the control showed to nobody have no ratio "
            "and are left out (per seed: the units with one). Median reach: the units' median reach under the ranker "
            "and under the control.",
            UNIT_HEADERS, unit_table_rows, numeric_from=2, select=unit_rows, figure=AMPLIFICATION_FIGURE,
            caption="Amplification of each top-1% account, all seeds pooled, against 0 (dashed): the reach "
                    "chronological order gives it"),
    Section(SIZE_MATCHED_CSV, "Cascade structure at matched size (Juul & Ugander 2021)",
            "Mean A − B over all cascades (pooled) and within cascades of the same size (matched: exact sizes, each "
            "weighted by the smaller of its two counts); paired Wilcoxon against 0 over seeds, Holm over this "
            "table's tests. A disagreement (one significant and not the other, or opposite signs) means the pooled "
            "difference is partly a difference in how large the cascades grew.",
            SIZE_MATCHED_HEADERS, size_matched_rows),
    Section(CROSSOVER_CSV, "Switching the ranker on and off (crossover, Gauthier et al. 2026)",
            "Per step series, its mean from the switch step on: a switching condition minus the condition served "
            "throughout by the mode it switched from, paired over seeds; Wilcoxon against 0, Holm over this table's "
            "tests. Asymmetric: one direction's effect is significant and the other's is not.",
            CROSSOVER_HEADERS, crossover_rows),
)  # fmt: skip


def _shown(directory: Path, section: Section) -> pd.DataFrame | None:
    """The section's rows from its CSV, None when the CSV is absent or has none of them."""
    table = _read(directory, section.csv)
    if table is None or table.empty:
        return None
    chosen = section.select(table)
    return None if chosen.empty else chosen


def html_section(directory: Path, csv: str) -> str:
    """The sections of one CSV as HTML, or "" when the CSV is absent or empty."""
    from prism_experiments.analysis.html_report import data_uri

    parts = []
    for section in SECTIONS:
        table = _shown(directory, section) if section.csv == csv else None
        if table is None:
            continue
        remark = section.remark(table)
        figure = directory / FIGURES_DIR / section.figure if section.figure else None
        parts.append(
            f"<h2>{html.escape(section.title)}</h2><p class=\"muted\">{html.escape(section.note)}</p>"
            + _table(section.headers, section.rows(table), numeric_from=section.numeric_from)
            + (f"<p>{html.escape(remark)}</p>" if remark else "")
            + (f'<div class="figures"><figure><img src="{data_uri(figure)}" alt="{html.escape(section.caption)}" '
               f'data-source="{FIGURES_DIR}/{section.figure}"><figcaption>{html.escape(section.caption)}'
               "</figcaption></figure></div>" if figure is not None and figure.is_file() else "")
        )  # fmt: skip
    return "".join(parts)


def html_sections(directory: Path) -> str:
    """Every field section the report directory has data for (empty when it has none)."""
    return "".join(html_section(directory, name) for name in dict.fromkeys(section.csv for section in SECTIONS))


def markdown_sections(
    directory: Path, names: tuple[str, ...] = (AMPLIFICATION_CSV, SIZE_MATCHED_CSV, CROSSOVER_CSV)
) -> list[str]:
    """report.md's lines for the sections of `names` the directory has CSVs for (none when absent)."""
    from prism_experiments.analysis.report import markdown_table

    lines: list[str] = []
    for section in SECTIONS:
        table = _shown(directory, section) if section.csv in names else None
        if table is None:
            continue
        lines += [f"## {section.title}", "", f"{section.note} All columns: `{section.csv}`.", "",
                  markdown_table(section.headers, section.rows(table)), ""]  # fmt: skip
        remark = section.remark(table)
        if remark:
            lines += [remark, ""]
        if section.figure and (directory / FIGURES_DIR / section.figure).is_file():
            lines += [f"![{section.caption}]({FIGURES_DIR}/{section.figure})", ""]
    return lines
