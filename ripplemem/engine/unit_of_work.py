"""One write to a store: the engine's write lock held, SQLite transactions and vector-index changes
made under it, and the in-process caches (BM25, the scope graph, entity vectors, working memory)
brought in step as it ends. Every write goes through one; no other code takes the lock or touches
the caches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import numpy as np

from ripplemem.core.types import Memory
from ripplemem.store.cold_segments import VectorArchive
from ripplemem.store.connection import Connection
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.graph import EdgeRow
from ripplemem.store.vectors.base import VectorIndex
from ripplemem.store.vectors.modality_index import ModalityIndexes


class WriteTarget(Protocol):
    """What a unit of work writes to and keeps in step: the parts of ``Engine`` it reaches."""

    store: RowStore
    archive: VectorArchive
    media: ModalityIndexes

    @property
    def index(self) -> VectorIndex:
        """The text vector index."""

    def _memories_added(
        self, user_id: str, memories: list[Memory], edges: Sequence[EdgeRow] = ()
    ) -> None: ...

    def _memories_removed(self, user_id: str, node_ids: list[str]) -> None: ...

    def _edges_reinforced(self, user_id: str, pairs: Sequence[tuple[str, str]], step: float) -> None: ...

    def _entities_embedded(self, user_id: str, ids: list[str], vectors: np.ndarray) -> None: ...

    def _drop_user_caches(self, user_id: str, *, working: bool = False) -> None: ...


class UnitOfWork:
    """A write of one user's data in progress; made by ``Engine.unit_of_work(user_id)``.

    Writes go to ``transaction()`` (SQLite), ``index``, ``media`` and ``archive``; what they changed is
    told with ``added`` / ``removed`` / ``reinforced`` / ``entities_embedded`` / ``forget_caches``, and
    the caches are updated when the unit ends, still under the lock. A unit that fails drops the
    user's caches instead: they reload from SQLite, which holds whatever did commit.
    """

    def __init__(self, engine: WriteTarget, user_id: str) -> None:
        self._engine = engine
        self.user_id = user_id
        self._changes: list[Callable[[], None]] = []

    @property
    def store(self) -> RowStore:
        """The SQLite ledger."""
        return self._engine.store

    @property
    def index(self) -> VectorIndex:
        """The text vector index."""
        return self._engine.index

    @property
    def media(self) -> ModalityIndexes:
        """The image and audio vector indexes."""
        return self._engine.media

    @property
    def archive(self) -> VectorArchive:
        """The cold tier's vector segments."""
        return self._engine.archive

    def transaction(self) -> AbstractContextManager[Connection]:
        """A SQLite transaction: committed when the block ends, rolled back if it raises."""
        return self._engine.store.transaction()

    def read(self) -> AbstractContextManager[Connection]:
        """A read-only SQLite connection."""
        return self._engine.store.read()

    def added(self, memories: Sequence[Memory], edges: Sequence[EdgeRow] = ()) -> None:
        """New (or re-indexed) memories and edges were committed."""
        memories, edges = list(memories), list(edges)
        self._changes.append(lambda: self._engine._memories_added(self.user_id, memories, edges))

    def removed(self, node_ids: Sequence[str]) -> None:
        """Memories or entities left the active set."""
        node_ids = list(node_ids)
        self._changes.append(lambda: self._engine._memories_removed(self.user_id, node_ids))

    def reinforced(self, pairs: Sequence[tuple[str, str]], step: float) -> None:
        """Edges between these node pairs were strengthened by ``step``."""
        pairs = list(pairs)
        self._changes.append(lambda: self._engine._edges_reinforced(self.user_id, pairs, step))

    def entities_embedded(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """New entity name vectors were committed."""
        ids = list(ids)
        self._changes.append(lambda: self._engine._entities_embedded(self.user_id, ids, vectors))

    def forget_caches(self, *, working: bool = False) -> None:
        """Drop the user's caches (reloaded from SQLite on next use) and, if asked, their working
        memories without consolidating them: an erasure leaves nothing in process memory."""
        self._changes.append(lambda: self._engine._drop_user_caches(self.user_id, working=working))

    def finish(self) -> None:
        """Bring the caches in step with what this unit committed (the engine calls this)."""
        for change in self._changes:
            change()
        self._changes.clear()

    def abandon(self) -> None:
        """After a failure: drop the user's caches rather than guess what committed."""
        self._changes.clear()
        self._engine._drop_user_caches(self.user_id)
