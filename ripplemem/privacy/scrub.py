"""The erase steps past an ordinary delete: the change log, sensor readings, knowledge-base grants,
in-process caches, and the bytes SQLite keeps after a delete (FTS5 segments, the WAL file). The
memories go in batches, each under its own short hold of the write lock, so other users' writes
keep moving during a large erase."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

from ripplemem.engine.engine import Engine
from ripplemem.engine.knowledge_bases import delete_knowledge_base
from ripplemem.engine.writes import delete_memories
from ripplemem.privacy.byte_search import Needles
from ripplemem.privacy.targets import EraseTargets
from ripplemem.store.cold_segments import user_digest
from ripplemem.store.connection import Connection
from ripplemem.store.queries.erase import count_keyword_rows, count_user_rows
from ripplemem.store.sqlite.side_connection import checkpoint_wal
from ripplemem.store.tables.history import (
    delete_history,
    delete_history_rows,
    delete_user_history,
    history_details,
)
from ripplemem.store.tables.knowledge_bases import remove_grant, rename_user
from ripplemem.store.tables.readings import delete_readings_by_id

ERASED_USER = "(erased user)"
# Memories deleted per hold of the write lock (a few hundred milliseconds with Chroma).
REMOVE_BATCH = 250


def text_needles(text: str) -> list[str]:
    """How a text may sit inside stored JSON: as is, and JSON-escaped (quotes, newlines, non-ASCII)."""
    escaped = json.dumps(text)[1:-1]
    return list(dict.fromkeys([text, escaped, json.dumps(text, ensure_ascii=False)[1:-1]]))


def remove_everywhere(engine: Engine, targets: EraseTargets) -> dict[str, int]:
    """Delete the targets from every layer, the memories REMOVE_BATCH at a time (each batch its own
    hold of the write lock); returns how many items went, per layer."""
    user_id = targets.user_id
    before = _counts(engine, user_id, targets)
    removed: dict[str, int] = {}
    for kb in targets.kb_alone:
        removed["knowledge_base_chunks"] = removed.get("knowledge_base_chunks", 0) + delete_knowledge_base(
            engine, kb, user_id
        )
    removed["knowledge_bases"] = len(targets.kb_alone)
    # Working items first: an expiring one could otherwise be consolidated back after the delete.
    with engine.unit_of_work(user_id):
        removed["working_items"] = _drop_working(engine, targets)
    for batch in _chunks(targets.memory_ids, REMOVE_BATCH):
        delete_memories(engine, user_id, batch)
    with engine.unit_of_work(user_id) as work:
        with work.transaction() as conn:
            removed["history"] = _delete_history(conn, targets)
            removed["readings"] = delete_readings_by_id(conn, user_id, targets.reading_ids)
            removed["knowledge_base_grants"] = _drop_grants(conn, user_id, targets.kb_shared)
        if targets.mode == "user":
            work.index.drop(user_id)
            work.media.drop(user_id)
            removed["archive_files"] = _drop_archive_folder(engine, user_id)
        engine.consolidated_working_ids.difference_update(targets.memory_ids)
        work.forget_caches(working=targets.mode == "user")
    after = _counts(engine, user_id, targets)
    removed.update({layer: before[layer] - after[layer] for layer in before})
    return removed


def _counts(engine: Engine, user_id: str, targets: EraseTargets) -> dict[str, int]:
    """Per-layer counts of the user's items, before and after (their difference is what went)."""
    with engine.store.read() as conn:
        counts = {
            "memories": count_user_rows(conn, "memories", user_id),
            "keyword_index": count_keyword_rows(conn, user_id, targets.rowids),
            "edges": count_user_rows(conn, "edges", user_id),
            "entities": count_user_rows(conn, "entities", user_id),
        }
    counts["vectors"] = engine.index.count(user_id)
    counts["modality_vectors"] = sum(engine.media.counts(user_id).values())
    counts["archive_entries"] = sum(
        len(engine.archive.read(user_id, s)[0]) for s in engine.archive.segments(user_id)
    )
    return counts


def _chunks(values: Sequence[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(values), size):
        yield list(values[start : start + size])


def _delete_history(conn: Connection, targets: EraseTargets) -> int:
    """The change log of the erased memories, and any other event of the user quoting their text
    or the request text (one pass over the user's log)."""
    if targets.mode == "user":
        return delete_user_history(conn, targets.user_id)
    gone = delete_history(conn, targets.user_id, targets.memory_ids)
    texts = Needles(
        n.encode("utf-8") for t in [*targets.contents, targets.request] if t for n in text_needles(t)
    )
    quoting = [seq for seq, detail in history_details(conn, targets.user_id) if texts.scan_text(detail)]
    return gone + delete_history_rows(conn, targets.user_id, quoting)


def _drop_grants(conn: Connection, user_id: str, shared: Sequence[str]) -> int:
    """The user's grants to bases others still read; their name leaves those bases' records too."""
    gone = sum(remove_grant(conn, kb, user_id) for kb in shared)
    rename_user(conn, user_id, ERASED_USER)
    return gone


def _drop_archive_folder(engine: Engine, user_id: str) -> int:
    """Every archive segment file of the user (a whole-user erase); returns how many files went."""
    segments = engine.archive.segments(user_id)
    engine.archive.remove(
        user_id,
        {
            memory_id: segment
            for segment in segments
            for memory_id in engine.archive.read(user_id, segment)[0]
        },
    )
    if engine.archive.root is not None:
        folder = os.path.join(engine.archive.root, user_digest(user_id))
        if os.path.isdir(folder) and not os.listdir(folder):
            os.rmdir(folder)
    return len(segments)


def _drop_working(engine: Engine, targets: EraseTargets) -> int:
    """Working-memory items (in process) that are erased memories or hold their text or the
    request text (any case)."""
    working = engine.working(targets.user_id)
    gone = 0
    erased = set(targets.memory_ids)
    texts = Needles(t.encode("utf-8") for t in targets.contents)
    request = targets.request.casefold()
    for session in working.sessions():
        memory = working.session(session)
        for item in memory.items():
            if (
                targets.mode == "user"
                or item.id in erased
                or texts.scan_text(item.text)
                or (request and request in item.text.casefold())
            ):
                memory.remove(item.id)
                gone += 1
    return gone


def compact_store(engine: Engine) -> dict[str, Any]:
    """Make the store forget deleted bytes. SQLite: merge the FTS5 segments (deleted tokens stay in
    old segments until merged), then checkpoint and truncate the WAL (old page images live on
    there), from a second connection so this process's other threads keep the store's own;
    secure_delete=ON (set on open) already zeroes freed cells and pages in the database file.
    A server store: rewrite its tables (PostgreSQL: VACUUM FULL)."""
    with engine.store.transaction() as conn:
        engine.store.compact_keywords(conn)
    compaction: dict[str, Any] = {
        "keyword_segments_merged": True,
        "wal_truncated": engine.path is None or checkpoint_wal(engine.path),
    }
    if engine.store.on_server:
        compaction["tables_rewritten"] = engine.store.rewrite_tables()
    return compaction
