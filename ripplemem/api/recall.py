"""RippleMem's recall and ask (mixed into the facade): the search over the user's memories, the
knowledge bases granted to them and the cross-modal indexes, and a grounded answer from it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ripplemem.api.handle import HandleState
from ripplemem.core.choices import ExpandMode, RecallMode, Route, TimePhraseMode
from ripplemem.core.types import MemoryTypeChoice, Recall
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
from ripplemem.retrieval.expansion import check_expand
from ripplemem.retrieval.hybrid import RECALL_MODES
from ripplemem.retrieval.kb_recall import record_recall_access
from ripplemem.retrieval.recall import RecallRequest, finish, search
from ripplemem.retrieval.relevance import check_score_threshold
from ripplemem.retrieval.route_rules import check_route
from ripplemem.retrieval.time_window import check_time_phrases
from ripplemem.store.tables.memories import to_epoch

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
        llm = llm if llm is not None else self.llm
        request = RecallRequest(
            query=check_content(query, self.settings.max_content_chars, field="query"),
            score_threshold=check_score_threshold(score_threshold),
            expand=check_expand(expand, llm, how="pass llm=... to recall() or to RippleMem(...)"),
            llm=llm,
            time_phrases=check_time_phrases(time_phrases),
            now=check_datetime("now", now) or self._engine.clock(),
            route=check_route(route),
            knowledge_bases=check_kb_names(knowledge_bases),
            flt=self._filter(
                types=check_types(types),
                since=to_epoch(check_datetime("since", since)),
                until=to_epoch(check_datetime("until", until)),
                min_importance=None if min_importance is None else check_importance(min_importance),
                metadata=tuple(check_metadata(metadata).items()),
                session_id=check_identifier("session_id", session_id, required=False),
            ),
            k=check_k(k),
            mode=check_mode(mode, RECALL_MODES),
            history=history,
        )
        searched = search(self._engine, request)
        if record_access:
            record_recall_access(self._engine, self.user_id, searched.recall, searched.spec.now)
            self._wake_recalled(searched.recall, searched.spec.now)
        return finish(self._engine, request, searched)

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
