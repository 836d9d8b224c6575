"""The fenced code blocks of README.md and docs/*.md, and how each is tested (docs/testing.md, "Code blocks in the
docs"): a Python block is executed, a shell block of cheap commands is run, a JSON or YAML block is parsed, and any
other block is marked illustrative by the line `<!-- illustrative -->` right before its fence."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the pages whose blocks are tested: docs/history/ is dated history, quoted as it was run, and is left out
PAGES: tuple[Path, ...] = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
#: the line right before a fence that says the block is not run: pseudo-code, output, or a command that costs minutes
MARKER = "<!-- illustrative -->"
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)(?P<info>[^`]*)$")
SHELLS = ("bash", "sh", "shell")


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, the line of its opening fence (1-based), its info string and its text."""

    page: Path
    line: int
    info: str
    text: str
    marked: bool

    @property
    def language(self) -> str:
        return self.info.split()[0] if self.info.split() else ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def kind(self) -> str:
        """How the docs tests treat it: illustrative, python, shell, json, yaml, or unclassified (a test failure)."""
        if self.marked:
            return "illustrative"
        if self.language == "python":
            return "python"
        if self.language in SHELLS and all(cheap(command) for command in shell_commands(self.text)):
            return "shell"
        if self.language in ("json", "yaml"):
            return self.language
        return "unclassified"


def blocks(page: Path) -> list[Block]:
    """Every fenced block of `page`, in order (an indented fence, as in a list item, loses its indent)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        body: list[str] = []
        start = index
        index += 1
        while index < len(lines) and not lines[index].strip().startswith(fence):
            body.append(lines[index].removeprefix(indent))
            index += 1
        marked = start > 0 and lines[start - 1].strip() == MARKER
        found.append(Block(page, start + 1, opening["info"].strip(), "\n".join(body) + "\n", marked))
        index += 1
    return found


def all_blocks() -> list[Block]:
    return [block for page in PAGES for block in blocks(page)]


def shell_commands(text: str) -> list[list[str]]:
    """The commands of a shell block, as words (continuation lines joined, comments dropped)."""
    joined = text.replace("\\\n", " ")
    commands = []
    for line in joined.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:  # an unbalanced quote: not a command this test can read
            return [["<unreadable>", line]]
        if words:
            commands.append(words)
    return commands


#: the Python interpreters a command may name: the project's (from the repository's root) or the one on PATH
PYTHONS = {"python", "python3", ".venv/bin/python"}


def cheap(words: list[str]) -> bool:
    """A command the shell-block test runs: `make help`, a CLI's `--help`, or writing the example world's files."""
    if words == ["make", "help"]:
        return True
    if words[-1] == "--help":
        return words[0].startswith(("prism-", ".venv/bin/prism-")) or (
            words[0] in PYTHONS and len(words) == 4 and words[1] == "-m" and words[2].startswith("prism_experiments")
        )
    return (
        words[0] in PYTHONS and words[1:3] == ["-m", "prism_experiments.example_world"] and words[3:4] == ["--out"]
    ) and len(words) == 5


def section(page: Path, heading: str) -> list[Block]:
    """The blocks under the heading whose text is `heading` (any level), up to the next heading of that level or
    above."""
    lines = page.read_text(encoding="utf-8").splitlines()
    level = None
    start = end = None
    in_fence = False
    for number, line in enumerate(lines, start=1):
        if FENCE.match(line):
            in_fence = not in_fence
        if in_fence or not line.startswith("#"):
            continue
        hashes, _, text = line.partition(" ")
        if level is None and text.strip() == heading:
            level, start = len(hashes), number
        elif level is not None and len(hashes) <= level:
            end = number
            break
    if start is None:
        raise LookupError(f"{page.relative_to(ROOT)}: no heading {heading!r}")
    return [block for block in blocks(page) if start < block.line < (end or len(lines) + 1)]
