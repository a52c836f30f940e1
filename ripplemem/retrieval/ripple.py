"""Ripple recall (docs/recall.md, docs/design-notes.md#ripple): first-stage seeds and the entities a
query names spread activation over the user's memory graph; memories it reaches join the candidates, and
activation is fused with first-stage relevance before each type's score profile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ripplemem.config import GraphSettings, Settings
from ripplemem.core.types import Recall
from ripplemem.embedding.base import Embedder
from ripplemem.index.bm25 import KeywordIndex
from ripplemem.index.scope_graph import ScopeGraph, SpreadParams
from ripplemem.language.entities import query_entity_keys
from ripplemem.retrieval.candidates import CandidatePool
from ripplemem.retrieval.cues import answers_inherit, time_answer_lift, with_rows
from ripplemem.retrieval.explain import explain_hits
from ripplemem.retrieval.hybrid import Fusion, gather_pool, score_pool
from ripplemem.retrieval.latest import latest_preference
from ripplemem.retrieval.script_reading import dense_trust
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.graph import entity_id, is_entity
from ripplemem.store.tables.memories import MemoryFilter
from ripplemem.store.vectors.base import VectorIndex


@dataclass(frozen=True)
class RippleParts:
    """Everything ripple recall reads: the store, indexes, graph, model and settings."""

    store: RowStore
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


def seed_weights(
    found: CandidatePool, relevance: np.ndarray, entities: dict[str, float], settings: GraphSettings
) -> dict[str, float]:
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


def _reached(found: CandidatePool, activation: dict[str, float], limit: int) -> list[str]:
    """The most activated memories the first stage missed, best first."""
    present = {row["id"] for row in found.rows}
    return sorted(
        (node for node in activation if not is_entity(node) and node not in present),
        key=lambda node: -activation[node],
    )[:limit]


def _inflow(
    found: CandidatePool,
    seeds: dict[str, float],
    activation: dict[str, float],
    damping: float,
    graph: ScopeGraph,
) -> np.ndarray:
    """Activation each candidate received from others, in [0, 1]: the graph's evidence beyond
    what the first stage already said. A seed's own retained share is removed, and so is the echo
    of its own mass coming back in two steps (through an entity only it mentions, say)."""
    total = sum(w for w in seeds.values() if w > 0) or 1.0
    kept = 1.0 - damping
    echo = graph.return_share(node for node, weight in seeds.items() if weight > 0)
    own = {
        node: kept * weight / total * (1.0 + damping * damping * echo.get(node, 0.0))
        for node, weight in seeds.items()
        if weight > 0
    }
    signal = np.array(
        [max(0.0, activation.get(row["id"], 0.0) - own.get(row["id"], 0.0)) for row in found.rows]
    )
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


def graph_support(signal: np.ndarray, named: np.ndarray, settings: GraphSettings) -> np.ndarray:
    """What the graph adds per candidate, in [0, 1]: ripple_weight × inflow² + entity_weight ×
    entity match. Squared, so the spill-over a neighbour gets from one seed counts little and
    activation that converges from several seeds counts much."""
    return np.minimum(1.0, settings.ripple_weight * signal**2 + settings.entity_weight * named)


def supported(relevance: np.ndarray, support: np.ndarray) -> np.ndarray:
    """First-stage relevance with graph support added as independent evidence (a noisy OR): a
    strong direct match stays strong, and support lifts the rest towards it, never past 1."""
    return 1.0 - (1.0 - relevance) * (1.0 - support)


def ripple_recall(query: str, k: int, flt: MemoryFilter, now: float, parts: RippleParts) -> Recall:
    """Recall the k best memories: hybrid seeds, spreading activation, fused scores, with why."""
    settings, graph_settings = parts.settings, parts.settings.graph
    pool = max(k * settings.candidate_multiplier, settings.min_candidates)
    query_vector = parts.embedder.embed_query(query)
    found = gather_pool(query, query_vector, flt, pool, "hybrid", parts.store, parts.index, parts.keywords)
    if not len(found):
        return Recall(query=query, hits=[], mode="ripple")
    fusion = Fusion.fit(found, "hybrid", settings, dense_trust(query, parts.embedder))
    relevance = fusion(found.dense, found.keyword)
    entities = query_entities(query, flt.user_id, parts.graph)
    seeds = seed_weights(found, relevance, entities, graph_settings)
    activation = parts.graph.spread(
        seeds,
        SpreadParams(
            damping=graph_settings.damping,
            max_hops=graph_settings.max_hops,
            prune_below=graph_settings.prune_below,
            max_frontier=graph_settings.max_frontier,
        ),
    )
    if not activation:  # nothing in the graph yet: plain hybrid
        prefer = latest_preference(query, found, relevance, flt, parts.store, settings)
        return Recall(
            query=query, hits=score_pool(found, relevance, now, settings, k, prefer=prefer), mode="ripple"
        )
    matched = {row["id"] for row in found.rows}
    reached = _reached(found, activation, k * graph_settings.reached_per_hit)
    found, relevance = with_rows(found, relevance, reached, flt, parts.store, query_vector, fusion)
    found, relevance = answers_inherit(
        found, relevance, flt, parts.store, query_vector, fusion, graph_settings
    )
    relevance = time_answer_lift(query, found, relevance, graph_settings)
    signal = _inflow(found, seeds, activation, graph_settings.damping, parts.graph)
    named = _entity_match(found, entities, parts.graph)
    support = graph_support(signal, named, graph_settings)
    # The graph signal is already inside: the profiles' graph weight must not count it twice.
    final = supported(relevance, support)
    prefer = latest_preference(query, found, final, flt, parts.store, settings)
    hits = score_pool(found, final, now, settings, k, prefer=prefer)
    position = {row["id"]: i for i, row in enumerate(found.rows)}
    for hit in hits:
        at = position[hit.memory.id]
        hit.components.update(
            first_stage=float(relevance[at]), graph=float(support[at]), entity=float(named[at])
        )
    subgraph = explain_hits(hits, matched, seeds, activation, parts.graph, parts.store, flt.user_id)
    return Recall(query=query, hits=hits, mode="ripple", subgraph=subgraph)
