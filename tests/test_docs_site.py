"""`make docs`'s build, run by every `make test` (and so by CI): the site builds with --strict, so a broken link or
anchor, or a docs page missing from mkdocs.yml's nav, fails; every docs page is reachable from the README, and the
README stays a page a newcomer reads to the end: short, with every make target in its table."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_documentation_site_builds_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (site / "index.html").is_file()
    assert (site / "requirements" / "index.html").is_file()


def test_every_docs_page_is_reachable_from_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {m.split("#")[0] for m in re.findall(r"\]\((docs/[^)\s]+\.md[^)\s]*)\)", readme)}
    top_pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md") if p.name != "index.md"}
    assert top_pages - linked == set(), "docs pages the README's documentation list does not link"
    # pages in subfolders (docs/history/) are reached through the page that links them
    index = {"docs/index.md"} | linked
    for page in sorted((ROOT / "docs").glob("*/*.md")):
        relative = f"{page.parent.name}/{page.name}"
        assert any(relative in (ROOT / p).read_text(encoding="utf-8") for p in index), f"nothing links {relative}"


#: the README's length: what it is, the two commands, the first sweep, the targets, the worlds, and links for the rest
README_MAX_LINES = 150


def makefile_targets() -> list[str]:
    """The targets `make help` lists: those with a `## ` comment, as its grep reads them."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    return re.findall(r"^([a-zA-Z_-]+):.*?## ", makefile, re.MULTILINE)


def test_every_make_target_is_in_the_readme_table() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("\n## Make targets\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `make ([a-zA-Z_-]+)` \|", table, re.MULTILINE)
    targets = makefile_targets()
    assert len(targets) >= 20, "the Makefile's `## ` help comments no longer parse"
    assert sorted(set(targets) - set(listed)) == [], "targets `make help` lists that the README's table lacks"
    assert sorted(set(listed) - set(targets)) == [], "rows of the README's table that are no target"
    assert len(listed) == len(set(listed)), "a target listed twice"


def test_the_readme_is_read_to_the_end() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines: move detail into docs/ (docs/usage.md)"
