"""Small Chroma collections mirrored in memory and searched exactly.

Below ~16,000 vectors, one scan of a user's vectors answers a query faster than Chroma's HNSW
graph (0.6-0.9 ms against 1.5-2 ms at 9k MiniLM vectors and k=40, on two cores) and exactly.
The Chroma index keeps such a mirror for each collection it has read, and writes every add and
delete to it as well as to Chroma; it forgets the mirrors whenever another process writes, so a
mirror never answers with vectors that are not in the collection.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ripplemem.store.vectors.base import UserMatrix

# Above this many vectors a scan costs more than HNSW (memory bandwidth: 2.8 ms at 30k).
EXACT_MAX_VECTORS = 16_000
# At most this many collections are mirrored at once (about 25 MB each at the limit, MiniLM).
MIRRORED_COLLECTIONS = 8
# A collection is read into memory at its third query among the recent ones: reading 10k vectors
# costs ~0.1 s, so a server recalling for many users in turn must not read one per recall.
QUERIES_BEFORE_MIRROR = 3

Rows = tuple[Sequence[str], np.ndarray, Sequence[dict[str, Any]]]


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (Chroma's cosine space compares directions), zero rows kept."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    return unit


class ExactMirrors:
    """In-memory copies of small collections, by collection key, least recently used out first.

    A key is in one of three states: unknown (not read yet: Chroma answers), mirrored (a
    UserMatrix), or too large (None: Chroma answers). Callers hold the index's lock around every
    call.
    """

    def __init__(self, max_vectors: int | None = None, max_collections: int | None = None) -> None:
        self.max_vectors = EXACT_MAX_VECTORS if max_vectors is None else max_vectors
        self.max_collections = MIRRORED_COLLECTIONS if max_collections is None else max_collections
        self._mirrors: OrderedDict[str, UserMatrix | None] = OrderedDict()
        # Queries of collections not mirrored yet, for the most recently queried few.
        self._queries: OrderedDict[str, int] = OrderedDict()

    def find(self, key: str, count: Callable[[], int], read: Callable[[], Rows]) -> UserMatrix | None:
        """The mirror of a collection, read at its QUERIES_BEFORE_MIRROR-th recent query when it
        holds at most max_vectors (`count` and `read` ask Chroma); None when it is larger or not
        read yet."""
        if key in self._mirrors:
            self._mirrors.move_to_end(key)
            return self._mirrors[key]
        self._queries[key] = self._queries.pop(key, 0) + 1
        while len(self._queries) > 4 * self.max_collections:
            self._queries.popitem(last=False)
        if self._queries[key] < QUERIES_BEFORE_MIRROR:
            return None
        del self._queries[key]
        mirror: UserMatrix | None = None
        if count() <= self.max_vectors:
            ids, vectors, metadatas = read()
            if len(ids):
                mirror = UserMatrix(vectors.shape[1])
                mirror.add(ids, _unit_rows(vectors), metadatas)
            else:
                mirror = _EmptyMirror()
        self._mirrors[key] = mirror
        while len(self._mirrors) > self.max_collections:
            self._mirrors.popitem(last=False)
        return mirror

    def added(
        self, key: str, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]
    ) -> None:
        """Vectors written to a collection: into its mirror, which is dropped once too large."""
        mirror = self._mirrors.get(key)
        if mirror is None:
            return
        if isinstance(mirror, _EmptyMirror):
            mirror = self._mirrors[key] = UserMatrix(np.asarray(vectors).shape[1])
        mirror.add(ids, _unit_rows(vectors), metadatas)
        if mirror.size > self.max_vectors:
            self._mirrors[key] = None

    def removed(self, key: str, ids: Sequence[str]) -> None:
        """Vectors deleted from a collection: out of its mirror too."""
        mirror = self._mirrors.get(key)
        if mirror is not None:
            mirror.remove(ids)

    def forget(self, key: str | None = None) -> None:
        """Drop one collection's mirror (read again on next use), or every mirror."""
        if key is None:
            self._mirrors.clear()
            self._queries.clear()
        else:
            self._mirrors.pop(key, None)
            self._queries.pop(key, None)


class _EmptyMirror(UserMatrix):
    """A mirrored collection with no vectors yet (its dimension comes with the first add)."""

    def __init__(self) -> None:
        super().__init__(0)
