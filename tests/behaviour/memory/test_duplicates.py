"""A new memory that repeats a stored one merges into it instead of duplicating
(docs/design-notes.md#duplicates-and-conflicts)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from manual_clock import ManualClock

from ripplemem import RippleMem
from ripplemem.config import Settings
from ripplemem.embedding.embedders import Embedder
from ripplemem.rules.lifecycle.settings import LifecycleSettings


def test_the_same_text_again_merges_into_the_stored_memory(mem: RippleMem) -> None:
    first = mem.add("I am allergic to peanuts", importance=0.6)
    mem.add("We had pasta for dinner")
    again = mem.add("i am allergic to peanuts!", importance=0.9)
    assert again.id == first.id and again.content == "I am allergic to peanuts"
    assert again.mention_count == 2 and again.importance == 0.9
    stats = mem.stats()
    assert stats["total"] == 2 and stats["vectors"] == 2
    assert [h.memory.id for h in mem.recall("what am I allergic to?", k=5).hits].count(first.id) == 1


def test_a_merge_keeps_the_latest_time_and_logs_the_mention(tmp_path: Path, embedder: Embedder) -> None:
    clock = ManualClock()
    with RippleMem(path=tmp_path, user_id="alice", embedder=embedder, clock=clock) as mem:
        first = mem.add("I went swimming at the lake", metadata={"mood": "happy"})
        clock.now += timedelta(days=2)
        merged = mem.add("I went for a swim in the lake", metadata={"with": "Sam"})
        assert merged.id == first.id and merged.mention_count == 2
        assert merged.when == clock.now and merged.metadata == {"mood": "happy", "with": "Sam"}
        events = mem.history(first.id)
        assert [e.event for e in events] == ["added", "merged"]
        assert events[1].detail["text"] == "I went for a swim in the lake" and "similarity" in events[1].cause
        assert mem.list(since=clock.now - timedelta(hours=1))[0].id == first.id  # the time moved
        assert (
            mem.recall("lake", k=3, mode="dense", since=clock.now - timedelta(hours=1)).hits[0].memory.id
            == first.id
        )  # and the vector index knows it


def test_alike_wording_with_other_numbers_days_or_a_negation_is_kept_apart(memory_only: RippleMem) -> None:
    texts = [
        "I ran 5 km along the river",
        "I ran 8 km along the river",
        "I went running in the park on Monday",
        "I went running in the park on Tuesday",
        "The flight is delayed",
        "The flight is not delayed",
        "我的猫叫咪咪",
        "我的狗叫旺财",
    ]  # MiniLM embeds these two at 1.0
    stored = memory_only.add_many(texts)
    assert len({m.id for m in stored}) == len(texts) and memory_only.stats()["total"] == len(texts)


def test_a_restated_attribute_beside_new_facts_is_not_merged_away(memory_only: RippleMem) -> None:
    # Both texts state the same residence; the new phone number must not vanish into the old memory.
    old = memory_only.add("My phone number is 555 0123, I live in Porto")
    new = memory_only.add("My new phone number is 555 0199, I live in Porto now")
    assert new.id != old.id and new.content.startswith("My new phone number is 555 0199")
    assert {m.content for m in memory_only.list()} == {old.content, new.content}
    assert memory_only.get(old.id).mention_count == 1
    top = memory_only.recall("what is my new phone number?", k=2).hits
    assert new.id in [hit.memory.id for hit in top]
    # A plain restatement of the same attribute still merges.
    again = memory_only.add("I live in Porto.")
    assert memory_only.add("I live in Porto").id == again.id


def test_repeats_inside_one_batch_merge_into_the_first(memory_only: RippleMem) -> None:
    stored = memory_only.add_many(
        [
            "My sister lives in Toronto",
            "We adopted a cat",
            "my sister lives in Toronto.",
            "我对花生过敏",
            "我对花生过敏！",
        ]
    )
    assert stored[2].id == stored[0].id and stored[0].mention_count == 2
    assert stored[4].id == stored[3].id and memory_only.stats()["total"] == 3
    assert [e.event for e in memory_only.history(stored[0].id)] == ["added", "merged"]


def test_separate_records_are_not_merged(memory_only: RippleMem) -> None:
    # A LangGraph store keeps items apart by metadata keys; other types are other kinds of memory.
    a = memory_only.add("Prefers green tea", metadata={"key": "drink-1"})
    b = memory_only.add("Prefers green tea", metadata={"key": "drink-2"})
    c = memory_only.add("Prefers green tea", type="semantic")
    assert len({a.id, b.id, c.id}) == 3


def test_merging_can_be_switched_off_for_bulk_loads(tmp_path: Path, embedder: Embedder) -> None:
    settings = Settings(lifecycle=LifecycleSettings(merge_duplicates=False, detect_conflicts=False))
    with RippleMem(path=tmp_path, user_id="alice", embedder=embedder, settings=settings) as mem:
        stored = mem.add_many(["I am allergic to peanuts", "I am allergic to peanuts"])
        assert stored[0].id != stored[1].id and mem.stats()["total"] == 2
        assert [e.event for e in mem.history(stored[0].id)] == ["added"]


def test_one_users_text_never_merges_into_anothers(mem: RippleMem) -> None:
    alice = mem.add("I am allergic to peanuts")
    bob = mem.scope("bob").add("I am allergic to peanuts")
    assert bob.id != alice.id and bob.user_id == "bob"
    assert mem.get(alice.id).mention_count == 1
    assert mem.scope("bob").get(alice.id) is None
