"""mem.forget(): the forgetting score and the simple strategies applied to a real store, on a
controlled clock, with reports, history and dry runs."""

from __future__ import annotations

import asyncio

import pytest
from internals import engine_of
from manual_clock import ManualClock

from ripplemem import RippleMem
from ripplemem.core.types import Memory
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.store.tables.history import read_history


def touch(mem: RippleMem, memory: Memory, times: int) -> None:
    """Record accesses of a memory now, as recalls that return it do."""
    for _ in range(times):
        engine_of(mem).store.touch([memory.id], mem.user_id, engine_of(mem).now())


def snapshot(mem: RippleMem) -> tuple[list[Memory], dict]:
    """Everything a user sees of the store: every memory (all fields) and the stats."""
    stats = mem.stats()
    stats.pop("disk_bytes")
    return mem.list(limit=1000), stats


@pytest.fixture
def four_fates(mem: RippleMem, clock: ManualClock) -> dict[str, Memory]:
    """Four memories built so the forgetting score gives each a different action, whatever
    their graph degree (the connectivity part moves a score by at most 0.2)."""
    old = mem.add("I had a soggy sandwich on the train", importance=0.1)
    clock.advance(60)
    idle = mem.add("the plumber said the boiler is twelve years old", importance=0.5)
    clock.advance(32)
    new = mem.add("my library card number ends in 4471", importance=0.7)
    vital = mem.add("I am allergic to penicillin", importance=1.0)
    clock.advance(8)  # past the grace period new memories get
    touch(mem, new, 1)
    touch(mem, vital, 20)
    return {"delete": old, "deprioritize": idle, "archive": new, "keep": vital}


def test_score_strategy_deletes_deprioritizes_archives_and_keeps(
    mem: RippleMem, four_fates: dict[str, Memory]
) -> None:
    report = mem.forget()
    actions = {entry.id: entry.action for entry in report.entries}
    assert actions == {four_fates[a].id: a for a in ("delete", "deprioritize", "archive")}
    assert report.counts() == {"delete": 1, "deprioritize": 1, "archive": 1, "keep": 1}
    assert report.considered == 4 and not report.dry_run
    assert mem.get(four_fates["delete"].id) is None
    lowered = mem.get(four_fates["deprioritize"].id)
    # Lower priority, same tier: archive()'s rules decide tiers, and they protect important memories.
    assert lowered.importance == pytest.approx(0.45) and lowered.tier == "hot"
    assert mem.get(four_fates["archive"].id).tier == "cold"
    kept = mem.get(four_fates["keep"].id)
    assert (kept.tier, kept.importance) == ("hot", 1.0)
    by_id = {entry.id: entry for entry in report.entries}
    deleted = by_id[four_fates["delete"].id]
    assert deleted.score >= 0.8 and "importance 0.10" in deleted.reason and "idle 100 d" in deleted.reason
    assert deleted.preview == "I had a soggy sandwich on the train"
    assert 0.6 <= by_id[four_fates["deprioritize"].id].score < 0.8
    assert 0.4 <= by_id[four_fates["archive"].id].score < 0.6


def test_maintenance_never_deletes_an_important_memory_nobody_recalled(
    mem: RippleMem, clock: ManualClock
) -> None:
    """Four months without a recall: the allergy (importance 1.0) stays, hot, and a paraphrase
    finds it; an ordinary note is lowered, not deleted; only trivia goes."""
    allergy = mem.add("I am allergic to penicillin", importance=1.0)
    note = mem.add("the plumber said the boiler is twelve years old")
    trivia = mem.add("I had a soggy sandwich on the train", importance=0.1)
    clock.advance(120)
    report = mem.maintain()
    assert {e.id: e.action for e in report.forget.entries} == {note.id: "deprioritize", trivia.id: "delete"}
    assert mem.get(trivia.id) is None
    kept = mem.get(allergy.id)
    assert kept is not None and kept.importance == 1.0 and kept.tier == "hot"
    assert mem.recall("which antibiotics must I avoid?", k=1, mode="dense").hits[0].memory.id == allergy.id
    assert mem.get(note.id).importance == pytest.approx(0.45)


def test_the_score_strategy_leaves_new_memories_alone_for_a_grace_period(
    mem: RippleMem, clock: ManualClock
) -> None:
    # Unread and unlinked, a new memory scores about 0.6 ("deprioritize") from day one.
    fresh = mem.add("the new neighbours are called Ines and Tomas")
    assert mem.forget().entries == []
    clock.advance(mem.settings.lifecycle.forget_grace_days + 1)
    assert [entry.id for entry in mem.forget(dry_run=True).entries] == [fresh.id]


def test_deprioritized_memories_walk_towards_deletion_run_after_run(
    mem: RippleMem, four_fates: dict[str, Memory]
) -> None:
    first = mem.forget()
    target = four_fates["deprioritize"].id
    assert target in first.ids("deprioritize")
    assert mem.get(target).importance == pytest.approx(0.45)
    second = {e.id: e for e in mem.forget().entries}[target]
    # A lower importance raises the forgetting score: deprioritized again, or over the delete bar.
    assert second.score > {e.id: e.score for e in first.entries}[target]
    if second.action == "deprioritize":
        assert mem.get(target).importance == pytest.approx(0.5 * 0.9 * 0.9)
    else:
        assert second.action == "delete" and second.score >= 0.8 and mem.get(target) is None


def test_dry_run_reports_the_same_plan_and_changes_nothing(
    mem: RippleMem, four_fates: dict[str, Memory]
) -> None:
    before = snapshot(mem)
    planned = mem.forget(dry_run=True)
    assert snapshot(mem) == before
    logged = [e for m in four_fates.values() for e in mem.history(m.id)]
    assert [e.event for e in logged if e.event != "added"] == []
    assert planned.dry_run and "would" in planned.summary()
    applied = mem.forget()
    assert [(e.id, e.action) for e in planned.entries] == [(e.id, e.action) for e in applied.entries]


def test_every_applied_change_is_in_the_history_with_its_cause(
    mem: RippleMem, four_fates: dict[str, Memory]
) -> None:
    mem.forget()
    ids = [m.id for m in four_fates.values()]
    events = {e.memory_id: e for e in read_history(engine_of(mem).store, "alice", ids) if e.event != "added"}
    expected = {"delete": "forgotten", "deprioritize": "deprioritized", "archive": "archived"}
    assert {action: events[four_fates[action].id].event for action in expected} == expected
    assert four_fates["keep"].id not in events
    lowered = events[four_fates["deprioritize"].id]
    assert lowered.cause == "forget: score"
    assert lowered.detail["importance_before"] == 0.5
    assert lowered.detail["importance_after"] == pytest.approx(0.45)
    assert events[four_fates["delete"].id].detail["score"] >= 0.8


def test_importance_strategy_deletes_below_the_threshold(mem: RippleMem) -> None:
    trivial = mem.add("the cafe was out of oat milk", importance=0.05)
    minor = mem.add("the bus was five minutes late", importance=0.2)
    major = mem.add("my sister Lin is getting married in June", importance=0.9)
    assert mem.forget("importance").ids("delete") == [trivial.id]
    assert mem.forget("importance", threshold=0.3).ids("delete") == [minor.id]
    assert [m.id for m in mem.list()] == [major.id]


def test_time_strategy_deletes_what_is_older_than_max_age(mem: RippleMem, clock: ManualClock) -> None:
    old = mem.add("we rented a cabin by the lake", importance=0.9)
    clock.advance(20)
    recent = mem.add("the cabin owner emailed the receipt", importance=0.9)
    clock.advance(15)
    report = mem.forget("time")
    assert report.ids("delete") == [old.id] and "35.0 days old > 30" in report.entries[0].reason
    assert [m.id for m in mem.list()] == [recent.id]
    assert mem.forget("time", max_age_days=10).ids("delete") == [recent.id]


def test_capacity_strategy_keeps_the_most_important(mem: RippleMem) -> None:
    stored = [
        mem.add(f"note number {i} about the garden", importance=value)
        for i, value in enumerate([0.3, 0.9, 0.1, 0.6])
    ]
    report = mem.forget("capacity", capacity=2)
    assert sorted(report.ids("delete")) == sorted([stored[0].id, stored[2].id])
    assert sorted(m.importance for m in mem.list()) == [0.6, 0.9]
    assert mem.forget("capacity", capacity=2).counts() == {"keep": 2}


def test_bad_arguments_get_clear_errors_and_nothing_changes(mem: RippleMem) -> None:
    mem.add("I like green tea", importance=0.05)
    with pytest.raises(InvalidInputError, match="strategy must be one of score, importance, time, capacity"):
        mem.forget("oldest")
    with pytest.raises(InvalidTypeError, match="dry_run must be True or False"):
        mem.forget(dry_run="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="capacity must be a non-negative integer"):
        mem.forget("capacity", capacity=-1)
    with pytest.raises(InvalidInputError, match="threshold must be a number"):
        mem.forget("importance", threshold="low")  # type: ignore[arg-type]
    assert len(mem.list()) == 1


def test_forgetting_is_scoped_to_the_user(mem: RippleMem, clock: ManualClock) -> None:
    bob = mem.scope("bob")
    alice_old = mem.add("Alice's old parking ticket", importance=0.05)
    bob_old = bob.add("Bob's old parking ticket", importance=0.05)
    clock.advance(120)
    report = bob.forget()
    assert report.considered == 1 and report.ids("delete") == [bob_old.id]
    assert bob.lifecycle.archive().considered == 0
    assert mem.get(alice_old.id) is not None and mem.get(alice_old.id).tier == "hot"
    assert bob.list() == []


def test_async_twin_forgets_too(mem: RippleMem) -> None:
    gone = mem.add("a forgettable remark", importance=0.01)
    report = asyncio.run(mem.aforget("importance"))
    assert report.ids("delete") == [gone.id] and mem.get(gone.id) is None


def test_report_as_dict_and_summary_name_each_memory(mem: RippleMem, four_fates: dict[str, Memory]) -> None:
    report = mem.forget(dry_run=True)
    data = report.as_dict()
    assert data["counts"]["delete"] == 1 and data["dry_run"] is True
    assert {e["action"] for e in data["entries"]} == {"delete", "deprioritize", "archive"}
    assert "soggy sandwich" in report.summary(examples=3)
