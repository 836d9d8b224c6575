"""conf/schema is generated from the pydantic models and must stay in sync with them."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf
from pydantic import BaseModel

from prism_experiments.agents import AgentsConfig
from prism_experiments.config import (
    AgentsGroupConfig,
    ExperimentConfig,
    TrackingConfig,
    WorldConfig,
    world_size_warning,
)
from prism_experiments.config_schema import (
    REGENERATE,
    SCHEMA_DIR,
    field_comments,
    main,
    schema_files,
    stale_files,
    write_schema,
)
from prism_experiments.deciders import config_models as decider_models
from prism_experiments.deciders import decider_config
from prism_experiments.llm import backend_config_models
from prism_experiments.network import NetworkConfig
from prism_experiments.network.file_config import NetworkGroupConfig
from prism_experiments.ranking import KNOWN_MODES, config_models
from prism_experiments.ranking.modes.x_algo import XAlgoConfig
from prism_experiments.ranking.serving_config import ServingConfig


def test_schema_files_are_in_sync_with_the_models() -> None:
    stale = stale_files()
    assert not stale, f"conf/schema is out of date ({', '.join(map(str, stale))}); regenerate with: {REGENERATE}"


def test_every_group_and_every_mode_has_a_base() -> None:
    files = {str(path) for path in schema_files()}
    groups = {"corpus", "rag", "agents", "network", "simulation", "tracking"}
    optional = {"serving"}  # null in the root; conf/serving/ option files extend the model's defaults
    assert files == (
        {"root.yaml"}
        | {f"{g}.yaml" for g in groups | optional}
        | {f"ranking/{m}.yaml" for m in KNOWN_MODES}
        | {f"agents/decider/{kind}.yaml" for kind in decider_models()}
        | {f"agents/decider/llm/{backend}.yaml" for backend in backend_config_models()}
    )


@pytest.mark.parametrize("path", sorted(str(p) for p in schema_files()))
def test_each_base_loads_to_its_models_defaults(path: str) -> None:
    data = OmegaConf.to_container(OmegaConf.load(SCHEMA_DIR / path))
    assert isinstance(data, dict)
    defaults = ExperimentConfig().model_dump(mode="json")
    if path == "root.yaml":
        assert data == {key: defaults[key] for key in ("seed", "experiment_name", "arm", "world", "serving")}
    elif path == "serving.yaml":
        assert ServingConfig.model_validate(data) == ServingConfig()
    elif path.startswith("ranking/"):
        model = config_models()[Path(path).stem]
        assert model.model_validate(data) == model()
    elif path.startswith("agents/decider/llm/"):  # a field without a default is Hydra's ??? (set by the user)
        model = backend_config_models()[Path(path).stem]
        required = {name: "???" for name, info in model.model_fields.items() if info.is_required()}
        assert data == model.model_construct(**required).model_dump(mode="json")
    elif path.startswith("agents/decider/"):  # its `llm` comes from the agents/decider/llm group
        model = decider_models()[Path(path).stem]
        assert data == decider_config(Path(path).stem).model_dump(mode="json", exclude={"llm"})
    else:  # agents' `decider` comes from the agents/decider group
        assert data == {k: v for k, v in defaults[Path(path).stem].items() if k != "decider"}


@pytest.mark.parametrize(
    ("group", "group_model", "base_model"),
    # a group model: its base config plus the options of the group (agents: the decider and the population file;
    # network: the edge file); conf/<group>/default.yaml extends conf/schema/<group>.yaml
    [("agents", AgentsGroupConfig, AgentsConfig), ("network", NetworkGroupConfig, NetworkConfig)],
)
def test_a_group_base_mirrors_its_group_models_defaults(
    group: str, group_model: type[BaseModel], base_model: type[BaseModel]
) -> None:
    from_yaml = group_model.model_validate(OmegaConf.to_container(OmegaConf.load(SCHEMA_DIR / f"{group}.yaml")))
    assert from_yaml == group_model() and base_model.model_fields.keys() <= from_yaml.model_fields.keys()


def test_a_changed_default_makes_the_file_stale_and_regeneration_fixes_it(tmp_path: Path) -> None:
    write_schema(tmp_path)
    assert stale_files(tmp_path) == []
    target = tmp_path / "ranking" / "x_algo.yaml"
    target.write_text(target.read_text().replace("reply_scale: 0.75", "reply_scale: 0.5"))
    (tmp_path / "orphan.yaml").write_text("x: 1\n")
    assert stale_files(tmp_path) == [Path("orphan.yaml"), Path("ranking/x_algo.yaml")]
    write_schema(tmp_path)
    assert stale_files(tmp_path) == [] and not (tmp_path / "orphan.yaml").exists()


def test_the_check_command_names_the_regeneration_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("prism_experiments.config_schema.SCHEMA_DIR", tmp_path)
    write_schema(tmp_path)
    (tmp_path / "rag.yaml").unlink()
    assert main(["--check"]) == 1
    assert capsys.readouterr().out == f"stale: conf/schema/rag.yaml\nregenerate with: {REGENERATE}\n"


def test_field_comments_become_yaml_comments_above_their_key() -> None:
    text = schema_files()[Path("ranking/x_algo.yaml")]
    assert "# REQ-XALGO-3: out-of-network candidates x 0.75\nout_of_network_scale: 0.75\n" in text
    # inherited from CandidateSourcingConfig
    assert "# REQ-XALGO-1: in-network candidates per agent, best by similarity\nin_network_limit: 50\n" in text
    assert text.startswith(f"# generated by `{REGENERATE}` from prism_experiments.ranking.modes.x_algo.XAlgoConfig")
    assert field_comments(XAlgoConfig)["author_diversity_formula"] == [
        "`spec`: max(floor, decay^k) (REQ-XALGO-4); `home_mixer`: (1 - floor) * decay^k + floor",
        "(twitter/the-algorithm, home-mixer DiversityDiscountProvider)",
    ]
    assert field_comments(TrackingConfig)["uri"] == [
        "explicit tracking URI; else $MLFLOW_TRACKING_URI; else sqlite under paths.runs_dir"
    ]


def test_a_description_is_the_comment_when_there_is_no_hash_colon_comment() -> None:
    class Described(BaseModel):
        plain: int = 1
        described: int = 2

    Described.model_fields["described"].description = "what it means"
    assert field_comments(Described) == {"described": ["what it means"]}


@pytest.mark.parametrize(("n_agents", "warned"), [(200, False), (100, False), (400, False), (99, True), (401, True)])
def test_a_run_more_than_twice_off_its_worlds_fitted_size_is_warned(n_agents: int, warned: bool) -> None:
    world = WorldConfig(name="x2023", fitted_n_agents=200)
    message = world_size_warning(world, n_agents)
    assert (message is not None) == warned
    if message:
        assert "\n" not in message and "world=x2023" in message and "200" in message and str(n_agents) in message
    assert world_size_warning(None, 10_000) is None  # the uncalibrated model claims no size
