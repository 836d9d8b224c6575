"""The run summary's metrics, one module per metric or family; importing this package registers them all.

`standard` (the summary's long-standing metrics, in their documented order) comes first; every other module follows
in name order, so a new metric module appends its metrics to the summary: no list to edit (docs/extending.md).
"""

from __future__ import annotations

from prism_experiments.registries import import_modules

import_modules(__name__, __path__, first=("standard",))
