"""A router that asks a chat model for a query's personal, temporal, entity and factual signals.

`LLMRouter` shows the model `LLM_ROUTER_PROMPT`, retries once on an unusable reply and, when the
model still gives nothing usable (a failed call, junk, a bad route), falls back to the rules of
`router.classify_query`; the decision from the class is `router.decide`'s either way.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ripplemem.core.validation import check_count, check_nonblank_text
from ripplemem.llm.chat import (
    ChatTask,
    arun_tasks,
    first_json_object,
    require_llm,
    run_tasks,
    strip_thinking,
)
from ripplemem.retrieval.route_rules import (
    SPARSE_MEMORY_BELOW,
    QueryClass,
    RouteDecision,
    classify_query,
    decide,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

logger = logging.getLogger("ripplemem.retrieval.route_rules")


LLM_ROUTER_PROMPT = """\
You classify a search query for an assistant that can look in two places: the user's personal \
memories (what the user said, did and planned in past conversations) and a library of documents \
(manuals, articles, books: general knowledge).
Reply with only a JSON object, no prose:
{"personal": true|false, "temporal": true|false, "named_entity": true|false, "factual": true|false, \
"route": "memory"|"documents"|"both", "confidence": 0.0-1.0, "reason": "..."}
- personal: the query is about the user or the conversation (I, my, we, "you told me", 我, 我的, 我们). \
"How do I ..." asking for instructions is not personal.
- temporal: it names a relative time (yesterday, last week, two months ago, 昨天, 上周, 三个月前).
- named_entity: it names a specific person, place, organisation, product or work.
- factual: it asks for general knowledge (what is X, who wrote Y, how does Z work, 什么是, 是谁).
- route: memory when the answer is in the user's own past, documents when it is general \
knowledge, both when unsure or when both help.
- reason: one short English sentence.\
"""
LLM_ROUTER_RETRY = (
    "That reply was not usable: {error}. Reply again with only the JSON object described above."
)
_ROUTE_LABELS = {
    "memory": "memory_primary",
    "documents": "documents_primary",
    "both": "hybrid",
    "rag": "documents_primary",
    "hybrid": "hybrid",
    "memory_primary": "memory_primary",
    "documents_primary": "documents_primary",
    "rag_primary": "documents_primary",
}
_FLAGS = ("personal", "temporal", "named_entity", "factual")


class LLMRouter:
    """Classifies queries with a chat model; on a failed call or unusable reply, the rules decide."""

    def __init__(
        self, llm: BaseChatModel | None, *, max_retries: int = 1, sparse_below: int = SPARSE_MEMORY_BELOW
    ) -> None:
        self.llm = require_llm(llm, "LLMRouter", "pass a LangChain chat model as llm")
        check_count("max_retries", max_retries, minimum=0)
        check_count("sparse_below", sparse_below, minimum=0)
        self.max_retries = max_retries
        self.sparse_below = sparse_below

    def classify(self, query: str) -> QueryClass:
        """The model's class of a query, or the rules' when the model gives nothing usable."""
        query, task = self._task(query)
        run_tasks(self.llm, [task])
        return self._result(query, task)

    async def aclassify(self, query: str) -> QueryClass:
        """Async classify."""
        query, task = self._task(query)
        await arun_tasks(self.llm, [task])
        return self._result(query, task)

    def route(
        self, query: str, *, memory_count: int, document_count: int, known_to_memory: Sequence[str] = ()
    ) -> RouteDecision:
        """Decide where to search, from the model's class of the query."""
        return decide(
            self.classify(query),
            memory_count=memory_count,
            document_count=document_count,
            known_to_memory=known_to_memory,
            sparse_below=self.sparse_below,
        )

    async def aroute(
        self, query: str, *, memory_count: int, document_count: int, known_to_memory: Sequence[str] = ()
    ) -> RouteDecision:
        """Async route."""
        return decide(
            await self.aclassify(query),
            memory_count=memory_count,
            document_count=document_count,
            known_to_memory=known_to_memory,
            sparse_below=self.sparse_below,
        )

    def first_messages(self, query: str) -> list[BaseMessage]:
        """The conversation the model is first shown for a query."""
        from langchain_core.messages import HumanMessage, SystemMessage

        return [SystemMessage(LLM_ROUTER_PROMPT), HumanMessage(f"Query: {query}")]

    def _task(self, query: Any) -> tuple[str, ChatTask[QueryClass]]:
        query = check_nonblank_text("query", query)
        task = ChatTask(self.first_messages(query), parse_llm_class, LLM_ROUTER_RETRY, self.max_retries)
        return query, task

    def _result(self, query: str, task: ChatTask[QueryClass]) -> QueryClass:
        if task.ok and task.result is not None:
            return task.result
        logger.warning("LLM router fell back to the rules: %s", task.error)
        ruled = classify_query(query)
        return replace(ruled, cues=(*ruled.cues, "the LLM classifier gave nothing usable; rules decided"))


def parse_llm_class(reply: str) -> QueryClass:
    """A QueryClass from the model's JSON reply; raises ValueError when it is unusable."""
    data = first_json_object(strip_thinking(reply))
    if not any(key in data for key in (*_FLAGS, "route")):
        raise ValueError("the object has none of the keys personal, temporal, named_entity, factual, route")
    flags = {key: _flag(data.get(key), key) for key in _FLAGS}
    raw_route = data.get("route")
    if raw_route is None:
        label = _label_from_flags(**flags)
    elif isinstance(raw_route, str) and raw_route.strip().lower() in _ROUTE_LABELS:
        label = _ROUTE_LABELS[raw_route.strip().lower()]
    else:
        raise ValueError(f"route must be 'memory', 'documents' or 'both', got {raw_route!r}")
    confidence = data.get("confidence", 0.7)
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1:
        confidence = 0.7
    reason = data.get("reason")
    cues = (f"llm: {reason.strip()[:200]}",) if isinstance(reason, str) and reason.strip() else ()
    return QueryClass(label=label, **flags, confidence=float(confidence), cues=cues, source="llm")


def _flag(value: Any, key: str) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "false", "no", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    raise ValueError(f"{key} must be true or false, got {value!r}")


def _label_from_flags(*, personal: bool, temporal: bool, named_entity: bool, factual: bool) -> str:
    # The rule router's decision tree (docs/design-notes.md#routing).
    if personal:
        return "memory_primary"
    if named_entity and factual:
        return "documents_primary"
    if temporal:
        return "memory_primary"
    return "hybrid"
