"""RippleMemRetriever: a LlamaIndex retriever over a user's RippleMem memories (ripple recall by default)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from llama_index.core.callbacks import CallbackManager
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from llamaindex_ripplemem._common import check_memory, check_mode, check_positive_int
from ripplemem import Hit, Recall, RippleMem

# Node metadata kept out of an answering LLM's prompt (ids and scoring notes); it sees the type, the
# date and the memory's own metadata (a document's source, say).
_HIDDEN_FROM_LLM = ("memory_id", "created_at", "importance", "session_id", "why", "working_id")


class RippleMemRetriever(BaseRetriever):
    """Retrieve a user's memories as nodes: ``RippleMemRetriever(memory=mem, similarity_top_k=10)``.

    Each node is a TextNode whose id is the memory id and whose metadata holds ``memory_id``,
    ``type``, ``event_time`` (when it happened; the time it was stored when no event time was
    given), ``created_at``, ``importance``, ``session_id``, ``why`` (how ripple recall reached
    it) and the memory's own metadata. The filters narrow every recall the way
    ``RippleMem.recall`` does.
    """

    def __init__(
        self,
        memory: RippleMem,
        similarity_top_k: int = 10,
        *,
        mode: str = "ripple",
        types: str | Iterable[str] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        min_importance: float | None = None,
        metadata_filter: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        record_access: bool = True,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        self.memory = check_memory(memory)
        self.similarity_top_k = check_positive_int("similarity_top_k", similarity_top_k)
        self.mode = check_mode(mode)
        self.record_access = bool(record_access)
        self._filters: dict[str, Any] = {
            "types": types, "since": since, "until": until, "min_importance": min_importance,
            "metadata": metadata_filter, "session_id": session_id,
        }
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _recall_kwargs(self) -> dict[str, Any]:
        return {"mode": self.mode, "record_access": self.record_access, **self._filters}

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        """Recall the memories that best answer the query."""
        found = self.memory.recall(query_bundle.query_str, self.similarity_top_k, **self._recall_kwargs())
        return recall_to_nodes(found)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        """Async twin of _retrieve (the recall runs in a worker thread)."""
        found = await self.memory.arecall(query_bundle.query_str, self.similarity_top_k,
                                          **self._recall_kwargs())
        return recall_to_nodes(found)


def recall_to_nodes(found: Recall) -> list[NodeWithScore]:
    """The hits of a recall as scored TextNodes, best first."""
    return [hit_to_node(hit) for hit in found.hits]


def hit_to_node(hit: Hit) -> NodeWithScore:
    """One recalled memory as a scored TextNode whose id is the memory id."""
    memory = hit.memory
    when = memory.when
    metadata: dict[str, Any] = {
        **memory.metadata,
        "memory_id": memory.id,
        "type": memory.type,
        "event_time": when.isoformat() if when else None,
        "created_at": memory.created_at.isoformat() if memory.created_at else None,
        "importance": memory.importance,
        "session_id": memory.session_id,
        "why": hit.why,
    }
    node = TextNode(
        id_=memory.id,
        text=memory.content,
        metadata=metadata,
        excluded_llm_metadata_keys=[key for key in metadata if key in _HIDDEN_FROM_LLM],
        excluded_embed_metadata_keys=list(metadata),
    )
    return NodeWithScore(node=node, score=hit.score)
