"""Every ranking mode, one module each; importing this package registers them all."""

from __future__ import annotations

from prism_experiments.registries import import_modules

# a new mode is a new module here: it registers itself, no list to edit
import_modules(__name__, __path__)
