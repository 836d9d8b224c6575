"""Checks shared by the config tests: a bad value is refused with a message naming the field and what is allowed."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError


def assert_refused(model: type[BaseModel], fields: dict[str, Any], *expected: str) -> None:
    """`model(**fields)` raises pydantic's ValidationError, and its message holds every text of `expected`."""
    with pytest.raises(ValidationError) as info:
        model(**fields)
    message = str(info.value)
    missing = [text for text in expected if text not in message]
    assert not missing, f"{missing} not in the message: {message}"
