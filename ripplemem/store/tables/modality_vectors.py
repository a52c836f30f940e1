"""The modality_vectors table: each image's or sound's own vector, in its encoder's space, kept
beside the memory row (the source of truth its modality index is built from). Rows go with their
memory (ON DELETE CASCADE); a cold memory keeps its row but leaves the index."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ripplemem.store.connection import Connection
from ripplemem.store.rows import RowStore

_SPACE_KEY = "modality_space:"
# Memories whose modality vector belongs in the index: active and not cold.
_INDEXED = "m.status = 'active' AND m.tier != 'cold'"


@dataclass(frozen=True)
class ModalitySpace:
    """The encoder a modality index was built with: its model id and vector dimension."""

    model_id: str
    dimension: int


def recorded_space(store: RowStore, modality: str) -> ModalitySpace | None:
    """The space a store's modality index was built in, or None before its first vector."""
    value = store.get_meta(_SPACE_KEY + modality)
    if value is None:
        return None
    data = json.loads(value)
    return ModalitySpace(str(data["model_id"]), int(data["dimension"]))


def record_space(conn: Connection, modality: str, space: ModalitySpace) -> None:
    """Record a modality's space (inside the transaction storing its first vector)."""
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
        (_SPACE_KEY + modality, json.dumps({"model_id": space.model_id, "dimension": space.dimension})),
    )


def recorded_modalities(store: RowStore) -> list[str]:
    """Every modality with a recorded space in the store."""
    with store.read() as conn:
        return sorted(
            r[0][len(_SPACE_KEY) :]
            for r in conn.execute("SELECT key FROM meta WHERE key LIKE ?", (_SPACE_KEY + "%",))
        )


def put_vector(conn: Connection, user_id: str, memory_id: str, modality: str, vector: np.ndarray) -> None:
    """Store (or replace) one memory's modality vector."""
    # Delete, then insert: the tables' keys differ (memory_id on SQLite, (user_id, memory_id) on
    # PostgreSQL), so no ON CONFLICT target serves both.
    conn.execute("DELETE FROM modality_vectors WHERE memory_id = ? AND +user_id = ?", (memory_id, user_id))
    conn.execute(
        "INSERT INTO modality_vectors (memory_id, user_id, modality, embedding) VALUES (?, ?, ?, ?)",
        (memory_id, user_id, modality, np.asarray(vector, dtype=np.float32).tobytes()),
    )


def indexed_vectors(
    store: RowStore, user_id: str, modality: str, ids: Sequence[str] | None = None
) -> tuple[list[str], np.ndarray | None]:
    """The vectors of a user's memories that belong in the modality index (active, not cold),
    all of them or those among `ids`; (ids, matrix), matrix None when there are none."""
    sql = (
        "SELECT v.memory_id, v.embedding FROM modality_vectors v "
        "JOIN memories m ON m.id = v.memory_id AND +m.user_id = v.user_id "
        f"WHERE v.user_id = ? AND v.modality = ? AND {_INDEXED}"
    )
    found: list[tuple[str, bytes]] = []
    with store.read() as conn:
        if ids is None:
            found = conn.execute(sql, (user_id, modality)).fetchall()
        else:
            for start in range(0, len(ids), 500):
                chunk = list(ids[start : start + 500])
                found += conn.execute(
                    sql + f" AND v.memory_id IN ({','.join('?' * len(chunk))})", [user_id, modality, *chunk]
                ).fetchall()
    if not found:
        return [], None
    return [r[0] for r in found], np.stack([np.frombuffer(r[1], dtype=np.float32) for r in found])


def indexed_ids(store: RowStore, user_id: str, modality: str) -> set[str]:
    """The ids of a user's memories whose modality vector belongs in the index."""
    with store.read() as conn:
        return {
            r[0]
            for r in conn.execute(
                "SELECT v.memory_id FROM modality_vectors v "
                "JOIN memories m ON m.id = v.memory_id AND +m.user_id = v.user_id "
                f"WHERE v.user_id = ? AND v.modality = ? AND {_INDEXED}",
                (user_id, modality),
            )
        }


def modality_users(store: RowStore, modality: str) -> list[str]:
    """Every user holding a vector of this modality."""
    with store.read() as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT user_id FROM modality_vectors WHERE modality = ?", (modality,)
            )
        ]


def vectors_of(store: RowStore, user_id: str, ids: Sequence[str]) -> dict[str, dict[str, np.ndarray]]:
    """Every modality vector among these memories (cold ones too): {modality: {id: vector}}."""
    found: dict[str, dict[str, np.ndarray]] = {}
    with store.read() as conn:
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            for memory_id, modality, blob in conn.execute(
                "SELECT memory_id, modality, embedding FROM modality_vectors WHERE user_id = ? "
                f"AND memory_id IN ({','.join('?' * len(chunk))})",
                [user_id, *chunk],
            ):
                found.setdefault(modality, {})[memory_id] = np.frombuffer(blob, dtype=np.float32)
    return found
