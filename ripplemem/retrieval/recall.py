"""One recall, stage by stage, from the facade's checked arguments (a `RecallRequest`) to its hits.

`search` runs the stages in order, each called here: the route (`routing`), the query's time window
(`time_window`), the expansion into more queries (`expansion`), then for every text the first stage
of each scope (`pipeline.search_scope`: `hybrid` or `ripple`, which spreads activation) merged with the
knowledge bases (`kb_recall`) and the cross-modal indexes (`cross_modal`), and last the relevance of
every hit (`relevance`). The facade then counts the access, and `finish` orders the hits by the route
and adds the superseded versions (`history`): after the access, because waking a cold hit puts its
vector back, and the relevance ``history=True`` reads again sees it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ripplemem.core.types import Recall
from ripplemem.engine.engine import Engine
from ripplemem.language.timeparse import TimeRange
from ripplemem.retrieval.cross_modal import with_cross_modal
from ripplemem.retrieval.expansion import candidate_pool_size, expand_query, fuse_expanded
from ripplemem.retrieval.history import add_history
from ripplemem.retrieval.kb_recall import with_knowledge_bases
from ripplemem.retrieval.pipeline import QueryEmbeddings, SearchSpec, search_scope
from ripplemem.retrieval.relevance import with_relevance
from ripplemem.retrieval.routing import order_by_route, plan_route
from ripplemem.retrieval.time_window import described, lift_window, time_window, within
from ripplemem.store.tables.memories import MemoryFilter, to_epoch


@dataclass(frozen=True)
class RecallRequest:
    """One recall's arguments as the facade checked them: the query, how many hits and how, what
    may match (``flt``; its types None unless the caller chose some), as of when, and the options."""

    query: str
    k: int
    mode: str
    flt: MemoryFilter
    now: datetime
    route: str | None = None
    knowledge_bases: tuple[str, ...] | None = None
    time_phrases: str = "boost"
    expand: str | None = None
    llm: Any = None
    history: bool = False
    score_threshold: float | None = None


@dataclass
class Searched:
    """A recall's hits before the facade counts the access, and the spec its last stages reuse (the
    query vectors are embedded once)."""

    recall: Recall
    spec: SearchSpec


def search(engine: Engine, request: RecallRequest) -> Searched:
    """The recall's hits, scored, with their relevance (those below ``score_threshold`` dropped)."""
    query = request.query
    plan = plan_route(engine, request.flt.user_id, query, request.route, request.knowledge_bases)
    types = plan.types if plan.decision is not None and request.flt.types is None else request.flt.types
    spec = SearchSpec(
        k=request.k,
        mode=request.mode,
        flt=replace(request.flt, types=types),
        now=to_epoch(request.now),
        queries=QueryEmbeddings(engine.embedder),
    )
    if request.expand is None:
        texts, expansion = [query], None
    else:
        texts, expansion = expand_query(request.llm, query, request.expand)
    window, stripped = time_window(query, texts, request.now, request.time_phrases)
    if expansion is None:
        result = _search_text(engine, request, plan.knowledge_bases, query, stripped[0], spec, window)
    else:
        pooled = replace(spec, k=candidate_pool_size(spec.k))
        found = [
            _search_text(engine, request, plan.knowledge_bases, text, searched, pooled, window)
            for text, searched in zip(texts, stripped, strict=True)
        ]
        result = fuse_expanded(texts[0], found, spec.k)
        result.expansion = expansion
    if window is not None:
        result.time = described(window, request.time_phrases)
    threshold = request.score_threshold
    result.hits = [
        hit
        for hit in with_relevance(engine, query, result.hits, spec)
        if threshold is None or hit.relevance >= threshold
    ]
    result.route = plan.decision
    return Searched(result, spec)


def finish(engine: Engine, request: RecallRequest, searched: Searched) -> Recall:
    """The recall as returned: the route's side first, and with ``history=True`` each hit's
    superseded versions after it."""
    result = searched.recall
    order_by_route(result, result.route)
    if request.history:
        add_history(engine, request.query, result, searched.spec)
    return result


def _search_text(
    engine: Engine,
    request: RecallRequest,
    knowledge_bases: tuple[str, ...],
    text: str,
    searched: str,
    spec: SearchSpec,
    window: TimeRange | None,
) -> Recall:
    """One text's search (``searched``: the text without its time phrase) with the query's time
    window applied: "filter" keeps only memories from that time; "boost" searches both inside the
    window and everywhere, and lifts what happened in it."""
    if window is None:
        return _search_scopes(engine, knowledge_bases, text, spec)
    inside = _search_scopes(engine, knowledge_bases, searched, within(spec, window))
    if request.time_phrases == "filter":
        return replace(inside, query=text)
    everywhere = _search_scopes(engine, knowledge_bases, searched, spec)
    return lift_window(text, inside, everywhere, window, engine.settings.time_boost, spec)


def _search_scopes(engine: Engine, knowledge_bases: tuple[str, ...], text: str, spec: SearchSpec) -> Recall:
    """One search of everything the user can read: their own scope's first stage, the knowledge
    bases merged by score, then the cross-modal hits fused by rank."""
    user_id = spec.flt.user_id
    own = search_scope(engine, user_id, text, spec)
    found = with_knowledge_bases(engine, user_id, knowledge_bases, text, spec, own)
    return with_cross_modal(engine, user_id, text, spec, found)
