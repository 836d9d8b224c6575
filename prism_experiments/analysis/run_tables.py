"""Event tables of logged runs (`tables/<name>.parquet` artifacts), downloaded once each into a scratch directory."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
from mlflow.tracking import MlflowClient

from prism_experiments.analysis.cascades import quiet_downloads


class RunTables:
    """The event tables of runs: each file downloaded once, read with only the columns asked for."""

    def __init__(self, client: MlflowClient, scratch: Path) -> None:
        self.client, self.scratch = client, scratch
        self._files: dict[tuple[str, str], Path] = {}

    def table(self, run_id: str, name: str, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """`tables/<name>.parquet` of a run (only `columns`); MlflowException, OSError or KeyError if unreadable."""
        key = (run_id, name)
        if key not in self._files:
            with quiet_downloads():
                local = self.client.download_artifacts(run_id, f"tables/{name}.parquet", str(self.scratch / run_id))
            self._files[key] = Path(local)
        try:
            return pd.read_parquet(self._files[key], columns=None if columns is None else list(columns))
        except (ValueError, KeyError) as exc:  # pyarrow names a missing column in a ValueError or KeyError
            raise KeyError(f"tables/{name}.parquet of run {run_id}: {str(exc).splitlines()[0]}") from None

    def tables(self, run_id: str, spec: Mapping[str, Sequence[str] | None]) -> dict[str, pd.DataFrame]:
        """Several tables of one run: name -> columns (None: all)."""
        return {name: self.table(run_id, name, columns) for name, columns in spec.items()}


@contextmanager
def run_tables(tracking_uri: str) -> Iterator[RunTables]:
    """A RunTables over a scratch directory that is removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="prism-tables-") as scratch:
        yield RunTables(MlflowClient(tracking_uri), Path(scratch))
