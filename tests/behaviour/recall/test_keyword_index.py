"""The BM25 index beside a store: in step with the facade's writes and other processes', and loaded
from SQLite page by page (tests/unit/index/test_bm25.py tests the index on its own)."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from internals import engine_of

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder


def test_recall_sees_writes_through_the_facade(memory_only: RippleMem) -> None:
    memory_only.add("Caroline is researching adoption agencies")
    assert memory_only.recall("adoption agencies", mode="keyword").hits  # index loaded now
    target = memory_only.add("Melanie signed up for a pottery workshop")
    assert memory_only.recall("pottery", mode="keyword").hits[0].memory.id == target.id
    memory_only.update(target.id, content="Melanie signed up for a painting workshop")
    assert memory_only.recall("pottery", mode="keyword").hits == []
    assert memory_only.recall("painting", mode="keyword").hits[0].memory.id == target.id
    memory_only.delete(target.id)
    assert memory_only.recall("painting workshop", mode="keyword").hits == []


def test_memories_added_by_another_process_are_found(tmp_path: Path, embedder: Embedder) -> None:
    store = tmp_path / "store"
    with RippleMem(path=store, user_id="alice", embedder=embedder) as mem:
        mem.add("Alice keeps bees on the roof")
        assert mem.recall("bees", mode="keyword").hits  # in-memory index built
        script = (
            "from ripplemem import RippleMem\n"
            f"with RippleMem(path={str(store)!r}, user_id='alice') as other:\n"
            "    other.add('Alice bought a telescope for the comet')\n"
        )
        subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
        hits = mem.recall("telescope comet", mode="keyword").hits
        assert [h.memory.content for h in hits] == ["Alice bought a telescope for the comet"]


def test_a_users_rows_are_read_page_by_page_each_exactly_once(tmp_path: Path, embedder: Embedder) -> None:
    # One clock tick for everything: every row ties on created_at, so pages must continue by rowid.
    mem = RippleMem(
        tmp_path / "db",
        user_id="alice",
        embedder=embedder,
        clock=lambda: datetime(2026, 1, 5, tzinfo=timezone.utc),
    )
    bob = mem.scope(user_id="bob")
    for n in range(4):
        mem.add_many([f"Alice note {n}-{i} about topic {i * 7 + n}" for i in range(5)])
        bob.add(f"Bob note {n}")
    mem.delete(mem.list(limit=1)[0].id)
    store = engine_of(mem).store
    expected = {m.id for m in mem.list(limit=100)}
    assert len(expected) == 19
    for pages in (
        list(store.iter_keyword_tokens("alice", batch=3)),
        [[(i, i) for i in ids] for ids, _, _ in store.iter_embeddings("alice", batch=3)],
    ):
        seen = [memory_id for page in pages for memory_id, _ in page]
        assert len(pages) > 5 and sorted(seen) == sorted(expected)
    everyone = [memory_id for ids, _, _ in store.iter_embeddings(None, batch=4) for memory_id in ids]
    assert len(everyone) == len(set(everyone)) == 23


COFFEE = [
    "I had coffee with Anna at the station",
    "Coffee again this morning",
    "The coffee machine at work is broken",
    "Bought coffee beans from the market",
    "Too much coffee, could not sleep",
    "Walked the dog along the canal",
    "Anna called",
]


def test_a_word_most_memories_hold_ranks_the_same_with_and_without_a_filter(memory_only: RippleMem) -> None:
    for content in COFFEE:
        memory_only.add(content, session_id="week-1")
    # No filter: the in-memory index; a session filter: SQLite's FTS5. Both use FTS5's idf (a word
    # in more than half the memories counts only through its 1e-6 floor), so they rank alike, and
    # the memories holding only the common word are still found.
    everywhere = memory_only.recall("coffee with Anna", k=10, mode="keyword", record_access=False)
    in_session = memory_only.recall(
        "coffee with Anna", k=10, mode="keyword", session_id="week-1", record_access=False
    )
    ranked = [hit.memory.content for hit in everywhere.hits]
    assert ranked == [hit.memory.content for hit in in_session.hits]
    assert sorted(ranked) == sorted(COFFEE[:5] + ["Anna called"])
