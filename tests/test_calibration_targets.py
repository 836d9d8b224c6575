"""The targets file model: the shipped set loads; bad files fail with one line naming the field."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from prism_experiments.calibration.cli import main
from prism_experiments.calibration.targets import TargetsError, load_targets, parse_targets

SOURCE = {"citation": "a paper", "locator": "table 1", "statement": "half"}
VALID = {
    "name": "tiny",
    "run_overrides": ["experiment=smoke"],
    "targets": {"inn": {"metric": "inn_share", "value": 0.5, "scale": 0.05, "source": SOURCE}},
    "parameters": {"network.mean_out_degree": {"low": 2.0, "high": 20.0}},
}


def with_change(path: tuple[str, ...], value: object) -> dict:
    data = copy.deepcopy(VALID)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


def test_valid_file_parses() -> None:
    target_set = parse_targets(VALID)
    assert list(target_set.active_targets()) == ["inn"]
    assert target_set.parameters["network.mean_out_degree"].high == 20.0


def test_shipped_x2023_loads_with_sources() -> None:
    target_set = load_targets("x2023")
    assert {"in_network_share", "authorship_top_decile", "cascades_size_one"} <= set(target_set.active_targets())
    assert target_set.targets["largest_cascades"].excluded
    assert all(t.source.citation and t.source.statement for t in target_set.targets.values())


def test_shipped_x2023_10k_fits_at_10000_agents_with_the_cascade_shape_reported() -> None:
    target_set = load_targets("x2023_10k")
    assert "agents.n_agents=10000" in target_set.run_overrides
    assert "agents.reply_post_rate_elasticity" in target_set.parameters  # null by default, fittable all the same
    shape = ("cascades_reaching_10", "cascades_reaching_100", "large_cascade_virality")
    assert all(target_set.targets[name].excluded for name in shape)  # figures not checked against the paper here


def test_a_null_default_is_fittable_only_when_listed() -> None:
    listed = with_change(("parameters",), {"agents.reply_post_rate_elasticity": {"low": 0.0, "high": 2.0}})
    assert "agents.reply_post_rate_elasticity" in parse_targets(listed).parameters
    with pytest.raises(TargetsError, match="unknown key 'agents.decider.kind'"):  # not a number
        parse_targets(with_change(("parameters",), {"agents.decider.kind": {"low": 0.0, "high": 1.0}}))


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            ("targets", "inn", "metric"),
            "nope",
            "targets.inn.metric: unknown metric 'nope'; allowed: feed_topic_entropy",
        ),
        (("targets", "inn", "interval"), [0.4, 0.6], "targets.inn.value: give exactly one of value and interval"),
        (("targets", "inn", "scale"), 0, "targets.inn.scale"),
        (("targets", "inn", "colour"), "red", "targets.inn.colour"),
        (("targets", "inn", "source"), {"citation": "x"}, "targets.inn.source.locator"),
        (("targets", "inn", "excluded"), "too small", "targets: every target is excluded"),
        (("parameters",), {"agents.nope": {"low": 0, "high": 1}}, "parameters: unknown key 'agents.nope'; fittable"),
        (
            ("parameters",),
            {"ranking.out_of_network_scale": {"low": 0, "high": 1}},
            "unknown key 'ranking.out_of_network_scale'",
        ),
        (("parameters",), {"network.homophily": {"low": 3, "high": 1}}, "low: must be < high"),
    ],
)
def test_bad_files_fail_with_one_line_naming_the_field(path: tuple[str, ...], value: object, expected: str) -> None:
    with pytest.raises(TargetsError) as info:
        parse_targets(with_change(path, value), "t.yaml")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("t.yaml: ")
    assert expected in message


def test_missing_file_lists_the_available_sets(tmp_path: Path) -> None:
    with pytest.raises(TargetsError, match=r"no targets file .*nope.yaml; available: .*x2023"):
        load_targets("nope")


def test_cli_bad_input_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(with_change(("targets", "inn", "metric"), "nope")))
    assert main(["--targets", str(bad), "--runs-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "targets.inn.metric: unknown metric 'nope'" in err
    with pytest.raises(SystemExit) as info:
        main(["--targets", "x2023", "--trials", "0"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--trials" in err and ">= 1" in err
