"""Timestamps as the harness stores them: timezone-aware UTC, and exact integer microseconds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def as_utc(value: datetime) -> datetime:
    """Timezone-aware UTC; a naive datetime is read as UTC."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def epoch_microseconds(moment: datetime) -> int:
    """Exact integer microseconds since the epoch (float timestamps lose the last digit)."""
    return (moment - EPOCH) // timedelta(microseconds=1)


def from_epoch_microseconds(microseconds: int) -> datetime:
    """The UTC moment `microseconds` after the epoch; inverse of `epoch_microseconds`."""
    return EPOCH + timedelta(microseconds=microseconds)
