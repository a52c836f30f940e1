"""Two handles (two connections, as two processes have) on one store: a recall through one is only a
record of use, so the other keeps its BM25 index and graph loaded; a write through one makes the
other reload them and find what was written."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from internals import engine_of

from ripplemem import RippleMem

PEOPLE = ["Ana", "Bo", "Cyd", "Dag", "Eli", "Fen"]
PLACES = ["Lisbon", "Oslo", "Quito", "Perth", "Hanoi", "Accra"]


@contextmanager
def cache_loads(mem: RippleMem) -> Iterator[list[str]]:
    """The statements with which `mem`'s store reloads a user's BM25 index or graph meanwhile."""
    statements: list[str] = []
    connection = engine_of(mem).store._conn  # the store's own connection: what it really runs
    connection.set_trace_callback(statements.append)
    try:
        yield statements
    finally:
        connection.set_trace_callback(None)
    statements[:] = [s for s in statements if "memories_fts" in s or _pages_edges(s)]


def _pages_edges(statement: str) -> bool:
    return "FROM edges WHERE user_id" in statement and "ORDER BY" in statement


def test_recalls_through_another_handle_leave_the_caches_loaded(tmp_path: Path) -> None:
    path = tmp_path / "store"
    first = RippleMem(path, user_id="u", embedder="hashing")
    second = RippleMem(path, user_id="u", embedder="hashing")
    try:
        first.add_many(
            [
                {"content": f"{person} flew to {place} with {PEOPLE[(i + 1) % 6]} in week {i}"}
                for i, (person, place) in enumerate(zip(PEOPLE * 5, PLACES * 5, strict=True))
            ]
        )
        first.recall("who flew to Oslo?", mode="ripple")  # the caches load now
        for query in ("who went to Quito?", "Ana and Bo in Perth", "trips to Hanoi"):
            hits = second.recall(query, mode="ripple").hits
        counted = second.get(hits[0].memory.id)
        with cache_loads(first) as loads:
            assert first.recall("who went to Quito?", mode="ripple").hits
        assert loads == []
        # What the other handle recorded is in the store all the same.
        assert counted is not None and first.get(counted.id).access_count == counted.access_count >= 1

        added = second.add("Gus sailed to Nuuk with Ana")
        with cache_loads(first) as loads:
            found = first.recall("Gus sailed to Nuuk", mode="ripple").hits
        assert found[0].memory.id == added.id
        assert any("memories_fts" in s for s in loads) and any("FROM edges" in s for s in loads)
    finally:
        second.close()
        first.close()


def test_a_write_elsewhere_is_seen_after_a_write_of_ones_own(tmp_path: Path) -> None:
    # The other handle's write comes first, then this handle's own: its caches must still reload.
    path = tmp_path / "store"
    first = RippleMem(path, user_id="u", embedder="hashing")
    second = RippleMem(path, user_id="u", embedder="hashing")
    try:
        first.add("Ana keeps bees on the roof")
        assert first.recall("bees", mode="keyword").hits  # the BM25 index is loaded
        theirs = second.add("Bo bought a telescope for the comet")
        first.add("Ana repainted the kitchen")
        hits = first.recall("telescope comet", mode="keyword").hits
        assert [hit.memory.id for hit in hits] == [theirs.id]
    finally:
        second.close()
        first.close()
