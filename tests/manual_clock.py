"""A clock tests move by hand, so lifecycle rules (days idle, age) run on controlled time."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone


class ManualClock:
    """Returns the same time until advanced; RippleMem(clock=...) reads it for every timestamp."""

    def __init__(self, start: datetime = datetime(2025, 1, 1, 9, 0, tzinfo=timezone.utc)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, days: float) -> None:
        """Move time forward by some days."""
        self.now += timedelta(days=days)
