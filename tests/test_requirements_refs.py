"""Traceability: every requirement ID the project cites is listed in docs/requirements.md, every module and test
listed there exists, and no citation of a document outside the repository is left."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "docs" / "requirements.md"
#: where citations live: code, configs, docs, tests, and the build files
SCANNED = ("prism_experiments", "hydra_plugins", "conf", "docs", "tests", "README.md", "Makefile", "pyproject.toml")
SUFFIXES = {".py", ".yaml", ".yml", ".md", ".toml", ""}
#: an ID (REQ-XALGO-4, REQ-FEED-2.2, REQ-FEED-PERF-1) or a group (REQ-RERANK)
REQ_ID = re.compile(r"\bREQ-[A-Z]+(?:-[A-Z]+)*(?:-\d+(?:\.\d+)?)?\b")
#: a row of the requirements tables: | ID | text | `module` | `test file::function` |
ROW = re.compile(r"^\| (REQ-[A-Z0-9.-]+) \| .+ \| `([^`]+)` \| `([^`]+)` \|$", re.MULTILINE)
#: citations of documents the repository does not hold
DANGLING = {
    "spec N": re.compile(r"\bspecs? 00\d\b", re.IGNORECASE),
    "FR-n": re.compile(r"(?<![\w-])N?FR-\d"),
    "issue 28": re.compile(r"\bissue #?28\b", re.IGNORECASE),
    "../shared/": re.compile(r"\bshared/(?:seeds|DESIGN)"),
}
#: where no issue may be cited by number: everything the repository holds (the docs' history included: it dates its
#: passes and names the requirement they served)
CODE = SCANNED
#: an issue cited by number ("issue 41", "Issue #41's", "issues 41 and 42", "issue-41"): cite a REQ- ID instead, or
#: drop a reference that only names history
ISSUE_NUMBER = re.compile(r"\bissues?[\s-]*(?:no\.\s*)?#?\d", re.IGNORECASE)


def scanned_files(roots: tuple[str, ...] = SCANNED) -> list[Path]:
    """Every text file under `roots` (caches and this file left out)."""
    files: list[Path] = []
    for name in roots:
        path = ROOT / name
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        files += [
            f
            for f in candidates
            if f.is_file() and f.suffix in SUFFIXES and "__pycache__" not in f.parts and f != Path(__file__)
        ]
    return files


def listed_rows() -> list[tuple[str, str, str]]:
    return ROW.findall(REQUIREMENTS.read_text(encoding="utf-8"))


def test_the_requirements_tables_parse_and_ids_are_unique() -> None:
    ids = [row[0] for row in listed_rows()]
    assert len(ids) >= 30, "docs/requirements.md's tables no longer parse as | ID | text | `module` | `test` |"
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    assert all(REQ_ID.fullmatch(i) for i in ids), [i for i in ids if not REQ_ID.fullmatch(i)]


def test_every_cited_requirement_is_listed() -> None:
    listed = {row[0] for row in listed_rows()}
    groups = {i.rsplit("-", 1)[0] for i in listed} | {i.split("-")[0] + "-" + i.split("-")[1] for i in listed}
    unknown = [
        f"{path.relative_to(ROOT)}:{ref}"
        for path in scanned_files()
        for ref in sorted(set(REQ_ID.findall(path.read_text(encoding="utf-8", errors="replace"))))
        if ref not in listed and ref not in groups
    ]
    assert not unknown, f"cited but not in docs/requirements.md: {unknown}"


@pytest.mark.parametrize("requirement,module,test", listed_rows())
def test_each_listed_module_and_test_exists(requirement: str, module: str, test: str) -> None:
    assert (ROOT / module).is_file(), f"{requirement}: module {module} does not exist"
    test_file, _, function = test.partition("::")
    assert (ROOT / test_file).is_file(), f"{requirement}: test file {test_file} does not exist"
    assert function, f"{requirement}: name the test as file::function"
    assert re.search(rf"^def {re.escape(function)}\(", (ROOT / test_file).read_text(), re.MULTILINE), (
        f"{requirement}: {test_file} has no test {function}"
    )


def test_no_citation_of_an_outside_document_is_left() -> None:
    left = [
        f"{path.relative_to(ROOT)}:{number}: {what}"
        for path in scanned_files()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        for what, pattern in DANGLING.items()
        if pattern.search(line)
    ]
    assert not left, left


def test_no_issue_is_cited_by_number_in_the_code_or_the_docs() -> None:
    left = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in scanned_files(CODE)
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if ISSUE_NUMBER.search(line)
    ]
    assert not left, left


@pytest.mark.parametrize(
    ("line", "cited"),
    [
        ("Target (issue 43): <= 2 min", True),
        ("Issue 41's measure", True),
        ('source="issue #41"', True),
        ("(issues 41 and 42)", True),
        ("# see issue-44", True),
        ("(issue 42, item 5)", True),
        ("Target (REQ-PERF-5): <= 2 min", False),
        ("an issue with 2 cores", False),
        ("ray-project/ray#11966", False),
    ],
)
def test_the_issue_number_pattern_matches_what_it_should(line: str, cited: bool) -> None:
    assert bool(ISSUE_NUMBER.search(line)) is cited


@pytest.mark.parametrize(
    "line,dangling",
    [
        ("spec 002's table", True),
        ("(specs 000-004)", True),
        ("(spec 001, FR-5.3)", True),
        ("issue 28's bar", True),
        ("REQ-FEED-5.3", False),
    ],
)
def test_the_dangling_patterns_match_what_they_should(line: str, dangling: bool) -> None:
    assert any(p.search(line) for p in DANGLING.values()) is dangling
