"""Recall across scopes: the user's own memories plus the knowledge bases granted to them, merged
by score into one ranked list.

Each scope is searched on its own (its own vectors, keywords and graph), so nothing of one user's
memories can reach another user through a shared knowledge base. Recall walks from a conversation
to a document through entities: when the query refers to the user or the conversation ("I",
"you told me", 我), the names of the entities the user's own top hits mention are added to the
knowledge-base query, so they seed the base's graph (matched by canonical name) and its keyword
search: "what did the doc say about the project I told you about?" reaches the chunk that names
the project. Queries without such a reference search the bases with their own words only.

Scores are only comparable within one search (relevance is rescaled to [0, 1] per candidate
pool), so before merging, every scope's scores are multiplied by how close its best match came
to the query (its best dense cosine over the best of all scopes): a knowledge base with nothing
on the topic does not get a top hit just for being searched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ripplemem.core.types import Hit, Recall, Subgraph
from ripplemem.engine.engine import Engine
from ripplemem.engine.knowledge_bases import kb_label, kb_scope, present
from ripplemem.engine.writes import reinforce_paths
from ripplemem.retrieval.pipeline import SearchSpec, search_scope
from ripplemem.retrieval.route_rules import classify_query
from ripplemem.store.tables.graph import get_entities, mentioned_entities
from ripplemem.store.tables.memories import MemoryFilter

# How many of the user's own top hits lend their entities to a knowledge-base search, and how
# close to the best hit's score they must come.
HINT_HITS = 2
HINT_MIN_SCORE_RATIO = 0.5
# Entity kinds too generic to carry a conversation over to a document ("2024", "3 kg").
_NOT_HINTS = frozenset({"date", "quantity"})


def kb_filter(flt: MemoryFilter, kb: str) -> MemoryFilter | None:
    """The user's filter as it applies to a knowledge base, or None when it rules documents out
    (types without "document", or one conversation session)."""
    if flt.session_id is not None or (flt.types is not None and "document" not in flt.types):
        return None
    return MemoryFilter(
        user_id=kb_scope(kb),
        types=("document",) if flt.types else None,
        since=flt.since,
        until=flt.until,
        min_importance=flt.min_importance,
        metadata=flt.metadata,
        status=flt.status,
    )


def hint_names(engine: Engine, user_id: str, query: str, hits: Sequence[Hit]) -> list[str]:
    """Names of the entities the user's own top hits mention, when the query refers to the user or
    the conversation (dates and amounts left out); else none."""
    if not hits or not classify_query(query).personal:
        return []
    floor = hits[0].score * HINT_MIN_SCORE_RATIO
    ids = [hit.memory.id for hit in hits[:HINT_HITS] if hit.score >= floor]
    with engine.store.read() as conn:
        entity_ids = list(dict.fromkeys(mentioned_entities(conn, user_id, ids)))
    found = get_entities(engine.store, user_id, entity_ids)
    return [row.name for node in entity_ids if (row := found.get(node)) and row.type not in _NOT_HINTS]


def search_kb(engine: Engine, kb: str, text: str, spec: SearchSpec, flt: MemoryFilter) -> Recall:
    """Search one knowledge base (ripple over its own graph, or a first stage only)."""
    result = search_scope(engine, kb_scope(kb), text, replace(spec, flt=flt))
    for hit in result.hits:
        hit.memory = present(hit.memory)
    return result


def with_knowledge_bases(
    engine: Engine, user_id: str, knowledge_bases: Sequence[str], text: str, spec: SearchSpec, own: Recall
) -> Recall:
    """The user's own recall (``own``) merged by score with a search of each knowledge base (k overall)."""
    searches = [(kb, flt) for kb in knowledge_bases if (flt := kb_filter(spec.flt, kb)) is not None]
    if not searches:
        return own
    hints = hint_names(engine, user_id, text, own.hits)
    kb_text = f"{text} ({', '.join(hints)})" if hints else text
    results = [own, *(search_kb(engine, kb, kb_text, spec, flt) for kb, flt in searches)]
    return merge_recalls(text, results, spec.k, spec.mode)


def merge_recalls(query: str, results: Sequence[Recall], k: int, mode: str) -> Recall:
    """One ranked list from several scopes' recalls, each scaled by its best dense match."""
    strengths = [max((hit.components.get("dense", 0.0) for hit in r.hits), default=0.0) for r in results]
    best = max(strengths, default=0.0)
    hits: list[Hit] = []
    subgraph = Subgraph()
    for result, strength in zip(results, strengths, strict=True):
        factor = max(strength, 0.0) / best if best > 0 else 1.0
        hits.extend(
            replace(hit, score=hit.score * factor, components={**hit.components, "scope_scale": factor})
            for hit in result.hits
        )
        subgraph.nodes.update(result.subgraph.nodes)
        subgraph.edges.extend(result.subgraph.edges)
    hits.sort(key=lambda hit: -hit.score)
    return Recall(query=query, hits=hits[:k], mode=mode, subgraph=subgraph)


def record_recall_access(engine: Engine, user_id: str, result: Recall, now: float) -> None:
    """Count recalled memories as accessed and reinforce the edges that led to them, each hit in
    its own scope (a chunk's edges in its knowledge base's graph, never in the user's)."""
    by_scope: dict[str, list[Hit]] = {}
    for hit in result.hits:
        name = hit.memory.metadata.get("knowledge_base")
        from_kb = isinstance(name, str) and hit.memory.user_id == kb_label(name) != user_id
        scope = kb_scope(name) if isinstance(name, str) and from_kb else user_id
        by_scope.setdefault(scope, []).append(hit)
    for scope, hits in by_scope.items():
        if result.mode == "ripple":
            reinforce_paths(engine, scope, Recall(query=result.query, hits=hits, mode="ripple"), now)
        engine.store.touch([hit.memory.id for hit in hits], scope, now)
