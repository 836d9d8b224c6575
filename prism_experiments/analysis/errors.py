"""The one error type `prism-compare` turns into a one-line message and exit code 2."""

from __future__ import annotations


class AnalysisInputError(ValueError):
    """The runs or options cannot be compared (no such experiment, one condition, unknown metric...)."""
