"""The replication's report: the forest plot comes first (in the HTML and in a headless Chromium's screenshot), the
headline counts evidence claims only, the tables keep evidence claims and consistency checks apart, and text columns
are left-aligned (hand-built results, no runs)."""

from __future__ import annotations

import math
import subprocess
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread

from prism_experiments.replication.forest import FAILS_COLOUR, FOREST_PNG, HOLDS_COLOUR
from prism_experiments.replication.model import (
    DOES_NOT_HOLD,
    EQUIVALENT,
    HOLDS,
    NOT_REPRODUCED,
    REPRODUCED,
    Arm,
    Claim,
    ClaimResult,
    Finding,
    Source,
)
from prism_experiments.replication.report import REPORT_HTML, REPORT_MD, console_summary, write_report
from prism_experiments.replication.runs import Plan
from prism_experiments.replication.suite import SuiteOptions, SuiteResult
from prism_experiments.replication.verdicts import empty_result, finding_verdict

SOURCE = Source("A. Author (2020). A paper.", "it goes up", "source text", "its abstract")
CLAIMS = (
    Claim("goes_up", "contrast", "x − y", "up", SOURCE, role="evidence", how_it_could_fail="It could go down.",
          sign=1),
    Claim("same", "equivalence", "x − y", "no effect", SOURCE, role="evidence", how_it_could_fail="It could differ.",
          margin=0.5, margin_reason="The paper's own figures."),
    Claim("flat", "equivalence", "x − y", "no effect", SOURCE, role="evidence", how_it_could_fail="It could tilt.",
          margin=1.5, margin_reason="The paper's own figures."),
    Claim("an_input", "band", "a share", ">= 0.9", SOURCE, role="consistency",
          how_it_could_fail="It is a calibration input.", low=0.9),
    Claim("by_construction", "contrast", "x − y", "up", SOURCE, role="consistency",
          how_it_could_fail="Its sign is fixed by construction.", sign=1),
)  # fmt: skip
FINDING = Finding(name="toy", title="A toy finding", arms=(Arm("a", ()),), claims=CLAIMS, tables={},
                  measure=lambda runs: ({}, {}), seeds=10)  # fmt: skip
#: (verdict, effect, CI, p) per claim, as a judged run would give them
JUDGED = {
    "goes_up": (REPRODUCED, 0.3, (0.2, 0.4), 0.002),
    "same": (EQUIVALENT, 0.05, (-0.1, 0.2), 0.004),
    "flat": (NOT_REPRODUCED, math.nan, (math.nan, math.nan), math.nan),
    "an_input": (HOLDS, 0.93, (0.92, 0.94), 0.002),
    "by_construction": (DOES_NOT_HOLD, -0.1, (-0.2, 0.05), 0.4),
}


def suite_result() -> SuiteResult:
    results: list[ClaimResult] = []
    for claim in CLAIMS:
        verdict, effect, (low, high), p = JUDGED[claim.name]
        result = empty_result(FINDING, claim, verdict, "" if verdict in (REPRODUCED, EQUIVALENT, HOLDS) else "why so")
        result.effect, result.ci_low, result.ci_high, result.p_value, result.n_seeds = effect, low, high, p, 10
        result.p_holm = min(1.0, 3 * p) if claim.evidence and not math.isnan(p) else math.nan
        results.append(result)
    verdicts = {FINDING.name: finding_verdict(CLAIMS, results)}
    return SuiteResult(SuiteOptions(), [FINDING], results, verdicts, {FINDING.name: {}}, pd.DataFrame(), Plan([]),
                       family_size=3)  # fmt: skip


class Tags(HTMLParser):
    """The start tags of a page in document order, with their attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("replication")
    write_report(directory, suite_result(), datetime(2026, 1, 1), None)
    return directory


HEADLINE = (
    "2 of 3 evidence claims reproduced; 1 of 2 consistency checks hold (inputs, truths by construction and "
    "identities: shown, never counted as replication)"
)


def test_the_first_figure_of_the_page_is_the_forest_plot_and_it_comes_before_any_table(report: Path) -> None:
    parser = Tags()
    parser.feed((report / REPORT_HTML).read_text(encoding="utf-8"))
    order = [tag for tag, _ in parser.tags]
    assert "table" in order and "img" in order
    first_image = order.index("img")
    assert first_image < order.index("table")
    assert "figure" in order[:first_image]
    attributes = parser.tags[first_image][1]
    assert attributes["data-source"] == FOREST_PNG
    assert str(attributes["src"]).startswith("data:image/png;base64,")  # embedded: the page needs no other file
    assert (report / FOREST_PNG).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


#: Debian's Chromium (`.ci/run` installs it), and the first viewport its screenshot shows: a laptop's window
CHROMIUM = Path("/usr/bin/chromium")
WIDTH, HEIGHT = 1280, 900
#: a table's header cells (html_report's `th{background:#f3f3f3}`): a row of the shot with this many such pixels
#: crosses a table, where text anti-aliasing leaves a few dozen at most
TABLE_HEADER, HEADER_PIXELS = (0xF3, 0xF3, 0xF3), 300


def screenshot(page: Path, directory: Path) -> np.ndarray:
    """The first viewport of `page` as headless Chromium draws it: RGB, uint8, HEIGHT × WIDTH."""
    shot = directory / "shot.png"
    command = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={directory / 'profile'}", "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}",
        # virtual time runs until the page (its embedded forest.png included) is loaded and laid out, then the shot
        "--virtual-time-budget=5000", f"--screenshot={shot}", page.as_uri(),
    ]  # fmt: skip
    # a safety net only: the shot takes a few seconds on a loaded 2-core machine
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and shot.exists(), f"chromium exited {done.returncode}: {done.stderr[-2000:]}"
    pixels: np.ndarray = (imread(shot)[..., :3] * 255).round().astype(np.uint8)  # PNG reads as floats in [0, 1]
    return pixels


def colour_mask(pixels: np.ndarray, colour: str, tolerance: int = 8) -> np.ndarray:
    """The pixels within `tolerance` per channel of `colour` (#rrggbb): a line's inside, not its anti-aliased edge."""
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
    mask: np.ndarray = np.abs(pixels.astype(int) - rgb).max(axis=2) <= tolerance
    return mask


@pytest.mark.integration
def test_a_browser_shows_the_forest_plot_first_above_any_table(report: Path, tmp_path: Path) -> None:
    """The first viewport a reader sees holds the whole forest plot near its top and no table above it: the HTML order
    of the test above could still be undone by the style sheet (a float, a hidden or collapsed image)."""
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium here ({CHROMIUM} missing): apt-get install -y chromium")
    pixels = screenshot(report / REPORT_HTML, tmp_path)
    assert pixels.shape == (HEIGHT, WIDTH, 3)
    holds, fails = colour_mask(pixels, HOLDS_COLOUR), colour_mask(pixels, FAILS_COLOUR)
    # the hand-built results have rows of both verdicts: their CI lines, markers and verdict words, in quantity (a
    # few hundred pixels each at least), not stray anti-aliasing
    assert holds.sum() >= 400 and fails.sum() >= 400, (holds.sum(), fails.sum())
    holds_rows, fails_rows = np.flatnonzero(holds.any(axis=1)), np.flatnonzero(fails.any(axis=1))
    top, bottom = int(min(holds_rows[0], fails_rows[0])), int(max(holds_rows[-1], fails_rows[-1]))
    # the plot leads: its first coloured row under the title and headline only, in the top half of the viewport (a
    # margin for other fonts: here about a third), and all of it is in view, down to its last row, a check that
    # does not hold, below the last one that holds
    assert top < HEIGHT // 2, top
    assert bottom - top >= HEIGHT // 3, (top, bottom)
    assert fails_rows[-1] > holds_rows[-1], (holds_rows[-1], fails_rows[-1])
    header_rows = np.flatnonzero((pixels == TABLE_HEADER).all(axis=2).sum(axis=1) >= HEADER_PIXELS)
    assert header_rows.size == 0 or header_rows[0] > bottom, (
        f"a table header at y={header_rows[0]}, the forest {top}-{bottom}"
    )


def test_the_headline_counts_evidence_claims_only_everywhere(report: Path) -> None:
    text = (report / REPORT_MD).read_text(encoding="utf-8")
    assert text.splitlines()[2] == f"**{HEADLINE}.**"
    assert text.index(f"]({FOREST_PNG})") < text.index("## Evidence claims (Holm over 3)")
    assert text.index("## Evidence claims") < text.index("## Consistency checks")
    assert f"<strong>{HEADLINE}.</strong>" in (report / REPORT_HTML).read_text(encoding="utf-8")
    summary = console_summary(suite_result(), report, None)
    assert summary.splitlines()[0] == f"replication set v{suite_result().version}: {HEADLINE}"
    assert "Holm over the 3 evidence claims" in summary.splitlines()[-1]


def test_the_tables_keep_checks_apart_and_text_columns_left_aligned(report: Path) -> None:
    page = (report / REPORT_HTML).read_text(encoding="utf-8")
    evidence = page[page.index('class="claims evidence"') : page.index('class="claims consistency"')]
    checks = page[page.index('class="claims consistency"') :]
    assert "toy · goes_up" in evidence and "toy · an_input" not in evidence
    assert "toy · an_input" in checks and "It is a calibration input." in checks
    rows = [row for row in evidence.split("<tr>")[2:]]  # after the header row
    for row in rows:
        cells = row.split("<td")[1:]
        assert len(cells) == 8
        assert not cells[-1].startswith(' class="num"')  # why: left-aligned text
        assert cells[2].startswith(' class="num"')  # the effect: a number
    verdicts = pd.read_csv(report / "verdicts.csv")
    assert set(verdicts["role"]) == {"evidence", "consistency"}
    assert verdicts.loc[verdicts["claim"] == "same", "margin"].item() == 0.5
    assert verdicts.loc[verdicts["claim"] == "same", "margin_reason"].item() == "The paper's own figures."


def test_full_says_its_size_and_lists_the_findings_it_left_out_unjudged(tmp_path: Path) -> None:
    import dataclasses

    from prism_experiments.replication.findings import chaney2018
    from prism_experiments.replication.model import NOT_RUN_FULL
    from prism_experiments.replication.report import finding_table, render_html, render_markdown

    plain = suite_result()
    full = dataclasses.replace(plain, options=SuiteOptions(full=True), not_run=[chaney2018.FINDING])
    rows = finding_table(full).set_index("finding")
    assert rows.loc["chaney2018", "verdict"] == NOT_RUN_FULL and rows.loc["toy", "verdict"] == full.verdicts["toy"]
    markdown = render_markdown(full, datetime(2026, 1, 1), None)
    assert markdown.splitlines()[0].endswith("FULL SIZE (--full)")
    assert "replication_full" in markdown and "not judged" in markdown
    assert "| chaney2018 | not run at --full size |" in markdown
    page = render_html(full, datetime(2026, 1, 1), None)
    assert "(full size: --full)" in page and "Not run at --full size (no full size; not judged" in page
    assert "count as p = 1 in the family): chaney2018." in page
    assert any(line.split() == ["chaney2018", *NOT_RUN_FULL.split()] for line in
               console_summary(full, tmp_path, None).splitlines())  # fmt: skip
    # without --full: nothing of it (the verdicts' report as it was)
    assert "--full" not in render_markdown(plain, datetime(2026, 1, 1), None)
    assert "--full" not in console_summary(plain, tmp_path, None) and len(finding_table(plain)) == 1
