"""What the Chroma index asks of one Chroma collection: where clauses, upserts and deletes in
Chroma-sized batches, nearest-neighbour queries (several at once), and paged reads."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ripplemem.store.vectors.base import VectorFilter
from ripplemem.store.vectors.exact_mirror import Rows

COLLECTION_PREFIX = "rm_"
MAX_BATCH = 5000
_QUERY_BATCH = 256
_QUERY_THREADS = max(1, min(4, os.cpu_count() or 1))
NO_ROWS: Rows = ([], np.zeros((0, 0), dtype=np.float32), [])
Neighbours = list[list[tuple[str, float]]]


def collection_name(user_id: str, prefix: str = COLLECTION_PREFIX) -> str:
    """A valid Chroma collection name for a user (a hash: user ids may hold any character)."""
    return prefix + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:40]


def where_clause(flt: VectorFilter | None, user_id: str | None = None) -> dict[str, Any] | None:
    """Chroma's where clause for a filter; with user_id (shared collection) the user is always in it."""
    clauses: list[dict[str, Any]] = [] if user_id is None else [{"user_id": user_id}]
    if flt is None:
        flt = VectorFilter()
    if flt.agent_id is not None:
        clauses.append({"agent_id": flt.agent_id})
    if flt.session_id is not None:
        clauses.append({"session_id": flt.session_id})
    if flt.types:
        clauses.append({"type": {"$in": list(flt.types)}})
    if flt.since is not None:
        clauses.append({"when": {"$gte": flt.since}})
    if flt.until is not None:
        clauses.append({"when": {"$lt": flt.until}})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def upsert(
    collection: Any, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]
) -> None:
    """Upsert in Chroma-sized batches."""
    for start in range(0, len(ids), MAX_BATCH):
        stop = start + MAX_BATCH
        collection.upsert(
            ids=list(ids[start:stop]),
            embeddings=np.asarray(vectors[start:stop]),
            metadatas=metadatas[start:stop],
        )


def delete(collection: Any, ids: Sequence[str], where: dict[str, Any] | None) -> None:
    """Delete by id in Chroma-sized batches (within the where clause)."""
    for start in range(0, len(ids), MAX_BATCH):
        collection.delete(ids=list(ids[start : start + MAX_BATCH]), where=where)


def nearest(
    collection: Any,
    embeddings: list[np.ndarray],
    k: int,
    where: dict[str, Any] | None,
    count: Callable[[], int],
) -> Neighbours:
    """(id, cosine) of the k nearest for each embedding; empty lists when nothing is stored.
    `count` says how many vectors the caller's scope holds (asked only of an older server)."""
    try:
        # Chroma >= 1.0 returns fewer rows when k exceeds what it holds: no count() round trip
        # first (2-3 ms at 10k vectors, more per user under filter isolation).
        result = collection.query(
            query_embeddings=embeddings, n_results=k, where=where, include=["distances"]
        )
    except Exception:
        # An older server may refuse n_results > count: ask for at most what it holds.
        total = count()
        if total == 0:
            return [[] for _ in embeddings]
        result = collection.query(
            query_embeddings=embeddings, n_results=min(k, total), where=where, include=["distances"]
        )
    return [
        [(memory_id, 1.0 - float(distance)) for memory_id, distance in zip(ids, distances, strict=True)]
        for ids, distances in zip(result["ids"], result["distances"], strict=True)
    ]


def nearest_many(
    collection: Any, vectors: np.ndarray, k: int, where: dict[str, Any] | None, count: Callable[[], int]
) -> Neighbours:
    """nearest() for many vectors, in batched calls run side by side: Chroma answers one query call
    on one core and releases the GIL meanwhile, so a batch write's neighbour lookups take half the
    time on two cores."""
    batches = [
        [np.asarray(v, dtype=np.float32) for v in vectors[start : start + _QUERY_BATCH]]
        for start in range(0, len(vectors), _QUERY_BATCH)
    ]

    def answer(batch: list[np.ndarray]) -> Neighbours:
        return nearest(collection, batch, k, where, count)

    if len(batches) == 1 or _QUERY_THREADS == 1:
        parts = [answer(batch) for batch in batches]
    else:
        with ThreadPoolExecutor(max_workers=min(_QUERY_THREADS, len(batches))) as pool:
            parts = list(pool.map(answer, batches))
    return [row for part in parts for row in part]


def all_ids(collection: Any, where: dict[str, Any] | None) -> set[str]:
    """The ids of every vector within the where clause, a page at a time."""
    found: set[str] = set()
    while True:
        page = collection.get(where=where, include=[], limit=MAX_BATCH, offset=len(found))["ids"]
        found.update(page)
        if len(page) < MAX_BATCH:
            return found


def read_all(collection: Any) -> Rows:
    """Every id, vector and metadata of a collection, a page at a time."""
    ids: list[str] = []
    vectors: list[np.ndarray] = []
    metadatas: list[dict[str, Any]] = []
    while True:
        page = collection.get(include=["embeddings", "metadatas"], limit=MAX_BATCH, offset=len(ids))
        ids.extend(page["ids"])
        if len(page["ids"]):
            vectors.append(np.asarray(page["embeddings"], dtype=np.float32))
        metadatas.extend(dict(meta or {}) for meta in page["metadatas"])
        if len(page["ids"]) < MAX_BATCH:
            break
    matrix = np.concatenate(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
    return ids, matrix, metadatas
