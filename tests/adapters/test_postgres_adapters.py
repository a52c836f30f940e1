"""Every adapter on a PostgreSQL store (a throwaway server, tests/pg_server.py): LangGraph's
RippleMemStore, LangChain's vector store and retriever, LlamaIndex's retriever, memory and vector
store each write and read the store a second handle on the same schema then sees."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from langchain_ripplemem import RippleMemRetriever, RippleMemStore, RippleMemVectorStore
from llamaindex_ripplemem import RippleMemMemory
from llamaindex_ripplemem import RippleMemRetriever as LlamaRetriever
from llamaindex_ripplemem import RippleMemVectorStore as LlamaVectorStore
from ripplemem import FrameworkEmbedder, RippleMem, StoreOptions
from ripplemem.embedding.embedders import Embedder

FAKE_ID = "deterministic-fake-6"


@pytest.fixture
def pg_store(pg_uri: str, pg_schema: str) -> StoreOptions:
    """The options of a fresh PostgreSQL store of its own schema."""
    return StoreOptions(backend="postgres", uri=pg_uri, schema=pg_schema)


@pytest.fixture
def alice(pg_store: StoreOptions, embedder: Embedder) -> Iterator[RippleMem]:
    """Alice's handle on the PostgreSQL store, with the session's MiniLM."""
    with RippleMem(user_id="alice", embedder=embedder, store=pg_store) as handle:
        yield handle


def reopened(pg_store: StoreOptions, embedder: Embedder, user: str = "alice") -> RippleMem:
    """Another handle on the same schema, as another process would open it."""
    return RippleMem(user_id=user, embedder=embedder, store=pg_store)


def test_langgraph_store_puts_searches_and_gets(
    alice: RippleMem, pg_store: StoreOptions, embedder: Embedder
) -> None:
    store = RippleMemStore(memory=alice)
    store.put(("alice", "memories"), "drink", {"content": "Alice drinks green tea every morning"})
    store.put(("bob", "memories"), "pet", {"content": "Bob has a parrot named Kiwi"})
    assert [item.key for item in store.search(("alice",), query="what does she drink")] == ["drink"]
    assert store.get(("bob", "memories"), "pet").value["content"] == "Bob has a parrot named Kiwi"
    with reopened(pg_store, embedder, "bob") as bob:
        assert [m.content for m in bob.list()] == ["Bob has a parrot named Kiwi"]


def test_langchain_vector_store_from_texts_on_a_postgres_store(pg_store: StoreOptions) -> None:
    embedding = DeterministicFakeEmbedding(size=6)
    vectors = RippleMemVectorStore.from_texts(
        ["Green tea is brewed at 80 degrees", "The car needs new engine oil"],
        embedding,
        ids=["tea", "car"],
        store=pg_store,
        user_id="alice",
        model_id=FAKE_ID,
    )
    vectors.add_texts(["Invoice 4411 is overdue"], ids=["invoice"])
    assert [doc.id for doc in vectors.similarity_search("invoice overdue", k=1)] == ["invoice"]
    vectors.memory.close()
    embedder = FrameworkEmbedder(embedding, model_id=FAKE_ID)
    with RippleMem(user_id="alice", embedder=embedder, store=pg_store) as again:
        found = RippleMemVectorStore(memory=again).similarity_search("green tea temperature", k=1)
        assert [(doc.id, doc.page_content) for doc in found] == [("tea", "Green tea is brewed at 80 degrees")]


def test_langchain_retriever_invokes_recall(alice: RippleMem) -> None:
    alice.add("Alice's cat is called Miso", "semantic")
    alice.add("Alice flew to Lyon in March")
    docs = RippleMemRetriever(memory=alice, k=1).invoke("What is Alice's cat called?")
    assert [doc.page_content for doc in docs] == ["Alice's cat is called Miso"]
    assert docs[0].metadata["memory_id"] == alice.list("semantic")[0].id


def test_llamaindex_retriever_retrieves_nodes(alice: RippleMem) -> None:
    cat = alice.add("Bob's cat is called Pixel", "semantic")
    alice.add("The office moved to Kreuzberg in March")
    nodes = LlamaRetriever(memory=alice, similarity_top_k=1).retrieve("What is Bob's cat called?")
    assert [(n.node.get_content(), n.node.node_id) for n in nodes] == [("Bob's cat is called Pixel", cat.id)]


def test_llamaindex_memory_puts_and_gets(
    alice: RippleMem, pg_store: StoreOptions, embedder: Embedder
) -> None:
    memory = RippleMemMemory(memory=alice, session_id="s1")
    memory.put(ChatMessage(role="user", content="Please remember that my passport expires in June 2027."))
    with reopened(pg_store, embedder) as again:
        assert [m.content for m in again.list()] == ["Please remember that my passport expires in June 2027."]
    memory.put(ChatMessage(role="user", content="When does my passport expire?"))
    text = memory.get()[-1].content or ""
    assert "passport expires in June 2027" in text and text.endswith("When does my passport expire?")


def test_llamaindex_vector_store_adds_and_queries(
    alice: RippleMem, pg_store: StoreOptions, embedder: Embedder
) -> None:
    store = LlamaVectorStore(memory=alice)
    store.add(
        [
            TextNode(id_="tea", text="Green tea is brewed at 80 degrees for two minutes."),
            TextNode(id_="books", text="The Three-Body Problem is a novel by Liu Cixin."),
        ]
    )
    with reopened(pg_store, embedder) as again:
        result = LlamaVectorStore(memory=again).query(
            VectorStoreQuery(query_str="brewing tea", similarity_top_k=1)
        )
    assert result.ids == ["tea"]
    assert result.nodes is not None and result.nodes[0].get_content().startswith("Green tea is brewed")
