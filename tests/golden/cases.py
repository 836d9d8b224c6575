"""Golden metrics: the run summaries that every refactor must reproduce bit for bit.

`python tests/golden/cases.py` records `tests/golden/summary_metrics.json`; do that only in a
commit that says why a metric changed. `python tests/golden/cases.py --missing` records only the cases the fixture
lacks (a new ranking mode's). `tests/test_golden_metrics.py` recomputes and compares.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from prism_experiments.ranking import KNOWN_MODES

FIXTURE = Path(__file__).with_name("summary_metrics.json")
#: every registered ranking mode, from the registry: a mode added later gets its golden cases with no edit here
ALL_MODES: tuple[str, ...] = KNOWN_MODES
#: the modes whose scores read the political columns, and the world they are recorded in
POLITICAL_MODES = ("x_algo", "engagement", "bridging", "stated_preference")
POLITICS = ("agents.politics.enabled=true", "agents.n_agents=100", "corpus.n_posts=600", "simulation.n_steps=8")


def golden_cases() -> dict[str, list[str]]:
    """Case name -> Hydra overrides: the default config for seeds 0-2, experiment=smoke for every mode x seeds 0-1, and
    the political modes with politics on."""
    cases = {f"default/seed={seed}": [f"seed={seed}"] for seed in range(3)}
    for mode in ALL_MODES:
        for seed in (0, 1):
            cases[f"smoke/{mode}/seed={seed}"] = ["experiment=smoke", f"ranking={mode}", f"seed={seed}"]
    for mode in POLITICAL_MODES:  # the political terms of scoring and behaviour (REQ-POL), at 100 agents
        cases[f"politics/{mode}/seed=0"] = ["experiment=smoke", *POLITICS, f"ranking={mode}", "seed=0"]
    return cases


def compute_case(overrides: list[str], runs_dir: Path, cache_dir: Path) -> dict[str, float]:
    """Compose the real config with `overrides`, simulate, and return the run summary."""
    from prism_experiments.composition import compose_experiment
    from prism_experiments.metrics import summarize
    from prism_experiments.simulation import run_simulation

    return summarize(
        run_simulation(compose_experiment([f"paths.runs_dir={runs_dir}", f"rag.cache_dir={cache_dir}", *overrides]))
    )


def same_value(expected: float, got: float) -> bool:
    """Bit-identical, NaN equal to NaN."""
    return (math.isnan(expected) and math.isnan(got)) or expected == got


def main(argv: list[str]) -> int:
    """`[--missing] [runs_dir]`: record every case, or with `--missing` only the cases the fixture lacks (a new mode's),
    leaving the recorded ones as they are."""
    missing = "--missing" in argv
    paths = [arg for arg in argv if arg != "--missing"]
    runs_dir = Path(paths[0]) if paths else Path("runs/golden").resolve()
    cache_dir = runs_dir / "cache"
    recorded: dict[str, dict[str, float]] = json.loads(FIXTURE.read_text()) if missing else {}
    new = {name: overrides for name, overrides in golden_cases().items() if name not in recorded}
    recorded |= {name: compute_case(overrides, runs_dir, cache_dir) for name, overrides in new.items()}
    FIXTURE.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(new)} cases to {FIXTURE} ({len(recorded)} in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
