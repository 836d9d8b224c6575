"""RankingConfig: the discriminated union, on `mode`, of every registered mode's config model.

Each mode module declares its own model (`modes/<mode>.py`); this module only collects them, so
`ranking.mode` picks the model and every other `ranking.*` key is validated by that model alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import prism_experiments.ranking.modes  # noqa: F401  (registers every mode)
from prism_experiments.ranking.mode_config import ModeConfig
from prism_experiments.ranking.registry import RANKING_MODES, registered_modes

#: every registered mode (the modes' modules were imported above)
KNOWN_MODES: tuple[str, ...] = registered_modes()
if TYPE_CHECKING:  # the type checker sees the common base; pydantic validates against the union
    RankingConfig: TypeAlias = ModeConfig
else:
    RankingConfig = RANKING_MODES.union()


#: ranking_config(mode=DEFAULT_MODE, **fields): the validated config of a mode (ValueError naming ranking.mode if
#: unknown); the registry's own `validate`, under the name the rest of the code knows
ranking_config = RANKING_MODES.validate
