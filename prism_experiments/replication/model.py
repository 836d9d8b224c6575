"""What a replication states and what it concludes: sources, arms, claims, and their verdicts (plain data)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

#: The four verdicts. A claim is reproduced (a contrast with the published sign, Holm-adjusted p < alpha), its
#: magnitude is within the band mapped from the source's number, it is not reproduced, or it cannot be tested in
#: the harness as it stands (the reason says what is missing).
REPRODUCED = "reproduced"
WITHIN_BAND = "magnitude within band"
NOT_REPRODUCED = "not reproduced"
NOT_TESTABLE = "not testable"
#: what `--quick` reports instead of a verdict: its sizes are a smoke test of the plumbing, never evidence
SMOKE = "smoke (not a verdict)"
VERDICTS: tuple[str, ...] = (REPRODUCED, WITHIN_BAND, NOT_REPRODUCED, NOT_TESTABLE)

#: How far the value was checked: in the source's own text (its abstract counts), in a third party's quotation of
#: the source's text, or only in a secondary summary (a blog, a talk, another paper's reading).
Verification = Literal["source text", "quoted source text", "secondary summary"]


@dataclass(frozen=True)
class Source:
    """A published finding as its source states it, and where that statement was checked."""

    citation: str
    statement: str
    verification: Verification
    #: where the statement was read (a page, the abstract, a summary's address)
    checked_at: str


@dataclass(frozen=True)
class Arm:
    """One condition of a replication: a name and the Hydra overrides that make it."""

    name: str
    overrides: tuple[str, ...]


@dataclass(frozen=True)
class Claim:
    """One testable statement of a finding, mapped to the harness.

    kind `contrast`: per seed x (arm `arms[0]`'s value) vs y (`arms[1]`'s, or a benchmark), reproduced when the
    paired Wilcoxon test, Holm-adjusted over the family, is below alpha and mean(x - y) has `sign`.
    kind `band`: per seed a level x; within band when both one-sided Wilcoxon tests against the band's edges
    (two one-sided tests, Schuirmann 1987) are below alpha after Holm.
    """

    name: str
    kind: Literal["contrast", "band"]
    #: the harness's metric, in words (docs/validation.md maps it to the published one)
    metric: str
    #: the value as the source reports it, in its words
    published: str
    source: Source
    sign: int = 0
    low: float | None = None
    high: float | None = None
    #: a calibration target rather than a held-out pattern: reported, but not out-of-sample evidence
    calibration_input: bool = False

    def __post_init__(self) -> None:
        if self.kind == "contrast" and self.sign not in (-1, 1):
            raise ValueError(f"{self.name}: a contrast claim needs sign +1 or -1, got {self.sign}")
        if self.kind == "band" and self.low is None and self.high is None:
            raise ValueError(f"{self.name}: a band claim needs a low or a high edge")


@dataclass(frozen=True)
class SeedValues:
    """What one seed's runs give a claim: x and y for a contrast, the level x for a band (y unused, NaN)."""

    x: float
    y: float = float("nan")


#: the event tables (and columns) a finding reads of each run; None: every column
TableSpec = Mapping[str, Sequence[str] | None]
#: one seed's runs as the tables a finding asked for, by arm name
SeedRuns = Mapping[str, Mapping[str, pd.DataFrame]]


@dataclass(frozen=True)
class Finding:
    """A published finding with its harness analogue: the experiment file, arms, claims and how to measure them."""

    name: str
    title: str
    arms: tuple[Arm, ...]
    claims: tuple[Claim, ...]
    #: artifact tables each run must provide (`tables/<name>.parquet`)
    tables: TableSpec
    #: one seed's claim values (claim name -> SeedValues) and descriptive figures (name -> value)
    measure: Callable[[SeedRuns], tuple[dict[str, SeedValues], dict[str, float]]]
    #: seeds of the full suite (chosen from the claims' power: docs/validation.md) and of --quick
    seeds: int
    quick_seeds: int = 2
    #: Hydra overrides of --quick (the smoke size)
    quick_overrides: tuple[str, ...] = ()
    #: why the harness cannot test it now, or None when it can (decided from the config schema, not hard-coded)
    untestable: Callable[[], str | None] = lambda: None
    #: the most likely reason a claim is not reproduced, given its result and the descriptive figures
    reason: Callable[[ClaimResult, Mapping[str, float]], str] = lambda result, figures: ""

    @property
    def experiment(self) -> str:
        """Its Hydra experiment, `conf/experiment/replicate_<name>.yaml` (docs/validation.md)."""
        return f"replicate_{self.name}"


@dataclass
class ClaimResult:
    """A claim's evidence and verdict: effect with its 95 % CI, p (raw and Holm over the family), power."""

    finding: str
    claim: str
    kind: str
    metric: str
    published: str
    verification: str
    calibration_input: bool
    n_seeds: int = 0
    #: contrast: mean of x - y; band: mean level
    effect: float = float("nan")
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    ci_method: str = ""
    x_mean: float = float("nan")
    y_mean: float = float("nan")
    p_value: float = float("nan")
    p_holm: float = float("nan")
    #: seeds needed for power 0.8 at the family's first Holm step (simulated through the same test; normal-theory)
    seeds_80: float = float("nan")
    seeds_80_normal: float = float("nan")
    verdict: str = NOT_TESTABLE
    reason: str = ""
    values: list[tuple[float, float]] = field(default_factory=list)

    @property
    def tested(self) -> bool:
        return bool(np.isfinite(self.p_value))
