"""The in-memory BM25 index: exact after adds and deletes, stemmed, in step with the store, and
loaded from it page by page."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from internals import engine_of

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.index.bm25 import KeywordIndex, index_terms, query_terms

DOCS = {
    "a": "Caroline went running by the lake on Sunday",
    "b": "Melanie painted a sunrise over the lake",
    "c": "Caroline adopted a dog from the shelter",
    "d": "The shelter runs an adoption day every month",
    "e": "We talked about pottery classes and painting",
}


def _fresh(docs: dict[str, str]) -> KeywordIndex:
    index = KeywordIndex()
    index.add((key, index_terms(text)) for key, text in docs.items())
    return index


def test_ranks_rare_terms_above_common_ones_and_matches_stems() -> None:
    index = _fresh(DOCS)
    hits = index.search(query_terms("Did Caroline run by the lake?"), 5)
    assert hits[0][0] == "a"  # caroline + run(ning) + lake
    assert {key for key, _ in hits} == {"a", "b", "c", "d"}  # 'runs' stems to 'run' as well
    assert [score for _, score in hits] == sorted((score for _, score in hits), reverse=True)
    assert index.search(query_terms("the of and"), 5) == []


def test_results_after_deletes_and_replacements_equal_a_fresh_index() -> None:
    index = _fresh(DOCS)
    index.remove(["c"])
    index.add([("b", index_terms("Melanie adopted a cat from the shelter"))])
    expected = dict(DOCS, b="Melanie adopted a cat from the shelter")
    del expected["c"]
    fresh = _fresh(expected)
    for query in ["adopted from the shelter", "lake", "Caroline", "painting pottery"]:
        got, want = index.search(query_terms(query), 10), fresh.search(query_terms(query), 10)
        assert [key for key, _ in got] == [key for key, _ in want]
        assert [round(s, 5) for _, s in got] == [round(s, 5) for _, s in want]
    assert len(index) == 4 and "c" not in index


def test_which_query_terms_each_memory_holds_comes_from_the_postings() -> None:
    index = _fresh(DOCS)
    index.add([("f", index_terms("Caroline painted the shelter door"))])  # pending, not folded
    terms = query_terms("Caroline painting at the shelter")
    held = index.holding(terms, ["a", "b", "f", "unknown"])
    assert held[:3] == [{t for t in terms if t in index_terms(DOCS["a"])},
                        {t for t in terms if t in index_terms(DOCS["b"])},
                        {t for t in terms if t in index_terms("Caroline painted the shelter door")}]
    assert held[2] == set(terms) and held[0] == {"carolin"}
    assert held[3] is None  # not indexed here: the caller reads the text itself


def test_compaction_keeps_every_live_posting() -> None:
    docs = {f"m{i}": f"note {i} about topic{i % 7} and shared words" for i in range(3000)}
    index = _fresh(docs)
    index.remove([f"m{i}" for i in range(0, 3000, 2)])  # half dead: triggers compaction
    for key in [f"m{i}" for i in range(0, 3000, 2)]:
        docs.pop(key)
    fresh = _fresh(docs)
    for query in ["topic3", "note 1501", "shared"]:
        got, want = index.search(query_terms(query), 20), fresh.search(query_terms(query), 20)
        assert [round(s, 5) for _, s in got] == [round(s, 5) for _, s in want]
        assert all(key in docs for key, _ in got)


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


def test_possessives_meet_the_plain_name() -> None:
    index = _fresh({"a": "Calvin bought a Ferrari", "b": "The car of my sister"})
    assert [key for key, _ in index.search(query_terms("What is Calvin's car?"), 5)] == ["a", "b"] or \
        {key for key, _ in index.search(query_terms("What is Calvin's car?"), 5)} == {"a", "b"}
    assert index.search(query_terms("Calvin's"), 5)[0][0] == "a"


def test_a_users_rows_are_read_page_by_page_each_exactly_once(tmp_path: Path, embedder: Embedder) -> None:
    # One clock tick for everything: every row ties on created_at, so pages must continue by rowid.
    mem = RippleMem(tmp_path / "db", user_id="alice", embedder=embedder,
                    clock=lambda: datetime(2026, 1, 5, tzinfo=timezone.utc))
    bob = mem.scope(user_id="bob")
    for n in range(4):
        mem.add_many([f"Alice note {n}-{i} about topic {i * 7 + n}" for i in range(5)])
        bob.add(f"Bob note {n}")
    mem.delete(mem.list(limit=1)[0].id)
    store = engine_of(mem).store
    expected = {m.id for m in mem.list(limit=100)}
    assert len(expected) == 19
    for pages in (list(store.iter_keyword_tokens("alice", batch=3)),
                  [[(i, i) for i in ids] for ids, _, _ in store.iter_embeddings("alice", batch=3)]):
        seen = [memory_id for page in pages for memory_id, _ in page]
        assert len(pages) > 5 and sorted(seen) == sorted(expected)
    everyone = [memory_id for ids, _, _ in store.iter_embeddings(None, batch=4) for memory_id in ids]
    assert len(everyone) == len(set(everyone)) == 23
