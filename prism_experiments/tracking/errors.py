"""One readable line for an exception, for logs and the sweep's failure list."""

from __future__ import annotations


def error_line(error: BaseException) -> str:
    """`Type: message` with the message of the innermost cause, first line only.

    MLflow wraps a sqlite error in SQLAlchemy's, whose first line is advice about autoflush; the cause
    at the bottom of the chain ("database or disk is full") is what a user can act on.
    """
    root = error
    while root.__cause__ is not None and root.__cause__ is not root:
        root = root.__cause__
    lines = [line for line in str(root).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0].strip()}" if lines else type(error).__name__
