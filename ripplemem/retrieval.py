"""First-stage recall: dense and BM25 candidates, fused, then scored by each type's profile.

The ripple stage (graph seeds and spreading activation) plugs in between fusion and scoring:
it supplies the per-memory ``graph`` signal that ``profile_score`` already accepts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ripplemem.config import Settings
from ripplemem.embeddings import Embedder
from ripplemem.scoring import access_heat, profile_score, recency
from ripplemem.stores.sqlite import MemoryFilter, SQLiteStore
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


def gather_candidates(query: str, query_vector: np.ndarray | None, flt: MemoryFilter, pool: int,
                      mode: str, store: SQLiteStore, index: VectorIndex) -> list[Candidate]:
    """Dense and keyword top-`pool` lists, merged, with exact cosine for every candidate."""
    dense_hits = index.query(flt.user_id, query_vector, pool, vector_filter(flt)) \
        if mode in ("hybrid", "dense") and query_vector is not None else []
    keyword_hits = store.keyword_search(query, flt, pool) if mode in ("hybrid", "keyword") else []
    keyword_scores = dict(keyword_hits)
    ids = list(dict.fromkeys([i for i, _ in dense_hits] + [i for i, _ in keyword_hits]))
    memories, vectors = store.fetch(ids, flt, with_embeddings=query_vector is not None)
    if vectors is not None and query_vector is not None:
        cosines = vectors @ query_vector
    else:
        cosines = np.zeros(len(memories), dtype=np.float32)
    return [Candidate(memory=m, dense=float(c), keyword=keyword_scores.get(m.id, 0.0))
            for m, c in zip(memories, cosines)]


def fuse(candidates: list[Candidate], mode: str, settings: Settings) -> np.ndarray:
    """Relevance in [0, 1]: min-max normalised dense and BM25 scores, linearly weighted."""
    dense = _min_max(np.array([c.dense for c in candidates], dtype=np.float64))
    keyword = _min_max(np.array([c.keyword for c in candidates], dtype=np.float64))
    if mode == "dense":
        return dense
    if mode == "keyword":
        return keyword
    total = settings.dense_weight + settings.keyword_weight
    return (settings.dense_weight * dense + settings.keyword_weight * keyword) / total


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
        found_by = [name for name, value in (("dense", candidate.dense > 0),
                                             ("keyword", candidate.keyword > 0)) if value]
        hits.append(Hit(memory=memory, score=score, components=parts,
                        why="matched by " + " and ".join(found_by or ["dense"])))
    hits.sort(key=lambda hit: hit.score, reverse=True)
    return hits


def hybrid_recall(query: str, k: int, flt: MemoryFilter, mode: str, now: float, *,
                  store: SQLiteStore, index: VectorIndex, embedder: Embedder,
                  settings: Settings) -> Recall:
    """Recall the k best memories for a query within the filter."""
    pool = max(k * settings.candidate_multiplier, settings.min_candidates)
    query_vector = embedder.embed_query(query) if mode in ("hybrid", "dense") else None
    candidates = gather_candidates(query, query_vector, flt, pool, mode, store, index)
    if not candidates:
        return Recall(query=query, hits=[], mode=mode)
    hits = score_candidates(candidates, fuse(candidates, mode, settings), now, settings)[:k]
    return Recall(query=query, hits=hits, mode=mode)
