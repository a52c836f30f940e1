"""mem.consolidate(): working memory to long-term memory, and promotions.

The rules: docs/design-notes.md#consolidation.
"""

from __future__ import annotations

from datetime import timedelta

from manual_clock import ManualClock

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder


def test_a_fact_mentioned_three_times_becomes_semantic(embedder: Embedder) -> None:
    clock = ManualClock()
    with RippleMem(path=None, user_id="alice", embedder=embedder, clock=clock) as mem:
        for _ in range(3):
            mem.observe("user", "I go swimming at the Aquatic Centre on Tuesdays", session_id="s1")
            clock.now += timedelta(minutes=2)
        mem.observe("user", "nice weather today", session_id="s1")
        preview = mem.consolidate(dry_run=True)
        assert [(s.action, s.to_type) for s in preview.steps] == [("stored", "semantic")]
        assert "mention" in preview.steps[0].reason
        assert mem.list() == []  # the dry run changed nothing
        report = mem.consolidate()
        stored = mem.list()
        assert [(m.content, m.type) for m in stored] == [
            ("I go swimming at the Aquatic Centre on Tuesdays", "semantic")
        ]
        assert stored[0].metadata["mention_count"] == 3 and report.steps[0].memory_id == stored[0].id
        assert mem.consolidate().steps == []  # nothing is written twice


def test_important_memories_are_promoted_by_seed_001(memory_only: RippleMem) -> None:
    key = memory_only.add("The user's passport number ends in 4471", type="episodic", importance=0.85)
    plain = memory_only.add("We had pasta for dinner", type="episodic", importance=0.5)
    draft = memory_only.add("Call the bank about the mortgage", type="working", importance=0.75)
    report = memory_only.consolidate()
    assert {(s.id, s.from_type, s.to_type) for s in report.steps} == {
        (key.id, "episodic", "semantic"),
        (draft.id, "working", "episodic"),
    }
    assert memory_only.get(key.id).type == "semantic" and memory_only.get(plain.id).type == "episodic"
    assert report.counts() == {"promoted": 2}


def test_promoted_memories_are_found_under_their_new_type_by_every_retriever(mem: RippleMem) -> None:
    key = mem.add("The user's passport number ends in 4471", type="episodic", importance=0.85)
    mem.consolidate()
    for mode in ("dense", "keyword", "hybrid", "ripple"):
        semantic = mem.recall("passport number", types="semantic", mode=mode, record_access=False)
        assert [hit.memory.id for hit in semantic.hits] == [key.id], mode
        assert mem.recall("passport number", types="episodic", mode=mode, record_access=False).hits == []
