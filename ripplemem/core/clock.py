"""Time as RippleMem reads it: the default clock (now, in UTC), naive datetimes taken as UTC, epochs."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import overload

from ripplemem.errors import InvalidTypeError

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# The epoch seconds any datetime can hold (years 1 to 9999, a day inside either end): a stored time
# outside them (written before RippleMem checked the range) reads as unknown.
READABLE_EPOCHS = (-62135510400.0, 253402214400.0)


def utc_now() -> datetime:
    """The default clock: now, timezone-aware in UTC."""
    return datetime.now(timezone.utc)


def aware(value: datetime, name: str = "time") -> datetime:
    """A timezone-aware datetime; naive ones are read as UTC, like everywhere in RippleMem."""
    if not isinstance(value, datetime):
        raise InvalidTypeError(f"{name} must be a datetime, got {type(value).__name__}")
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value


def in_utc(value: datetime, name: str = "time") -> datetime:
    """A datetime in UTC, as every call returns times: naive ones read as UTC, others converted."""
    return aware(value, name).astimezone(timezone.utc)


def time_key(value: datetime | None) -> float:
    """A time as a sort key (seconds since the epoch); None, a memory not stored yet, sorts first."""
    return float("-inf") if value is None else value.timestamp()


@overload
def from_epoch(value: float) -> datetime: ...
@overload
def from_epoch(value: None) -> None: ...
@overload
def from_epoch(value: float | None) -> datetime | None: ...
def from_epoch(value: float | None) -> datetime | None:
    """A timezone-aware UTC datetime, or None.

    Computed as epoch + timedelta rather than fromtimestamp, which fails before 1970 on Windows.
    """
    return None if value is None else _EPOCH + timedelta(seconds=value)
