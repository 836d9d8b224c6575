"""The docs run: every fenced block of README.md and docs/*.md is executed (Python), run (cheap shell commands),
parsed (JSON, YAML) or marked `<!-- illustrative -->`; a block none of these is a failure, so a new block must be
decided (docs/testing.md, "Code blocks in the docs"). docs/history/ is dated history and left out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from docs_blocks import MARKER, PAGES, ROOT, Block, all_blocks, blocks
from process_helpers import forked_run

#: a page's Python blocks, run in order in one fresh module (as a reader pastes them into one session); a traceback
#: names the page and its line
RUNNER = """
import json, sys, types
module = types.ModuleType("docs_page")
sys.modules["docs_page"] = module  # pydantic resolves a block's annotations through its module
for path, line, text in json.load(sys.stdin):
    exec(compile("\\n" * line + text, path, "exec"), module.__dict__)
"""


def python_pages() -> list[Path]:
    return [page for page in PAGES if any(block.kind == "python" for block in blocks(page))]


def shell_blocks() -> list[Block]:
    return [block for block in all_blocks() if block.kind == "shell"]


def environment(tmp_path: Path, cache_dir: Path) -> dict[str, str]:
    """The reader's environment, with every path the blocks write under `tmp_path` (the embedding cache shared)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("MLFLOW_", "PRISM_"))}
    bin_dir = str(Path(sys.executable).parent)
    return env | {
        "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        "PRISM_RUNS_DIR": str(tmp_path / "runs"),
        "PRISM_CACHE_DIR": str(cache_dir),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
    }


def test_every_block_is_run_parsed_or_marked_illustrative() -> None:
    undecided = [f"{block.where}: ```{block.info}" for block in all_blocks() if block.kind == "unclassified"]
    assert undecided == [], (
        f"blocks this test can neither run nor parse: make them cheap, or put {MARKER} on the line before the fence "
        "(docs/testing.md, 'Code blocks in the docs')"
    )
    assert sum(block.kind in ("python", "shell") for block in all_blocks()) >= 10


def test_a_marker_stands_right_before_a_fence() -> None:
    """A marker anywhere else marks nothing: the block it was meant for would run (or fail the test above)."""
    stray = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        fences = {block.line for block in blocks(page)}
        inside = {line for block in blocks(page) for line in range(block.line, block.line + block.text.count("\n") + 2)}
        stray += [
            f"{page.relative_to(ROOT)}:{number}"
            for number, line in enumerate(lines, start=1)
            if line.strip() == MARKER and number + 1 not in fences and number not in inside
        ]
    assert stray == []


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("page", python_pages(), ids=lambda page: page.name)
def test_the_python_blocks_of_a_page_run(page: Path, tmp_path: Path, warm_smoke_cache: Path) -> None:
    """On the session's warm cache (the default pool's texts and the topic descriptions): a reader's second run,
    which encodes no text a page's small worlds draw, rather than a model load and a cold encoding per page."""
    code = [(str(block.page), block.line, block.text) for block in blocks(page) if block.kind == "python"]
    result = forked_run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps(code),
        cwd=tmp_path,
        env=environment(tmp_path, warm_smoke_cache),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A working directory that looks like the repository's root to a reader's command (its Makefile and .venv),
    and keeps what the command writes in tmp."""
    work = tmp_path / "clone"
    work.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        (work / name).symlink_to(ROOT / name)
    (work / ".venv").symlink_to(Path(sys.executable).parents[1])
    return work


@pytest.mark.integration
@pytest.mark.parametrize("block", shell_blocks(), ids=lambda block: block.where)
def test_the_cheap_shell_blocks_run(block: Block, clone: Path, session_cache_dir: Path) -> None:
    result = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.text],
        cwd=clone,
        env=environment(clone, session_cache_dir),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"{block.where}:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"


@pytest.mark.parametrize(
    "block", [b for b in all_blocks() if b.kind in ("json", "yaml")], ids=lambda block: block.where
)
def test_the_json_and_yaml_blocks_parse(block: Block) -> None:
    if block.kind == "json":
        json.loads(block.text)
    else:
        yaml.safe_load(block.text)
