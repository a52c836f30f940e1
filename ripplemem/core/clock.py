"""Time as RippleMem reads it: the default clock (now, in UTC) and naive datetimes taken as UTC."""

from __future__ import annotations

from datetime import datetime, timezone

from ripplemem.errors import InvalidTypeError


def utc_now() -> datetime:
    """The default clock: now, timezone-aware in UTC."""
    return datetime.now(timezone.utc)


def aware(value: datetime, name: str = "time") -> datetime:
    """A timezone-aware datetime; naive ones are read as UTC, like everywhere in RippleMem."""
    if not isinstance(value, datetime):
        raise InvalidTypeError(f"{name} must be a datetime, got {type(value).__name__}")
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value


def time_key(value: datetime | None) -> float:
    """A time as a sort key (seconds since the epoch); None, a memory not stored yet, sorts first."""
    return float("-inf") if value is None else value.timestamp()
