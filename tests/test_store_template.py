"""A new sqlite store starts as a copy of an empty, migrated template: the same schema and rows as MLflow's own
migration, its default experiment made by MLflow at the first open, and never a half-copied file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from prism_experiments.tracking import store

pytestmark = pytest.mark.integration


def normalised(sql: str) -> tuple[str, ...]:
    """A CREATE statement as its sorted lines: MLflow's batch migrations rebuild a table with its constraints in
    set order, which varies with the hash seed from one process to the next."""
    return tuple(sorted(line.strip().rstrip(",") for line in sql.splitlines()))


def schema_and_rows(path: Path) -> tuple[set[tuple[str, ...]], dict[str, int]]:
    with sqlite3.connect(path) as db:
        schema = {normalised(sql) for (sql,) in db.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")}
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        rows = {name: db.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in tables}
    return schema, rows


def test_a_seeded_store_equals_one_mlflow_migrated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    template = store.store_template(tmp_path / "templates")
    assert template is not None and template.is_file()
    monkeypatch.setattr(store, "store_template", lambda: template)
    seeded, migrated = tmp_path / "seeded" / "mlflow.db", tmp_path / "migrated" / "mlflow.db"
    store.ensure_experiment(f"sqlite:///{seeded}", "exp", tmp_path / "seeded" / "mlartifacts")
    migrated.parent.mkdir()
    store.client_for(f"sqlite:///{migrated}").create_experiment(
        "exp", artifact_location=(tmp_path / "migrated" / "mlartifacts" / "exp").as_uri()
    )
    assert schema_and_rows(seeded) == schema_and_rows(migrated)
    experiments = {e.name: e for e in store.client_for(f"sqlite:///{seeded}").search_experiments()}
    assert set(experiments) == {"Default", "exp"}
    assert experiments["exp"].artifact_location == (tmp_path / "seeded" / "mlartifacts" / "exp").as_uri()
    assert schema_and_rows(template)[1]["experiments"] == 0, "the default experiment is the new store's own"


def test_an_existing_store_is_never_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    template = store.store_template(tmp_path / "templates")
    monkeypatch.setattr(store, "store_template", lambda: template)
    path = tmp_path / "mlflow.db"
    store.ensure_experiment(f"sqlite:///{path}", "first", tmp_path / "mlartifacts")
    store.seed_sqlite_store(f"sqlite:///{path}")
    assert {e.name for e in store.client_for(f"sqlite:///{path}").search_experiments()} == {"Default", "first"}


def test_a_copy_that_fails_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    template = store.store_template(tmp_path / "templates")
    monkeypatch.setattr(store, "store_template", lambda: template)

    def full_disk(source: Path, target: Path) -> None:
        Path(target).write_bytes(Path(source).read_bytes()[:4096])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store.shutil, "copyfile", full_disk)
    path = tmp_path / "store" / "mlflow.db"
    store.seed_sqlite_store(f"sqlite:///{path}")
    assert list(path.parent.iterdir()) == [], "no half-copied store, no leftover partial file"


def test_a_template_folder_that_cannot_be_made_means_no_template(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"  # (not a read-only folder: tests may run as root)
    blocker.write_text("")
    assert store.store_template(blocker / "templates") is None
