"""RippleMemVectorStore for LlamaIndex: VectorStoreIndex over it (new and from_vector_store), ripple
recall on the query text, nodes round-trip, upsert, delete by document, filters, precise errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import VectorMemoryBlock
from llama_index.core.schema import Document, MetadataMode, TextNode
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

from llamaindex_ripplemem import RippleMemVectorStore
from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError, InvalidTypeError

DOCS = [
    Document(
        id_="books",
        text="The Three-Body Problem is a science fiction novel by Liu Cixin.",
        metadata={"shelf": "fiction"},
    ),
    Document(
        id_="tea", text="Green tea is brewed at 80 degrees for two minutes.", metadata={"shelf": "kitchen"}
    ),
    Document(id_="news", text="Our office moved to Kreuzberg, Berlin, in March.", metadata={"shelf": "work"}),
]


class NoQueryEmbedding(MockEmbedding):
    """The index's embed model: embeds nodes (constant vectors), fails if asked to embed a query."""

    def _get_query_embedding(self, query: str) -> list[float]:
        raise AssertionError(f"the index embedded the query {query!r}; the store recalls by its text")


@pytest.fixture
def mem(embedder: Embedder, tmp_path: Path) -> Iterator[RippleMem]:
    """Alice's on-disk store on the real MiniLM."""
    with RippleMem(path=tmp_path / "db", user_id="alice", embedder=embedder) as handle:
        yield handle


@pytest.fixture
def index(mem: RippleMem) -> VectorStoreIndex:
    """A VectorStoreIndex whose nodes live in alice's memory."""
    context = StorageContext.from_defaults(vector_store=RippleMemVectorStore(memory=mem))
    return VectorStoreIndex.from_documents(
        DOCS, storage_context=context, embed_model=NoQueryEmbedding(embed_dim=8)
    )


def _texts(found: list[Any]) -> list[str]:
    return [item.node.get_content() for item in found]


def test_index_retrieves_by_meaning_of_the_query_text(index: VectorStoreIndex) -> None:
    found = index.as_retriever(similarity_top_k=1).retrieve("which sci-fi book should I read?")
    assert _texts(found) == [DOCS[0].text]  # the index's embeddings are constant: RippleMem found it
    node = found[0].node
    assert node.ref_doc_id == "books" and node.metadata == {"shelf": "fiction"}
    assert isinstance(found[0].score, float)


async def test_async_retrieval(index: VectorStoreIndex) -> None:
    found = await index.as_retriever(similarity_top_k=1).aretrieve("how hot should tea water be?")
    assert _texts(found) == [DOCS[1].text]


def test_from_vector_store_on_a_reopened_store(
    index: VectorStoreIndex, embedder: Embedder, tmp_path: Path
) -> None:
    index.vector_store.client.close()
    with RippleMem(path=tmp_path / "db", user_id="alice", embedder=embedder) as reopened:
        again = VectorStoreIndex.from_vector_store(
            RippleMemVectorStore(memory=reopened), embed_model=NoQueryEmbedding(embed_dim=8)
        )
        found = again.as_retriever(similarity_top_k=1).retrieve("where is the office now?")
        assert _texts(found) == [DOCS[2].text]
        assert found[0].node.ref_doc_id == "news"


def test_delete_ref_doc_removes_its_nodes(index: VectorStoreIndex, mem: RippleMem) -> None:
    index.delete_ref_doc("tea")
    found = index.as_retriever(similarity_top_k=3).retrieve("green tea")
    assert DOCS[1].text not in _texts(found) and len(found) == 2
    assert mem.stats()["total"] == 2


def test_a_node_added_again_is_replaced(mem: RippleMem) -> None:
    store = RippleMemVectorStore(memory=mem)
    store.add([TextNode(id_="n1", text="The meeting is on Monday", metadata={"room": "A"})])
    store.add([TextNode(id_="n1", text="The meeting moved to Friday", metadata={"room": "B"})])
    assert mem.stats()["total"] == 1
    [node] = store.get_nodes(node_ids=["n1"])
    assert (node.get_content(), node.metadata) == ("The meeting moved to Friday", {"room": "B"})
    store.delete_nodes(node_ids=["n1"])
    assert store.get_nodes(node_ids=["n1"]) == []


def test_filters_narrow_the_query(index: VectorStoreIndex) -> None:
    kitchen = MetadataFilters(filters=[MetadataFilter(key="shelf", value="kitchen")])
    found = index.as_retriever(similarity_top_k=3, filters=kitchen).retrieve("science fiction")
    assert _texts(found) == [DOCS[1].text]
    newer = MetadataFilters(filters=[MetadataFilter(key="year", value=2020, operator=FilterOperator.GT)])
    with pytest.raises(InvalidInputError, match="operator .* on 'year' is not supported; use EQ"):
        index.as_retriever(filters=newer).retrieve("tea")


def test_the_users_other_memories_are_nodes_with_internals_hidden_from_the_llm(
    index: VectorStoreIndex, mem: RippleMem
) -> None:
    native = mem.add(
        "I finished The Three-Body Problem last night", source="diary", metadata={"mood": "happy"}
    )
    found = index.as_retriever(similarity_top_k=3).retrieve("Three-Body Problem finished")
    node = next(item.node for item in found if item.node.node_id == native.id)
    assert node.metadata["memory_id"] == native.id
    shown = node.get_content(metadata_mode=MetadataMode.LLM)
    assert "source: diary" in shown and "mood: happy" in shown and native.id not in shown


async def test_llamaindex_vector_memory_block_on_it(mem: RippleMem) -> None:
    """LlamaIndex's own VectorMemoryBlock (it needs a store that keeps text) stores chat turns in
    RippleMem and recalls them, kept apart by session."""

    def block() -> VectorMemoryBlock:  # a fresh block per read: the block keeps its last session filter
        return VectorMemoryBlock(
            vector_store=RippleMemVectorStore(memory=mem),
            embed_model=MockEmbedding(embed_dim=8),
            similarity_top_k=1,
        )

    writer = block()
    for text in ("I love jasmine green tea", "My car is a red Volvo"):
        await writer.aput([ChatMessage(role="user", content=text, additional_kwargs={"session_id": "s1"})])
    question = [ChatMessage(role="user", content="what drink do I like?")]
    assert "jasmine green tea" in await block().aget(question, session_id="s1")
    assert await block().aget(question, session_id="s2") == ""


def test_one_node_id_where_a_list_is_expected_is_refused(mem: RippleMem) -> None:
    store = RippleMemVectorStore(memory=mem)
    store.add([TextNode(id_=letter, text=f"memory {letter}") for letter in "abc"])
    # delete_nodes("abc") once deleted the nodes "a", "b" and "c".
    with pytest.raises(InvalidTypeError, match="node_ids must be a list of node ids, got str: 'abc'"):
        store.delete_nodes("abc")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="node_ids must be a list"):
        store.get_nodes("abc")  # type: ignore[arg-type]
    assert [node.node_id for node in store.get_nodes(["a", "b", "c"])] == ["a", "b", "c"]


def test_bad_queries_are_named(mem: RippleMem) -> None:
    store = RippleMemVectorStore(memory=mem)
    with pytest.raises(InvalidInputError, match="recalls by the query text"):
        store.query(VectorStoreQuery(query_embedding=[0.1] * 384, similarity_top_k=2))
    with pytest.raises(InvalidInputError, match="query mode 'mmr' is not supported"):
        store.query(VectorStoreQuery(query_str="tea", mode=VectorStoreQueryMode.MMR))
    with pytest.raises(InvalidInputError, match="doc_ids with more than one id"):
        store.query(VectorStoreQuery(query_str="tea", doc_ids=["a", "b"]))
    with pytest.raises(InvalidInputError, match="mode must be one of"):
        RippleMemVectorStore(memory=mem, mode="vector")
    with pytest.raises(InvalidTypeError, match="memory must be a ripplemem.RippleMem"):
        RippleMemVectorStore(memory="./memdb")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="has no text"):
        store.add([TextNode(id_="empty", text=" ")])
    with pytest.raises(NotImplementedError, match="mem.erase"):
        store.clear()
