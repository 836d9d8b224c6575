"""Population files -> per-account values; what a file leaves out is drawn; every bad input is one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prism_experiments.agents import AgentsConfig, generate_population
from prism_experiments.agents.population import reply_talkativeness_offset
from prism_experiments.agents.population_file import (
    PopulationFileError,
    column_report,
    overlay,
    read_population_file,
)
from prism_experiments.domain import TOPICS

TOPIC_LIST = ("music", "sports", "science")


def test_csv_jsonl_and_parquet_give_the_same_accounts(tmp_path: Path) -> None:
    rows = [
        {"agent_id": "ann", "interests": "music|science", "activity": 0.5, "post_rate": 0.1},
        {"agent_id": "bob", "interests": "sports", "activity": None, "post_rate": 0.3},
    ]
    pd.DataFrame(rows).to_csv(tmp_path / "people.csv", index=False)
    pd.DataFrame(rows).to_parquet(tmp_path / "people.parquet", index=False)
    (tmp_path / "people.jsonl").write_text(
        "\n".join(json.dumps(row | {"interests": row["interests"].split("|")}) for row in rows) + "\n"
    )
    for name in ("people.csv", "people.parquet", "people.jsonl"):
        table = read_population_file(tmp_path / name, TOPIC_LIST)
        assert table.ids == ["ann", "bob"], name
        assert table.interests == [["music", "science"], ["sports"]], name
        assert table.given["activity"].tolist() == [True, False], name
        assert table.numbers["activity"][0] == 0.5 and table.numbers["post_rate"].tolist() == [0.1, 0.3], name
        assert table.file_attributes() == ("interests", "activity", "post_rate"), name
        assert "like_bias" in table.drawn_attributes() and "archetype_weights" in table.drawn_attributes()


def test_archetype_columns_are_normalised_per_row_and_missing_ones_weigh_zero(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text("agent_id,archetype_analyst,archetype_skeptic,nickname\na,3,1,Al\nb,,,Bea\n")
    table = read_population_file(path, TOPIC_LIST)
    assert table.archetypes[0].tolist() == [0.75, 0.0, 0.25, 0.0, 0.0]
    assert table.given["archetype_weights"].tolist() == [True, False]
    assert table.ignored_columns == ("nickname",)


def test_overlay_keeps_the_drawn_values_a_file_leaves_out(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text("agent_id,interests,activity\nagent_0001,music,0.9\nagent_0000,,\n")
    table = read_population_file(path, TOPIC_LIST)
    config = AgentsConfig(n_agents=3)
    drawn = generate_population(config, TOPIC_LIST, 7)
    rows = np.array([1, 0, -1])  # agent_0000 -> row 2, agent_0001 -> row 1, agent_0002 not in the file
    agents = overlay(drawn, table, rows, config)
    assert agents[1].interests == ["music"] and agents[1].activity == 0.9
    assert agents[1].post_rate == drawn[1].post_rate and agents[1].archetype_weights == drawn[1].archetype_weights
    assert agents[0] == drawn[0] and agents[2] == drawn[2]
    assert column_report(table, rows)["activity"] == (1, 3)


def test_a_file_post_rate_moves_a_drawn_reply_bias_by_the_talkativeness_offset(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text("agent_id,post_rate\nagent_0000,0.6\n")
    config = AgentsConfig(n_agents=1, reply_post_rate_elasticity=1.0)
    drawn = generate_population(config, TOPIC_LIST, 2)
    (agent,) = overlay(drawn, read_population_file(path, TOPIC_LIST), np.array([0]), config)
    offsets = reply_talkativeness_offset(np.array([0.6, drawn[0].post_rate]), config)
    assert agent.post_rate == 0.6
    assert agent.reply_bias == pytest.approx(drawn[0].reply_bias + offsets[0] - offsets[1])


BAD_INPUTS = [
    # (file name, content, the message after "<path>: ")
    ("people.csv", "", "header: the file is empty (expected a header row)"),
    ("people.csv", "agent_id,activity\n", "no accounts (the file has no data rows)"),
    ("people.csv", "id,activity\na,0.1\n", "header: missing required column 'agent_id' (found: id, activity)"),
    ("people.csv", "agent_id\na\nb\na\n", "row 3, column 'agent_id': duplicate id 'a' (first seen in row 1)"),
    ("people.csv", "agent_id,activity\na,0.1\n,0.2\n", "row 2, column 'agent_id': missing value (required)"),
    ("people.csv", "agent_id\nann lee\n", "row 1, column 'agent_id': id 'ann lee' contains whitespace"),
    (
        "people.csv",
        "agent_id,interests\na,music|cooking\n",
        "row 1, column 'interests': unknown topic 'cooking'; allowed",
    ),
    (
        "people.csv",
        "agent_id,interests\na,music|music\n",
        "row 1, column 'interests': must name 1 to 3 distinct topics",
    ),
    (
        "people.csv",
        "agent_id,activity\na,0.5\nb,1.5\n",
        "row 2, column 'activity': must be a number in [0, 1], got '1.5'",
    ),
    ("people.csv", "agent_id,post_rate\na,-0.1\n", "row 1, column 'post_rate': must be a number in [0, 1]"),
    ("people.csv", "agent_id,like_bias\na,lots\n", "row 1, column 'like_bias': must be a finite number, got 'lots'"),
    ("people.csv", "agent_id,archetype_analyst\na,0\n", "row 1, column 'archetype_analyst': archetype weights must"),
    (
        "people.csv",
        "agent_id,archetype_skeptic\na,-1\n",
        "row 1, column 'archetype_skeptic': must be a number in [0, inf]",
    ),
    (
        "people.jsonl",
        '{"agent_id": "a"}\n{"agent_id": 1.5}\n',
        "row 2, column 'agent_id': must be a string or an integer",
    ),
    ("people.jsonl", '{"agent_id": "a"}\nnot json\n', "row 2, column '-': invalid JSON"),
    ("people.tsv", "agent_id\na\n", "unsupported file type '.tsv'; allowed: .csv, .jsonl, .parquet"),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD_INPUTS, ids=[m[:40] for *_, m in BAD_INPUTS])
def test_every_bad_input_is_one_line_naming_the_file_row_and_column(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(PopulationFileError) as raised:
        read_population_file(path, TOPIC_LIST)
    text = str(raised.value)
    assert "\n" not in text and text.startswith(f"{path}: ") and message in text, text


def test_non_utf8_bytes_name_the_row(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_bytes(b"agent_id,activity\na,0.1\ncaf\xe9,0.2\n")
    with pytest.raises(PopulationFileError, match=r": row 2: not UTF-8 text \(byte 0xe9 at offset"):
        read_population_file(path, TOPIC_LIST)


def test_missing_file_and_directory_are_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_population_file(tmp_path / "absent.csv", TOPICS)
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(FileNotFoundError, match="is a directory, not a file"):
        read_population_file(tmp_path / "folder.csv", TOPICS)
