"""Every config group and every experiment composes and validates (Hydra compose API)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hydra.core.config_store import ConfigStore
from hydra.errors import MissingConfigException
from omegaconf import DictConfig, OmegaConf

from prism_experiments.composition import compose_experiment, experiment_config
from prism_experiments.config import ConfigError, ExperimentConfig, world_size_warning
from prism_experiments.harness.preflight import group_options
from prism_experiments.harness.sweep import job_overrides, validated_job_configs
from prism_experiments.locations import CONFIG_DIR
from prism_experiments.ranking import KNOWN_MODES, ranking_config
from prism_experiments.tracking.params import config_hash, to_params
from prism_experiments.tracking.store import resolve_tracking_uri

EXPERIMENTS = sorted(p.stem for p in (Path(CONFIG_DIR) / "experiment").glob("*.yaml"))
Compose = Callable[..., DictConfig]
SEED_INTERPOLATION = re.compile(r"\$\{[^}]*\bseed\b")  # an interpolation that reads `seed` (aa's arm)


def test_default_config_is_a_meaningful_experiment(compose_config: Compose, tmp_path: Path) -> None:
    cfg = experiment_config(compose_config())
    assert cfg.agents.n_agents >= 200 and cfg.simulation.n_steps == 48 and cfg.corpus.n_posts == 5000
    assert cfg.simulation.step_minutes == 60 and cfg.ranking.mode == "x_algo"
    assert cfg.paths.runs_dir == tmp_path
    assert resolve_tracking_uri(cfg) == f"sqlite:///{tmp_path}/mlflow.db"


def test_python_default_config_is_the_uncalibrated_world(compose_config: Compose, tmp_path: Path) -> None:
    composed = experiment_config(compose_config("world=uncalibrated"))
    assert composed == ExperimentConfig(paths={"runs_dir": tmp_path})
    # the config a run logs: the same dict whichever way the config was made
    assert composed.model_dump(mode="json") == ExperimentConfig(paths={"runs_dir": tmp_path}).model_dump(mode="json")


def test_make_run_default_is_the_calibrated_world(compose_config: Compose, tmp_path: Path) -> None:
    """`make run` = the models' defaults with conf/world/x2023.yaml on top, and nothing else."""
    world = OmegaConf.to_container(OmegaConf.load(Path(CONFIG_DIR) / "world" / "x2023.yaml"))
    expected = OmegaConf.merge(ExperimentConfig(paths={"runs_dir": tmp_path}).model_dump(mode="json"), world)
    composed = experiment_config(compose_config())
    assert composed == ExperimentConfig.model_validate(OmegaConf.to_container(expected))
    assert composed.network.mean_out_degree == world["network"]["mean_out_degree"]


def test_ranking_options_are_exactly_the_registered_modes() -> None:
    assert group_options(CONFIG_DIR)["ranking"] == sorted(KNOWN_MODES)
    assert not (Path(CONFIG_DIR) / "ranking").exists()  # the registry stores them: no hand-written option file


@pytest.mark.parametrize("mode", KNOWN_MODES)
def test_every_ranking_option_composes_to_its_models_defaults(compose_config: Compose, mode: str) -> None:
    assert experiment_config(compose_config(f"ranking={mode}")).ranking == ranking_config(mode)
    # the option holds only its defaults list: every value comes from the schema
    option = OmegaConf.to_container(ConfigStore.instance().load(f"ranking/{mode}.yaml").node)
    assert option == {"defaults": [f"/schema/ranking/{mode}@_here_", "_self_"]}


def test_an_override_reaches_only_the_selected_mode(compose_config: Compose) -> None:
    cfg = experiment_config(compose_config("ranking=pooled_boost", "ranking.priority_boost=0.2"))
    assert cfg.ranking == ranking_config("pooled_boost", priority_boost=0.2)
    with pytest.raises(ConfigError, match=r"ranking\.priority_boost: Extra inputs are not permitted"):
        experiment_config(compose_config("ranking=random", "+ranking.priority_boost=0.2"))


def test_corpus_file_option_needs_its_path(compose_config: Compose, tmp_path: Path) -> None:
    cfg = experiment_config(compose_config("corpus=file", f"corpus.path={tmp_path / 'posts.csv'}"))
    assert cfg.corpus.source == "file" and cfg.corpus.path == tmp_path / "posts.csv"
    with pytest.raises(ConfigError, match="corpus.path"):
        experiment_config(compose_config("corpus=file"))


def test_tracking_server_needs_a_uri(compose_config: Compose, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with pytest.raises(ConfigError, match="tracking.uri"):
        experiment_config(compose_config("tracking=server"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5999")
    cfg = experiment_config(compose_config("tracking=server"))
    assert resolve_tracking_uri(cfg) == "http://127.0.0.1:5999"


def test_tracking_uri_precedence(compose_config: Compose, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:////elsewhere/mlflow.db")
    assert resolve_tracking_uri(experiment_config(compose_config())) == "sqlite:////elsewhere/mlflow.db"
    explicit = experiment_config(compose_config("tracking.uri=http://127.0.0.1:5001"))
    assert resolve_tracking_uri(explicit) == "http://127.0.0.1:5001"


def test_outputs_go_under_the_runs_dir(compose_config: Compose, tmp_path: Path) -> None:
    cfg = compose_config("experiment=smoke")
    assert cfg.hydra.run.dir.startswith(f"{tmp_path}/hydra/smoke/")
    assert cfg.hydra.sweep.dir.startswith(f"{tmp_path}/hydra/smoke/")
    assert cfg.hydra.job.chdir is False
    assert cfg.hydra.launcher.n_jobs == 2
    assert "joblib" in cfg.hydra.launcher._target_.lower()


SWEEPS = {  # experiment -> (jobs, keys that vary besides the seed, ranking modes it runs)
    "ranking_modes": (40, {"ranking.mode"}, {"x_algo", "preference", "random", "chronological"}),
    "ranking_modes_10k": (80, {"ranking.mode"}, {"x_algo", "preference", "random", "chronological"}),
    "oon_scale": (40, {"ranking.out_of_network_scale"}, {"x_algo"}),
    "reply_scale": (40, {"ranking.reply_scale"}, {"x_algo"}),
    "author_diversity": (80, {"ranking.author_diversity_decay", "ranking.author_diversity_formula"}, {"x_algo"}),
    "all_modes": (10 * len(KNOWN_MODES), {"ranking.mode"}, set(KNOWN_MODES)),
    "smoke": (4, {"ranking.mode"}, {"x_algo", "random"}),
    "large": (1, set(), {"x_algo"}),
    "huge": (1, set(), {"x_algo"}),
    "llm_smoke": (4, {"ranking.mode"}, {"x_algo", "chronological"}),
    "llm_ranking_modes": (6, {"ranking.mode"}, {"x_algo", "chronological", "preference"}),
    "llm_vs_rules": (4, {"agents.decider.kind"}, {"x_algo"}),
    "engagement_vs_chronological": (30, {"ranking.mode"}, {"engagement", "chronological", "x_algo"}),
    "aa": (20, {"arm"}, {"x_algo"}),
    "divisive_content": (
        50,
        {"ranking.mode"},
        {"chronological", "x_algo", "engagement", "bridging", "stated_preference"},
    ),
    "ope_validation": (3, set(), {"x_algo"}),
    "ope_validation_wide": (3, set(), {"x_algo"}),
    # both modes have a retrain_every_steps, each at its own default (collaborative 6, engagement 1)
    "replicate_chaney2018": (20, {"ranking.mode", "ranking.retrain_every_steps"}, {"collaborative", "engagement"}),
    "replicate_goel2016": (10, set(), {"x_algo"}),
    "replicate_juul_ugander2021": (20, {"ranking.mode"}, {"x_algo", "chronological"}),
    "replicate_huszar2022": (20, {"ranking.mode"}, {"x_algo", "chronological"}),
    "replicate_guess2023": (20, {"ranking.mode"}, {"x_algo", "chronological"}),
    "replicate_gauthier2026": (20, {"ranking.mode"}, {"x_algo", "chronological"}),
    "replicate_milli2025": (30, {"ranking.mode"}, {"chronological", "engagement", "stated_preference"}),
    "replicate_nyhan2023": (20, {"ranking.like_minded_scale"}, {"x_algo"}),
    "replicate_guess2023_exposure": (20, {"ranking.mode"}, {"x_algo", "chronological"}),
}
#: experiments whose runs go to another MLflow experiment than their file's name: the replication suite's files
#: share one (docs/validation.md), so a run several findings need (the x_algo arm of goel2016, juul_ugander2021 and
#: huszar2022; the chronological arm of the last two; milli2025's chronological and nyhan2023's control arm, read by
#: guess2023_exposure) is one config and one run
EXPERIMENT_NAMES = {name: "replication" for name in SWEEPS if name.startswith("replicate_")}


def job_configs(compose_config: Compose, experiment: str, jobs: list[list[str]]) -> list[ExperimentConfig]:
    """Each job's validated config, as a sweep's driver makes them (one Hydra composition per shape of job)."""
    return validated_job_configs(compose_config(f"experiment={experiment}"), jobs)[0]


@pytest.mark.parametrize("experiment", ["oon_scale", "aa", "all_modes", "author_diversity"])
def test_job_configs_equal_one_hydra_composition_per_job(compose_config: Compose, experiment: str) -> None:
    """The driver composes once per shape of job and sets each job's plain values (its seed, a ranking value) itself,
    through OmegaConf where an interpolation reads one (aa's arm): the configs Hydra gives composing every job. A
    sample of each sweep's jobs, the first of two shapes among them."""
    jobs = job_overrides(compose_config(f"experiment={experiment}"))
    sample = [jobs[0], jobs[1], jobs[len(jobs) // 2], jobs[-1]]
    one_each = [experiment_config(compose_config(f"experiment={experiment}", *job)) for job in sample]
    shared, compositions = validated_job_configs(compose_config(f"experiment={experiment}"), sample)
    assert [c.model_dump(mode="json") for c in shared] == [c.model_dump(mode="json") for c in one_each]
    assert len({c.seed for c in shared}) > 1 and compositions < len(sample)


def test_aa_runs_two_arms_on_disjoint_seeds(compose_config: Compose) -> None:
    jobs = job_overrides(compose_config("experiment=aa"))
    configs = job_configs(compose_config, "aa", jobs)
    arms = {arm: sorted(c.seed for c in configs if c.arm == arm) for arm in ("A", "B")}
    assert arms == {"A": list(range(10)), "B": list(range(10, 20))}
    # the arm is a param (compare groups by it) and in the hash (a sweep does not skip the other arm)
    same_seed = [c.model_dump(mode="json") for c in (configs[0], configs[0].model_copy(update={"arm": "B"}))]
    assert config_hash(same_seed[0]) != config_hash(same_seed[1]) and to_params(same_seed[0])["arm"] == "A"
    # unset, it is neither: runs logged before the field existed keep their hash and params
    default = ExperimentConfig().model_dump(mode="json")
    assert "arm" not in to_params(default)
    assert config_hash(default) == config_hash({k: v for k, v in default.items() if k != "arm"})


def test_every_experiment_has_an_expectation() -> None:
    assert set(SWEEPS) == set(EXPERIMENTS)


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_experiment_job_validates_and_varies_what_it_says(compose_config: Compose, experiment: str) -> None:
    expected_jobs, varying, modes = SWEEPS[experiment]
    name = EXPERIMENT_NAMES.get(experiment, experiment)
    assert experiment_config(compose_config(f"experiment={experiment}")).experiment_name == name
    jobs = job_overrides(compose_config(f"experiment={experiment}"))
    assert len(jobs) == expected_jobs
    configs = job_configs(compose_config, experiment, jobs)
    assert {c.experiment_name for c in configs} == {name}
    flat = [_flatten(c.model_dump(mode="json")) for c in configs]
    shared = set.intersection(*(set(f) for f in flat))  # each mode has its own ranking.* keys
    differing = {k for k in shared if len({repr(f[k]) for f in flat}) > 1}
    assert differing == varying | ({"seed"} if expected_jobs > 1 else set())
    assert {f["ranking.mode"] for f in flat} == modes
    # a mode sweep runs every mode at its defaults
    assert "ranking.mode" not in varying or all(c.ranking == ranking_config(c.ranking.mode) for c in configs)


def test_all_modes_sweeps_every_registered_mode(compose_config: Compose) -> None:
    jobs = job_overrides(compose_config("experiment=all_modes"))
    modes = [dict(o.split("=", 1) for o in job)["ranking"] for job in jobs]
    assert sorted(set(modes)) == sorted(KNOWN_MODES)
    assert all(modes.count(mode) == 10 for mode in KNOWN_MODES)


def _flatten(data: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


@pytest.mark.parametrize(
    "override, field",
    [
        ("rag.feed_size=0", "rag.feed_size"),
        ("ranking.out_of_network_scale=1.5", "ranking.out_of_network_scale"),
        ("agents.n_agents=0", "agents.n_agents"),
        ("seed=-1", "seed"),
        ("corpus.appeal.sigma=0", r"corpus.appeal.sigma: must be in \(0, 3\]"),
        ("corpus.appeal.distribution=pareto", "corpus.appeal.distribution: Input should be 'none' or 'lognormal'"),
        ("corpus.author_weights=posts", "corpus.author_weights: Input should be 'uniform' or 'authoring_rate'"),
        (
            "network.followee_post_rate_elasticity=-1",
            r"network.followee_post_rate_elasticity: must be null \(off\) or a number in \[0, 5\]",
        ),
        (
            "network.followee_post_rate_elasticity=many",
            r"network.followee_post_rate_elasticity: must be null \(off\) or a number in \[0, 5\]",
        ),
    ],
)
def test_bad_values_fail_validation_naming_the_field(compose_config: Compose, override: str, field: str) -> None:
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")) as info:
        experiment_config(compose_config(override))
    assert "\n" not in str(info.value)


def test_unknown_group_option_is_refused_by_hydra(compose_config: Compose) -> None:
    with pytest.raises(MissingConfigException, match="bogus"):
        compose_config("ranking=bogus")


def test_unknown_ranking_mode_is_one_line_naming_the_field_and_every_mode() -> None:
    with pytest.raises(ConfigError) as info:
        ExperimentConfig.from_mapping({"ranking": {"mode": "bogus"}})
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("config error: ranking.mode: unknown mode 'bogus'; registered modes: ")
    assert message.rsplit(": ", 1)[1].split(", ") == list(KNOWN_MODES)


def test_the_research_sweep_runs_in_the_world_fitted_at_its_size() -> None:
    cfg = compose_experiment(["experiment=ranking_modes_10k", "seed=0", "ranking=x_algo"])
    assert cfg.world is not None and cfg.world.name == "x2023_10k" and cfg.agents.n_agents == 10_000
    assert world_size_warning(cfg.world, cfg.agents.n_agents) is None
    # the world carries x2023's activity values as well as its own fit
    assert cfg.agents.activity_median == 0.02356 and cfg.agents.reply_post_rate_elasticity is not None


def test_the_tail_world_is_the_research_world_with_post_appeal_on() -> None:
    tail = compose_experiment(["world=x2023_10k_tail", "agents.n_agents=10000"])
    plain = compose_experiment(["world=x2023_10k", "agents.n_agents=10000"])
    assert tail.world is not None and tail.world.name == "x2023_10k_tail"
    assert tail.corpus.appeal.distribution == "lognormal" and tail.corpus.appeal.sigma == 0.6626
    assert plain.corpus.appeal.distribution == "none"
    assert world_size_warning(tail.world, tail.agents.n_agents) is None
