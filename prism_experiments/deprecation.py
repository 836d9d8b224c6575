"""Old names kept for one release after a rename: each gives its new object with a DeprecationWarning.

A module lists its old names in a module-level `__getattr__` (Python calls it only for names the module does not
define), so the warning is raised by `from module import OldName` and `module.OldName` alike, never by importing
the module itself. Modules install it under `if not TYPE_CHECKING:`: a type checker that saw a module `__getattr__`
would accept any name of that module, and typed code should use the new names.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any

_PACKAGE = __name__.split(".")[0]


def caller_stacklevel() -> int:
    """The `stacklevel`, for the function that calls this one, of its first caller outside this package."""
    # Python's default filters show a DeprecationWarning only where `__main__` raised it, and a depth counted by hand
    # would change with the path through the package. Frame 1 is the function that warns (stacklevel 1).
    level = 2
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == _PACKAGE:
        level, frame = level + 1, frame.f_back
    return level


def renamed(module: str, old_to_new: Mapping[str, Any]) -> Callable[[str], Any]:
    """A module `__getattr__` giving each old name of `old_to_new` its new object, with a DeprecationWarning."""

    def __getattr__(name: str) -> Any:
        if name not in old_to_new:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new = old_to_new[name]
        # stacklevel 2: the warning points at the line that imports or reads the old name
        warnings.warn(
            f"{module}.{name} is deprecated: import {module}.{new.__name__} instead (the same object, renamed)",
            DeprecationWarning,
            stacklevel=2,
        )
        return new

    return __getattr__
