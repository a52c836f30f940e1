"""First-stage recall: dense and BM25 candidates, fused, then scored by each type's profile.

The ripple stage (graph seeds and spreading activation) plugs in between fusion and scoring:
it supplies the per-memory ``graph`` signal that ``profile_score`` already accepts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from ripplemem.config import Settings
from ripplemem.embeddings import Embedder
from ripplemem.scoring import SECONDS_PER_DAY, access_heat, profile_score, recency
from ripplemem.stores.sqlite import MemoryFilter, SQLiteStore, row_to_memory
from ripplemem.stores.vectors import VectorFilter, VectorIndex
from ripplemem.types import Hit, Memory, Recall

RECALL_MODES = ("hybrid", "dense", "keyword")


@dataclass
class Candidate:
    """A memory found by the first stage with its raw dense and keyword scores."""

    memory: Memory
    dense: float = 0.0
    keyword: float = 0.0


def _min_max(values: np.ndarray) -> np.ndarray:
    if values.size == 0:
        return values
    low, high = float(values.min()), float(values.max())
    if high - low < 1e-12:
        return np.where(values > 0, 1.0, 0.0)
    return (values - low) / (high - low)


def vector_filter(flt: MemoryFilter) -> VectorFilter:
    """The part of a memory filter a vector index can apply itself."""
    return VectorFilter(agent_id=flt.agent_id, session_id=flt.session_id, types=flt.types,
                        since=flt.since, until=flt.until)


_KEYWORD_WORKER: ThreadPoolExecutor | None = None
_WORKER_LOCK = threading.Lock()


def _keyword_worker() -> ThreadPoolExecutor:
    """One background thread for BM25 searches, so they overlap the query embedding."""
    global _KEYWORD_WORKER
    if _KEYWORD_WORKER is None:
        with _WORKER_LOCK:
            if _KEYWORD_WORKER is None:
                _KEYWORD_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ripplemem-bm25")
    return _KEYWORD_WORKER


@dataclass
class CandidatePool:
    """First-stage candidates as columns: raw store rows, dense cosines and BM25 scores.

    Memory objects are built only for the hits that are returned (``memory(i)``).
    """

    rows: list[Any]
    dense: np.ndarray
    keyword: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)

    def memory(self, position: int) -> Memory:
        """The candidate at a position as a Memory."""
        return row_to_memory(self.rows[position])

    def candidates(self) -> list[Candidate]:
        """Every candidate as a Candidate (with its Memory)."""
        return [Candidate(memory=self.memory(i), dense=float(self.dense[i]), keyword=float(self.keyword[i]))
                for i in range(len(self.rows))]


def gather_pool(query: str, query_vector: np.ndarray | None, flt: MemoryFilter, pool: int, mode: str,
                store: SQLiteStore, index: VectorIndex,
                embed: Callable[[], np.ndarray | None] | None = None) -> tuple[CandidatePool, np.ndarray | None]:
    """Dense and keyword top-`pool` lists, merged, with exact cosine for every candidate.

    When `embed` is given (hybrid mode) the BM25 search runs on a worker thread while the query
    is embedded: SQLite and the model both release the GIL, so the two overlap on two cores.
    Returns the pool and the query vector.
    """
    keyword_job = None
    keyword_hits: list[tuple[str, float]] = []
    if mode in ("hybrid", "keyword"):
        if embed is not None:
            try:
                keyword_job = _keyword_worker().submit(store.keyword_search, query, flt, pool)
            except RuntimeError:  # interpreter shutting down: search inline
                keyword_job = None
        if keyword_job is None:
            keyword_hits = store.keyword_search(query, flt, pool)
    try:
        if embed is not None:
            query_vector = embed()
        dense_hits = index.query(flt.user_id, query_vector, pool, vector_filter(flt)) \
            if mode in ("hybrid", "dense") and query_vector is not None else []
    finally:
        if keyword_job is not None:
            keyword_hits = keyword_job.result()
    keyword_scores = dict(keyword_hits)
    ids = list(dict.fromkeys([i for i, _ in dense_hits] + [i for i, _ in keyword_hits]))
    rows, vectors = store.fetch_rows(ids, flt, with_embeddings=query_vector is not None)
    if vectors is not None and query_vector is not None:
        cosines = (vectors @ np.asarray(query_vector, dtype=np.float32)).astype(np.float64)
    else:
        cosines = np.zeros(len(rows), dtype=np.float64)
    keyword = np.array([keyword_scores.get(row["id"], 0.0) for row in rows], dtype=np.float64)
    return CandidatePool(rows=rows, dense=cosines, keyword=keyword), query_vector


def gather_candidates(query: str, query_vector: np.ndarray | None, flt: MemoryFilter, pool: int,
                      mode: str, store: SQLiteStore, index: VectorIndex) -> list[Candidate]:
    """Dense and keyword top-`pool` lists, merged, with exact cosine for every candidate."""
    found, _ = gather_pool(query, query_vector, flt, pool, mode, store, index)
    return found.candidates()


def _fuse_arrays(dense: np.ndarray, keyword: np.ndarray, mode: str, settings: Settings) -> np.ndarray:
    dense, keyword = _min_max(dense), _min_max(keyword)
    if mode == "dense":
        return dense
    if mode == "keyword":
        return keyword
    total = settings.dense_weight + settings.keyword_weight
    return (settings.dense_weight * dense + settings.keyword_weight * keyword) / total


def fuse(candidates: list[Candidate], mode: str, settings: Settings) -> np.ndarray:
    """Relevance in [0, 1]: min-max normalised dense and BM25 scores, linearly weighted."""
    return _fuse_arrays(np.array([c.dense for c in candidates], dtype=np.float64),
                        np.array([c.keyword for c in candidates], dtype=np.float64), mode, settings)


def score_candidates(candidates: list[Candidate], relevance: np.ndarray, now: float,
                     settings: Settings, graph: Callable[[Memory], float] | None = None) -> list[Hit]:
    """Apply each memory type's profile and rank; `graph` supplies the ripple signal if any."""
    hits: list[Hit] = []
    for candidate, rel in zip(candidates, relevance):
        memory = candidate.memory
        when = memory.when.timestamp() if memory.when else now
        parts = {
            "relevance": float(rel),
            "dense": candidate.dense,
            "keyword": candidate.keyword,
            "recency": recency(now - when, settings),
            "access": access_heat(memory, now, settings),
            "importance": memory.importance,
        }
        graph_value = graph(memory) if graph is not None else None
        if graph_value is not None:
            parts["graph"] = graph_value
        score = profile_score(
            settings.profile(memory.type), relevance=parts["relevance"],
            recency_value=parts["recency"], graph=graph_value, access=parts["access"],
            importance=memory.importance,
        )
        hits.append(Hit(memory=memory, score=score, components=parts, why=_why(candidate.dense, candidate.keyword)))
    hits.sort(key=lambda hit: hit.score, reverse=True)
    return hits


def _why(dense: float, keyword: float) -> str:
    found_by = [name for name, value in (("dense", dense > 0), ("keyword", keyword > 0)) if value]
    return "matched by " + " and ".join(found_by or ["dense"])


def score_pool(found: CandidatePool, relevance: np.ndarray, now: float, settings: Settings,
               k: int) -> list[Hit]:
    """score_candidates without a graph signal, as array arithmetic over the pool: the top k hits.

    Same formulas (scoring.recency, scoring.access_heat, scoring.profile_score with graph=None);
    Memory objects are built for the k returned hits only.
    """
    n = len(found)
    if n == 0:
        return []
    importance = np.empty(n)
    when = np.empty(n)
    last = np.empty(n)
    count = np.empty(n)
    has_last = np.zeros(n, dtype=bool)
    weights = np.empty((n, 6))  # relevance, recency, access, importance, base, gain
    profiles: dict[str, tuple[float, ...]] = {}
    for i, row in enumerate(found.rows):
        importance[i] = row["importance"]
        event_time = row["event_time"]
        when[i] = row["created_at"] if event_time is None else event_time
        accessed = row["last_accessed"]
        if accessed is not None:
            has_last[i] = True
            last[i] = accessed
        count[i] = row["access_count"]
        kind = row["type"]
        profile = profiles.get(kind)
        if profile is None:
            p = settings.profile(kind)
            profile = profiles[kind] = (p.relevance + p.graph, p.recency, p.access, p.importance,
                                        p.importance_base, p.importance_gain)
        weights[i] = profile
    # scoring.recency: exp(-rate x age_days), floored; future events count as now.
    age_days = np.maximum(0.0, now - when) / SECONDS_PER_DAY
    recency_values = np.maximum(settings.recency_floor, np.exp(-settings.recency_rate_per_day * age_days))
    # scoring.access_heat: exp(-days since access / half) x w + min(count / saturation, 1) x (1 - w).
    idle_days = np.maximum(0.0, now - np.where(has_last, last, now)) / SECONDS_PER_DAY
    time_part = np.where(has_last, np.exp(-idle_days / settings.access_half_days), 0.0)
    count_part = np.minimum(count / settings.access_count_saturation, 1.0)
    heat = time_part * settings.access_time_weight + count_part * (1.0 - settings.access_time_weight)
    additive = (weights[:, 0] * relevance + weights[:, 1] * recency_values + weights[:, 2] * heat
                + weights[:, 3] * importance)
    scores = additive * (weights[:, 4] + weights[:, 5] * importance)
    order = np.argsort(-scores, kind="stable")[:k]
    hits = []
    for i in order:
        memory = found.memory(int(i))
        parts = {
            "relevance": float(relevance[i]), "dense": float(found.dense[i]),
            "keyword": float(found.keyword[i]), "recency": float(recency_values[i]),
            "access": float(heat[i]), "importance": memory.importance,
        }
        hits.append(Hit(memory=memory, score=float(scores[i]), components=parts,
                        why=_why(parts["dense"], parts["keyword"])))
    return hits


def hybrid_recall(query: str, k: int, flt: MemoryFilter, mode: str, now: float, *,
                  store: SQLiteStore, index: VectorIndex, embedder: Embedder,
                  settings: Settings) -> Recall:
    """Recall the k best memories for a query within the filter."""
    pool = max(k * settings.candidate_multiplier, settings.min_candidates)
    embed = (lambda: embedder.embed_query(query)) if mode in ("hybrid", "dense") else None
    if mode == "dense":
        query_vector, embed = embed(), None  # nothing to overlap with
    else:
        query_vector = None
    found, _ = gather_pool(query, query_vector, flt, pool, mode, store, index,
                           embed=embed if mode == "hybrid" else None)
    if not len(found):
        return Recall(query=query, hits=[], mode=mode)
    relevance = _fuse_arrays(found.dense, found.keyword, mode, settings)
    return Recall(query=query, hits=score_pool(found, relevance, now, settings, k), mode=mode)
