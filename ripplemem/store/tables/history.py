"""The change log of memories in SQLite: one row per event (added, merged, updated, superseded,
promoted, archived, woken, ...), scoped to a user, read back by ``mem.history()``.

Writers pass the connection of their own transaction, so a change and its log row commit together.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ripplemem.core.clock import READABLE_EPOCHS, from_epoch
from ripplemem.store.connection import Connection
from ripplemem.store.in_lists import count_in, in_chunks
from ripplemem.store.rows import RowStore


@dataclass(frozen=True)
class HistoryEvent:
    """One change to one memory: what happened, when, why, and the values involved."""

    memory_id: str
    event: str
    at: float
    cause: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def when(self) -> datetime:
        """The time of the change, timezone-aware UTC (a time no datetime can hold, logged by an
        older version, is clamped to the nearest one)."""
        value = from_epoch(min(max(self.at, READABLE_EPOCHS[0]), READABLE_EPOCHS[1]))
        assert value is not None
        return value


def record_history(conn: Connection, user_id: str, events: Iterable[HistoryEvent]) -> None:
    """Append events to a user's change log inside the caller's transaction."""
    conn.executemany(
        "INSERT INTO history(memory_id, user_id, at, event, cause, detail) VALUES (?, ?, ?, ?, ?, ?)",
        [
            (
                e.memory_id,
                user_id,
                e.at,
                e.event,
                e.cause,
                json.dumps(e.detail, ensure_ascii=False, default=str),
            )
            for e in events
        ],
    )


def read_history(store: RowStore, user_id: str, memory_ids: Sequence[str]) -> list[HistoryEvent]:
    """The events of some memories of a user, oldest first."""
    if not memory_ids:
        return []
    marks = ",".join("?" * len(memory_ids))
    with store.read() as conn:
        rows = conn.execute(
            f"SELECT memory_id, event, at, cause, detail FROM history WHERE user_id = ? "
            f"AND memory_id IN ({marks}) ORDER BY seq",
            [user_id, *memory_ids],
        ).fetchall()
    return [
        HistoryEvent(memory_id=r[0], event=r[1], at=r[2], cause=r[3], detail=json.loads(r[4])) for r in rows
    ]


def delete_history(conn: Connection, user_id: str, memory_ids: Sequence[str]) -> int:
    """Remove the change log of some memories (erasure); returns how many rows went."""
    return sum(
        conn.execute(
            f"DELETE FROM history WHERE user_id = ? AND memory_id IN ({marks})", [user_id, *chunk]
        ).rowcount
        for marks, chunk in in_chunks(memory_ids)
    )


def delete_user_history(conn: Connection, user_id: str) -> int:
    """Remove a user's whole change log (a whole-user erase); returns how many rows went."""
    return conn.execute("DELETE FROM history WHERE user_id = ?", (user_id,)).rowcount


def history_details(conn: Connection, user_id: str) -> Iterator[tuple[int, str]]:
    """(seq, detail JSON) of every event in a user's change log, read as the caller iterates."""
    return iter(conn.execute("SELECT seq, detail FROM history WHERE user_id = ?", (user_id,)))


def delete_history_rows(conn: Connection, user_id: str, seqs: Sequence[int]) -> int:
    """Remove some of a user's change-log rows by their seq; returns how many went."""
    return sum(
        conn.execute(
            f"DELETE FROM history WHERE +user_id = ? AND seq IN ({marks})", [user_id, *chunk]
        ).rowcount
        for marks, chunk in in_chunks(seqs)
    )


def count_history(conn: Connection, user_id: str, memory_ids: Sequence[str]) -> int:
    """How many change-log rows of the user some memories still have."""
    return count_in(
        conn, "SELECT COUNT(*) FROM history WHERE user_id = ? AND memory_id IN ({})", memory_ids, [user_id]
    )
