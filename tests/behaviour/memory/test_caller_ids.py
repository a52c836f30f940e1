"""Memories looked up by a caller's own id (LangChain document ids, LlamaIndex node and source
document ids) go through an index on that metadata key, also on a store made before the index."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from internals import engine_of

from ripplemem import RippleMem, StoreOptions
from ripplemem.embedding.embedders import HashingEmbedder
from ripplemem.interfaces.caller_ids import memories_by_metadata
from ripplemem.store.sqlite.rows import DB_FILENAME
from ripplemem.store.sqlite.schema import SCHEMA_VERSION
from ripplemem.store.tables.memories import INDEXED_METADATA_KEYS

ROWS = 200
INDEXES = {f"ix_memories_meta_{key}" for key in INDEXED_METADATA_KEYS}
OPEN = """
import os, sys, time
from ripplemem import RippleMem, StoreOptions
from ripplemem.embedding.embedders import HashingEmbedder
path = sys.argv[1]
while not os.path.exists(os.path.join(path, "go")):
    time.sleep(0.005)
with RippleMem(path, user_id="alice", embedder=HashingEmbedder(), store=StoreOptions(vector_index="numpy")) \
        as mem:
    print(len(mem.list(metadata={"langchain_id": "doc-3"})))
"""


def open_store(path: Path, user: str = "alice", agent: str | None = None) -> RippleMem:
    """A handle on an on-disk store that embeds with no model (lookups never embed)."""
    return RippleMem(
        path,
        user_id=user,
        agent_id=agent,
        embedder=HashingEmbedder(),
        store=StoreOptions(vector_index="numpy"),
    )


def fill(path: Path) -> None:
    """Alice's documents doc-0 .. doc-<ROWS - 1> (doc-3 twice: an old and a newer copy), a node, and
    bob's doc-1."""
    with open_store(path) as alice:
        alice.add_many(
            [
                {
                    "content": f"Document {i} about topic {i}.",
                    "metadata": {"langchain_id": f"doc-{i}", "topic": f"topic {i}"},
                }
                for i in range(ROWS)
            ]
        )
        alice.add("A newer copy of document 3.", metadata={"langchain_id": "doc-3"})
        alice.add("Chunk 1 of the handbook.", metadata={"llamaindex_node_id": "n1", "ref_doc_id": "hb"})
    with open_store(path, "bob") as bob:
        bob.add("Bob's own document 1.", metadata={"langchain_id": "doc-1"})


def as_version_6(path: Path) -> None:
    """Turn the store back into what RippleMem wrote before the id indexes (schema version 6)."""
    with sqlite3.connect(path / DB_FILENAME) as conn:
        for name in INDEXES:
            conn.execute(f"DROP INDEX {name}")
        conn.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")


def index_state(path: Path) -> tuple[set[str], str]:
    """The id indexes a store file holds, and its schema version."""
    with sqlite3.connect(path / DB_FILENAME) as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    return names & INDEXES, version


def vm_steps(mem: RippleMem, lookup: Callable[[], Any]) -> int:
    """How many SQLite virtual-machine instructions `lookup` runs on the handle's connection
    (a scan of the user's memories runs several per memory; an index lookup a few in all)."""
    conn = engine_of(mem).store._conn
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    conn.set_progress_handler(count, 1)
    try:
        lookup()
    finally:
        conn.set_progress_handler(None, 1)
    return steps[0]


def test_lookups_by_a_callers_id_find_the_users_memories_newest_first(tmp_path: Path) -> None:
    fill(tmp_path / "store")
    with open_store(tmp_path / "store") as alice:
        found = memories_by_metadata(alice, "langchain_id", ["doc-3", "doc-1", "missing", "doc-3"])
        assert set(found) == {"doc-3", "doc-1"}
        assert [m.content for m in found["doc-3"]] == [
            "A newer copy of document 3.",
            "Document 3 about topic 3.",
        ]
        assert [m.content for m in found["doc-1"]] == ["Document 1 about topic 1."]  # not bob's
        assert [m.content for m in memories_by_metadata(alice, "ref_doc_id", ["hb"])["hb"]] == [
            "Chunk 1 of the handbook."
        ]
        alice.delete(found["doc-1"][0].id)
        assert memories_by_metadata(alice, "langchain_id", ["doc-1"]) == {}
    with open_store(tmp_path / "store", agent="planner") as planner:  # another agent's handle
        assert memories_by_metadata(planner, "langchain_id", ["doc-3"]) == {}


def test_id_lookups_and_metadata_filters_on_id_keys_read_no_other_memory(tmp_path: Path) -> None:
    fill(tmp_path / "store")
    with open_store(tmp_path / "store") as alice:
        store = engine_of(alice).store
        by_id = vm_steps(alice, lambda: store.ids_by_metadata("alice", "langchain_id", ["doc-1", "doc-2"]))
        listed = vm_steps(alice, lambda: alice.list(metadata={"ref_doc_id": "hb"}))
        scanned = vm_steps(alice, lambda: alice.list(metadata={"topic": "hb"}))  # a key with no index
    assert scanned > 5 * ROWS  # reads every memory of the user
    assert by_id < scanned / 10 and listed < scanned / 10, (by_id, listed, scanned)


def test_a_store_made_before_the_indexes_gets_them_on_open(tmp_path: Path) -> None:
    path = tmp_path / "store"
    fill(path)
    as_version_6(path)
    assert index_state(path) == (set(), "6")
    with open_store(path) as alice:
        assert [m.content for m in memories_by_metadata(alice, "llamaindex_node_id", ["n1"])["n1"]] == [
            "Chunk 1 of the handbook."
        ]
    assert index_state(path) == (INDEXES, str(SCHEMA_VERSION))


def test_processes_opening_an_old_store_at_once_all_open_it(tmp_path: Path) -> None:
    path, processes = tmp_path / "store", 3
    fill(path)
    as_version_6(path)
    children = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(processes)
    ]
    (path / "go").touch()
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        assert out.strip() == "2"
    assert index_state(path) == (INDEXES, str(SCHEMA_VERSION))
