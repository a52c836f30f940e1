"""Lifecycle parameters are checked before anything changes: forget's options
and the dry_run and remember switches on a real store (the settings' own checks are in
tests/unit/rules/test_lifecycle_settings.py and tests/unit/rules/test_sensor_settings.py)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from manual_clock import ManualClock

from ripplemem import HashingEmbedder, RippleMem
from ripplemem.errors import InvalidInputError, InvalidTypeError


@pytest.fixture
def clock() -> ManualClock:
    """Time starts on 2025-01-01 and moves only when a test says so."""
    return ManualClock()


@pytest.fixture
def mem(tmp_path: Path, clock: ManualClock) -> Iterator[RippleMem]:
    """Alice's store: one memory a month old, one added a second ago."""
    handle = RippleMem(tmp_path / "store", user_id="alice", embedder=HashingEmbedder(), clock=clock)
    handle.add("I parked on level 3 last month", importance=0.05)
    clock.advance(31)
    handle.add("My flight leaves at 9:40 tomorrow", importance=0.9)
    yield handle
    handle.close()


def contents(mem: RippleMem) -> list[tuple[str, float, str]]:
    """Every memory as a user sees it: text, importance, tier."""
    return sorted((m.content, m.importance, m.tier) for m in mem.list())


BAD_FORGET_OPTIONS = [
    ("time", {"max_age_days": -1}, "max_age_days must be a finite number >= 0, got -1"),
    ("time", {"max_age_days": math.nan}, "max_age_days must be a finite number >= 0, got nan"),
    ("time", {"max_age_days": math.inf}, "max_age_days must be a finite number >= 0, got inf"),
    ("time", {"max_age_days": -(10**400)}, "max_age_days must be a finite number >= 0, got a huge integer"),
    ("time", {"max_age_days": "30"}, "max_age_days must be a number >= 0"),
    ("time", {"max_age_days": True}, "max_age_days must be a number >= 0"),
    ("importance", {"threshold": math.nan}, r"threshold must be a finite number in \[0, 1\], got nan"),
    ("importance", {"threshold": 1.5}, r"threshold must be a finite number in \[0, 1\], got 1.5"),
    ("importance", {"threshold": -0.1}, r"threshold must be a finite number in \[0, 1\]"),
    ("importance", {"threshold": math.inf}, r"threshold must be a finite number in \[0, 1\]"),
    ("capacity", {"capacity": -1}, "capacity must be a non-negative integer, got -1"),
    ("capacity", {"capacity": 1.0}, "capacity must be a non-negative integer, got 1.0"),
    ("capacity", {"capacity": True}, "capacity must be a non-negative integer, got True"),
    # The case: the default strategy with a NaN threshold.
    ("score", {"threshold": math.nan}, r"threshold must be a finite number in \[0, 1\], got nan"),
    # An option the strategy does not read would be ignored while its memories are forgotten.
    ("score", {"threshold": 0.5}, "threshold is an option of strategy='importance', not of 'score'"),
    ("time", {"capacity": 5}, "capacity is an option of strategy='capacity', not of 'time'"),
    ("capacity", {"max_age_days": 7}, "max_age_days is an option of strategy='time', not of 'capacity'"),
]


@pytest.mark.parametrize(
    ("strategy", "options", "message"),
    BAD_FORGET_OPTIONS,
    ids=[f"{s}-{o}"[:60] for s, o, _ in BAD_FORGET_OPTIONS],
)
def test_forget_refuses_a_bad_option_and_forgets_nothing(
    mem: RippleMem, strategy: str, options: dict[str, Any], message: str
) -> None:
    before = contents(mem)
    with pytest.raises(InvalidInputError, match=message):
        mem.forget(strategy, **options)
    assert contents(mem) == before


def test_a_negative_age_limit_no_longer_deletes_a_memory_added_a_second_ago(
    mem: RippleMem, clock: ManualClock
) -> None:
    clock.advance(1 / 86400)
    with pytest.raises(InvalidInputError, match="max_age_days"):
        mem.forget("time", max_age_days=-1)
    assert len(mem.list()) == 2
    # The smallest limit that makes sense still works: older than 30 days goes.
    report = mem.forget("time", max_age_days=30)
    assert [m.content for m in mem.list()] == ["My flight leaves at 9:40 tomorrow"]
    assert len(report.ids("delete")) == 1


def test_the_ends_of_each_range_are_accepted(mem: RippleMem) -> None:
    assert mem.forget("importance", threshold=0.0, dry_run=True).ids("delete") == []
    assert len(mem.forget("importance", threshold=1.0, dry_run=True).ids("delete")) == 2
    # The memory added just now is 0 days old, not older than 0.
    assert len(mem.forget("time", max_age_days=0, dry_run=True).ids("delete")) == 1
    assert len(mem.forget("capacity", capacity=0, dry_run=True).ids("delete")) == 2
    assert len(mem.list()) == 2


@pytest.mark.parametrize("call", ["consolidate", "maintain", "lifecycle.archive", "forget"])
@pytest.mark.parametrize("flag", [0, 1, "no", None])
def test_dry_run_must_be_a_real_bool(mem: RippleMem, call: str, flag: Any) -> None:
    mem.observe("user", "Remember that my locker code is 4411", session_id="s1")
    before, working = contents(mem), [item.text for item in mem.working("s1").items()]
    with pytest.raises(InvalidTypeError, match=f"dry_run must be True or False, got {flag!r}"):
        owner: Any = mem.lifecycle if call == "lifecycle.archive" else mem
        getattr(owner, call.rsplit(".", 1)[-1])(dry_run=flag)
    assert contents(mem) == before
    assert [item.text for item in mem.working("s1").items()] == working


def test_remember_must_be_a_real_bool(mem: RippleMem) -> None:
    with pytest.raises(InvalidTypeError, match="remember must be True or False, got 'no'"):
        mem.observe("user", "My locker code is 4411", session_id="s1", remember="no")  # type: ignore[arg-type]
    assert mem.working("s1").items() == []
    assert len(mem.list()) == 2
