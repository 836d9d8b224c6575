"""Corpus files that cannot become posts fail with one line naming the file and the row."""

from __future__ import annotations

from pathlib import Path

import pytest

from prism_experiments.corpus.loader import MAX_TEXT_CHARS, CorpusFileError, load_posts

HEADER = "id,author_id,text,timestamp\n"
ROW = "p{i},ana,post number {i},2024-01-01T00:00:00Z\n"


def test_non_utf8_csv_names_the_row(tmp_path: Path) -> None:
    path = tmp_path / "posts.csv"
    body = HEADER + "".join(ROW.format(i=i) for i in range(5))
    path.write_bytes(body.encode() + b"p9,ana,caf\xe9 au lait,2024-01-01T00:00:00Z\n")
    with pytest.raises(CorpusFileError, match=rf"^{path}: row 6: not UTF-8 text \(byte 0xe9"):
        load_posts(path)


def test_non_utf8_jsonl_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "posts.jsonl"
    good = '{"id": "p1", "author_id": "a", "text": "x", "timestamp": "2024-01-01T00:00:00Z"}\n'
    path.write_bytes(good.encode() * 3 + b'{"id": "p9", "author_id": "a", "text": "\xff", "timestamp": 0}\n')
    with pytest.raises(CorpusFileError, match=rf"^{path}: row 4: not UTF-8 text \(byte 0xff"):
        load_posts(path)


@pytest.mark.parametrize(
    "line, message",
    [
        (
            '{"id": "p9", "author_id": "a", "text": "tab\there", "timestamp": 0}',
            "Invalid control character at character 44",
        ),
        ('{"id": "p9", "author_id": "a" "text": "x"}', "Expecting ',' delimiter at character 31"),
        ('{"id": "p9",', "Expecting property name enclosed in double quotes at the end of the line"),
    ],
    ids=["raw-tab", "missing-comma", "cut-short"],
)
def test_broken_jsonl_says_what_is_wrong_and_where_on_the_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "posts.jsonl"
    good = '{"id": "p1", "author_id": "a", "text": "x", "timestamp": "2024-01-01T00:00:00Z"}\n'
    path.write_text(good * 2 + line + "\n")
    with pytest.raises(CorpusFileError) as raised:
        load_posts(path)
    assert str(raised.value).startswith(f"{path}: row 3, column '-': invalid JSON ({message})"), raised.value
    assert ("\\t or \\n" in str(raised.value)) == ("control" in message)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_file_without_rows_is_rejected(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"posts{suffix}"
    path.write_text(HEADER if suffix == ".csv" else "\n\n")
    with pytest.raises(CorpusFileError, match="no posts"):
        load_posts(path)


def test_text_longer_than_the_limit_is_rejected_and_the_limit_itself_accepted(tmp_path: Path) -> None:
    path = tmp_path / "posts.csv"
    path.write_text(
        HEADER
        + f"p1,ana,{'x' * MAX_TEXT_CHARS},2024-01-01T00:00:00Z\n"
        + f"p2,ana,{'y' * (MAX_TEXT_CHARS + 1)},2024-01-01T00:00:00Z\n"
    )
    with pytest.raises(CorpusFileError, match=r"row 2, column 'text': must be at most 25,000 characters, got 25,001"):
        load_posts(path)
    path.write_text(HEADER + f"p1,ana,{'x' * MAX_TEXT_CHARS},2024-01-01T00:00:00Z\n")
    assert len(load_posts(path)[0].text) == MAX_TEXT_CHARS
