"""Follow-graph files -> edge arrays: the formats, and every bad input with its one-line message."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prism_experiments.network.edge_file import EdgeFileError, read_edge_file


def edges_of(path: Path, **options: object) -> set[tuple[str, str]]:
    loaded = read_edge_file(path, **options)  # type: ignore[arg-type]
    return {(str(loaded.ids[a]), str(loaded.ids[b])) for a, b in zip(loaded.follower, loaded.followee, strict=True)}


def test_an_edge_list_with_comments_blank_lines_and_tabs_reads_every_follow(tmp_path: Path) -> None:
    path = tmp_path / "edges.txt"
    path.write_text("# a comment\n1 2\n\n2\t3   # the end of a line is a comment too\n   # indented comment\n  3 1\n")
    loaded = read_edge_file(path)
    assert edges_of(path) == {("1", "2"), ("2", "3"), ("3", "1")}
    assert list(loaded.ids) == ["1", "2", "3"] and loaded.rows == 3
    assert (loaded.self_loops, loaded.duplicates) == (0, 0)


def test_csv_parquet_and_gzip_give_the_same_graph(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"follower_id": ["ann", "bob", "cy"], "followee_id": ["bob", "cy", "ann"], "weight": [1, 2, 3]}
    )
    frame.to_csv(tmp_path / "edges.csv", index=False)
    frame.to_parquet(tmp_path / "edges.parquet", index=False)
    with gzip.open(tmp_path / "edges.txt.gz", "wt") as handle:
        handle.write("ann bob\nbob cy\ncy ann\n")
    expected = {("ann", "bob"), ("bob", "cy"), ("cy", "ann")}
    for name in ("edges.csv", "edges.parquet", "edges.txt.gz"):
        assert edges_of(tmp_path / name) == expected, name


def test_integer_ids_in_parquet_and_spaces_around_csv_ids_name_the_same_accounts(tmp_path: Path) -> None:
    pd.DataFrame({"follower_id": [1, 2], "followee_id": [2, 1]}).to_parquet(tmp_path / "edges.parquet")
    (tmp_path / "edges.csv").write_text("follower_id, followee_id\n1, 2\n 2,1\n")
    assert edges_of(tmp_path / "edges.parquet") == edges_of(tmp_path / "edges.csv") == {("1", "2"), ("2", "1")}


def test_a_mutual_file_gives_two_follows_per_line_and_duplicates_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "edges.txt"
    path.write_text("a b\nb a\na b\nb c\n")
    directed = read_edge_file(path)
    assert directed.n_edges == 3 and directed.duplicates == 1
    mutual = read_edge_file(path, directed=False)
    assert edges_of(path, directed=False) == {("a", "b"), ("b", "a"), ("b", "c"), ("c", "b")}
    assert mutual.duplicates == 4  # 8 follows from 4 mutual lines, 4 distinct


def test_self_follows_are_dropped_and_counted_or_an_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "edges.txt"
    path.write_text("# header\na b\nb b\nc c\n")
    loaded = read_edge_file(path)
    assert loaded.self_loops == 2 and edges_of(path) == {("a", "b")}
    with pytest.raises(
        EdgeFileError, match=rf"^{re.escape(str(path))}: line 3, field 'followee_id': self-follow \('b'"
    ):
        read_edge_file(path, self_loops="error")
    csv = tmp_path / "edges.csv"
    csv.write_text("follower_id,followee_id\na,b\nc,c\n")
    with pytest.raises(EdgeFileError, match=r"row 2, column 'followee_id': self-follow \('c' follows itself\)"):
        read_edge_file(csv, self_loops="error")


def test_ids_are_numbered_across_chunks_in_the_order_the_file_names_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import prism_experiments.network.edge_file as edge_file

    monkeypatch.setattr(edge_file, "CHUNK_ROWS", 2)
    path = tmp_path / "edges.txt"
    path.write_text("x y\ny z\nz x\nw x\nx w\n")
    loaded = read_edge_file(path)
    assert list(loaded.ids) == ["x", "y", "z", "w"]
    assert edges_of(path) == {("x", "y"), ("y", "z"), ("z", "x"), ("w", "x"), ("x", "w")}
    # a chunk that starts on a bad line still names the file's line
    path.write_text("x y\ny z\nz\n")
    with pytest.raises(EdgeFileError, match=r"line 3, field 'followee_id': missing followee id"):
        read_edge_file(path)


def bad_file(tmp_path: Path, name: str, content: bytes | str | None) -> Path:
    path = tmp_path / name
    if content is None:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


BAD_INPUTS = [
    # (file name, content (None: a directory), exception, the message after "<path>: ")
    ("edges.txt", "", EdgeFileError, "the file is empty (expected one 'follower followee' pair per line)"),
    ("edges.csv", "", EdgeFileError, "the file is empty (expected a header row naming follower_id, followee_id)"),
    ("edges.csv", "follower_id,followee_id\n", EdgeFileError, "no edges (the file holds a header and no data rows)"),
    ("edges.txt", "# only a comment\n\n", EdgeFileError, "no edges (the file holds only comments and blank lines)"),
    ("edges.txt", "a a\nb b\n", EdgeFileError, "no edges (all 2 of its lines are self-follows)"),
    ("edges.csv", "source,target\na,b\n", EdgeFileError, "header: missing column 'follower_id'; required: "),
    ("edges.csv", "follower_id,target\na,b\n", EdgeFileError, "header: missing column 'followee_id'"),
    ("edges.txt", "a b\nc d e\n", EdgeFileError, "line 2: expected 2 ids ('follower followee'), found 3 fields"),
    ("edges.txt", "a b\n# c\nc\n", EdgeFileError, "line 3, field 'followee_id': missing followee id"),
    ("edges.csv", "follower_id,followee_id\na,b\nc d,e\n", EdgeFileError, "row 2, column 'follower_id': id 'c d'"),
    ("edges.csv", "follower_id,followee_id\na,b\nc,\n", EdgeFileError, "row 2, column 'followee_id': missing value"),
    ("edges.txt", "a b\nc\u00a0d e\n", EdgeFileError, "line 2, field 'follower_id': id 'c\\xa0d' contains whitespace"),
    ("edges.txt", b"a b\ncaf\xe9 b\n", EdgeFileError, "line 2: not UTF-8 text (byte 0xe9 at column 4)"),
    ("edges.csv", b"follower_id,followee_id\na,b\n\xff,b\n", EdgeFileError, "row 2: not UTF-8 text (byte 0xff"),
    ("edges.json", "{}", EdgeFileError, "unsupported file type '.json'; allowed: .csv, .parquet, .txt, .edges"),
    ("edges.parquet", "not parquet", EdgeFileError, "not a readable Parquet file"),
    ("edges.txt.gz", b"not gzip", EdgeFileError, "cannot be read"),
    ("absent.txt", "-", FileNotFoundError, "no such file"),
    ("folder.txt", None, FileNotFoundError, "is a directory, not a file"),
]


@pytest.mark.parametrize(("name", "content", "error", "message"), BAD_INPUTS, ids=[m[:40] for *_, m in BAD_INPUTS])
def test_every_bad_input_is_one_line_naming_the_file_and_where(
    tmp_path: Path, name: str, content: bytes | str | None, error: type[Exception], message: str
) -> None:
    path = tmp_path / name if name == "absent.txt" else bad_file(tmp_path, name, content)
    with pytest.raises(error) as raised:
        read_edge_file(path)
    text = str(raised.value)
    assert "\n" not in text and text.startswith(f"{path}: ") and message in text, text


def test_parquet_columns_of_floats_or_with_gaps_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "edges.parquet"
    pd.DataFrame({"follower_id": [1.5, 2.0], "followee_id": [2.0, 1.0]}).to_parquet(path)
    with pytest.raises(EdgeFileError, match=r"column 'follower_id': must hold strings or integers, got double"):
        read_edge_file(path)
    pd.DataFrame({"follower_id": ["a", "b"], "followee_id": ["b", None]}).to_parquet(path)
    with pytest.raises(EdgeFileError, match=r"row 2, column 'followee_id': missing value \(required\)"):
        read_edge_file(path)


def test_edges_are_sorted_distinct_positions(tmp_path: Path) -> None:
    path = tmp_path / "edges.txt"
    rng = np.random.default_rng(3)
    pairs = rng.integers(0, 40, size=(500, 2))
    path.write_text("".join(f"n{a} n{b}\n" for a, b in pairs))
    loaded = read_edge_file(path)
    expected = {(f"n{a}", f"n{b}") for a, b in pairs if a != b}
    assert edges_of(path) == expected and loaded.n_edges == len(expected)
    keys = loaded.follower * loaded.n_nodes + loaded.followee
    assert np.all(np.diff(keys) > 0)
    assert loaded.self_loops == int((pairs[:, 0] == pairs[:, 1]).sum())
    assert loaded.duplicates == 500 - loaded.self_loops - len(expected)
