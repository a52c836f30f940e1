"""The SQL of forgetting and tiers: read what the lifecycle rules need of a user's memories, and
write tier, importance and archive changes inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ripplemem.store.connection import Connection
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.memories import index_metadata, stored_epoch

PREVIEW_CHARS = 60


@dataclass(frozen=True)
class LifecycleRows:
    """Columns of a user's active memories, as arrays in one order (times in epoch seconds)."""

    ids: list[str]
    previews: list[str]
    tiers: np.ndarray
    importance: np.ndarray
    access_count: np.ndarray
    created_at: np.ndarray  # NaN for a stored time that is not a number (reads as brand new)
    last_accessed: np.ndarray  # NaN for never accessed

    def __len__(self) -> int:
        return len(self.ids)

    def days_idle(self, now: float) -> np.ndarray:
        """Days since the last access, or since creation for memories never accessed."""
        last = np.where(np.isnan(self.last_accessed), self.created_at, self.last_accessed)
        return np.nan_to_num(np.maximum(now - last, 0.0) / 86400.0, nan=0.0)

    def age_days(self, now: float) -> np.ndarray:
        """Days since each memory was stored (0 when its stored time is unknown: nothing is
        forgotten for an age it may not have)."""
        return np.nan_to_num(np.maximum(now - self.created_at, 0.0) / 86400.0, nan=0.0)


def read_lifecycle_rows(store: RowStore, user_id: str, agent_id: str | None = None) -> LifecycleRows:
    """The lifecycle columns of one user's (and agent's) active memories, oldest first."""
    where, params = "user_id = ? AND status = 'active'", [user_id]
    if agent_id is not None:
        where, params = where + " AND agent_id = ?", [user_id, agent_id]
    with store.read() as conn:
        rows = conn.execute(
            f"SELECT id, substr(content, 1, {PREVIEW_CHARS + 1}), tier, importance, access_count, "
            f"created_at, last_accessed FROM memories WHERE {where} ORDER BY rowid",
            params,
        ).fetchall()
    return LifecycleRows(
        ids=[r[0] for r in rows],
        previews=[_preview(r[1]) for r in rows],
        tiers=np.array([r[2] for r in rows], dtype=object),
        importance=np.array([r[3] for r in rows], dtype=np.float64),
        access_count=np.array([r[4] for r in rows], dtype=np.float64),
        created_at=np.array([_epoch(r[5]) for r in rows], dtype=np.float64),
        last_accessed=np.array([_epoch(r[6]) for r in rows], dtype=np.float64),
    )


def _epoch(value: object) -> float:
    epoch = stored_epoch(value)
    return np.nan if epoch is None else epoch


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


def link_counts(store: RowStore, user_id: str, ids: Sequence[str]) -> np.ndarray:
    """How many graph edges touch each memory (its degree: entities, neighbours, summaries)."""
    counts: dict[str, int] = {}
    with store.read() as conn:
        for column in ("src", "dst"):
            for node, total in conn.execute(
                f"SELECT {column}, COUNT(*) FROM edges WHERE user_id = ? GROUP BY {column}", (user_id,)
            ):
                counts[node] = counts.get(node, 0) + total
    return np.array([counts.get(i, 0) for i in ids], dtype=np.float64)


def _chunks(ids: Sequence[str], size: int = 500) -> Iterable[list[str]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def set_tier(conn: Connection, user_id: str, ids: Sequence[str], tier: str) -> None:
    """Label memories with a tier (hot or warm: their vectors stay where they are)."""
    conn.executemany(
        "UPDATE memories SET tier = ? WHERE id = ? AND user_id = ?", [(tier, i, user_id) for i in ids]
    )


def set_importance(conn: Connection, user_id: str, values: Mapping[str, float]) -> None:
    """Write new importances."""
    conn.executemany(
        "UPDATE memories SET importance = ? WHERE id = ? AND user_id = ?",
        [(float(v), i, user_id) for i, v in values.items()],
    )


def stored_vectors(conn: Connection, user_id: str, ids: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The ids among `ids` that still hold a vector in SQLite, and those vectors."""
    found: list[tuple[str, bytes]] = []
    for chunk in _chunks(ids):
        found.extend(
            conn.execute(
                f"SELECT id, embedding FROM memories WHERE +user_id = ? "
                f"AND id IN ({','.join('?' * len(chunk))}) AND embedding IS NOT NULL",
                [user_id, *chunk],
            ).fetchall()
        )
    if not found:
        return [], np.zeros((0, 0), dtype=np.float32)
    return [r[0] for r in found], np.stack([np.frombuffer(r[1], dtype=np.float32) for r in found])


def archive_locations(conn: Connection, user_id: str, ids: Sequence[str]) -> dict[str, str]:
    """Memory id -> archive segment, for those of `ids` whose vector lives in the archive."""
    where: dict[str, str] = {}
    for chunk in _chunks(ids):
        where.update(
            conn.execute(
                f"SELECT id, archive_segment FROM memories WHERE +user_id = ? "
                f"AND id IN ({','.join('?' * len(chunk))}) AND archive_segment IS NOT NULL",
                [user_id, *chunk],
            )
        )
    return where


def archived_with_vectors(conn: Connection, user_id: str) -> dict[str, str]:
    """Memory id -> archive segment, for a user's archived memories that also hold a vector in
    SQLite (re-embedded, so their segments hold the old model's vectors)."""
    return dict(
        conn.execute(
            "SELECT id, archive_segment FROM memories WHERE user_id = ? "
            "AND archive_segment IS NOT NULL AND embedding IS NOT NULL",
            (user_id,),
        )
    )


def mark_archived(conn: Connection, user_id: str, where: Mapping[str, str]) -> None:
    """Cold: the vector now lives only in its archive segment (the SQLite copy is cleared)."""
    conn.executemany(
        "UPDATE memories SET tier = 'cold', embedding = NULL, archive_segment = ? "
        "WHERE id = ? AND user_id = ?",
        [(segment, i, user_id) for i, segment in where.items()],
    )


def mark_woken(conn: Connection, user_id: str, vectors: Mapping[str, np.ndarray]) -> None:
    """Hot again: the vector is back in SQLite and no segment holds it any more."""
    conn.executemany(
        "UPDATE memories SET tier = 'hot', embedding = ?, archive_segment = NULL "
        "WHERE id = ? AND user_id = ?",
        [(np.asarray(v, dtype=np.float32).tobytes(), i, user_id) for i, v in vectors.items()],
    )


def index_metadatas(conn: Connection, user_id: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """What the vector index keeps beside each of these memories' vectors."""
    found: dict[str, dict[str, Any]] = {}
    for chunk in _chunks(ids):
        for r in conn.execute(
            "SELECT id, agent_id, session_id, type, COALESCE(event_time, created_at) FROM memories "
            f"WHERE +user_id = ? AND id IN ({','.join('?' * len(chunk))})",
            [user_id, *chunk],
        ):
            found[r[0]] = index_metadata(user_id, r[1], r[2], r[3], r[4])
    return found
