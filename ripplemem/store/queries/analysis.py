"""Whole-graph reads for analysis (quality report, learning report): every entity and every active
memory of one user, with the few columns the analyses need."""

from __future__ import annotations

from dataclasses import dataclass

from ripplemem.store.rows import RowStore
from ripplemem.store.tables.graph import EntityRow


@dataclass(frozen=True)
class MemoryRow:
    """The columns of an active memory the analyses read (times are epoch seconds)."""

    id: str
    type: str
    content: str
    when: float
    last_accessed: float | None
    access_count: int
    importance: float
    session_id: str | None
    source: str | None
    metadata: str


def all_entities(store: RowStore, user_id: str) -> list[EntityRow]:
    """Every entity of the user, oldest first."""
    with store.read() as conn:
        rows = conn.execute(
            "SELECT id, name, canonical, type FROM entities WHERE user_id = ? ORDER BY created_at, id",
            (user_id,),
        ).fetchall()
    return [EntityRow(r[0], r[1], r[2], r[3]) for r in rows]


def active_memories(store: RowStore, user_id: str) -> list[MemoryRow]:
    """Every active memory of the user, in time order (event time, else when stored)."""
    with store.read() as conn:
        rows = conn.execute(
            "SELECT id, type, content, COALESCE(event_time, created_at) AS t, last_accessed, access_count, "
            "importance, session_id, source, metadata FROM memories WHERE user_id = ? AND status = 'active' "
            "ORDER BY t, rowid",
            (user_id,),
        ).fetchall()
    return [MemoryRow(*row) for row in rows]
