"""mem.history(): every change to a memory with its time and cause; the superseded versions of
recalled memories for recall(..., history=True)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from internals import engine_of
from manual_clock import ManualClock

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidTypeError, MemoryNotFoundError
from ripplemem.retrieval.history import superseded_history, with_superseded


@pytest.fixture
def clock() -> ManualClock:
    """A fresh hand-driven clock."""
    return ManualClock()


@pytest.fixture
def doses(
    tmp_path: Path, embedder: Embedder, clock: ManualClock
) -> Iterator[tuple[RippleMem, list[str], list[datetime]]]:
    """Alice's store with a lisinopril dose said twice, then changed twice a month apart; the
    versions' ids and times, oldest first."""
    mem = RippleMem(path=tmp_path, user_id="alice", embedder=embedder, clock=clock)
    mem.add("I take 10 mg of lisinopril")
    ids, times = [], []
    for text in (
        "I take 10 mg of lisinopril",
        "my lisinopril dose is now 20 mg",
        "my lisinopril dose is now 40 mg",
    ):
        times.append(clock.now)
        ids.append(mem.add(text).id)
        clock.advance(30)
    yield mem, ids, times
    mem.close()


def test_an_update_is_logged_with_old_and_new_values(memory_only: RippleMem) -> None:
    memory = memory_only.add("Dinner with Sam on Friday", importance=0.4)
    memory_only.update(memory.id, content="Dinner with Sam on Saturday", importance=0.7)
    added, updated = memory_only.history(memory.id)
    assert (added.event, added.cause, updated.event) == ("added", "add", "updated")
    assert updated.detail["changes"] == {
        "content": {"old": "Dinner with Sam on Friday", "new": "Dinner with Sam on Saturday"},
        "importance": {"old": 0.4, "new": 0.7},
    }


def test_the_history_of_a_value_tells_every_version_in_order(
    doses: tuple[RippleMem, list[str], list[datetime]],
) -> None:
    mem, (ten, twenty, forty), times = doses
    events = mem.history(ten)
    assert events == mem.history(forty)  # one story, whichever version is asked
    assert [(e.memory_id, e.event) for e in events] == [
        (ten, "added"),
        (ten, "merged"),
        (twenty, "added"),
        (ten, "superseded"),
        (twenty, "supersedes"),
        (forty, "added"),
        (twenty, "superseded"),
        (forty, "supersedes"),
    ]
    assert [e.when for e in events if e.event == "superseded"] == times[1:]
    assert all(a.at <= b.at for a, b in zip(events, events[1:], strict=False))
    assert "'10 mg' -> '20 mg'" in events[3].cause and events[3].detail["by"] == twenty


def test_promotion_and_time_changes_are_logged(memory_only: RippleMem) -> None:
    passport = memory_only.add("The user's passport number ends in 4471", importance=0.85)
    memory_only.update(passport.id, event_time=datetime(2024, 5, 1, tzinfo=timezone.utc))
    memory_only.consolidate()
    events = memory_only.history(passport.id)
    assert [e.event for e in events] == ["added", "updated", "promoted"]
    assert events[1].detail["changes"]["event_time"] == {"old": None, "new": "2024-05-01T00:00:00+00:00"}
    assert events[2].cause == "importance 0.85 >= 0.8 (promotion rule)"
    assert events[2].detail["changes"] == {"type": {"old": "episodic", "new": "semantic"}}


def test_another_users_history_is_not_found_like_a_missing_one(memory_only: RippleMem) -> None:
    secret = memory_only.add("My bank PIN is in the blue notebook")
    bob = memory_only.scope("bob")
    with pytest.raises(MemoryNotFoundError) as foreign:
        bob.history(secret.id)
    with pytest.raises(MemoryNotFoundError) as missing:
        bob.history("0" * 32)
    assert str(foreign.value).replace(secret.id, "ID") == str(missing.value).replace("0" * 32, "ID")
    with pytest.raises(InvalidTypeError, match="memory_id"):
        memory_only.history(42)  # type: ignore[arg-type]
    assert asyncio.run(memory_only.ahistory(secret.id))[0].event == "added"


def test_recalled_memories_bring_their_superseded_versions(
    doses: tuple[RippleMem, list[str], list[datetime]],
) -> None:
    mem, (ten, twenty, forty), times = doses
    hits = mem.recall("what dose of lisinopril do I take?", k=3).hits
    history = superseded_history(engine_of(mem), "alice", hits)
    assert list(history) == [forty]
    assert [(p.memory.id, p.superseded_by) for p in history[forty]] == [(twenty, forty), (ten, twenty)]
    shown = with_superseded(hits, history)
    assert [h.memory.id for h in shown[:3]] == [forty, twenty, ten]
    assert shown[1].why == f"superseded by {forty} on {times[2].date().isoformat()}"
    assert shown[2].why == f"superseded by {twenty} on {times[1].date().isoformat()}"
    assert superseded_history(engine_of(mem), "bob", hits) == {}
