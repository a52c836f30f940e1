"""RippleMemVectorStore: a LlamaIndex vector store whose nodes are RippleMem memories, queried by
ripple recall on the query text (meaning, keywords and the memory graph)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode, MetadataMode, TextNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict

from llamaindex_ripplemem._common import check_memory, check_mode
from ripplemem import InvalidInputError, InvalidTypeError, Memory, MemoryTypeName, RecallMode, RippleMem
from ripplemem.integration import (
    MEMORY_KEYS,
    check_type,
    memories_by_caller_id,
    memories_by_metadata,
    memory_metadata,
)

#: The memory metadata key holding a node's LlamaIndex id.
NODE_KEY = "llamaindex_node_id"
#: Keys of a stored node's metadata that are LlamaIndex's bookkeeping, not the caller's.
_NODE_KEYS = (NODE_KEY, "_node_content", "_node_type", "document_id", "doc_id", "ref_doc_id")
#: RippleMem's keys an answering model sees on a memory written another way; the rest is hidden.
_SHOWN_TO_LLM = ("type", "source", "time")
_MODES: dict[VectorStoreQueryMode, RecallMode] = {
    VectorStoreQueryMode.HYBRID: "hybrid",
    VectorStoreQueryMode.TEXT_SEARCH: "keyword",
}
_PAGE = 500


class RippleMemVectorStore(BasePydanticVectorStore):
    """A LlamaIndex vector store on one RippleMem user:
    ``VectorStoreIndex.from_vector_store(RippleMemVectorStore(memory=mem))``.

    Nodes become memories of ``memory_type`` (text, metadata and relationships kept, so a query
    returns them as added). A query is ``mem.recall(query.query_str, mode=mode)``: RippleMem embeds
    the query text itself and adds keyword, entity and graph signals, so the index does not embed
    queries (``is_embedding_query=False``) and node embeddings the index computed are not used.
    The user's other memories are found too, as TextNodes with their memory id.
    """

    stores_text: bool = True
    is_embedding_query: bool = False
    mode: RecallMode = "ripple"
    memory_type: str = "semantic"
    _memory: RippleMem = PrivateAttr()

    def __init__(
        self, memory: RippleMem, *, mode: RecallMode = "ripple", memory_type: MemoryTypeName = "semantic"
    ) -> None:
        super().__init__(  # type: ignore[call-arg]  # pydantic fields; mypy runs without the plugin
            mode=check_mode(mode), memory_type=check_type(memory_type)
        )
        self._memory = check_memory(memory)

    @classmethod
    def class_name(cls) -> str:
        """LlamaIndex's name for this component."""
        return "RippleMemVectorStore"

    @property
    def client(self) -> RippleMem:
        """The RippleMem handle the nodes live in."""
        return self._memory

    # -- writes ----------------------------------------------------------------------------------
    def add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        """Store nodes as memories (a node whose id exists is replaced); returns their ids."""
        for node in nodes:
            if not isinstance(node, BaseNode):
                raise InvalidTypeError(f"nodes must be LlamaIndex nodes, got {type(node).__name__}")
        stored = self._found([node.node_id for node in nodes])
        new: list[dict[str, Any]] = []
        for node in nodes:
            text = node.get_content(metadata_mode=MetadataMode.NONE)
            if not text.strip():
                raise InvalidInputError(f"node {node.node_id!r} has no text; RippleMem stores text nodes")
            metadata = {
                **node_to_metadata_dict(node, remove_text=True, flat_metadata=False),
                NODE_KEY: node.node_id,
            }
            existing = stored.get(node.node_id)
            if existing is None:
                new.append({"content": text, "type": self.memory_type, "metadata": metadata})
            else:
                self._memory.update(
                    existing.id, content=None if text == existing.content else text, metadata=metadata
                )
        if new:
            self._memory.add_many(new)
        return [node.node_id for node in nodes]

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Delete every node of the source document ref_doc_id."""
        if not isinstance(ref_doc_id, str) or not ref_doc_id:
            raise InvalidTypeError(f"ref_doc_id must be a non-empty string, got {ref_doc_id!r}")
        for memory in memories_by_metadata(self._memory, "ref_doc_id", [ref_doc_id]).get(ref_doc_id, []):
            self._memory.delete(memory.id)

    def delete_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None, **delete_kwargs: Any
    ) -> None:
        """Delete the nodes with these ids and/or matching these filters (equality only)."""
        for memory in self._matching(node_ids, filters):
            self._memory.delete(memory.id)

    def clear(self) -> None:
        """Refused: the store is the user's whole memory."""
        raise NotImplementedError(
            "clear() would delete all of a user's memories: use "
            "mem.erase(...) on the RippleMem handle, or delete(ref_doc_id)"
        )

    # -- reads -----------------------------------------------------------------------------------
    def get_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        """The nodes with these ids (in that order) and/or matching these filters (equality only)."""
        return [to_node(memory) for memory in self._matching(node_ids, filters)]

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """Ripple recall on query.query_str: the similarity_top_k best nodes with their recall scores."""
        if not query.query_str or not query.query_str.strip():
            raise InvalidInputError(
                "RippleMemVectorStore recalls by the query text and this query has none "
                "(only an embedding); query through a retriever or query engine, or "
                "set VectorStoreQuery(query_str=...)"
            )
        options = recall_filters(query)
        recall = self._memory.recall(
            query.query_str, k=query.similarity_top_k, mode=self._mode_of(query), **options
        )
        nodes = [to_node(hit.memory) for hit in recall.hits]
        return VectorStoreQueryResult(
            nodes=nodes,
            similarities=[float(hit.score) for hit in recall.hits],
            ids=[node.node_id for node in nodes],
        )

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """query in a worker thread, so the event loop never waits on the store."""
        return await asyncio.to_thread(self.query, query, **kwargs)

    async def async_add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        """add in a worker thread."""
        return await asyncio.to_thread(self.add, nodes, **kwargs)

    async def adelete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """delete in a worker thread."""
        await asyncio.to_thread(self.delete, ref_doc_id, **delete_kwargs)

    # -- helpers ---------------------------------------------------------------------------------
    def _mode_of(self, query: VectorStoreQuery) -> RecallMode:
        if query.mode == VectorStoreQueryMode.DEFAULT:
            return self.mode
        if query.mode in _MODES:
            return _MODES[query.mode]
        raise InvalidInputError(
            f"query mode {query.mode.value!r} is not supported; RippleMemVectorStore "
            "takes default (the store's mode), hybrid and text_search"
        )

    def _found(self, node_ids: Sequence[str]) -> dict[str, Memory]:
        """The memory of each of these node ids that has one (the newest, if several)."""
        return memories_by_caller_id(self._memory, NODE_KEY, node_ids)

    def _listed(self, equal: dict[str, Any]) -> list[Memory]:
        found: list[Memory] = []
        while page := self._memory.list(metadata=equal, limit=_PAGE, offset=len(found)):
            found += page
        return found

    def _matching(self, node_ids: list[str] | None, filters: MetadataFilters | None) -> list[Memory]:
        equal = {} if filters is None else filter_values(filters)
        if node_ids is None:
            if not equal:
                raise InvalidInputError("pass node_ids or filters")
            return self._listed(equal)
        if isinstance(node_ids, (str, bytes)) or not isinstance(node_ids, Sequence):
            raise InvalidTypeError(
                f"node_ids must be a list of node ids, got {type(node_ids).__name__}: {node_ids!r:.80} "
                "(wrap a single one in a list)"
            )
        found = self._found(node_ids)
        chosen = [found[node_id] for node_id in node_ids if node_id in found]
        return [m for m in chosen if all(m.metadata.get(k) == v for k, v in equal.items())]


def to_node(memory: Memory) -> BaseNode:
    """A memory as a node: the node as it was added, or, for a memory written another way, a
    TextNode with its memory id and RippleMem's public metadata (mostly hidden from the LLM)."""
    meta = dict(memory.metadata)
    if "_node_content" in meta:
        meta.pop(NODE_KEY, None)
        return metadata_dict_to_node(meta, text=memory.content)
    public = memory_metadata(memory)
    hidden = [key for key in public if key in MEMORY_KEYS and key not in _SHOWN_TO_LLM]
    return TextNode(
        id_=memory.id,
        text=memory.content,
        metadata=public,
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=list(public),
    )


def recall_filters(query: VectorStoreQuery) -> dict[str, Any]:
    """The recall options for a query's filters, doc_ids and node_ids (one id each at most)."""
    equal = {} if query.filters is None else filter_values(query.filters)
    for name, key, ids in (("doc_ids", "ref_doc_id", query.doc_ids), ("node_ids", NODE_KEY, query.node_ids)):
        if ids:
            if len(ids) > 1:
                raise InvalidInputError(f"{name} with more than one id is not supported; query one at a time")
            equal[key] = ids[0]
    return {"metadata": equal} if equal else {}


def filter_values(filters: MetadataFilters) -> dict[str, Any]:
    """MetadataFilters as metadata equality (EQ filters joined by AND); other operators are refused."""
    if not isinstance(filters, MetadataFilters):
        raise InvalidTypeError(f"filters must be MetadataFilters, got {type(filters).__name__}")
    if len(filters.filters) > 1 and filters.condition not in (None, FilterCondition.AND):
        raise InvalidInputError(
            f"filter condition {filters.condition!r} is not supported: "
            "RippleMemVectorStore keeps nodes matching every filter (AND)"
        )
    equal: dict[str, Any] = {}
    for item in filters.filters:
        if isinstance(item, MetadataFilters):
            equal.update(filter_values(item))
        elif isinstance(item, MetadataFilter) and item.operator == FilterOperator.EQ:  # ExactMatchFilter too
            equal[item.key] = item.value
        else:
            raise InvalidInputError(
                f"filter operator {getattr(item, 'operator', item)!r} on "
                f"{getattr(item, 'key', '?')!r} is not supported; use EQ"
            )
    return equal
