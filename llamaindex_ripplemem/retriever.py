"""RippleMemRetriever: a LlamaIndex retriever over a user's RippleMem memories (ripple recall by default)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from llama_index.core.callbacks import CallbackManager
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.vector_stores.types import MetadataFilters

from llamaindex_ripplemem._common import check_memory, check_mode, check_positive_int, filters_to_recall
from ripplemem import Hit, InvalidInputError, Recall, RippleMem, hit_metadata
from ripplemem.integration import DEFAULT_SOURCE, RIPPLEMEM_KEYS, check_score_threshold

# What an answering LLM reads besides the text: when, what kind, where from. Ids, scores, sessions
# and recall's notes stay out of its prompt (and out of embeddings: every key is excluded there).
_SHOWN_TO_LLM = ("type", "time", "source")
# Of an ingested chunk's own keys (offsets, hashes, chunker, ...), only the page is worth a prompt line.
_CHUNK_KEYS_SHOWN = ("page",)
# What consolidation writes into a memory's metadata for its own bookkeeping: not for a prompt.
_BOOKKEEPING_KEYS = ("working_id", "mention_count", "summarizes", "stored_by")


class RippleMemRetriever(BaseRetriever):
    """Retrieve a user's memories as nodes: ``RippleMemRetriever(memory=mem, similarity_top_k=10)``.

    Each node is a TextNode whose id is the memory id and whose metadata is
    ``ripplemem.hit_metadata()``'s flat dict (``memory_id, type, source, time, time_basis, score,
    relevance, why`` and more, then the memory's own metadata). The answering LLM sees only the type,
    time, a real source and the memory's own keys. ``filters=MetadataFilters(...)`` filters on those
    keys; the other filters narrow every recall the way ``RippleMem.recall`` does.
    ``score_threshold=0.4`` drops memories whose relevance (in [0, 1], comparable across queries;
    ``metadata["relevance"]``) is below it; the node's score stays recall's ranking score.
    """

    def __init__(
        self,
        memory: RippleMem,
        similarity_top_k: int = 10,
        *,
        mode: str = "ripple",
        filters: MetadataFilters | None = None,
        types: str | Iterable[str] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        min_importance: float | None = None,
        metadata_filter: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        record_access: bool = True,
        score_threshold: float | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        self.memory = check_memory(memory)
        self.similarity_top_k = check_positive_int("similarity_top_k", similarity_top_k)
        self.mode = check_mode(mode)
        self.record_access = bool(record_access)
        self.score_threshold = check_score_threshold(score_threshold)
        self._filters = _merge_filters(
            filters,
            {
                "types": types,
                "since": since,
                "until": until,
                "min_importance": min_importance,
                "metadata": metadata_filter,
                "session_id": session_id,
            },
        )
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _recall_kwargs(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "record_access": self.record_access,
            "score_threshold": self.score_threshold,
            **self._filters,
        }

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        """Recall the memories that best answer the query."""
        found = self.memory.recall(query_bundle.query_str, self.similarity_top_k, **self._recall_kwargs())
        return recall_to_nodes(found)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        """Async twin of _retrieve (the recall runs in a worker thread)."""
        found = await self.memory.arecall(
            query_bundle.query_str, self.similarity_top_k, **self._recall_kwargs()
        )
        return recall_to_nodes(found)


def _merge_filters(filters: MetadataFilters | None, given: dict[str, Any]) -> dict[str, Any]:
    """The keyword filters with MetadataFilters translated in; one option set twice is an error."""
    if filters is None:
        return given
    merged = dict(given)
    for option, value in filters_to_recall(filters).items():
        if merged.get(option) is not None:
            raise InvalidInputError(
                f"filters= and {_ARGUMENT.get(option, option)}= both set {option!r}; give it once"
            )
        merged[option] = value
    return merged


_ARGUMENT = {"metadata": "metadata_filter"}


def recall_to_nodes(found: Recall) -> list[NodeWithScore]:
    """The hits of a recall as scored TextNodes, best first."""
    return [hit_to_node(hit) for hit in found.hits]


def hit_to_node(hit: Hit) -> NodeWithScore:
    """One recalled memory as a scored TextNode whose id is the memory id."""
    metadata = hit_metadata(hit)
    shown = _shown_to_llm(metadata)
    node = TextNode(
        id_=hit.memory.id,
        text=hit.memory.content,
        metadata=metadata,
        excluded_llm_metadata_keys=[key for key in metadata if key not in shown],
        excluded_embed_metadata_keys=list(metadata),
    )
    return NodeWithScore(node=node, score=hit.score)


def _shown_to_llm(metadata: Mapping[str, Any]) -> set[str]:
    """The metadata keys an answering LLM sees: type, time, a real source, and the memory's own keys
    (not consolidation's bookkeeping; of a knowledge-base chunk only its page); never a None value."""
    own = [key for key in metadata if key not in RIPPLEMEM_KEYS and key not in _BOOKKEEPING_KEYS]
    if metadata["knowledge_base"] is not None:
        own = [key for key in own if key in _CHUNK_KEYS_SHOWN]
    shown = {*_SHOWN_TO_LLM, *own}
    if metadata["source"] == DEFAULT_SOURCE:
        shown.discard("source")
    return {key for key in shown if metadata.get(key) is not None}
