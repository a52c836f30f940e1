"""mem.lifecycle.archive(): the hot / warm / cold migrations (docs/design-notes.md#tiers) on a controlled
clock, the compressed archive segments cold vectors live in, and waking a cold memory when a recall
reaches it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from internals import engine_of
from manual_clock import ManualClock

from ripplemem import RippleMem, StoreOptions
from ripplemem.core.types import Memory
from ripplemem.embedding.embedders import Embedder
from ripplemem.store.cold_segments import decode_segment


def touch(mem: RippleMem, memory: Memory, times: int = 1) -> None:
    """Record accesses of a memory now, as recalls that return it do."""
    for _ in range(times):
        engine_of(mem).store.touch([memory.id], mem.user_id, engine_of(mem).now())


def tier(mem: RippleMem, memory: Memory) -> str:
    """The memory's tier as stored now."""
    found = mem.get(memory.id)
    assert found is not None
    return found.tier


def dense_ids(mem: RippleMem, query: str) -> list[str]:
    """What a dense-only search returns (read-only: no access is recorded)."""
    return [hit.memory.id for hit in mem.recall(query, 10, mode="dense", record_access=False).hits]


def stored_segments(mem: RippleMem) -> list[bytes]:
    """The bytes of every archive segment the store holds: files under its directory, or the rows
    of a store on a server."""
    if mem.path is None:
        archive = engine_of(mem).archive
        return [archive.shelf.get(name) for name in archive.segments(mem.user_id)]
    root = os.path.join(mem.path, "archive")
    files = sorted(os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names)
    assert all(name.endswith(".rma") for name in files)
    return [Path(name).read_bytes() for name in files]


# -- the tier rules --------------------------------------------------------------------------------
def test_hot_to_warm_after_7_idle_days_below_importance_0_7(mem: RippleMem, clock: ManualClock) -> None:
    ordinary = mem.add("we talked about the new bakery on Elm Street", importance=0.5)
    important = mem.add("my passport expires in October", importance=0.8)
    clock.advance(6)
    assert mem.lifecycle.archive().entries == []
    clock.advance(2)
    report = mem.lifecycle.archive()
    assert [(e.id, e.from_tier, e.to_tier) for e in report.entries] == [(ordinary.id, "hot", "warm")]
    assert "8 d idle >= 7 and importance 0.50 < 0.7" in report.entries[0].reason
    assert (tier(mem, ordinary), tier(mem, important)) == ("warm", "hot")
    # Warm is a label: the vector stays searchable.
    assert ordinary.id in dense_ids(mem, "new bakery on Elm Street")


def test_warm_to_cold_after_30_idle_days_and_fewer_than_3_accesses(
    mem: RippleMem, clock: ManualClock
) -> None:
    rarely = mem.add("the gym locker code is 2231", importance=0.5)
    often = mem.add("my dentist is Dr. Okafor on Bridge Road", importance=0.5)
    touch(mem, often, 3)
    clock.advance(10)
    mem.lifecycle.archive()
    assert (tier(mem, rarely), tier(mem, often)) == ("warm", "warm")
    clock.advance(21)
    report = mem.lifecycle.archive()
    assert [(e.id, e.from_tier, e.to_tier) for e in report.entries] == [(rarely.id, "warm", "cold")]
    assert "0 accesses < 3" in report.entries[0].reason
    assert (tier(mem, rarely), tier(mem, often)) == ("cold", "warm")


def test_one_run_cascades_hot_to_cold(mem: RippleMem, clock: ManualClock) -> None:
    memory = mem.add("the hotel wifi password was seaside42", importance=0.4)
    clock.advance(31)
    entry = mem.lifecycle.archive().entries[0]
    assert (entry.from_tier, entry.to_tier, entry.action) == ("hot", "cold", "cold")
    assert "hot -> warm" in entry.reason and "warm -> cold" in entry.reason
    assert tier(mem, memory) == "cold"


def test_cold_is_deleted_after_90_idle_days_below_importance_0_3(mem: RippleMem, clock: ManualClock) -> None:
    trivial = mem.add("the parking meter took coins only", importance=0.2)
    kept = mem.add("grandma's recipe uses cardamom", importance=0.4)
    clock.advance(40)
    mem.lifecycle.archive()
    assert (tier(mem, trivial), tier(mem, kept)) == ("cold", "cold")
    assert len(stored_segments(mem)) == 1
    clock.advance(50)
    report = mem.lifecycle.archive()
    assert [(e.id, e.action) for e in report.entries] == [(trivial.id, "delete")]
    assert "90 d idle >= 90 and importance 0.20 < 0.3" in report.entries[0].reason
    assert mem.get(trivial.id) is None and tier(mem, kept) == "cold"
    ids, _ = engine_of(mem).archive.read("alice", engine_of(mem).archive.segments("alice")[0])
    assert ids == [kept.id]


def test_the_access_score_is_reported_with_each_move(mem: RippleMem, clock: ManualClock) -> None:
    mem.add("the cat's vet appointment is on Friday", importance=0.5)
    clock.advance(7)
    entry = mem.lifecycle.archive().entries[0]
    # access score: 0.7 x exp(-7 / 7) + 0.3 x min(0 / 10, 1)
    assert entry.score == pytest.approx(0.7 * np.exp(-1.0))


# -- what a cold memory is ---------------------------------------------------------------------------
def test_cold_memories_leave_dense_search_but_stay_listed_counted_and_keyword_searchable(
    mem: RippleMem, clock: ManualClock
) -> None:
    cold = mem.add("I keep the spare house key under the blue flowerpot", importance=0.5)
    hot = mem.add("my favourite band is Radiohead", importance=0.9)
    assert cold.id in dense_ids(mem, "where is the spare key?")
    clock.advance(31)
    touch(mem, hot)
    mem.lifecycle.archive()
    stats = mem.stats()
    assert stats["by_tier"] == {"cold": 1, "hot": 1} and stats["total"] == 2 and stats["vectors"] == 1
    assert cold.id not in dense_ids(mem, "where is the spare key?")
    assert {m.id for m in mem.list()} == {cold.id, hot.id}
    keyword = mem.recall("flowerpot key", 5, mode="keyword", record_access=False)
    assert [h.memory.id for h in keyword.hits] == [cold.id]
    # Hybrid and ripple recall read candidates' vectors: a cold one (no vector) must not break them.
    for mode in ("hybrid", "ripple"):
        found = mem.recall("spare house key flowerpot", 5, mode=mode, record_access=False)
        assert cold.id in [h.memory.id for h in found.hits]
        assert next(h for h in found.hits if h.memory.id == cold.id).components["dense"] == 0.0


def test_cold_vectors_are_in_compressed_segments_not_in_sqlite(mem: RippleMem, clock: ManualClock) -> None:
    texts = [f"visit {i}: we walked the dog along the canal and met neighbour {i}" for i in range(40)]
    stored = mem.add_many(texts)
    original = {m.id: engine_of(mem).store.embedding_of(m.id, "alice") for m in stored}
    clock.advance(31)
    mem.lifecycle.archive()
    assert all(engine_of(mem).store.embedding_of(m.id, "alice") is None for m in stored)
    segments = stored_segments(mem)
    assert len(segments) == 1
    dim = len(next(iter(original.values())))
    raw_bytes = len(stored) * dim * 4
    assert len(segments[0]) < 0.95 * raw_bytes
    ids, vectors = decode_segment(segments[0])
    assert sorted(ids) == sorted(original)
    for memory_id, vector in zip(ids, vectors, strict=True):
        assert np.array_equal(vector, original[memory_id])  # lossless


def test_deleting_a_cold_memory_removes_it_from_its_segment(mem: RippleMem, clock: ManualClock) -> None:
    first = mem.add("the landlord's number is in the blue notebook", importance=0.5)
    second = mem.add("the boiler was serviced in spring", importance=0.5)
    clock.advance(31)
    mem.lifecycle.archive()
    archive = engine_of(mem).archive
    (segment,) = archive.segments("alice")
    assert sorted(archive.read("alice", segment)[0]) == sorted([first.id, second.id])
    assert mem.delete(first.id)
    assert archive.read("alice", segment)[0] == [second.id]
    assert mem.stats()["by_tier"] == {"cold": 1}
    assert mem.delete(second.id)
    assert archive.segments("alice") == [] and stored_segments(mem) == []


# -- waking -------------------------------------------------------------------------------------------
@pytest.fixture
def ferrari(mem: RippleMem, clock: ManualClock) -> dict[str, Memory]:
    """A hot memory and a cold one that share the entities Calvin and Ferrari."""
    bought = mem.add("Calvin bought a Ferrari 488 in March", importance=0.9)
    repainted = mem.add("Marco repainted the Ferrari 488 of Calvin in red", importance=0.5)
    clock.advance(35)
    touch(mem, bought)
    mem.lifecycle.archive()
    assert (tier(mem, bought), tier(mem, repainted)) == ("hot", "cold")
    return {"hot": bought, "cold": repainted}


def test_a_recall_that_reaches_a_cold_memory_through_the_graph_wakes_it(
    mem: RippleMem, ferrari: dict[str, Memory]
) -> None:
    cold = ferrari["cold"]
    assert cold.id not in dense_ids(mem, "Ferrari repainted red")
    # No word of the query is in the cold memory and dense search cannot see it: only the graph
    # (the Calvin and Ferrari entities it shares with the hot memory) can bring it in.
    result = mem.recall("which sports car was bought in March?", 5)
    hit = next(h for h in result.hits if h.memory.id == cold.id)
    assert hit.memory.tier == "cold" and hit.components["graph"] > 0
    assert hit.components["keyword"] == 0.0 and hit.components["dense"] == 0.0
    mem._wake_recalled(result, engine_of(mem).now())
    assert tier(mem, cold) == "hot"
    assert dense_ids(mem, "Ferrari repainted red")[0] == cold.id
    assert mem.stats()["vectors"] == 2 and stored_segments(mem) == []
    (event,) = [e for e in mem.history(cold.id) if e.event == "woken"]
    assert event.detail["from"] == "cold" and "recall" in event.cause


def test_recall_itself_wakes_what_it_reaches_unless_read_only(
    mem: RippleMem, ferrari: dict[str, Memory]
) -> None:
    cold = ferrari["cold"]
    mem.recall("which sports car was bought in March?", 5, record_access=False)
    assert tier(mem, cold) == "cold"
    mem.recall("which sports car was bought in March?", 5)
    assert tier(mem, cold) == "hot"
    assert dense_ids(mem, "Ferrari repainted red")[0] == cold.id


def test_waking_restores_the_exact_vector(
    mem: RippleMem, ferrari: dict[str, Memory], embedder: Embedder
) -> None:
    cold = ferrari["cold"]
    result = mem.recall("which sports car was bought in March?", 5)
    mem._wake_recalled(result, engine_of(mem).now())
    restored = engine_of(mem).store.embedding_of(cold.id, "alice")
    assert np.array_equal(restored, np.asarray(embedder.embed_documents([cold.content])[0], dtype=np.float32))


def test_new_content_for_a_cold_memory_brings_it_back(mem: RippleMem, ferrari: dict[str, Memory]) -> None:
    cold = ferrari["cold"]
    updated = mem.update(cold.id, content="Marco repainted the Ferrari 488 of Calvin in matte black")
    assert updated.tier == "hot"
    assert dense_ids(mem, "matte black paint job")[0] == cold.id
    assert engine_of(mem).archive.segments("alice") == []


def test_tiers_and_segments_survive_reopening_the_store(
    mem: RippleMem,
    ferrari: dict[str, Memory],
    embedder: Embedder,
    clock: ManualClock,
    backend: dict[str, Any],
) -> None:
    path = mem.path
    mem.close()
    again = RippleMem(path, user_id="alice", embedder=embedder, clock=clock, store=StoreOptions(**backend))
    try:
        assert again.stats()["by_tier"] == {"hot": 1, "cold": 1} and again.stats()["vectors"] == 1
        assert ferrari["cold"].id not in dense_ids(again, "Ferrari repainted red")
        result = again.recall("which sports car was bought in March?", 5)
        again._wake_recalled(result, engine_of(again).now())
        assert dense_ids(again, "Ferrari repainted red")[0] == ferrari["cold"].id
    finally:
        again.close()


# -- dry runs, history, isolation, memory-only stores -------------------------------------------------
def test_dry_run_changes_nothing(mem: RippleMem, clock: ManualClock) -> None:
    mem.add_many(["the oven timer is broken", "we planted tulips in the back garden"])
    clock.advance(100)
    before = (mem.list(), {k: v for k, v in mem.stats().items() if k != "disk_bytes"})
    report = mem.lifecycle.archive(dry_run=True)
    assert report.counts()["cold"] == 2 and report.dry_run
    assert (mem.list(), {k: v for k, v in mem.stats().items() if k != "disk_bytes"}) == before
    assert stored_segments(mem) == []


def test_every_move_is_in_the_history(mem: RippleMem, clock: ManualClock) -> None:
    warm = mem.add("the neighbours adopted a beagle", importance=0.6)
    touch(mem, warm, 3)
    cold = mem.add("the printer needs a new cartridge", importance=0.6)
    clock.advance(31)
    mem.lifecycle.archive()
    events = {e.memory_id: e for m in (warm, cold) for e in mem.history(m.id)}
    assert (events[warm.id].event, events[cold.id].event) == ("cooled", "archived")
    assert events[cold.id].detail["from"] == "hot" and events[cold.id].detail["to"] == "cold"
    assert events[cold.id].cause.startswith("tiers")


def test_archiving_is_scoped_to_the_user(mem: RippleMem, clock: ManualClock) -> None:
    bob = mem.scope("bob")
    alice_note = mem.add("Alice's bike lock code is 5521", importance=0.5)
    bob_note = bob.add("Bob's bike lock code is 7781", importance=0.5)
    clock.advance(31)
    assert [e.id for e in bob.lifecycle.archive().entries] == [bob_note.id]
    assert tier(mem, alice_note) == "hot" and alice_note.id in dense_ids(mem, "bike lock code")
    assert engine_of(mem).archive.segments("alice") == [] and len(engine_of(mem).archive.segments("bob")) == 1
    # Alice's handle cannot wake or read Bob's archived memory.
    mem._wake_recalled(
        bob.recall("bike lock code", 5, mode="keyword", record_access=False), engine_of(mem).now()
    )
    assert bob.get(bob_note.id).tier == "cold"


def test_an_in_memory_store_archives_and_wakes_in_memory(embedder: Embedder, clock: ManualClock) -> None:
    with RippleMem(None, user_id="alice", embedder=embedder, clock=clock) as mem:
        memory = mem.add("the museum is closed on Mondays", importance=0.5)
        clock.advance(31)
        asyncio.run(mem.lifecycle.aarchive())
        assert tier(mem, memory) == "cold" and memory.id not in dense_ids(mem, "museum opening days")
        result = mem.recall("museum closed Mondays", 3, mode="keyword")
        mem._wake_recalled(result, engine_of(mem).now())
        assert dense_ids(mem, "museum opening days")[0] == memory.id
