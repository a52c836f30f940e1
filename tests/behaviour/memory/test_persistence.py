"""Stores survive processes; the store refuses another embedding model or a newer schema."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import cli

from ripplemem import (
    EmbeddingModelMismatchError,
    HashingEmbedder,
    RippleMem,
    SchemaVersionError,
    StoreError,
    StoreOptions,
)
from ripplemem.embedding.embedders import Embedder
from ripplemem.store.sqlite.rows import DB_FILENAME
from ripplemem.store.sqlite.schema import SCHEMA_VERSION

WRITER = """
import json, sys
from ripplemem import RippleMem, StoreOptions
mem = RippleMem(path=sys.argv[1], user_id="alice", store=StoreOptions(vector_index=sys.argv[2]))
m = mem.add("I started reading The Three-Body Problem", session_id="s1", metadata={"turn": "D1:3"})
mem.add("My sister lives in Berlin")
mem.scope(user_id="bob").add("Bob's secret: he keeps bees")
print(json.dumps({"id": m.id}))
"""

READER = """
import json, sys
from ripplemem import RippleMem, StoreOptions
mem = RippleMem(path=sys.argv[1], user_id="alice", store=StoreOptions(vector_index=sys.argv[2]))
r = mem.recall("which book am I reading?", k=2)
got = mem.get(sys.argv[3])
print(json.dumps({"top": r.hits[0].memory.content, "get": got.content, "meta": got.metadata,
                  "total": mem.stats()["total"],
                  "bees": [h.memory.content for h in mem.recall("bees").hits]}))
"""


def _run(script: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("index", ["chroma", "numpy"])
def test_write_in_one_process_recall_in_another(tmp_path: Path, index: str) -> None:
    store = str(tmp_path / "store")
    written = _run(WRITER, store, index)
    read = _run(READER, store, index, written["id"])
    assert read["top"] == "I started reading The Three-Body Problem"
    assert read["get"] == "I started reading The Three-Body Problem"
    assert read["meta"] == {"turn": "D1:3"}
    assert read["total"] == 2
    assert read["bees"] and not any("bees" in content for content in read["bees"])


def test_switching_vector_index_rebuilds_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    embedder = HashingEmbedder()
    with RippleMem(
        path=store, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="numpy")
    ) as mem:
        mem.add("The lighthouse keeper waved at the passing ferry")
    with RippleMem(
        path=store, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        assert mem.stats()["vectors"] == 1
        hit = mem.recall("lighthouse ferry", mode="dense").hits[0]
        assert hit.memory.content.startswith("The lighthouse keeper")


def test_other_embedding_model_is_refused_with_the_fix(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with RippleMem(path=store, user_id="alice", embedder=HashingEmbedder(256)) as mem:
        mem.add("a memory embedded with hashing")
    with pytest.raises(EmbeddingModelMismatchError, match="hashing-v1-256") as info:
        RippleMem(path=store, user_id="alice", embedder=HashingEmbedder(512))
    assert "reembed" in str(info.value)
    with RippleMem(path=store, user_id="alice", embedder=HashingEmbedder(256)) as mem:
        assert mem.stats()["total"] == 1


def test_reembed_moves_a_store_to_another_model(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with RippleMem(path=store, user_id="alice", embedder=HashingEmbedder(256)) as mem:
        mem.add_many(["the violin lesson is on Tuesday", "buy oat milk", "renew the passport"])
    assert RippleMem.reembed(store, embedder=HashingEmbedder(512)) == 3
    with RippleMem(path=store, user_id="alice", embedder=HashingEmbedder(512)) as mem:
        assert mem.recall("violin lesson", k=1, mode="dense").hits[0].memory.content == (
            "the violin lesson is on Tuesday"
        )


def test_store_from_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with RippleMem(path=store, user_id="alice", embedder=HashingEmbedder()) as mem:
        mem.add("written by this version")
    db = store / DB_FILENAME
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    before = db.read_bytes()
    with pytest.raises(SchemaVersionError, match="upgrade ripplemem"):
        RippleMem(path=store, user_id="alice", embedder=HashingEmbedder())
    assert db.read_bytes() == before


def test_ids_are_stable_strings_across_reopen(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with RippleMem(path=store, user_id="alice", embedder=HashingEmbedder()) as mem:
        ids = [m.id for m in mem.add_many(["one", "two", "three"])]
    with RippleMem(path=store, user_id="alice", embedder=HashingEmbedder()) as mem:
        assert [mem.get(i).content for i in ids] == ["one", "two", "three"]  # type: ignore[union-attr]


def test_a_version_1_store_is_migrated_and_keeps_its_memories(tmp_path: Path, embedder: Embedder) -> None:
    path = tmp_path / "old"
    with RippleMem(path=path, user_id="alice", embedder=embedder) as mem:
        kept = mem.add("Anna lives in Berlin")
    with sqlite3.connect(path / "ripplemem.db") as conn:  # what a version 1 store looked like
        conn.execute("ALTER TABLE entities DROP COLUMN embedding")
        conn.execute("UPDATE meta SET value='1' WHERE key='schema_version'")
    with RippleMem(path=path, user_id="alice", embedder=embedder) as mem:
        assert mem.get(kept.id) is not None
        mem.add("We flew to New York City")
        mem.add("NYC was freezing")
        aliases = [n.node.label for n in mem.graph.neighbors("NYC") if n.edge_type == "ALIAS"]
        assert aliases == ["New York City"]
    with sqlite3.connect(path / "ripplemem.db") as conn:
        version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    assert version == str(SCHEMA_VERSION)


@pytest.mark.parametrize("damage", ["random bytes", "truncated"])
def test_a_damaged_database_file_is_refused_untouched_with_the_next_step(
    tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    with RippleMem(path=store, user_id="alice", embedder=HashingEmbedder()) as mem:
        mem.add_many([f"note {n} about the garden" for n in range(200)])
    db = store / DB_FILENAME
    written = db.read_bytes()
    db.write_bytes(
        random.Random(7).randbytes(40_000) if damage == "random bytes" else written[: len(written) // 3]
    )
    before = db.read_bytes()
    with pytest.raises(StoreError) as caught:
        RippleMem(path=store, user_id="alice", embedder=HashingEmbedder())
    message = str(caught.value)
    assert f"the SQLite file {str(db)!r} is damaged" in message
    assert f"run `ripplemem check --path {store}`" in message
    assert not isinstance(caught.value.__cause__, StoreError)  # the sqlite3 error, kept as the cause
    status, out, err = cli(capsys, "check", "--path", str(store))
    assert status == 2 and "damaged" in err and ".recover" in err and "backup" in err
    assert db.read_bytes() == before  # nothing stored was deleted or overwritten
