"""RippleMem(backend="neo4j"): clear errors without a server (run everywhere), and the behaviour on
a real Neo4j when $NEO4J_URI answers (skipped, saying why, otherwise)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from internals import engine_of

from ripplemem import RippleMem, StoreOptions
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError, StoreError
from ripplemem.store.neo4j import cypher
from ripplemem.store.neo4j.connection import statement
from ripplemem.store.sqlite.rows import SQLiteStore
from ripplemem.store.tables.graph import iter_edges
from ripplemem.store.vectors.chroma_server import store_namespace

DEAD_URI = "neo4j://127.0.0.1:1"


# -- without a server -------------------------------------------------------------------------
def test_an_unreachable_server_fails_the_constructor_naming_the_uri_and_how_to_start_one(
    tmp_path: Path, embedder: Embedder
) -> None:
    """The error names the URI, the docker image and Aura, and no store is left behind."""
    with pytest.raises(StoreError) as caught:
        RippleMem(
            tmp_path / "store",
            user_id="alice",
            embedder=embedder,
            store=StoreOptions(backend="neo4j", uri=DEAD_URI, auth=("neo4j", "password")),
        )
    message = str(caught.value)
    assert DEAD_URI in message and "docker run" in message and "neo4j:5" in message and "Aura" in message
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"backend": "neo4J", "uri": DEAD_URI}, "backend must be one of"),
        ({"backend": "neo4j"}, "needs uri="),
        ({"backend": "neo4j", "uri": "localhost:7687"}, "needs uri="),
        ({"backend": "neo4j", "uri": DEAD_URI, "auth": "neo4j/password"}, "auth must be"),
        ({"backend": "neo4j", "uri": DEAD_URI, "database": ""}, "database must be"),
        ({"backend": "neo4j", "uri": DEAD_URI, "vector_index": "numpy"}, "drop vector_index"),
        ({"uri": DEAD_URI}, "options of backend='neo4j'"),
    ],
)
def test_bad_neo4j_options_are_refused_naming_the_problem(
    tmp_path: Path, embedder: Embedder, options: dict[str, Any], named: str
) -> None:
    """Each mistake gets an error that says what to change, before any connection is tried."""
    with pytest.raises(InvalidInputError, match=named):
        RippleMem(tmp_path / "store", user_id="alice", embedder=embedder, store=StoreOptions(**options))


def test_neo4j_needs_a_store_directory_for_its_ledger(embedder: Embedder) -> None:
    """path=None is refused: history, tiers and working memory live in SQLite beside Neo4j."""
    with pytest.raises(InvalidInputError, match="ledger"):
        RippleMem(None, user_id="alice", embedder=embedder, store=StoreOptions(backend="neo4j", uri=DEAD_URI))


def test_a_store_served_by_neo4j_is_not_opened_as_an_embedded_one_by_default(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Opening it without backend='neo4j' would build a second, local index; the error says so."""
    RippleMem(
        tmp_path / "store", user_id="alice", embedder=embedder, store=StoreOptions(vector_index="numpy")
    ).close()
    ledger = SQLiteStore(str(tmp_path / "store"))
    ledger.set_meta("vector_index", "neo4j")  # what an open with backend="neo4j" records
    ledger.close()
    with pytest.raises(StoreError, match="backend='neo4j'"):
        RippleMem(tmp_path / "store", user_id="alice", embedder=embedder)


# -- on a real server ---------------------------------------------------------------------------
@pytest.fixture
def store(tmp_path: Path, embedder: Embedder, neo4j_server: dict[str, Any]) -> Iterator[RippleMem]:
    """Alice's handle on a fresh store served by the Neo4j at $NEO4J_URI."""
    handle = RippleMem(
        tmp_path / "store", user_id="alice", embedder=embedder, store=StoreOptions(**neo4j_server)
    )
    yield handle
    handle.close()


def _served(handle: RippleMem, query: str, **params: Any) -> list[Any]:
    """Records of one neo4j_cypher read, as the backend itself would run it."""
    backend = engine_of(handle)._neo4j
    assert backend is not None
    return backend.connection.read(*statement(query, **params))


def test_memories_are_found_by_meaning_from_neo4j_vectors(store: RippleMem) -> None:
    """Recall finds the right memory, and Neo4j holds one vector per memory of the user."""
    store.add("I am allergic to peanuts.")
    store.add("My sister lives in Lisbon.")
    store.add("The car needs new tyres before winter.")
    hits = store.recall("what food should I avoid?", k=1, mode="dense").hits
    assert hits[0].memory.content == "I am allergic to peanuts."
    assert store.stats()["vectors"] == 3


def test_another_user_and_another_store_see_nothing(
    store: RippleMem, tmp_path: Path, embedder: Embedder, neo4j_server: dict[str, Any]
) -> None:
    """Scope is (store, user) in every query: Bob and a second store on the same database find nothing."""
    store.add("The vault code is 4711.")
    assert store.scope("bob").recall("vault code", k=5).hits == []
    other = RippleMem(
        tmp_path / "other", user_id="alice", embedder=embedder, store=StoreOptions(**neo4j_server)
    )
    try:
        assert other.recall("vault code", k=5).hits == []
    finally:
        other.close()


def test_the_graph_is_mirrored_and_read_back_from_neo4j(store: RippleMem) -> None:
    """Entities and edges written to the ledger reach Neo4j; spreading there reaches a memory
    through a shared entity."""
    first = store.add("Alice met Bob in Paris.")
    second = store.add("Bob moved to Paris last spring.")
    backend = engine_of(store)._neo4j
    assert backend is not None
    ledger_edges = sum(len(batch) for batch in iter_edges(engine_of(store).store, "alice"))
    served_edges = sum(len(batch) for batch in backend.iter_edges("alice"))
    assert served_edges == ledger_edges > 0
    assert second.id in backend.graph.spread("alice", {first.id: 1.0})


def test_a_deleted_memory_leaves_neo4j(store: RippleMem) -> None:
    """Its vector, its node and the entity only it mentioned are gone from the server."""
    kept = store.add("Carol plays the cello.")
    gone = store.add("Dmitri collects stamps.")
    store.delete(gone.id)
    rows = _served(store, cypher.NODE_FINGERPRINTS, store=_store_id(store), user_ids=["alice"])
    assert rows[0]["memories"] == 1
    assert engine_of(store).index.ids("alice") == {kept.id}  # type: ignore[attr-defined]


def test_keyword_search_uses_the_full_text_index(store: RippleMem) -> None:
    """The full-text index finds a memory by a rare word, inside the user's scope only."""
    wanted = store.add("The quokka at the zoo smiled.")
    store.add("Nothing to see here.")
    store.scope("bob").add("Bob saw a quokka too.")
    found = engine_of(store).index.keyword_query("alice", ["quokka"], 5)  # type: ignore[attr-defined]
    assert [memory_id for memory_id, _ in found] == [wanted.id]


def test_reopening_repairs_what_neo4j_lost(
    store: RippleMem, tmp_path: Path, embedder: Embedder, neo4j_server: dict[str, Any]
) -> None:
    """A server that lost a user's nodes (a flush that never arrived) is re-synced from the ledger."""
    memory = store.add("Eve's passport expires in May.")
    store_id = _store_id(store)
    backend = engine_of(store)._neo4j
    assert backend is not None
    backend.connection.write_count(
        *statement(cypher.SWEEP_NODES, store=store_id, user_id="alice", stamp="none", batch=10_000)
    )
    store.close()
    reopened = RippleMem(
        tmp_path / "store", user_id="alice", embedder=embedder, store=StoreOptions(**neo4j_server)
    )
    try:
        hits = reopened.recall("when does the passport expire?", k=1, mode="dense").hits
        assert hits[0].memory.id == memory.id
    finally:
        reopened.close()


def test_erasing_a_user_removes_their_nodes(store: RippleMem) -> None:
    """After erase, Neo4j holds no node and no vector of the user."""
    store.add("Frank's phone number is 555-0100.")
    store.erase(user_id="alice")
    rows = _served(store, cypher.NODE_FINGERPRINTS, store=_store_id(store), user_ids=["alice"])
    assert (rows[0]["memories"], rows[0]["entities"]) == (0, 0)


def _store_id(handle: RippleMem) -> str:
    """The id that scopes this store's nodes in Neo4j."""
    return store_namespace(engine_of(handle).store)
