"""Markdown tables of OPE estimates and of the estimate-vs-truth validation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from prism_experiments.ope.estimators import ESTIMATORS, Estimate
from prism_experiments.ope.validation import ValidationRow, coverage_table


def cell(estimate: Estimate) -> str:
    """`0.1234 [0.1000, 0.1500]`."""
    return f"{estimate.value:.4f} [{estimate.low:.4f}, {estimate.high:.4f}]"


def markdown(table: pd.DataFrame) -> str:
    """A DataFrame as a GitHub markdown table (floats to 4 decimals)."""
    text = table.map(lambda v: f"{v:.4f}" if isinstance(v, float) else str(v))
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(row) + " |" for row in text.itertuples(index=False)]
    return "\n".join(lines)


def estimates_table(
    run_id: str, seed: str, logged: float, estimates: Mapping[str, Mapping[str, Estimate]]
) -> pd.DataFrame:
    """One row per target of one logged run."""
    return pd.DataFrame.from_records(
        [
            {
                "run": run_id[:8],
                "seed": seed,
                "target": target,
                "logged_rate": logged,
                **{name.upper(): cell(by_name[name]) for name in ESTIMATORS},
            }
            for target, by_name in estimates.items()
        ]
    )


def validation_markdown(rows: Sequence[ValidationRow]) -> str:
    """The per-(target, seed) table, then the coverage summary."""
    detail = pd.DataFrame.from_records(
        [
            {
                "target B": r.target,
                "seed": r.seed,
                "A logged": r.logged,
                "B truth": r.truth,
                **{f"{name.upper()} [95% CI]": cell(r.estimates[name]) for name in ESTIMATORS},
                "unsupported": r.unsupported,
            }
            for r in rows
        ]
    )
    summary = coverage_table(rows)
    summary = summary.rename(
        columns={f"{n}_covers": f"{n.upper()} covers" for n in ESTIMATORS}
        | {f"{n}_mae": f"{n.upper()} MAE" for n in ESTIMATORS}
        | {"logged_mae": "A logged MAE"}
    )
    return "\n\n".join([markdown(detail), markdown(summary)])
