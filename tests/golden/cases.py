"""Golden metrics: the run summaries that every refactor must reproduce bit for bit.

`python tests/golden/cases.py` records `tests/golden/summary_metrics.json`; do that only in a
commit that says why a metric changed. `tests/test_golden_metrics.py` recomputes and compares.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

FIXTURE = Path(__file__).with_name("summary_metrics.json")
ALL_MODES = ("x_algo", "preference", "random", "chronological", "engagement_recency", "pooled_boost", "context_rerank")


def golden_cases() -> dict[str, list[str]]:
    """Case name -> Hydra overrides: the default config for seeds 0-2, experiment=smoke for every mode x seeds 0-1."""
    cases = {f"default/seed={seed}": [f"seed={seed}"] for seed in range(3)}
    for mode in ALL_MODES:
        for seed in (0, 1):
            cases[f"smoke/{mode}/seed={seed}"] = ["experiment=smoke", f"ranking={mode}", f"seed={seed}"]
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
    runs_dir = Path(argv[0]) if argv else Path("runs/golden").resolve()
    cache_dir = runs_dir / "cache"
    recorded = {name: compute_case(overrides, runs_dir, cache_dir) for name, overrides in golden_cases().items()}
    FIXTURE.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(recorded)} cases to {FIXTURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
