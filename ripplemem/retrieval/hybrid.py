"""First-stage recall: dense and BM25 candidates, fused, then scored by each type's profile.

The ripple stage (graph seeds and spreading activation) plugs in between fusion and scoring:
it supplies the per-candidate ``graph`` signal that ``score_pool`` already accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ripplemem.config import Settings
from ripplemem.core.choices import RecallMode, literal_values
from ripplemem.core.types import Hit, Recall
from ripplemem.embedding.base import Embedder
from ripplemem.index.bm25 import KeywordIndex, query_terms
from ripplemem.retrieval.candidates import CandidatePool
from ripplemem.retrieval.latest import Preference, latest_preference
from ripplemem.retrieval.scoring import (
    access_heat,
    gated_recency,
    profile_scores,
    profile_weights,
    recency,
)
from ripplemem.retrieval.script_reading import dense_trust
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.memories import MemoryFilter, stored_epoch
from ripplemem.store.vectors.base import VectorFilter, VectorIndex

RECALL_MODES: tuple[RecallMode, ...] = literal_values(RecallMode)


def vector_filter(flt: MemoryFilter) -> VectorFilter:
    """The part of a memory filter a vector index can apply itself."""
    return VectorFilter(
        agent_id=flt.agent_id, session_id=flt.session_id, types=flt.types, since=flt.since, until=flt.until
    )


def keyword_search(
    query: str, flt: MemoryFilter, limit: int, store: RowStore, keywords: KeywordIndex | None
) -> list[tuple[str, float]]:
    """BM25 (memory id, score) pairs best first: the in-memory index when the filter is only the
    user, SQLite's FTS5 (which can apply every filter in SQL) otherwise."""
    if keywords is not None and flt == MemoryFilter(user_id=flt.user_id):
        return keywords.search(query_terms(query), limit)
    return store.keyword_search(query, flt, limit)


def gather_pool(
    query: str,
    query_vector: np.ndarray | None,
    flt: MemoryFilter,
    pool: int,
    mode: str,
    store: RowStore,
    index: VectorIndex,
    keywords: KeywordIndex | None,
) -> CandidatePool:
    """Dense and keyword top-`pool` lists, merged, with exact cosine for every candidate."""
    keyword_hits = keyword_search(query, flt, pool, store, keywords) if mode in ("hybrid", "keyword") else []
    dense_hits = (
        index.query(flt.user_id, query_vector, pool, vector_filter(flt))
        if mode in ("hybrid", "dense") and query_vector is not None
        else []
    )
    keyword_scores = dict(keyword_hits)
    ids = list(dict.fromkeys([i for i, _ in dense_hits] + [i for i, _ in keyword_hits]))
    rows, _ = store.fetch_rows(ids, flt)
    cosines = _cosines(rows, dict(dense_hits), query_vector, flt, store)
    keyword = np.array([keyword_scores.get(row["id"], 0.0) for row in rows], dtype=np.float64)
    return CandidatePool(rows=rows, dense=cosines, keyword=keyword)


def _cosines(
    rows: list[Any],
    dense: dict[str, float],
    query_vector: np.ndarray | None,
    flt: MemoryFilter,
    store: RowStore,
) -> np.ndarray:
    """Each candidate's cosine with the query: the vector index's for the ones it found, from the
    stored vector for the ones only BM25 found (0 for an archived memory, whose vector is away)."""
    cosines = np.array([dense.get(row["id"], 0.0) for row in rows], dtype=np.float64)
    unknown = [position for position, row in enumerate(rows) if row["id"] not in dense]
    if unknown and query_vector is not None:
        found, vectors = store.fetch_rows([rows[i]["id"] for i in unknown], flt, with_embeddings=True)
        if vectors is not None:
            scores = vectors @ np.asarray(query_vector, dtype=np.float32)
            by_id = {row["id"]: float(score) for row, score in zip(found, scores, strict=True)}
            cosines[unknown] = [by_id.get(rows[i]["id"], 0.0) for i in unknown]
    return cosines


@dataclass(frozen=True)
class Fusion:
    """Linear fusion of dense and BM25 scores, each min-max scaled by the bounds of the pool it
    was fitted on; memories added to the pool later (ripple's reached ones) are scaled by the
    same bounds, so they cannot shift everyone else's relevance."""

    mode: str
    dense_bounds: tuple[float, float]
    keyword_bounds: tuple[float, float]
    dense_weight: float
    keyword_weight: float

    @classmethod
    def fit(cls, found: CandidatePool, mode: str, settings: Settings, dense_trust: float = 1.0) -> Fusion:
        """Fit on a first-stage pool. `dense_trust` scales the dense weight in hybrid fusion: below
        1 when the query is in a script the embedder cannot read (script_reading.dense_trust)."""
        return cls(
            mode,
            _bounds(found.dense),
            _bounds(found.keyword),
            settings.dense_weight * dense_trust,
            settings.keyword_weight,
        )

    def __call__(self, dense: np.ndarray, keyword: np.ndarray) -> np.ndarray:
        """Relevance in [0, 1] of candidates with these dense and BM25 scores."""
        dense, keyword = _scaled(dense, self.dense_bounds), _scaled(keyword, self.keyword_bounds)
        if self.mode == "dense":
            return dense
        if self.mode == "keyword":
            return keyword
        total = self.dense_weight + self.keyword_weight
        return (self.dense_weight * dense + self.keyword_weight * keyword) / total


def _bounds(values: np.ndarray) -> tuple[float, float]:
    return (float(values.min()), float(values.max())) if values.size else (0.0, 0.0)


def _scaled(values: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    low, high = bounds
    if high - low < 1e-12:
        return np.where(values > 0, 1.0, 0.0)
    return np.clip((values - low) / (high - low), 0.0, 1.0)


def _why(dense: float, keyword: float) -> str:
    found_by = [name for name, value in (("dense", dense > 0), ("keyword", keyword > 0)) if value]
    return "matched by " + " and ".join(found_by or ["dense"])


def _scoring_columns(rows: list[Any]) -> dict[str, list[Any]]:
    """The columns scoring reads, as lists (rows from fetch_rows share one column order)."""
    # By position: a Row finds a name by comparing it with each column name in turn,
    # and those lookups were about a third of score_pool's time.
    names = ("type", "importance", "created_at", "event_time", "last_accessed", "access_count")
    keys = rows[0].keys()
    positions = [keys.index(name) for name in names]
    columns = {name: [row[position] for row in rows] for name, position in zip(names, positions, strict=True)}
    # A time that is not a number (a damaged row) reads as unknown; an unknown creation time as
    # the epoch, so the memory scores the recency floor instead of breaking the recall.
    for name in ("event_time", "last_accessed"):
        columns[name] = [stored_epoch(value) for value in columns[name]]
    columns["created_at"] = [stored_epoch(value) or 0.0 for value in columns["created_at"]]
    return columns


def score_pool(
    found: CandidatePool,
    relevance: np.ndarray,
    now: float,
    settings: Settings,
    k: int,
    graph: np.ndarray | None = None,
    prefer: Preference | None = None,
) -> list[Hit]:
    """Apply each memory type's profile to the pool and return the top k hits.

    `graph` is the ripple signal per candidate, if any; `prefer` may reorder the scores (the
    latest-first step of a question about now); Memory objects are built for the k returned
    hits only.
    """
    n = len(found)
    if n == 0:
        return []
    columns = _scoring_columns(found.rows)
    importance = np.array(columns["importance"], dtype=np.float64)
    when = np.array(
        [
            created if event is None else event
            for created, event in zip(columns["created_at"], columns["event_time"], strict=True)
        ],
        dtype=np.float64,
    )
    idle = np.array(
        [np.nan if last is None else now - last for last in columns["last_accessed"]], dtype=np.float64
    )
    count = np.array(columns["access_count"], dtype=np.float64)
    profiles = {
        kind: profile_weights(settings.profile(kind), graph is not None) for kind in set(columns["type"])
    }
    weights = np.array([profiles[kind] for kind in columns["type"]], dtype=np.float64)
    recency_values = recency(now - when, settings)
    heat = access_heat(idle, count, settings)
    scores = profile_scores(
        weights,
        relevance=relevance,
        recency_values=gated_recency(recency_values, relevance, settings),
        graph=np.zeros(n) if graph is None else graph,
        access=heat,
        importance=importance,
    )
    notes: dict[int, str] = {}
    if prefer is not None:
        scores, notes = prefer(scores, when)
    hits = []
    for i in np.argsort(-scores, kind="stable")[:k]:
        memory = found.memory(int(i))
        parts = {
            "relevance": float(relevance[i]),
            "dense": float(found.dense[i]),
            "keyword": float(found.keyword[i]),
            "recency": float(recency_values[i]),
            "access": float(heat[i]),
            "importance": memory.importance,
        }
        if graph is not None:
            parts["graph"] = float(graph[i])
        why = _why(parts["dense"], parts["keyword"])
        hits.append(
            Hit(
                memory=memory,
                score=float(scores[i]),
                components=parts,
                why=f"{why}; {notes[int(i)]}" if int(i) in notes else why,
            )
        )
    return hits


def hybrid_recall(
    query: str,
    k: int,
    flt: MemoryFilter,
    mode: str,
    now: float,
    *,
    store: RowStore,
    index: VectorIndex,
    embedder: Embedder,
    settings: Settings,
    keywords: KeywordIndex | None = None,
) -> Recall:
    """Recall the k best memories for a query within the filter."""
    pool = max(k * settings.candidate_multiplier, settings.min_candidates)
    query_vector = embedder.embed_query(query) if mode in ("hybrid", "dense") else None
    found = gather_pool(query, query_vector, flt, pool, mode, store, index, keywords)
    if not len(found):
        return Recall(query=query, hits=[], mode=mode)
    trust = dense_trust(query, embedder) if mode == "hybrid" else 1.0
    relevance = Fusion.fit(found, mode, settings, trust)(found.dense, found.keyword)
    prefer = latest_preference(query, found, relevance, flt, store, settings)
    return Recall(query=query, hits=score_pool(found, relevance, now, settings, k, prefer=prefer), mode=mode)
