"""RippleMem's recall and ask (mixed into the facade): the search over the user's memories, the
knowledge bases granted to them and the cross-modal indexes, and a grounded answer from it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ripplemem.api.handle import HandleState
from ripplemem.api.history import superseded_history, with_superseded
from ripplemem.core.choices import ExpandMode, RecallMode, Route, TimePhraseMode
from ripplemem.core.validation import (
    check_content,
    check_datetime,
    check_identifier,
    check_importance,
    check_k,
    check_metadata,
    check_mode,
    check_types,
)
from ripplemem.engine.knowledge_bases import check_kb_names
from ripplemem.lifecycle.archive import wake_memories
from ripplemem.llm.answer import Answer, ContextItem, answer_question
from ripplemem.retrieval.cross_modal import with_cross_modal
from ripplemem.retrieval.expansion import check_expand
from ripplemem.retrieval.hybrid import RECALL_MODES
from ripplemem.retrieval.kb_recall import record_recall_access, search_readable
from ripplemem.retrieval.pipeline import (
    QueryEmbeddings,
    SearchSpec,
    check_time_phrases,
    expand_query,
    expanded_search,
    search_in_time,
    search_scope,
    time_window,
)
from ripplemem.retrieval.relevance import check_score_threshold, with_relevance
from ripplemem.retrieval.route_rules import check_route
from ripplemem.retrieval.routing import order_by_route, plan_route
from ripplemem.store.memory_rows import to_epoch
from ripplemem.types import MemoryTypeChoice, Recall

if TYPE_CHECKING:
    from ripplemem.language.timeparse import TimeRange

WAKE_CAUSE = "recall reached it (a cold memory an associated query touches becomes active again)"


class RecallMethods(HandleState):
    """recall, ask and their async twins of a RippleMem handle."""

    def recall(
        self,
        query: str,
        k: int = 10,
        *,
        mode: RecallMode = "ripple",
        types: MemoryTypeChoice | Iterable[MemoryTypeChoice] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        min_importance: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        record_access: bool = True,
        route: Route | None = None,
        expand: ExpandMode | None = None,
        now: datetime | str | None = None,
        time_phrases: TimePhraseMode = "boost",
        llm: Any = None,
        knowledge_bases: str | Iterable[str] | None = None,
        history: bool = False,
        score_threshold: float | None = None,
    ) -> Recall:
        """The k memories that best answer the query, scored by each type's profile.

        ``mode="ripple"`` (default) spreads activation from the first-stage matches and the
        entities the query names over the memory graph; "hybrid", "dense" and "keyword" skip the
        graph. Filters narrow what may be recalled: memory types, a time range on when it
        happened, a minimum importance, metadata equality and one session.

        A time phrase in the query ("yesterday", "last week", "two months ago", "上周", "三个月前")
        is resolved against ``now`` (default: the clock; it is also the "now" of recency
        scoring): ``time_phrases="boost"`` lifts memories from that time, "filter" keeps only
        them, "off" ignores the phrase. ``Recall.time`` says what was understood.
        ``expand="mqe" | "hyde" | "both"`` has the handle's chat model (``RippleMem(llm=...)``)
        rewrite the query or draft an answer passage (or ``llm``, a LangChain chat model, for this
        call); every text is searched and the candidates fused by rank (``Recall.expansion``
        lists them).

        By default recall searches everything the user can read: their own memories and the
        knowledge bases granted to them (``mem.ingest``), merged by score; a chunk's
        ``metadata["knowledge_base"]`` names its base. ``knowledge_bases=[...]`` narrows the bases.
        ``route="auto"`` decides between the user's own memories and the documents (knowledge bases and
        the user's document memories) by the query and how much each holds
        (docs/design-notes.md#routing; ``Recall.route`` says why); "memory", "documents" or "both"
        choose directly.

        Only current values are recalled: a memory a later statement superseded ("my dose is now
        40 mg") stays out, unless ``history=True``, which lists each hit's earlier versions right
        after it, newest first, each saying what superseded it and when.

        Recall counts as an access and reinforces the graph edges that led to a hit, unless
        ``record_access=False`` (a read-only look, e.g. for evaluation).

        Each hit's ``relevance`` says how well it matches the query, in [0, 1], comparable across
        queries (``score`` ranks the hits of this one); ``score_threshold=0.5`` drops hits below it.
        """
        check_content(query, self.settings.max_content_chars, field="query")
        threshold = check_score_threshold(score_threshold)
        llm = llm if llm is not None else self.llm
        expand_mode = check_expand(expand, llm, how="pass llm=... to recall() or to RippleMem(...)")
        time_mode = check_time_phrases(time_phrases)
        reference = check_datetime("now", now) or self._engine.clock()
        plan = plan_route(
            self._engine, self.user_id, query, check_route(route), check_kb_names(knowledge_bases)
        )
        if plan.decision is not None and types is None:
            types = plan.types
        flt = self._filter(
            types=check_types(types),
            since=to_epoch(check_datetime("since", since)),
            until=to_epoch(check_datetime("until", until)),
            min_importance=None if min_importance is None else check_importance(min_importance),
            metadata=tuple(check_metadata(metadata).items()),
            session_id=check_identifier("session_id", session_id, required=False),
        )
        spec = SearchSpec(
            k=check_k(k),
            mode=check_mode(mode, RECALL_MODES),
            flt=flt,
            now=to_epoch(reference),
            queries=QueryEmbeddings(self._engine.embedder),
        )
        result = self._search(
            query,
            spec,
            plan.knowledge_bases,
            time_window(query, reference, time_mode),
            time_mode,
            expand_mode,
            llm,
        )
        result.hits = [
            hit
            for hit in with_relevance(self._engine, query, result.hits, spec)
            if threshold is None or hit.relevance >= threshold
        ]
        if record_access:
            record_recall_access(self._engine, self.user_id, result, spec.now)
            self._wake_recalled(result, spec.now)
        if plan.decision is not None:
            order_by_route(result, plan.decision)
            result.route = plan.decision
        if history:
            earlier = superseded_history(self._engine, self.user_id, result.hits)
            result.hits = with_relevance(self._engine, query, with_superseded(result.hits, earlier), spec)
        return result

    def _search(
        self,
        query: str,
        spec: SearchSpec,
        knowledge_bases: tuple[str, ...],
        window: TimeRange | None,
        time_mode: str,
        expand_mode: str | None,
        llm: Any,
    ) -> Recall:
        """Recall's search: the user's scope and knowledge bases, cross-modal hits, the query's time
        window, and the expanded queries fused by rank when asked."""
        engine = self._engine

        def search_all(text: str, scoped: SearchSpec) -> Recall:
            found = search_readable(
                engine,
                self.user_id,
                knowledge_bases,
                text,
                scoped,
                lambda t, s: search_scope(engine, self.user_id, t, s),
            )
            return with_cross_modal(engine, self.user_id, text, scoped, found)

        def search(text: str, pool: int) -> Recall:
            return search_in_time(
                search_all, text, replace(spec, k=pool), window, time_mode, self.settings.time_boost
            )

        if expand_mode is None:
            result = search(query, spec.k)
        else:
            queries, described = expand_query(llm, query, expand_mode)
            result = expanded_search(search, queries, spec.k)
            result.expansion = described
        if window is not None:
            result.time = {
                "phrase": window.phrase,
                "start": window.start,
                "end": window.end,
                "how": time_mode,
            }
        return result

    def ask(self, question: str, *, llm: Any = None, k: int = 8, **recall_options: Any) -> Answer:
        """Recall for the question and have a chat model answer from those memories only, citing
        them (``Answer.citations`` are memory ids). Uses ``llm`` or the handle's ``RippleMem(llm=...)``;
        without either, a clear error."""
        recalled = self.recall(question, k, **recall_options)
        return answer_question(
            llm if llm is not None else self.llm,
            question,
            [ContextItem.from_hit(hit) for hit in recalled.hits],
            now=self._engine.clock(),
        )

    def _wake_recalled(self, result: Recall, now: float) -> None:
        """Bring a recall's warm and cold hits back to hot, logging each move."""
        hits = [hit for hit in result.hits if hit.memory.tier != "hot"]
        if hits:
            wake_memories(
                self._engine,
                self.user_id,
                [hit.memory.id for hit in hits],
                [hit.memory.tier for hit in hits],
                now,
                WAKE_CAUSE,
            )

    async def arecall(
        self,
        query: str,
        k: int = 10,
        *,
        mode: RecallMode = "ripple",
        types: MemoryTypeChoice | Iterable[MemoryTypeChoice] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        min_importance: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        record_access: bool = True,
        route: Route | None = None,
        expand: ExpandMode | None = None,
        now: datetime | str | None = None,
        time_phrases: TimePhraseMode = "boost",
        llm: Any = None,
        knowledge_bases: str | Iterable[str] | None = None,
        history: bool = False,
        score_threshold: float | None = None,
    ) -> Recall:
        """Async twin of recall."""
        return await asyncio.to_thread(
            self.recall,
            query,
            k,
            mode=mode,
            types=types,
            since=since,
            until=until,
            min_importance=min_importance,
            metadata=metadata,
            session_id=session_id,
            record_access=record_access,
            route=route,
            expand=expand,
            now=now,
            time_phrases=time_phrases,
            llm=llm,
            knowledge_bases=knowledge_bases,
            history=history,
            score_threshold=score_threshold,
        )
