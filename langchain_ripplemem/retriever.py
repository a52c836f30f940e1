"""RippleMemRetriever: a LangChain retriever over a user's RippleMem memories (ripple recall)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, SkipValidation

from langchain_ripplemem.documents import hit_to_document
from langchain_ripplemem.scopes import check_memory
from ripplemem import InvalidInputError, InvalidTypeError, RippleMem
from ripplemem.integration import (
    RECALL_MODES,
    Condition,
    check_k,
    check_mode,
    check_score_threshold,
    check_types,
    recall_options,
)

#: Keys of ``filters=`` (and of per-call keyword arguments): RippleMem.recall's narrowing options.
FILTER_KEYS = ("since", "until", "min_importance", "metadata", "session_id")
_CALL_KEYS = frozenset({"k", "mode", "types", "record_access", "filter", "score_threshold", *FILTER_KEYS})
# LangChain's filter operators (Chroma's spelling) and the ones recall can honour.
_OPERATORS = {"$eq": "==", "$in": "in", "$gte": ">=", "$lt": "<"}


class RippleMemRetriever(BaseRetriever):
    """Retrieve a user's memories for a query with RippleMem's ripple recall (or hybrid/dense/keyword).

    ``RippleMemRetriever(memory=mem, k=5)`` drops into any chain:
    ``{"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt | llm``.
    Each Document's ``id`` is the memory id; its metadata is ``ripplemem.hit_metadata()``'s flat dict:
    ``memory_id, type, source`` (the origin: an ingested file's path), ``time`` (+ ``time_basis``),
    ``score, why`` and more, then the caller's own metadata keys (docs/langchain.md has the table).
    ``search_kwargs={"k": 4, "filter": {...}}`` filters on those keys as ``VectorStore.as_retriever``
    does. Per call, ``invoke(query, k=3, types=["semantic"], filter={...})`` overrides the defaults.
    ``score_threshold=0.4`` (or in ``search_kwargs``) drops memories whose relevance (in [0, 1],
    comparable across queries: ``metadata["relevance"]``) is below it.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: SkipValidation[RippleMem]
    """The RippleMem handle whose user's memories are searched."""
    k: int = 10
    """How many memories to return."""
    mode: str = "ripple"
    """Recall mode: "ripple" (graph spreading, default), "hybrid", "dense" or "keyword"."""
    types: str | list[str] | None = None
    """Memory types to search (e.g. ["semantic", "episodic"]); None for all."""
    filters: dict[str, Any] | None = None
    """Recall filters: since, until, min_importance, metadata (equality), session_id."""
    record_access: bool = True
    """Count a retrieval as an access (and reinforce the graph paths that led to it)."""
    score_threshold: float | None = None
    """Drop memories whose relevance (Hit.relevance, in [0, 1]) is below this; None keeps all k."""

    def __init__(self, **data: Any) -> None:
        check_memory(data.get("memory"))
        data = _from_search_kwargs(data)
        _check_known(data, set(type(self).model_fields))
        _check_options(data, where="RippleMemRetriever")
        super().__init__(**data)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        options = self._recall_options(kwargs)
        recall = self.memory.recall(query, **options)
        return [hit_to_document(hit) for hit in recall.hits]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        options = self._recall_options(kwargs)
        recall = await asyncio.to_thread(self.memory.recall, query, **options)
        return [hit_to_document(hit) for hit in recall.hits]

    def _recall_options(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        _check_options(overrides, where="invoke")
        calls = dict(overrides)
        if "filter" in calls:
            for option, value in filter_options(calls.pop("filter"), where="filter").items():
                if option in calls:
                    raise InvalidInputError(f"invoke got {option}= and a filter on the same key; give one")
                calls[option] = value
        options: dict[str, Any] = {
            "k": self.k,
            "mode": self.mode,
            "types": self.types,
            "record_access": self.record_access,
            "score_threshold": self.score_threshold,
            **(self.filters or {}),
        }
        options.update(calls)
        return options


# What other retrievers call these settings, and what to write here instead.
_HINTS = {
    "top_k": "k=...",
    "similarity_top_k": "k=...",
    "search_type": 'mode="ripple" | "hybrid" | "dense" | "keyword"',
    "filter": 'search_kwargs={"filter": {...}}',
    "user_id": "memory=mem.scope(user_id=...)",
}


def _from_search_kwargs(data: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments with LangChain's ``search_kwargs`` ({"k": 4, "filter": {...}, "score_threshold":
    0.4}, as ``VectorStore.as_retriever`` takes them) turned into ``k``, recall filters
    (``filter_options``) and ``score_threshold``."""
    options = dict(data)
    search = options.pop("search_kwargs", None)
    if search is None:
        return options
    if not isinstance(search, Mapping):
        raise InvalidTypeError(f"search_kwargs must be a dict, got {type(search).__name__}")
    unknown = sorted(set(search) - {"k", "filter", "score_threshold"})
    if unknown:
        raise InvalidInputError(
            f"search_kwargs has unknown keys {unknown}; allowed: ['filter', 'k', 'score_threshold']"
        )
    for key, target in (("k", "k"), ("filter", "filters"), ("score_threshold", "score_threshold")):
        if key in search and target in options:
            raise InvalidInputError(f"give {target}= or search_kwargs[{key!r}], not both")
    for key in ("k", "score_threshold"):
        if key in search:
            options[key] = search[key]
    if "filter" in search:
        translated = filter_options(search["filter"], where="search_kwargs['filter']")
        if "types" in translated:
            if options.get("types") is not None:
                raise InvalidInputError("give types= or a filter on 'type' in search_kwargs, not both")
            options["types"] = translated.pop("types")
        if translated:
            options["filters"] = translated
    return options


def filter_options(given: Any, *, where: str) -> dict[str, Any]:
    """A LangChain metadata filter ({"type": "semantic", "page": 3, "time": {"$gte": "2024-01-01"}})
    as recall options, on the keys the Documents' metadata shows; refuses what recall cannot do."""
    if not isinstance(given, Mapping):
        raise InvalidTypeError(f"{where} must be a dict of metadata values, got {type(given).__name__}")
    conditions = []
    for key, value in given.items():
        if isinstance(key, str) and key.startswith("$"):
            raise InvalidInputError(
                f"{where}: {key!r} is not supported; every key of the dict must match "
                "(give one dict of key: value)"
            )
        if isinstance(value, Mapping) and value and all(str(op).startswith("$") for op in value):
            for op, operand in value.items():
                if op not in _OPERATORS:
                    raise InvalidInputError(
                        f"{where}: operator {op!r} on {key!r} is not supported; "
                        f"supported: {', '.join(_OPERATORS)}"
                    )
                conditions.append(Condition(key, _OPERATORS[op], operand))
        else:
            conditions.append(Condition(key, "==", value))
    return recall_options(conditions)


def _check_known(data: Mapping[str, Any], fields: set[str]) -> None:
    """Refuse an argument the retriever does not have (pydantic would drop it without a word)."""
    unknown = sorted(set(data) - fields)
    if unknown:
        hints = "; ".join(f"for {name} use {_HINTS[name]}" for name in unknown if name in _HINTS)
        raise InvalidInputError(
            f"RippleMemRetriever got unknown arguments {unknown}"
            f"{' (' + hints + ')' if hints else ''}; allowed: {sorted(fields)}"
        )


def _check_options(options: Mapping[str, Any], *, where: str) -> None:
    """Check the recall options a user passed, naming the bad one."""
    if where == "invoke":
        unknown = set(options) - _CALL_KEYS
        if unknown:
            raise InvalidInputError(
                f"{where} got unknown arguments {sorted(unknown)}; allowed: {sorted(_CALL_KEYS)}"
            )
    if "k" in options:
        check_k(options["k"])
    if "mode" in options:
        check_mode(options["mode"], RECALL_MODES)
    if options.get("types") is not None:
        check_types(options["types"])
    check_score_threshold(options.get("score_threshold"))
    filters = options.get("filters")
    if filters is not None:
        if not isinstance(filters, Mapping):
            raise InvalidTypeError(
                f"filters must be a dict with keys from {FILTER_KEYS}, got {type(filters).__name__}"
            )
        unknown = set(filters) - set(FILTER_KEYS)
        if unknown:
            raise InvalidInputError(
                f"filters has unknown keys {sorted(unknown)}; allowed: {list(FILTER_KEYS)}"
            )
