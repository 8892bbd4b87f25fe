"""The clock keel's stores and topic detection read, so that tests can set the time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """``value`` as an aware UTC time (SQLite hands timestamps back without a zone)."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)
