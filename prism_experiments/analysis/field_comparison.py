"""The comparison report's field-study sections: Huszár et al.'s amplification ratio of author groups, single
accounts and small groups (every report with a chronological control), with `--size-matched` Juul & Ugander's pooled
vs size-matched cascade comparison, and with `--crossover` the switch-on / switch-off crossover of ranking schedules
(Gauthier et al. 2026).

Computed from the runs' event tables; written as `amplification.csv` (and its units, `amplification_units.csv`, with
the top-1 % accounts' figure), `size_matched.csv` and `crossover.csv`, appended to report.md, and rendered into
report.html by `field_sections.html_sections`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from prism_experiments.analysis.amplification import (
    MEDIAN,
    RATIO,
    SATURATED_REACH,
    SHARE_BELOW_0,
    TOP_ACCOUNTS,
    amplification_table,
    control_of,
    load_reach,
    unit_amplification_table,
)
from prism_experiments.analysis.compare import ComparisonSettings
from prism_experiments.analysis.crossover import crossover_arms, crossover_lines, crossover_table, load_shapes
from prism_experiments.analysis.design import Design
from prism_experiments.analysis.field_sections import (
    AMPLIFICATION_CSV,
    AMPLIFICATION_FIGURE,
    AMPLIFICATION_UNITS_CSV,
    CROSSOVER_CSV,
    SIZE_MATCHED_CSV,
    markdown_sections,
)
from prism_experiments.analysis.figures import account_amplification_figure
from prism_experiments.analysis.report import FIGURES_DIR
from prism_experiments.analysis.run_tables import RunTables, run_tables
from prism_experiments.analysis.selection import Selection
from prism_experiments.analysis.size_matched import disagreements, load_cascade_tables, size_matched_comparison


@dataclass
class FieldTables:
    """The sections' tables (None: not computed), what could not be read (warnings) and why a section is absent."""

    amplification: pd.DataFrame | None = None
    #: the distribution rows' units (amplification.UNIT_COLUMNS): one row per condition, seed and account or group
    amplification_units: pd.DataFrame | None = None
    size_matched: pd.DataFrame | None = None
    crossover: pd.DataFrame | None = None
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the compared conditions in the report's order (the figures' styles follow it)
    conditions: list[str] = field(default_factory=list)


def field_tables(
    tracking_uri: str,
    selection: Selection,
    design: Design,
    settings: ComparisonSettings,
    amplification: bool = True,
    size_matched: bool = False,
    crossover: pd.DataFrame | None = None,
) -> FieldTables:
    """Compute the sections asked for from the compared runs' tables; `crossover`: the runs' step values
    (analysis/step_series.py) to compare switching conditions on, None for no crossover section."""
    result = FieldTables(conditions=list(selection.conditions))
    if not (amplification or size_matched or crossover is not None):
        return result
    tidy = selection.tidy
    run_ids = tidy["run_id"].astype(str).tolist()
    with run_tables(tracking_uri) as tables:
        if amplification:
            controls = control_of(tidy, selection.condition_keys)
            if controls:
                reach, warnings = load_reach(tables, run_ids)
                result.warnings += warnings
                units = unit_amplification_table(reach, tidy, controls)
                result.amplification_units = units
                result.amplification = amplification_table(
                    reach, tidy, controls, settings.bootstrap_seed, settings.n_resamples, units=units
                )
            else:
                result.notes.append(
                    "amplification ratio: not computed, no chronological condition to serve as the control "
                    "(ranking.mode=chronological, matching the other condition keys)"
                )
        if size_matched:
            if design.paired:
                cascades, warnings = load_cascade_tables(tables, run_ids)
                result.warnings += warnings
                result.size_matched = size_matched_comparison(cascades, tidy, selection.conditions, settings)
            else:
                result.warnings.append("size-matched: needs the paired design (every condition on the same seeds)")
        if crossover is not None:
            _crossover(result, tables, selection, design, settings, crossover)
    return result


def _crossover(
    result: FieldTables,
    tables: RunTables,
    selection: Selection,
    design: Design,
    settings: ComparisonSettings,
    step_values: pd.DataFrame,
) -> None:
    if not design.paired:
        result.warnings.append("crossover: needs the paired design (every condition on the same seeds)")
        return
    shapes, warnings = load_shapes(tables, selection.tidy)
    result.warnings += warnings
    arms = crossover_arms(shapes)
    if isinstance(arms, str):
        result.notes.append(f"crossover: not computed, {arms}")
        return
    series = sorted(step_values["series"].unique())
    result.crossover = crossover_table(step_values, arms, series, settings)


def write_field_tables(directory: Path, tables: FieldTables, report: Path) -> list[Path]:
    """Write the CSVs into `directory` and append their sections to `report` (report.md); the paths written."""
    written = []
    for name, table in (
        (AMPLIFICATION_CSV, tables.amplification),
        (AMPLIFICATION_UNITS_CSV, tables.amplification_units),
        (SIZE_MATCHED_CSV, tables.size_matched),
        (CROSSOVER_CSV, tables.crossover),
    ):
        if table is not None:
            table.to_csv(directory / name, index=False)
            written.append(directory / name)
    units = tables.amplification_units
    if units is not None and (units["grouping"] == TOP_ACCOUNTS).any():
        (directory / FIGURES_DIR).mkdir(parents=True, exist_ok=True)
        written.append(account_amplification_figure(units.loc[units["grouping"] == TOP_ACCOUNTS], tables.conditions,
                                                    directory / FIGURES_DIR / AMPLIFICATION_FIGURE))  # fmt: skip
    lines = markdown_sections(directory)
    if lines:
        with report.open("a", encoding="utf-8") as out:
            out.write("\n" + "\n".join(lines) + "\n")
    return written


def field_console(tables: FieldTables) -> list[str]:
    """Console lines: where the amplification table is, and each pooled / size-matched disagreement."""
    lines = list(tables.notes)
    if tables.amplification is not None:
        lines.append(
            f"amplification ratio (Huszár et al. 2022): {len(tables.amplification)} rows in {AMPLIFICATION_CSV}"
        )
        lines += [f"  {line}" for line in amplification_lines(tables.amplification)]
    if tables.size_matched is not None:
        found = disagreements(tables.size_matched)
        lines.append(f"size-matched vs pooled (Juul & Ugander 2021): {len(found)} disagreement(s)")
        lines += [f"  {line}" for line in found]
    if tables.crossover is not None:
        lines.append(f"crossover (Gauthier et al. 2026), mean from the switch on, in {CROSSOVER_CSV}:")
        lines += [f"  {line}" for line in crossover_lines(tables.crossover)]
    return lines


def amplification_lines(table: pd.DataFrame) -> list[str]:
    """Per condition: the top-1 % accounts' median amplification and share below 0, and the saturated groups."""
    lines = []
    for condition, part in table.groupby("condition", sort=False):
        accounts = part.loc[part["grouping"] == TOP_ACCOUNTS].set_index("statistic")["amplification"]
        if {MEDIAN, SHARE_BELOW_0} <= set(accounts.index):
            lines.append(f"{condition}: top-1% accounts, each alone: median {accounts[MEDIAN]:+.3g}, "
                         f"{accounts[SHARE_BELOW_0]:.0%} below 0 (means over seeds)")  # fmt: skip
        flagged = part.loc[(part["statistic"] == RATIO) & part["saturated"].astype(bool)]
        if len(flagged):
            lines.append(f"{condition}: {len(flagged)} group(s) saturated (reach >= {SATURATED_REACH:g} under both "
                         f"arms, ratio near 0 by construction): {', '.join(flagged['group'].astype(str))}")  # fmt: skip
    return lines
