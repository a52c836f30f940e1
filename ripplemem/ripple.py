"""Ripple recall (DESIGN §3): first-stage seeds and the entities a query names spread activation
over the user's memory graph; memories it reaches join the candidates, and activation is fused
with first-stage relevance before each type's score profile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ripplemem.config import GraphSettings, Settings
from ripplemem.embeddings import Embedder
from ripplemem.extraction import query_entity_keys
from ripplemem.graph import ScopeGraph, SpreadParams
from ripplemem.keyword_index import KeywordIndex
from ripplemem.retrieval import CandidatePool, fuse_scores, gather_pool, score_pool
from ripplemem.ripple_explain import explain_hits
from ripplemem.stores.graph_tables import entity_id, is_entity
from ripplemem.stores.memory_rows import MemoryFilter
from ripplemem.stores.sqlite import SQLiteStore
from ripplemem.stores.vectors import VectorIndex
from ripplemem.types import Recall


@dataclass(frozen=True)
class RippleParts:
    """Everything ripple recall reads: the store, indexes, graph, model and settings."""

    store: SQLiteStore
    index: VectorIndex
    embedder: Embedder
    settings: Settings
    keywords: KeywordIndex | None
    graph: ScopeGraph


def query_entities(query: str, user_id: str, graph: ScopeGraph) -> dict[str, float]:
    """The graph's entities the query names, weighted by inverse frequency (node specificity):
    a name every memory mentions says little."""
    entities = {}
    for key in query_entity_keys(query):
        node = entity_id(user_id, key)
        if node in graph:
            entities[node] = 1.0 / math.log(math.e + graph.degree(node))
    return entities


def seed_weights(found: CandidatePool, relevance: np.ndarray, entities: dict[str, float],
                 settings: GraphSettings) -> dict[str, float]:
    """Seeds: the best candidates by relevance (sum 1) plus the query's entities (sum at most
    entity_seed_weight)."""
    seeds: dict[str, float] = {}
    top = np.argsort(-relevance, kind="stable")[: settings.seed_memories]
    total = float(relevance[top].sum())
    for i in top:
        if relevance[i] > 0 and total > 0:
            seeds[found.rows[int(i)]["id"]] = float(relevance[i]) / total
    if entities:
        scale = settings.entity_seed_weight / max(1.0, sum(entities.values()))
        for node, weight in entities.items():
            seeds[node] = seeds.get(node, 0.0) + weight * scale
    return seeds


def _extend_pool(found: CandidatePool, activation: dict[str, float], flt: MemoryFilter, limit: int,
                 store: SQLiteStore, query_vector: np.ndarray) -> CandidatePool:
    """Add the most activated memories the first stage missed (those passing the filter)."""
    present = {row["id"] for row in found.rows}
    reached = sorted((node for node in activation if not is_entity(node) and node not in present),
                     key=lambda node: -activation[node])[:limit]
    if not reached:
        return found
    rows, vectors = store.fetch_rows(reached, flt, with_embeddings=True)
    if not rows:
        return found
    # None when every reached memory is cold (no vector outside the archive): no dense similarity.
    cosines = np.zeros(len(rows)) if vectors is None else \
        (vectors @ np.asarray(query_vector, dtype=np.float32)).astype(np.float64)
    return CandidatePool(rows=[*found.rows, *rows], dense=np.concatenate([found.dense, cosines]),
                         keyword=np.concatenate([found.keyword, np.zeros(len(rows))]))


def _inflow(found: CandidatePool, seeds: dict[str, float], activation: dict[str, float],
            damping: float, graph: ScopeGraph) -> np.ndarray:
    """Activation each candidate received from others, in [0, 1]: the graph's evidence beyond
    what the first stage already said. A seed's own retained share is removed, and so is the echo
    of its own mass coming back in two steps (through an entity only it mentions, say)."""
    total = sum(w for w in seeds.values() if w > 0) or 1.0
    kept = 1.0 - damping
    echo = graph.return_share(node for node, weight in seeds.items() if weight > 0)
    own = {node: kept * weight / total * (1.0 + damping * damping * echo.get(node, 0.0))
           for node, weight in seeds.items() if weight > 0}
    signal = np.array([max(0.0, activation.get(row["id"], 0.0) - own.get(row["id"], 0.0))
                       for row in found.rows])
    # Scaled by the strongest activation overall (retained seed mass included), so a weak
    # neighbour of the top seed does not get the full graph bonus.
    peak = max((activation.get(row["id"], 0.0) for row in found.rows), default=0.0)
    return np.minimum(1.0, signal / peak) if peak > 0 else signal


def _entity_match(found: CandidatePool, entities: dict[str, float], graph: ScopeGraph) -> np.ndarray:
    """How specifically each candidate mentions the entities the query names, scaled to [0, 1]."""
    match = np.zeros(len(found))
    if not entities:
        return match
    ids = [row["id"] for row in found.rows]
    for node, specificity in entities.items():
        match += specificity * (graph.linked_to(node, ids) > 0)
    peak = match.max()
    return match / peak if peak > 0 else match


def ripple_recall(query: str, k: int, flt: MemoryFilter, now: float, parts: RippleParts) -> Recall:
    """Recall the k best memories: hybrid seeds, spreading activation, fused scores, with why."""
    settings, graph_settings = parts.settings, parts.settings.graph
    pool = max(k * settings.candidate_multiplier, settings.min_candidates)
    query_vector = parts.embedder.embed_query(query)
    found = gather_pool(query, query_vector, flt, pool, "hybrid", parts.store, parts.index, parts.keywords)
    if not len(found):
        return Recall(query=query, hits=[], mode="ripple")
    relevance = fuse_scores(found.dense, found.keyword, "hybrid", settings)
    entities = query_entities(query, flt.user_id, parts.graph)
    seeds = seed_weights(found, relevance, entities, graph_settings)
    activation = parts.graph.spread(seeds, SpreadParams(
        damping=graph_settings.damping, max_hops=graph_settings.max_hops,
        prune_below=graph_settings.prune_below, max_frontier=graph_settings.max_frontier))
    if not activation:  # nothing in the graph yet: plain hybrid
        return Recall(query=query, hits=score_pool(found, relevance, now, settings, k), mode="ripple")
    found = _extend_pool(found, activation, flt, k * graph_settings.reached_per_hit, parts.store,
                         query_vector)
    relevance = fuse_scores(found.dense, found.keyword, "hybrid", settings)
    signal = _inflow(found, seeds, activation, graph_settings.damping, parts.graph)
    named = _entity_match(found, entities, parts.graph)
    first = 1.0 - graph_settings.ripple_weight - graph_settings.entity_weight
    mixed = first * relevance + graph_settings.ripple_weight * signal + graph_settings.entity_weight * named
    # Back to [0, 1] like first-stage relevance, so recency and importance keep their weight.
    mixed = mixed / mixed.max() if mixed.max() > 0 else mixed
    # The graph signal is already inside `mixed`: the profiles' graph weight must not count it twice.
    hits = score_pool(found, mixed, now, settings, k)
    position = {row["id"]: i for i, row in enumerate(found.rows)}
    for hit in hits:
        hit.components["graph"] = float(signal[position[hit.memory.id]])
        hit.components["entity"] = float(named[position[hit.memory.id]])
    subgraph = explain_hits(hits, seeds, activation, parts.graph, parts.store, flt.user_id)
    return Recall(query=query, hits=hits, mode="ripple", subgraph=subgraph)
