"""The steps of one recall between the facade's checks and its bookkeeping: time phrases in the
query (filter or boost by when a memory happened), query expansion (MQE / HyDE candidates fused
by rank), and the search of one scope (ripple or hybrid)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

from ripplemem.core.choices import TimePhraseMode, literal_values
from ripplemem.embedding.embedders import Embedder
from ripplemem.engine.engine import Engine
from ripplemem.errors import InvalidInputError
from ripplemem.language.timeparse import TimeRange, resolve_time
from ripplemem.retrieval.expansion import QueryExpander, candidate_pool_size, fuse_by_rank
from ripplemem.retrieval.hybrid import hybrid_recall
from ripplemem.retrieval.ripple import RippleParts, ripple_recall
from ripplemem.store.memory_rows import MemoryFilter, to_epoch
from ripplemem.types import Hit, Recall, Subgraph

TIME_PHRASE_MODES = literal_values(TimePhraseMode)


@dataclass
class QueryEmbeddings:
    """The query vectors of one recall: each distinct text is embedded once, however many
    searches use it (inside and outside a time window, the user's scope and each knowledge base)."""

    embedder: Embedder
    vectors: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def model_id(self) -> str:
        """The wrapped embedder's model id."""
        return self.embedder.model_id

    def embed_query(self, text: str) -> np.ndarray:
        """The text's query vector, embedded on first use."""
        if text not in self.vectors:
            self.vectors[text] = self.embedder.embed_query(text)
        return self.vectors[text]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Passed through: recall embeds no documents."""
        return self.embedder.embed_documents(texts)


@dataclass(frozen=True)
class SearchSpec:
    """One recall's settled options: how many hits, which mode, what may match, as of when, and
    its query vectors."""

    k: int
    mode: str
    flt: MemoryFilter
    now: float
    queries: QueryEmbeddings


def check_time_phrases(value: object) -> str:
    """Validate recall(time_phrases=...): "boost" (default), "filter" or "off"."""
    if value not in TIME_PHRASE_MODES:
        raise InvalidInputError(f"time_phrases must be one of {', '.join(TIME_PHRASE_MODES)}; got {value!r}")
    return str(value)


def search_scope(engine: Engine, user_id: str, text: str, spec: SearchSpec) -> Recall:
    """Search one user's memories for one text: ripple over the graph, or a first stage only."""
    keywords = engine.keyword_index(user_id)
    # Its cosine thresholds on the embedder's own scale (recall reads latest_same_topic).
    settings = engine.model_settings()
    if spec.mode == "ripple":
        parts = RippleParts(
            store=engine.store,
            index=engine.index,
            embedder=spec.queries,
            settings=settings,
            keywords=keywords,
            graph=engine.graph(user_id),
        )
        return ripple_recall(text, spec.k, spec.flt, spec.now, parts)
    return hybrid_recall(
        text,
        spec.k,
        spec.flt,
        spec.mode,
        spec.now,
        store=engine.store,
        index=engine.index,
        embedder=spec.queries,
        settings=settings,
        keywords=keywords,
    )


def time_window(query: str, reference: datetime, time_phrases: str) -> TimeRange | None:
    """The time range the query's first time phrase names ("yesterday", "上周"), unless turned off."""
    return None if time_phrases == "off" else resolve_time(query, reference)


def search_in_time(
    search: Callable[[str, SearchSpec], Recall],
    query: str,
    spec: SearchSpec,
    window: TimeRange | None,
    time_phrases: str,
    boost: float,
) -> Recall:
    """Search with the query's time phrase applied: "filter" keeps only memories from that time;
    "boost" searches both inside the window and everywhere, and lifts what happened in it."""
    if window is None:
        return search(query, spec)
    text = window.strip_from(query) or query
    start, end = to_epoch(window.start), to_epoch(window.end)
    since = start if spec.flt.since is None else max(start, spec.flt.since)
    until = end if spec.flt.until is None else min(end, spec.flt.until)
    inside = search(text, replace(spec, flt=replace(spec.flt, since=since, until=until)))
    if time_phrases == "filter":
        return replace(inside, query=query)
    everywhere = search(text, spec)
    # Scores are comparable within one search only: a memory both searches found keeps the score
    # it got among everything, and only then is lifted.
    scored = {hit.memory.id: hit for hit in everywhere.hits}
    lifted = {
        hit.memory.id: _lift(scored.get(hit.memory.id, hit), boost, window.phrase) for hit in inside.hits
    }
    hits = [*lifted.values(), *(hit for hit in everywhere.hits if hit.memory.id not in lifted)]
    hits.sort(key=lambda hit: -hit.score)
    return Recall(
        query=query,
        hits=hits[: spec.k],
        mode=spec.mode,
        subgraph=_merge_subgraphs(inside.subgraph, everywhere.subgraph),
    )


def _lift(hit: Hit, boost: float, phrase: str) -> Hit:
    why = f"{hit.why}; happened {phrase!r}" if hit.why else f"happened {phrase!r}"
    return replace(
        hit, score=hit.score * (1.0 + boost), components={**hit.components, "time_boost": boost}, why=why
    )


def _merge_subgraphs(first: Subgraph, second: Subgraph) -> Subgraph:
    nodes = {**second.nodes, **first.nodes}
    edges = list(dict.fromkeys([*first.edges, *second.edges]))
    return Subgraph(nodes=nodes, edges=edges)


def expanded_search(search: Callable[[str, int], Recall], queries: list[str], k: int) -> Recall:
    """Search every expanded query for a pool of candidates (max(4k, 20)), then fuse by rank:
    the original query's list first, so it wins ties."""
    pool = candidate_pool_size(k)
    results = [search(text, pool) for text in queries]
    best: dict[str, Hit] = {}
    for result in results:
        for hit in result.hits:
            best.setdefault(hit.memory.id, hit)
    fused = fuse_by_rank([[hit.memory.id for hit in result.hits] for result in results], k)
    hits = [
        replace(best[memory_id], score=score, components={**best[memory_id].components, "rank_fusion": score})
        for memory_id, score in fused
    ]
    subgraph = Subgraph()
    for result in results:
        subgraph = _merge_subgraphs(subgraph, result.subgraph)
    return Recall(query=queries[0], hits=hits, mode=results[0].mode, subgraph=subgraph)


def expand_query(llm: Any, query: str, mode: str) -> tuple[list[str], dict[str, object]]:
    """The texts to search for an expanded query (original first) and a record of the expansion."""
    expansion = QueryExpander(llm).expansion(query, mode)
    described: dict[str, object] = {
        "mode": mode,
        "queries": expansion.queries,
        "problems": list(expansion.problems),
    }
    return expansion.queries, described
