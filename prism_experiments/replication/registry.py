"""The replication set: which findings, in which version, and the one family their evidence claims are adjusted in.

Bump `REPLICATION_SET_VERSION` whenever a finding, claim, role, arm, band, margin or size changes: verdicts of
different versions are not comparable (the family, and with it every p_holm, changes with the claims).
"""

from __future__ import annotations

from collections.abc import Sequence

from prism_experiments.replication.findings import (
    chaney2018,
    gauthier2026,
    goel2016,
    guess2023,
    guess2023_exposure,
    huszar2022,
    juul_ugander2021,
    milli2025,
    nyhan2023,
)
from prism_experiments.replication.model import Finding

REPLICATION_SET_VERSION = 8
FINDINGS: tuple[Finding, ...] = (
    goel2016.FINDING,
    juul_ugander2021.FINDING,
    huszar2022.FINDING,
    chaney2018.FINDING,
    guess2023.FINDING,
    gauthier2026.FINDING,
    milli2025.FINDING,
    nyhan2023.FINDING,
    guess2023_exposure.FINDING,
)
BY_NAME: dict[str, Finding] = {finding.name: finding for finding in FINDINGS}
#: the findings `--full` runs: those with a full size (`full_overrides`), in the set's order
FULL_SIZE: tuple[str, ...] = tuple(finding.name for finding in FINDINGS if finding.full_overrides)
#: Holm's family: every evidence claim of every finding of this version, tested here or not (consistency checks are
#: decided on their raw p, outside it: docs/validation.md, "Evidence and consistency")
FAMILY_SIZE = sum(claim.evidence for finding in FINDINGS for claim in finding.claims)
#: the consistency checks of this version (inputs, truths by construction, identities): shown, never counted
N_CONSISTENCY = sum(not claim.evidence for finding in FINDINGS for claim in finding.claims)


class UnknownFindingError(ValueError):
    """A finding name that is not in the replication set."""


def select(names: Sequence[str] | None) -> list[Finding]:
    """The findings named (in the set's order), all of them for None; UnknownFindingError names the first unknown."""
    if not names:
        return list(FINDINGS)
    for name in names:
        if name not in BY_NAME:
            raise UnknownFindingError(f"--only: unknown finding {name!r}; the set (v{REPLICATION_SET_VERSION}) has: "
                                      f"{', '.join(BY_NAME)}")  # fmt: skip
    return [finding for finding in FINDINGS if finding.name in names]
