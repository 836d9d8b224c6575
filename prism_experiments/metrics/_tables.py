"""Column checks and coercions shared by the metric modules."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd


def require_columns(frame: pd.DataFrame, table: str, columns: Iterable[str]) -> None:
    """Raise a one-line ValueError naming the table and the columns it lacks."""
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise ValueError(f"{table}: missing column(s) {', '.join(missing)}; has {', '.join(map(str, frame.columns))}")


def event_table(result: object, table: str) -> pd.DataFrame:
    """The DataFrame attribute `table` of a run result (an EventLog or anything shaped like it)."""
    frame = getattr(result, table, None)
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"result.{table}: must be a pandas DataFrame, got {type(frame).__name__}")
    return frame


def as_bool(values: pd.Series) -> pd.Series:
    """Boolean view of a flag column; missing values count as False (empty tables are object-typed)."""
    if values.dtype == bool:
        return values
    return values.fillna(False).astype(bool)


def as_int(values: pd.Series) -> pd.Series:
    """Integer view of a step-like column (empty tables are object-typed)."""
    return pd.to_numeric(values).astype("int64")
