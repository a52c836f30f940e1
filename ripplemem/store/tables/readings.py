"""Sensor readings in SQLite: one row per (user, metric, time, value), always scoped to a user.

Writers take the connection of the caller's transaction; readers take the store. Times are epoch
seconds; a window is half-open [since, until).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ripplemem.store.connection import Connection
from ripplemem.store.in_lists import count_in, in_chunks
from ripplemem.store.rows import RowStore


@dataclass(frozen=True)
class ReadingRow:
    """One stored reading; memory_id is the episodic memory it belongs to when it was out of range."""

    id: int
    metric: str
    value: float
    unit: str
    at: float
    source: str | None
    memory_id: str | None


@dataclass(frozen=True)
class ReadingStats:
    """Exact aggregates of one metric's readings in a window."""

    count: int
    total: float
    mean: float
    lowest: ReadingRow
    highest: ReadingRow


_SELECT = "SELECT id, metric, value, unit, at, source, memory_id FROM readings"


def _window(
    user_id: str, metric: str | None, since: float | None, until: float | None
) -> tuple[str, list[object]]:
    clauses = ["user_id = ?"]
    params: list[object] = [user_id]
    if metric is not None:
        clauses.append("metric = ?")
        params.append(metric)
    if since is not None:
        clauses.append("at >= ?")
        params.append(since)
    if until is not None:
        clauses.append("at < ?")
        params.append(until)
    return " AND ".join(clauses), params


def insert_readings(
    conn: Connection,
    user_id: str,
    rows: Sequence[tuple[str, float, str, float, str | None, str | None]],
) -> list[int]:
    """Store (metric, value, unit, at, source, memory_id) rows; returns their ids in order."""
    ids = []
    for row in rows:
        cursor = conn.execute(
            "INSERT INTO readings (user_id, metric, value, unit, at, source, memory_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (user_id, *row),
        )
        ids.append(int(cursor.fetchone()[0]))
    return ids


def set_memory(conn: Connection, user_id: str, reading_ids: Sequence[int], memory_id: str) -> None:
    """Record the episodic memory some readings became part of."""
    conn.executemany(
        "UPDATE readings SET memory_id = ? WHERE user_id = ? AND id = ?",
        [(memory_id, user_id, rid) for rid in reading_ids],
    )


def select_readings(
    store: RowStore,
    user_id: str,
    metric: str,
    since: float | None,
    until: float | None,
    limit: int | None = None,
    newest_first: bool = False,
) -> list[ReadingRow]:
    """A metric's readings in a window, in time order (newest first if asked), at most `limit`."""
    where, params = _window(user_id, metric, since, until)
    order = "DESC" if newest_first else "ASC"
    sql = f"{_SELECT} WHERE {where} ORDER BY at {order}, id {order}"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    with store.read() as conn:
        return [ReadingRow(*row) for row in conn.execute(sql, params)]


def readings_of_memory(store: RowStore, user_id: str, memory_id: str) -> list[ReadingRow]:
    """The readings an episodic memory was made from, in time order."""
    with store.read() as conn:
        rows = conn.execute(
            f"{_SELECT} WHERE user_id = ? AND memory_id = ? ORDER BY at, id", (user_id, memory_id)
        )
        return [ReadingRow(*row) for row in rows]


def reading_stats(
    store: RowStore, user_id: str, metric: str, since: float | None, until: float | None
) -> ReadingStats | None:
    """Count, sum, mean, lowest and highest reading (the earliest on ties) of a window; None if empty."""
    where, params = _window(user_id, metric, since, until)
    with store.read() as conn:
        count, total = conn.execute(
            f"SELECT COUNT(*), SUM(value) FROM readings WHERE {where}", params
        ).fetchone()
        if not count:
            return None
        lowest = conn.execute(
            f"{_SELECT} WHERE {where} ORDER BY value ASC, at ASC, id ASC LIMIT 1", params
        ).fetchone()
        highest = conn.execute(
            f"{_SELECT} WHERE {where} ORDER BY value DESC, at ASC, id ASC LIMIT 1", params
        ).fetchone()
    return ReadingStats(
        int(count), float(total), float(total) / int(count), ReadingRow(*lowest), ReadingRow(*highest)
    )


def metric_units(store: RowStore, user_id: str) -> dict[str, tuple[str, int]]:
    """{metric: (unit of its latest reading, reading count)} for every metric the user recorded."""
    with store.read() as conn:
        rows = conn.execute(
            "SELECT metric, COUNT(*), (SELECT unit FROM readings r2 WHERE r2.user_id = ? AND "
            "r2.metric = r.metric ORDER BY at DESC, id DESC LIMIT 1) FROM readings r WHERE user_id = ? "
            "GROUP BY metric ORDER BY metric",
            (user_id, user_id),
        ).fetchall()
    return {row[0]: (row[2], int(row[1])) for row in rows}


def delete_readings(
    conn: Connection, user_id: str, metric: str | None, since: float | None, until: float | None
) -> int:
    """Delete a user's readings (of one metric, in a window, if given); returns how many."""
    where, params = _window(user_id, metric, since, until)
    return conn.execute(f"DELETE FROM readings WHERE {where}", params).rowcount


def reading_ids(conn: Connection, user_id: str, memory_ids: Collection[str] | None = None) -> list[int]:
    """Ids of the user's readings, or of those that became part of one of these memories."""
    if memory_ids is None:
        return [r[0] for r in conn.execute("SELECT id FROM readings WHERE user_id = ?", (user_id,))]
    return [
        r[0]
        for r in conn.execute("SELECT id, memory_id FROM readings WHERE user_id = ?", (user_id,))
        if r[1] in memory_ids
    ]


def delete_readings_by_id(conn: Connection, user_id: str, ids: Sequence[int]) -> int:
    """Delete some of a user's readings by id; returns how many went."""
    return sum(
        conn.execute(
            f"DELETE FROM readings WHERE user_id = ? AND id IN ({marks})", [user_id, *chunk]
        ).rowcount
        for marks, chunk in in_chunks(ids)
    )


def count_readings(conn: Connection, user_id: str, ids: Sequence[int]) -> int:
    """How many of these ids of the user's readings are still stored."""
    return count_in(conn, "SELECT COUNT(*) FROM readings WHERE +user_id = ? AND id IN ({})", ids, [user_id])
