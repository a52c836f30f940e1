"""Times outside what a datetime can hold after conversion: every entry refuses them before writing,
and a store that already holds one (from an older version) still serves reads."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from ripplemem import HashingEmbedder, RippleMem
from ripplemem.errors import InvalidInputError, RippleMemError
from ripplemem.interfaces.cli.main import main
from ripplemem.rules.lifecycle.working import WorkingMemory

LATE = datetime.max  # year 9999: one microsecond or one UTC offset from year 10000
EARLY_WITH_OFFSET = "0001-01-01T00:00:00+14:00"  # year 0 in UTC


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[RippleMem]:
    """Alice's on-disk store holding one memory."""
    handle = RippleMem(tmp_path / "store", user_id="alice", embedder=HashingEmbedder())
    handle.add("I drink green tea every morning")
    yield handle
    handle.close()


def import_line(mem: RippleMem) -> None:
    """Import a JSONL file whose one line has a year-9999 event time."""
    path = Path(mem.path or ".") / "lines.jsonl"
    path.write_text(
        json.dumps({"content": "I bought a kettle", "event_time": "9999-12-31T23:59:59.999999"}) + "\n",
        encoding="utf-8",
    )
    mem.import_file(path)


ENTRIES: dict[str, Callable[[RippleMem], Any]] = {
    "add event_time=datetime.max": lambda mem: mem.add("I bought a kettle", event_time=LATE),
    "add event_time in year 0 UTC": lambda mem: mem.add("I bought a kettle", event_time=EARLY_WITH_OFFSET),
    "add_many with one bad item": lambda mem: mem.add_many(
        ["I bought a kettle", {"content": "I bought a teapot", "event_time": LATE}]
    ),
    "update event_time": lambda mem: mem.update(mem.list()[0].id, event_time=LATE),
    "recall now=datetime.max": lambda mem: mem.recall("green tea", now=LATE),
    "recall since": lambda mem: mem.recall("green tea", since=EARLY_WITH_OFFSET),
    "list until": lambda mem: mem.list(until=LATE),
    "record at=datetime.max": lambda mem: mem.sensors.record(metric="heart_rate", value=70, at=LATE),
    "import_file": import_line,
}


def snapshot(mem: RippleMem) -> list[tuple[Any, ...]]:
    """What a user can see of the store: every memory with its times, and the readings."""
    return [(m.id, m.content, m.event_time, m.last_accessed, m.access_count) for m in mem.list()] + [
        (r.metric, r.value, r.at) for r in mem.sensors.readings("heart_rate")
    ]


@pytest.mark.parametrize("entry", list(ENTRIES))
def test_every_entry_refuses_a_time_out_of_range_and_stores_nothing(mem: RippleMem, entry: str) -> None:
    before = snapshot(mem)
    with pytest.raises(RippleMemError, match=r"outside the accepted range 1000-01-01 to 8999-12-31 \(UTC\)"):
        ENTRIES[entry](mem)
    assert snapshot(mem) == before
    assert mem.stats()["total"] == 1
    recalled = mem.recall("green tea", record_access=False)
    assert recalled.memories[0].content == "I drink green tea every morning"


def test_the_error_names_the_field(mem: RippleMem) -> None:
    with pytest.raises(InvalidInputError, match="^event_time 9999-12-31T23:59:59.999999 is outside"):
        mem.add("I bought a kettle", event_time=LATE)
    with pytest.raises(InvalidInputError, match="^at 9999"):
        mem.sensors.record(metric="heart_rate", value=70, at=LATE)


def test_the_command_line_refuses_the_time_and_stores_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ["--path", str(tmp_path / "db"), "--user", "mei", "--embedder", "hashing"]
    assert main(["add", "I drink green tea", *store]) == 0
    assert main(["add", "I bought a kettle", "--event-time", "9999-12-31T23:59:59.999999", *store]) == 2
    assert "event_time 9999-12-31T23:59:59.999999 is outside the accepted range" in capsys.readouterr().err
    assert main(["list", *store]) == 0
    listed = capsys.readouterr().out
    assert "green tea" in listed and "kettle" not in listed


BERLIN_SUMMER = timezone(timedelta(hours=2))


@pytest.mark.parametrize(
    "clock",
    [lambda: datetime(2024, 5, 1, 12, tzinfo=BERLIN_SUMMER), lambda: datetime(2024, 5, 1, 10)],
    ids=["clock+02:00", "naive-clock"],
)
def test_every_call_returns_times_in_utc(tmp_path: Path, clock: Callable[[], datetime]) -> None:
    """What add, add_many, update, observe and record return reads like what get and list return."""
    with RippleMem(tmp_path / "store", user_id="alice", embedder=HashingEmbedder(), clock=clock) as mem:
        added = [
            mem.add("I flew to Lisbon", event_time=datetime(2024, 4, 1, 9, 30)),
            mem.add("I landed in Porto", event_time="2024-04-01T11:30:00+02:00"),
            *mem.add_many(
                [{"content": "I took the train", "event_time": datetime(2024, 4, 2, tzinfo=BERLIN_SUMMER)}]
            ),
        ]
        for memory in added:
            assert memory.created_at == datetime(2024, 5, 1, 10, tzinfo=timezone.utc)
            assert (memory.created_at, memory.event_time) == (
                mem.get(memory.id).created_at,  # type: ignore[union-attr]
                mem.get(memory.id).event_time,  # type: ignore[union-attr]
            )
        assert [m.event_time for m in added] == [
            datetime(2024, 4, 1, 9, 30, tzinfo=timezone.utc),
            datetime(2024, 4, 1, 9, 30, tzinfo=timezone.utc),
            datetime(2024, 4, 1, 22, tzinfo=timezone.utc),
        ]
        updated = mem.update(added[0].id, event_time=datetime(2024, 4, 3, 8, tzinfo=BERLIN_SUMMER))
        assert updated.event_time == datetime(2024, 4, 3, 6, tzinfo=timezone.utc)
        seen = mem.observe("user", "my seat was 12A")
        reading = mem.sensors.record(
            "heart_rate", 70, unit="bpm", at=datetime(2024, 5, 1, 13, tzinfo=BERLIN_SUMMER)
        )
        returned = [
            *(t for m in [*added, updated] for t in (m.created_at, m.event_time)),
            seen.created_at,
            seen.last_seen,
            reading.at,
        ]
        assert all(t is not None and t.tzinfo is timezone.utc for t in returned), returned
        assert reading.at == mem.sensors.readings("heart_rate")[0].at


def test_a_clock_out_of_range_is_refused_before_anything_is_stamped(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with RippleMem(store, user_id="alice", embedder=HashingEmbedder(), clock=lambda: LATE) as mem:
        with pytest.raises(InvalidInputError, match=r"^clock\(\) 9999"):
            mem.add("I bought a kettle")
        with pytest.raises(InvalidInputError, match=r"^clock\(\) 9999"):
            mem.observe("user", "I bought a kettle")
    with RippleMem(store, user_id="alice", embedder=HashingEmbedder()) as mem:
        assert mem.list() == []
    with pytest.raises(InvalidInputError, match=r"^clock\(\)"):
        WorkingMemory(clock=lambda: LATE).observe("user", "I bought a kettle")


def test_the_ends_of_the_range_are_stored_and_read_back(mem: RippleMem) -> None:
    first = mem.add("The abbey was founded", event_time="1000-01-01T00:00:00+00:00")
    last = mem.add("A far-future reminder", event_time=datetime(8999, 12, 31, 23, 59, 59))
    historical = mem.add("The battle was fought", event_time="1066-10-14T09:00:00+01:00")
    assert mem.get(first.id).event_time == datetime(1000, 1, 1, tzinfo=timezone.utc)  # type: ignore[union-attr]
    assert mem.get(last.id).event_time == datetime(8999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)  # type: ignore[union-attr]
    assert mem.get(historical.id).event_time == datetime(1066, 10, 14, 8, 0, tzinfo=timezone.utc)  # type: ignore[union-attr]
    assert mem.stats()["oldest"] == datetime(1000, 1, 1, tzinfo=timezone.utc)


# -- a store an older version left with a time no datetime can hold ---------------------------------

POISONS = {"year 10000": 253402300800.0, "before year 1": -1e20, "infinity": float("inf"), "text": "garbage"}


@pytest.mark.parametrize("column", ["event_time", "created_at", "last_accessed"])
@pytest.mark.parametrize("poison", list(POISONS))
def test_a_stored_time_out_of_range_does_not_break_reads(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, column: str, poison: str
) -> None:
    path = tmp_path / "store"
    with RippleMem(path, user_id="alice", embedder=HashingEmbedder()) as mem:
        good = mem.add("I drink green tea every morning", event_time="2025-03-01T08:00:00+00:00")
        bad = mem.add("I drink black coffee at night")
    with sqlite3.connect(path / "ripplemem.db") as conn:  # as an older RippleMem could have written it
        conn.execute(f"UPDATE memories SET {column} = ? WHERE id = ?", (POISONS[poison], bad.id))
    conn.close()
    caplog.set_level(logging.WARNING, logger="ripplemem")
    with RippleMem(path, user_id="alice", embedder=HashingEmbedder()) as mem:
        stats = mem.stats()
        listed = {m.id: m for m in mem.list()}
        recalled = mem.recall("what do I drink")
        assert mem.recall("black coffee").memories[0].id == bad.id
        mem.forget(dry_run=True)
        mem.lifecycle.archive(dry_run=True)
    assert stats["total"] == 2 and stats["oldest"] is not None
    assert set(listed) == {good.id, bad.id}
    assert getattr(listed[bad.id], column) is None  # unknown, not a wrong date
    assert listed[good.id].event_time == datetime(2025, 3, 1, 8, 0, tzinfo=timezone.utc)
    assert {m.id for m in recalled.memories} == {good.id, bad.id}
    warnings = [r.getMessage() for r in caplog.records if bad.id in r.getMessage()]
    assert len(warnings) == 1 and column in warnings[0]


def test_a_stored_reading_out_of_range_does_not_break_reads(tmp_path: Path) -> None:
    path = tmp_path / "store"
    with RippleMem(path, user_id="alice", embedder=HashingEmbedder()) as mem:
        mem.sensors.record(metric="heart_rate", value=70, at="2025-03-01T08:00:00+00:00")
    with sqlite3.connect(path / "ripplemem.db") as conn:
        conn.execute("UPDATE readings SET at = ?", (253402300800.0,))
    conn.close()
    with RippleMem(path, user_id="alice", embedder=HashingEmbedder()) as mem:
        mem.sensors.record(metric="heart_rate", value=72, at="2025-03-01T09:00:00+00:00")
        assert sorted(r.value for r in mem.sensors.readings("heart_rate")) == [70.0, 72.0]
        assert mem.stats()["total"] >= 1


def test_a_logged_change_out_of_range_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "store"
    with RippleMem(path, user_id="alice", embedder=HashingEmbedder()) as mem:
        memory = mem.add("I drink green tea every morning")
        mem.update(memory.id, importance=0.9)
    with sqlite3.connect(path / "ripplemem.db") as conn:  # e.g. a wake-up logged at recall(now=datetime.max)
        conn.execute("UPDATE history SET at = ?", (253402300800.0,))
    conn.close()
    with RippleMem(path, user_id="alice", embedder=HashingEmbedder()) as mem:
        assert {event.when.year for event in mem.history(memory.id)} == {9999}
