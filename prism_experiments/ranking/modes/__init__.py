"""Every ranking mode, one module each; importing this package registers them all."""

from __future__ import annotations

import importlib
import pkgutil

# a new mode is a new module here: it registers itself, no list to edit
for _module in sorted(pkgutil.iter_modules(__path__), key=lambda module: module.name):
    importlib.import_module(f"{__name__}.{_module.name}")
