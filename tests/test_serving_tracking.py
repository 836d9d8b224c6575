"""What stochastic serving adds to a run's MLflow params, hash and artifacts; `prism-ope`'s usage errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from prism_experiments.config import ExperimentConfig
from prism_experiments.domain import SERVING_CANDIDATES, SERVING_CANDIDATES_COLUMNS
from prism_experiments.ope.cli import main
from prism_experiments.simulation import SimulationResult
from prism_experiments.tracking.artifacts import write_run_files
from prism_experiments.tracking.params import config_hash, to_params

STOCHASTIC = {"serving": {"policy": "softmax", "temperature": 0.5}}


def test_unset_serving_leaves_params_and_hash_as_before() -> None:
    resolved = ExperimentConfig().model_dump(mode="json")
    assert resolved["serving"] is None
    assert not any(key.startswith("serving") for key in to_params(resolved))
    assert config_hash(resolved) == config_hash({k: v for k, v in resolved.items() if k != "serving"})


def test_a_stochastic_policy_is_params_and_changes_the_hash() -> None:
    plain = ExperimentConfig().model_dump(mode="json")
    resolved = ExperimentConfig.from_mapping(STOCHASTIC).model_dump(mode="json")
    params = to_params(resolved)
    assert (params["serving.policy"], params["serving.temperature"], params["serving.depth"]) == (
        "softmax",
        "0.5",
        "20",
    )
    assert config_hash(resolved) != config_hash(plain)


@pytest.mark.parametrize("rows", [0, 1])
def test_the_candidates_table_is_an_artifact_only_when_the_run_served_stochastically(tmp_path: Path, rows: int) -> None:
    cells = pd.DataFrame([["0", "agent_0", "p1", 0, 0.5, True, False, 1.0]][:rows], columns=SERVING_CANDIDATES_COLUMNS)
    result = SimulationResult(serving_candidates=cells)
    write_run_files(tmp_path, {}, [], result, {}, pd.DataFrame(index=pd.Index([], name="step")), figures=False)
    path = tmp_path / "tables" / f"{SERVING_CANDIDATES}.parquet"
    assert path.is_file() == bool(rows)
    assert (tmp_path / "tables" / "exposures.parquet").is_file()
    if rows:
        pd.testing.assert_frame_equal(pd.read_parquet(path), cells)


def test_prism_ope_without_a_store_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--experiment", "x", "--tracking-uri", f"sqlite:///{tmp_path}/none.db"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("prism-ope: error: tracking-uri: no MLflow store") and error.count("\n") == 1


def test_prism_ope_validate_needs_targets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--validate", "--experiment", "smoke", "--seeds", "0"]) == 2
    assert "smoke' sets no serving.targets" in capsys.readouterr().err
