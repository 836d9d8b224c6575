"""What a replication states and what it concludes: sources, arms, claims, and their verdicts (plain data)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

#: The verdicts of an evidence claim: reproduced (a contrast with the published sign, Holm-adjusted p < alpha), its
#: magnitude within the band mapped from the source's number, equivalent (an equivalence claim: the paired difference
#: lies within its stated margin, both one-sided tests Holm-adjusted p < alpha), not reproduced, or not testable in the
#: harness as it stands (the reason says what is missing).
REPRODUCED = "reproduced"
WITHIN_BAND = "magnitude within band"
EQUIVALENT = "equivalent"
NOT_REPRODUCED = "not reproduced"
NOT_TESTABLE = "not testable"
#: The verdicts of a consistency check (an input, a truth by construction, an identity): the same test at raw p < alpha,
#: outside the Holm family; it holds or it does not, and it never counts as replication.
HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
#: what `--quick` reports instead of a verdict: its sizes are a smoke test of the plumbing, never evidence
SMOKE = "smoke (not a verdict)"
#: what the report says of a finding `--full` leaves out (it has no `full_overrides`): not run, not judged
NOT_RUN_FULL = "not run at --full size"
#: a finding with consistency checks only: nothing in it can count as replication
NO_EVIDENCE = "consistency checks only"
VERDICTS: tuple[str, ...] = (REPRODUCED, WITHIN_BAND, EQUIVALENT, NOT_REPRODUCED, NOT_TESTABLE)
#: the evidence verdicts that count as a claim reproduced in the headline
HOLDING: frozenset[str] = frozenset({REPRODUCED, WITHIN_BAND, EQUIVALENT})
CONSISTENCY_VERDICTS: tuple[str, ...] = (HOLDS, DOES_NOT_HOLD, NOT_TESTABLE)

#: evidence: a held-out pattern the model could have failed; consistency: it cannot fail here (an input, a truth by
#: construction, an identity), so it is run and shown but never counted as replication
Role = Literal["evidence", "consistency"]
Kind = Literal["contrast", "band", "equivalence"]

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
    paired Wilcoxon test is below alpha and mean(x - y) has `sign`.
    kind `band`: per seed a level x; within band when both one-sided Wilcoxon tests against the band's edges
    (two one-sided tests, Schuirmann 1987) are below alpha.
    kind `equivalence`: per seed a paired difference d = x - y; equivalent (to 0) when both one-sided Wilcoxon tests of
    d against -margin and +margin are below alpha: the band test on d with the edges -margin, +margin.
    alpha: Holm over the set's evidence claims for an evidence claim, raw for a consistency check.
    """

    name: str
    kind: Kind
    #: the harness's metric, in words (docs/validation.md maps it to the published one)
    metric: str
    #: the value as the source reports it, in its words
    published: str
    source: Source
    role: Role
    #: one sentence: evidence, how the model could have failed it; consistency, why it cannot fail (what it checks)
    how_it_could_fail: str
    sign: int = 0
    low: float | None = None
    high: float | None = None
    #: equivalence: the half-width of the interval around 0 that counts as "no difference", in the metric's units
    margin: float | None = None
    #: equivalence: one sentence on where the margin comes from (never fitted to the result)
    margin_reason: str = ""

    def __post_init__(self) -> None:
        if self.role not in ("evidence", "consistency"):
            raise ValueError(f"{self.name}: role must be evidence or consistency, got {self.role!r}")
        if not self.how_it_could_fail.strip():
            raise ValueError(f"{self.name}: how_it_could_fail: one sentence saying how the model could have failed "
                             "the claim (evidence) or why it cannot (consistency)")  # fmt: skip
        if self.kind == "contrast" and self.sign not in (-1, 1):
            raise ValueError(f"{self.name}: a contrast claim needs sign +1 or -1, got {self.sign}")
        if self.kind == "band" and self.low is None and self.high is None:
            raise ValueError(f"{self.name}: a band claim needs a low or a high edge")
        if self.kind == "equivalence":
            if self.margin is None or not math.isfinite(self.margin) or self.margin <= 0:
                raise ValueError(f"{self.name}: an equivalence claim needs a margin > 0, got {self.margin}")
            if not self.margin_reason.strip():
                raise ValueError(f"{self.name}: an equivalence claim needs its margin_reason (where the margin "
                                 "comes from)")  # fmt: skip

    @property
    def evidence(self) -> bool:
        return self.role == "evidence"

    def edges(self) -> list[tuple[float, str]]:
        """The edges the level is tested against, each with its one-sided alternative (level - edge > 0 above a low
        edge, < 0 below a high one): the band's, or -margin and +margin of an equivalence; none for a contrast."""
        if self.kind == "equivalence":
            assert self.margin is not None
            return [(-self.margin, "greater"), (self.margin, "less")]
        edges = []
        if self.low is not None:
            edges.append((self.low, "greater"))
        if self.high is not None:
            edges.append((self.high, "less"))
        return edges


@dataclass(frozen=True)
class SeedValues:
    """What one seed's runs give a claim: x and y for a contrast or an equivalence (d = x - y), the level x for a
    band (y unused, NaN)."""

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
    #: Hydra overrides of --full (a larger size than the experiment file's, for claims whose events are rare at it);
    #: empty: the finding has no full size, and --full does not run it
    full_overrides: tuple[str, ...] = ()
    #: why the harness cannot test it now, or None when it can (decided from the config schema, not hard-coded)
    untestable: Callable[[], str | None] = lambda: None
    #: the most likely reason a claim is not reproduced, given its result and the descriptive figures
    reason: Callable[[ClaimResult, Mapping[str, float]], str] = lambda result, figures: ""
    #: tables only some arms' runs provide, by arm name (e.g. the tables one ranking mode logs), besides `tables`
    arm_tables: Mapping[str, TableSpec] = field(default_factory=dict)

    def tables_of(self, arm: str) -> TableSpec:
        """The tables an arm's runs must provide: `tables`, and the arm's own `arm_tables`."""
        return {**self.tables, **self.arm_tables.get(arm, {})}

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
    role: str
    how_it_could_fail: str
    #: the reference the effect is read against: sign (contrast), edges (band), margin (equivalence)
    sign: int = 0
    low: float = float("nan")
    high: float = float("nan")
    margin: float = float("nan")
    margin_reason: str = ""
    n_seeds: int = 0
    #: contrast and equivalence: mean of x - y; band: mean level
    effect: float = float("nan")
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    ci_method: str = ""
    x_mean: float = float("nan")
    y_mean: float = float("nan")
    p_value: float = float("nan")
    #: Holm over the set's evidence claims; NaN for a consistency check (decided on its raw p, outside the family)
    p_holm: float = float("nan")
    #: seeds needed for power 0.8 at the level the claim is decided at: the family's first Holm step (evidence) or
    #: alpha (consistency); simulated through the same test, and normal-theory
    seeds_80: float = float("nan")
    seeds_80_normal: float = float("nan")
    verdict: str = NOT_TESTABLE
    reason: str = ""
    values: list[tuple[float, float]] = field(default_factory=list)

    @property
    def tested(self) -> bool:
        return bool(np.isfinite(self.p_value))

    @property
    def evidence(self) -> bool:
        return self.role == "evidence"

    @property
    def p_decision(self) -> float:
        """The p the verdict is decided on: Holm-adjusted for an evidence claim, raw for a consistency check."""
        return self.p_holm if self.evidence else self.p_value
