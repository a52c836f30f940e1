"""The vector-index protocol, and the exact in-process numpy index."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class VectorFilter:
    """What a vector query may match inside one user's vectors."""

    agent_id: str | None = None
    session_id: str | None = None
    types: tuple[str, ...] | None = None
    since: float | None = None
    until: float | None = None


@runtime_checkable
class VectorIndex(Protocol):
    """Nearest-neighbour search over unit vectors, partitioned by user: everything the engine,
    the consistency check and the modality indexes use of a vector backend (docs/architecture.md,
    "Adding a vector backend"). SQLite keeps every vector; an index can always be refilled from it."""

    name: str
    """A label only: recorded in the store's meta ("vector_index"), shown by stats and check reports.
    A different label than the one recorded makes the next open refill the index from SQLite."""

    persistent: bool
    """Whether the vectors outlive this process (files, a server). False: they live in this process's
    memory, so the index is refilled from SQLite on every open and after another process writes."""

    remote: bool
    """Whether the vectors live on a server, apart from the store directory: a new or wiped server
    may hold none of them, so an open that finds it empty while SQLite has users refills it."""

    on_damage: Callable[[], None] | None
    """Called when broken parts are found after opening (on reloading another process's write);
    the engine sets it to refill them from SQLite. An index whose files cannot break never calls it."""

    def add(
        self, user_id: str, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]
    ) -> None:
        """Add (or replace) vectors of one user."""
        ...

    def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove vectors of one user; unknown ids are ignored."""
        ...

    def query(
        self, user_id: str, vector: np.ndarray, k: int, flt: VectorFilter | None = None
    ) -> list[tuple[str, float]]:
        """The k nearest vectors of one user as (id, cosine similarity), best first."""
        ...

    def query_many(self, user_id: str, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """The k nearest of one user's vectors for each row of `vectors`, unfiltered."""
        ...

    def count(self, user_id: str) -> int:
        """How many vectors one user has."""
        ...

    def ids(self, user_id: str) -> set[str]:
        """The ids of every vector one user has (compared with SQLite by the consistency check)."""
        ...

    def drop(self, user_id: str) -> None:
        """Remove every vector of one user."""
        ...

    def is_empty(self) -> bool:
        """Whether the index holds no vector of this store at all."""
        ...

    def drop_all(self) -> None:
        """Remove every vector of this store (before a rebuild from SQLite), users known or not."""
        ...

    def foreign(self, user_ids: Sequence[str]) -> dict[str, int]:
        """Vectors held for anyone outside `user_ids`, as {part: vector count}; a part (a user, a
        collection) is what drop_foreign removes."""
        ...

    def drop_foreign(self, part: str) -> None:
        """Remove one part that foreign() reported."""
        ...

    def damage(self) -> list[str]:
        """Broken parts found in the index's files and not yet refilled from SQLite, described."""
        ...

    def clear_damage(self) -> None:
        """Forget the broken parts found: the caller is refilling them from SQLite."""
        ...

    def exclusive(self) -> AbstractContextManager[None]:
        """Hold the index against every other thread and process (for a consistency check)."""
        ...

    def open_space(self, space: str) -> VectorIndex:
        """A new index for another vector space (a modality's encoder), kept the way this index
        keeps its vectors where it can, else in this process's memory."""
        ...

    def close(self) -> None:
        """Release files and memory."""
        ...


class UserMatrix:
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
        """Add (or replace) vectors with their filter columns."""
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
        self.matrix[self.size : need] = vectors
        for offset, (memory_id, meta) in enumerate(zip(ids, metadatas, strict=True)):
            self.position[memory_id] = self.size + offset
            self.ids.append(memory_id)
            self.agent.append(meta.get("agent_id", ""))
            self.session.append(meta.get("session_id", ""))
            self.type.append(meta.get("type", ""))
            self.when[self.size + offset] = meta.get("when", 0.0)
        self.size = need

    def remove(self, ids: Sequence[str]) -> None:
        """Remove vectors by id (unknown ids are ignored)."""
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

    def top_k(self, vector: np.ndarray, k: int, flt: VectorFilter | None = None) -> list[tuple[str, float]]:
        """Exact top-k (id, cosine) among the vectors passing the filter."""
        if self.size == 0:
            return []
        # einsum, not BLAS: a BLAS matrix-vector product runs on every core and its threads then
        # spin, which doubled the next query embedding's time (ONNX needs the same cores).
        scores = np.einsum("ij,j->i", self.matrix[: self.size], np.asarray(vector, dtype=np.float32))
        mask = self.mask(flt or VectorFilter())
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        count = int(self.size if mask is None else mask.sum())
        k = min(k, count)
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top])]
        return [(self.ids[i], float(scores[i])) for i in top if np.isfinite(scores[i])]

    def top_k_many(self, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """Exact top-k for each row of `vectors`, in one matrix product."""
        if self.size == 0 or k <= 0 or not len(vectors):
            return [[] for _ in range(len(vectors))]
        scores = np.asarray(vectors, dtype=np.float32) @ self.matrix[: self.size].T
        k = min(k, self.size)
        top = (
            np.argpartition(-scores, k - 1, axis=1)[:, :k]
            if k < self.size
            else np.tile(np.arange(self.size), (len(scores), 1))
        )
        found = []
        for row, columns in zip(scores, top, strict=True):
            columns = columns[np.argsort(-row[columns])]
            found.append([(self.ids[i], float(row[i])) for i in columns])
        return found

    def mask(self, flt: VectorFilter) -> np.ndarray | None:
        """Which rows pass the filter, or None when it passes every row."""
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
    persistent = False
    remote = False
    on_damage: Callable[[], None] | None = None  # nothing on disk to break

    def __init__(self) -> None:
        self._users: dict[str, UserMatrix] = {}
        self._lock = threading.RLock()

    def add(
        self, user_id: str, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]
    ) -> None:
        """Add (or replace) vectors of one user."""
        if not len(ids):
            return
        with self._lock:
            users = self._users.get(user_id)
            if users is None:
                users = self._users[user_id] = UserMatrix(vectors.shape[1])
            users.add(ids, vectors, metadatas)

    def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove vectors of one user."""
        with self._lock:
            if user_id in self._users:
                self._users[user_id].remove(ids)

    def query(
        self, user_id: str, vector: np.ndarray, k: int, flt: VectorFilter | None = None
    ) -> list[tuple[str, float]]:
        """Exact top-k by cosine similarity."""
        with self._lock:
            users = self._users.get(user_id)
            return [] if users is None else users.top_k(vector, k, flt)

    def query_many(self, user_id: str, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """Exact top-k for each row of `vectors`, in one matrix product."""
        with self._lock:
            users = self._users.get(user_id)
            return [[] for _ in range(len(vectors))] if users is None else users.top_k_many(vectors, k)

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

    def drop(self, user_id: str) -> None:
        """Remove every vector of one user."""
        with self._lock:
            self._users.pop(user_id, None)

    def is_empty(self) -> bool:
        """Whether no user has a vector here."""
        with self._lock:
            return not any(users.size for users in self._users.values())

    def drop_all(self) -> None:
        """Remove every vector."""
        with self._lock:
            self._users.clear()

    def foreign(self, user_ids: Sequence[str]) -> dict[str, int]:
        """{user: vector count} of the users outside `user_ids` who have vectors here."""
        known = set(user_ids)
        with self._lock:
            return {
                user: users.size for user, users in self._users.items() if user not in known and users.size
            }

    def drop_foreign(self, part: str) -> None:
        """Remove every vector of one user foreign() reported."""
        self.drop(part)

    def damage(self) -> list[str]:
        """None: the vectors are in memory, no file can break."""
        return []

    def clear_damage(self) -> None:
        """Nothing to forget (see damage)."""

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the index against every other thread (no other process sees it)."""
        with self._lock:
            yield

    def open_space(self, space: str) -> VectorIndex:
        """Another numpy index."""
        return NumpyIndex()

    def close(self) -> None:
        """Drop every vector from memory."""
        with self._lock:
            self._users.clear()
