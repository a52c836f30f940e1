"""A statement that names memories by id finds them through the id index, never by walking the
user's rows through a (user_id, ...) index: that plan cost 14 ms a recall at 10k memories."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from internals import engine_of

from ripplemem import RippleMem


def test_recall_and_reads_by_id_never_walk_the_users_rows(tmp_path: Path) -> None:
    mem = RippleMem(tmp_path / "store", user_id="u", embedder="hashing")
    stored = mem.add_many(
        [{"content": f"note {i}: the {w} of day {i}"} for i, w in enumerate(["key", "cup"] * 150)]
    )
    statements: list[str] = []
    connection = engine_of(mem).store._conn  # the store's own connection: what it really runs
    connection.set_trace_callback(statements.append)
    try:
        for mode in ("hybrid", "ripple", "keyword", "dense"):
            mem.recall("where is the key of day 7?", 10, mode=mode)
        mem.get(stored[3].id)
        mem.delete(stored[4].id)
    finally:
        connection.set_trace_callback(None)
        mem.close()
    by_id = [s for s in statements if "memories" in s and " id IN (" in s.replace("m.id IN (", " id IN (")]
    assert by_id, "no statement named memories by id"
    reader = sqlite3.connect(tmp_path / "store" / "ripplemem.db")
    try:
        walks = {
            statement: plan
            for statement in by_id
            for plan in [" / ".join(row[3] for row in reader.execute("EXPLAIN QUERY PLAN " + statement))]
            if "ix_memories_user" in plan or "SCAN m" in plan
        }
    finally:
        reader.close()
    assert walks == {}
