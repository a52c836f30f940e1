"""The vector-index protocol, and the exact in-process numpy index."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


@dataclass(frozen=True)
class VectorFilter:
    """What a vector query may match inside one user's vectors."""

    agent_id: str | None = None
    session_id: str | None = None
    types: tuple[str, ...] | None = None
    since: float | None = None
    until: float | None = None


class VectorIndex(Protocol):
    """Nearest-neighbour search over unit vectors, partitioned by user."""

    name: str

    def add(self, user_id: str, ids: Sequence[str], vectors: np.ndarray,
            metadatas: Sequence[dict[str, Any]]) -> None:
        """Add (or replace) vectors of one user."""
        ...

    def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove vectors of one user; unknown ids are ignored."""
        ...

    def query(self, user_id: str, vector: np.ndarray, k: int,
              flt: VectorFilter | None = None) -> list[tuple[str, float]]:
        """The k nearest vectors of one user as (id, cosine similarity), best first."""
        ...

    def query_many(self, user_id: str, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """The k nearest of one user's vectors for each row of `vectors`, unfiltered."""
        ...

    def count(self, user_id: str) -> int:
        """How many vectors one user has."""
        ...

    def drop(self, user_id: str) -> None:
        """Remove every vector of one user."""
        ...

    def close(self) -> None:
        """Release files and memory."""
        ...


class _UserMatrix:
    """One user's vectors in a growable float32 matrix, with filter columns beside it."""

    def __init__(self, dim: int) -> None:
        self.matrix = np.zeros((16, dim), dtype=np.float32)
        self.size = 0
        self.ids: list[str] = []
        self.position: dict[str, int] = {}
        self.agent: list[str] = []
        self.session: list[str] = []
        self.type: list[str] = []
        self.when = np.zeros(16, dtype=np.float64)

    def add(self, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]) -> None:
        self.remove([i for i in ids if i in self.position])
        need = self.size + len(ids)
        if need > len(self.matrix):
            capacity = max(need, 2 * len(self.matrix))
            grown = np.zeros((capacity, self.matrix.shape[1]), dtype=np.float32)
            grown[: self.size] = self.matrix[: self.size]
            self.matrix = grown
            when = np.zeros(capacity, dtype=np.float64)
            when[: self.size] = self.when[: self.size]
            self.when = when
        self.matrix[self.size:need] = vectors
        for offset, (memory_id, meta) in enumerate(zip(ids, metadatas, strict=True)):
            self.position[memory_id] = self.size + offset
            self.ids.append(memory_id)
            self.agent.append(meta.get("agent_id", ""))
            self.session.append(meta.get("session_id", ""))
            self.type.append(meta.get("type", ""))
            self.when[self.size + offset] = meta.get("when", 0.0)
        self.size = need

    def remove(self, ids: Sequence[str]) -> None:
        # Swap-remove keeps rows contiguous so a query is one matrix-vector product.
        for memory_id in ids:
            row = self.position.pop(memory_id, None)
            if row is None:
                continue
            last = self.size - 1
            if row != last:
                moved = self.ids[last]
                self.matrix[row] = self.matrix[last]
                self.when[row] = self.when[last]
                for column in (self.ids, self.agent, self.session, self.type):
                    column[row] = column[last]
                self.position[moved] = row
            for column in (self.ids, self.agent, self.session, self.type):
                column.pop()
            self.size = last

    def mask(self, flt: VectorFilter) -> np.ndarray | None:
        if flt == VectorFilter():
            return None
        keep = np.ones(self.size, dtype=bool)
        if flt.agent_id is not None:
            keep &= np.array([a == flt.agent_id for a in self.agent], dtype=bool)
        if flt.session_id is not None:
            keep &= np.array([s == flt.session_id for s in self.session], dtype=bool)
        if flt.types:
            wanted = set(flt.types)
            keep &= np.array([t in wanted for t in self.type], dtype=bool)
        if flt.since is not None:
            keep &= self.when[: self.size] >= flt.since
        if flt.until is not None:
            keep &= self.when[: self.size] < flt.until
        return keep


class NumpyIndex:
    """Exact cosine search with numpy: no files, no approximation; best for small stores."""

    name = "numpy"

    def __init__(self) -> None:
        self._users: dict[str, _UserMatrix] = {}
        self._lock = threading.RLock()

    def add(self, user_id: str, ids: Sequence[str], vectors: np.ndarray,
            metadatas: Sequence[dict[str, Any]]) -> None:
        """Add (or replace) vectors of one user."""
        if not len(ids):
            return
        with self._lock:
            users = self._users.get(user_id)
            if users is None:
                users = self._users[user_id] = _UserMatrix(vectors.shape[1])
            users.add(ids, vectors, metadatas)

    def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove vectors of one user."""
        with self._lock:
            if user_id in self._users:
                self._users[user_id].remove(ids)

    def query(self, user_id: str, vector: np.ndarray, k: int,
              flt: VectorFilter | None = None) -> list[tuple[str, float]]:
        """Exact top-k by cosine similarity."""
        with self._lock:
            users = self._users.get(user_id)
            if users is None or users.size == 0:
                return []
            scores = users.matrix[: users.size] @ np.asarray(vector, dtype=np.float32)
            mask = users.mask(flt or VectorFilter())
            if mask is not None:
                scores = np.where(mask, scores, -np.inf)
            count = int(users.size if mask is None else mask.sum())
            k = min(k, count)
            if k <= 0:
                return []
            top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
            top = top[np.argsort(-scores[top])]
            return [(users.ids[i], float(scores[i])) for i in top if np.isfinite(scores[i])]

    def query_many(self, user_id: str, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """Exact top-k for each row of `vectors`, in one matrix product."""
        with self._lock:
            users = self._users.get(user_id)
            if users is None or users.size == 0 or k <= 0 or not len(vectors):
                return [[] for _ in range(len(vectors))]
            scores = np.asarray(vectors, dtype=np.float32) @ users.matrix[: users.size].T
            k = min(k, users.size)
            top = np.argpartition(-scores, k - 1, axis=1)[:, :k] if k < users.size \
                else np.tile(np.arange(users.size), (len(scores), 1))
            found = []
            for row, columns in zip(scores, top, strict=True):
                columns = columns[np.argsort(-row[columns])]
                found.append([(users.ids[i], float(row[i])) for i in columns])
            return found

    def count(self, user_id: str) -> int:
        """How many vectors one user has."""
        with self._lock:
            users = self._users.get(user_id)
            return 0 if users is None else users.size

    def ids(self, user_id: str) -> set[str]:
        """The ids of every vector one user has (for syncing with SQLite)."""
        with self._lock:
            users = self._users.get(user_id)
            return set() if users is None else set(users.ids)

    def users(self) -> list[str]:
        """Every user with vectors in this index."""
        with self._lock:
            return list(self._users)

    def drop(self, user_id: str) -> None:
        """Remove every vector of one user."""
        with self._lock:
            self._users.pop(user_id, None)

    def close(self) -> None:
        """Drop every vector from memory."""
        with self._lock:
            self._users.clear()
