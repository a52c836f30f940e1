"""The modality indexes of a store: one vector index per modality (image, audio), in that modality
encoder's own space and dimension (CLIP, CLAP), apart from the text index. SQLite's
modality_vectors table is their source of truth; each index holds the vectors of active memories
that are not cold, partitioned by user like the text index (per-user Chroma collections or one
filtered collection, as the text index is kept)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

import numpy as np

from ripplemem.errors import EmbeddingModelMismatchError
from ripplemem.store.queries.lifecycle import index_metadatas
from ripplemem.store.recovery.check_report import CheckReport, take_damage, take_foreign
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.modality_vectors import (
    ModalitySpace,
    indexed_ids,
    indexed_vectors,
    modality_users,
    put_vector,
    record_space,
    recorded_modalities,
    recorded_space,
)
from ripplemem.store.vectors.base import VectorFilter, VectorIndex
from ripplemem.store.vectors.chroma import ChromaIndex
from ripplemem.store.vectors.chroma_files import modality_folder

_INDEX_KEY = "modality_index:"


def check_space(store: RowStore, modality: str, model_id: str, dimension: int | None = None) -> None:
    """Refuse an encoder (and its vectors' dimension, when known) other than the one the store's
    modality index was built with."""
    recorded = recorded_space(store, modality)
    if recorded is None or (recorded.model_id == model_id and dimension in (None, recorded.dimension)):
        return
    size = "" if dimension is None else f" ({dimension} dimensions)"
    raise EmbeddingModelMismatchError(
        f"this store's {modality} index was built with encoder {recorded.model_id!r} "
        f"({recorded.dimension} dimensions), but this {modality} encoder is {model_id!r}{size}; "
        f"vectors of two encoders cannot be compared. Use the encoder the store was built with, "
        f"or keep {modality}s of this encoder in another store"
    )


def sync_modality(
    store: RowStore, modality: str, index: VectorIndex, report: CheckReport, repair: bool
) -> None:
    """Compare one modality index with SQLite's modality vectors (active, not cold), per user,
    and add what is missing and remove what is stray when repairing; counts go into `report`."""
    users = modality_users(store, modality)
    take_damage(report, index, repair)
    for user_id in sorted(users):
        expected = indexed_ids(store, user_id, modality)
        present = index.ids(user_id)
        missing, stray = sorted(expected - present), sorted(present - expected)
        report.memories += len(expected)
        report.vectors += len(present)
        report.missing_vectors += len(missing)
        report.stray_vectors += len(stray)
        if repair:
            index.delete(user_id, stray)
            _add_from_store(store, index, user_id, modality, missing)
    take_foreign(report, index, users, repair)  # users with no vector of this modality left


def _add_from_store(
    store: RowStore, index: VectorIndex, user_id: str, modality: str, ids: Sequence[str]
) -> None:
    found, vectors = indexed_vectors(store, user_id, modality, ids)
    if vectors is None:
        return
    with store.read() as conn:
        metas = index_metadatas(conn, user_id, found)
    index.add(user_id, found, vectors, [metas[i] for i in found])


@contextmanager
def opened_for_check(store: RowStore, path: str, repair: bool) -> Iterator[list[tuple[str, VectorIndex]]]:
    """The Chroma modality indexes of a store on disk, opened for a consistency check (broken files
    are repaired only with ``repair``) and closed after."""
    opened: list[tuple[str, VectorIndex]] = [
        (modality, ChromaIndex(modality_folder(path, modality), verify="probe", repair=repair))
        for modality in recorded_modalities(store)
        if os.path.isdir(modality_folder(path, modality))
    ]
    try:
        yield opened
    finally:
        for _, index in opened:
            index.close()


def check_opened(
    store: RowStore, opened: Sequence[tuple[str, VectorIndex]], report: CheckReport, repair: bool
) -> None:
    """sync_modality over opened modality indexes (a reconcile check's extra step)."""
    for modality, index in opened:
        sync_modality(store, modality, index, report, repair)


class IndexOwner(Protocol):
    """What the modality indexes use of their engine (an Engine, which creates them)."""

    @property
    def store(self) -> RowStore:
        """The store's SQLite ledger."""
        ...

    @property
    def path(self) -> str | None:
        """The store directory (None in memory)."""
        ...

    @property
    def write_lock(self) -> AbstractContextManager[Any]:
        """The engine's write lock."""
        ...

    @property
    def index(self) -> VectorIndex:
        """The text vector index (opened on first use)."""
        ...


class ModalityIndexes:
    """An engine's modality indexes (opened on first use) and the encoders registered with it."""

    def __init__(self, engine: IndexOwner) -> None:
        self._engine = engine
        self._indexes: dict[str, VectorIndex] = {}
        self._stale: set[str] = set()
        self.encoders: dict[str, Any] = {}

    def index(self, modality: str, text_index: VectorIndex | None = None) -> VectorIndex:
        """The modality's index, opened beside the text index (``text_index``: while that one is
        being opened; see VectorIndex.open_space) and brought in line with SQLite on first use."""
        engine = self._engine
        with engine.write_lock:
            index = self._indexes.get(modality)
            if index is None:
                index = (text_index or engine.index).open_space(modality)
                store = engine.store
                if (
                    not index.persistent
                    or store.get_meta(_INDEX_KEY + modality) != index.name
                    or index.damage()
                ):  # broken files were dropped: refill them
                    sync_modality(store, modality, index, CheckReport(engine.path, index.name, True), True)
                    store.set_meta(_INDEX_KEY + modality, index.name)
                self._indexes[modality] = index
            elif modality in self._stale:
                # Another process wrote: this process's in-RAM vectors follow SQLite again.
                sync_modality(engine.store, modality, index, CheckReport(engine.path, index.name, True), True)
            self._stale.discard(modality)
            return index

    def _live(self) -> list[VectorIndex]:
        """The indexes of every modality this store holds vectors of (opening them if needed)."""
        return [self.index(m) for m in recorded_modalities(self._engine.store)]

    def add(
        self, user_id: str, memory_id: str, modality: str, space: ModalitySpace, vector: np.ndarray
    ) -> None:
        """Store one memory's modality vector in SQLite (recording the space on first use) and in
        the modality index; the caller holds the engine's write lock."""
        engine = self._engine
        check_space(engine.store, modality, space.model_id, space.dimension)
        with engine.store.transaction() as conn:
            record_space(conn, modality, space)
            put_vector(conn, user_id, memory_id, modality, vector)
        _add_from_store(engine.store, self.index(modality), user_id, modality, [memory_id])

    def remove(self, user_id: str, ids: Sequence[str]) -> None:
        """Take memories' vectors out of every modality index (deleted, superseded or gone cold)."""
        if ids:
            for index in self._live():
                index.delete(user_id, ids)

    def restore(self, user_id: str, ids: Sequence[str]) -> None:
        """Put woken memories' vectors back into their modality indexes, from SQLite."""
        if ids:
            for modality in recorded_modalities(self._engine.store):
                _add_from_store(self._engine.store, self.index(modality), user_id, modality, ids)

    def drop(self, user_id: str) -> None:
        """Remove every vector of one user from every modality index."""
        for index in self._live():
            index.drop(user_id)

    def counts(self, user_id: str) -> dict[str, int]:
        """How many vectors each modality index holds for a user."""
        return {m: self.index(m).count(user_id) for m in recorded_modalities(self._engine.store)}

    def query(
        self, modality: str, user_id: str, vector: np.ndarray, k: int, flt: VectorFilter | None = None
    ) -> list[tuple[str, float]]:
        """The k nearest of a user's vectors of one modality as (id, cosine), best first."""
        if recorded_space(self._engine.store, modality) is None:
            return []
        return self.index(modality).query(user_id, vector, k, flt)

    def check(self, report: CheckReport, repair: bool, text_index: VectorIndex | None = None) -> None:
        """Check (and repair) every modality index against SQLite (a reconcile check's extra step)."""
        for modality in recorded_modalities(self._engine.store):
            sync_modality(self._engine.store, modality, self.index(modality, text_index), report, repair)

    def mark_stale(self) -> None:
        """Another process committed: modality indexes kept in memory resync on their next use."""
        self._stale = {m for m, index in self._indexes.items() if not index.persistent}

    def close(self) -> None:
        """Close every opened modality index."""
        for index in self._indexes.values():
            index.close()
        self._indexes.clear()
