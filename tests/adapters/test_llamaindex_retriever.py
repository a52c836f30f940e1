"""RippleMemRetriever: memories as LlamaIndex nodes, in a query engine and as a retriever tool."""

from __future__ import annotations

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, QueryBundle
from llama_index.core.tools import RetrieverTool

from llamaindex_ripplemem import RippleMemRetriever
from ripplemem import InvalidInputError, InvalidTypeError, RippleMem


@pytest.fixture
def alice(memory_only: RippleMem) -> RippleMem:
    memory_only.add("Bob owns a cat called Tom", event_time="2024-03-01T09:30:00+00:00", session_id="s1",
                    metadata={"source": "chat with Bob"})
    memory_only.add("Tom the cat only eats tuna", type="semantic", importance=0.8)
    memory_only.add("The quarterly report is due on Friday", session_id="s2")
    return memory_only


def test_nodes_carry_the_memory_id_text_and_provenance(alice: RippleMem) -> None:
    nodes = RippleMemRetriever(memory=alice, similarity_top_k=2).retrieve("What is Bob's cat called?")
    assert len(nodes) == 2
    top = nodes[0]
    stored = alice.list(session_id="s1")[0]
    assert top.node.node_id == stored.id and top.node.get_content() == "Bob owns a cat called Tom"
    meta = top.node.metadata
    assert meta["memory_id"] == stored.id and meta["type"] == "episodic" and meta["session_id"] == "s1"
    assert meta["event_time"] == "2024-03-01T09:30:00+00:00"
    assert "matched by" in meta["why"]
    assert top.score is not None and nodes[1].score is not None and top.score >= nodes[1].score
    # What an answering LLM reads: the text with its type and date, not ids or scoring notes.
    llm_view = top.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "type: episodic" in llm_view and "2024-03-01" in llm_view
    assert "source: chat with Bob" in llm_view  # the memory's own metadata
    assert stored.id not in llm_view and "matched by" not in llm_view and "importance" not in llm_view


async def test_async_retrieve_matches_sync(alice: RippleMem) -> None:
    retriever = RippleMemRetriever(memory=alice, similarity_top_k=3, record_access=False)
    sync_ids = [n.node.node_id for n in retriever.retrieve("What does the cat eat?")]
    async_ids = [n.node.node_id for n in await retriever.aretrieve(QueryBundle("What does the cat eat?"))]
    assert async_ids == sync_ids and len(sync_ids) == 3


def test_filters_narrow_what_is_retrieved(alice: RippleMem) -> None:
    semantic = RippleMemRetriever(memory=alice, types="semantic").retrieve("cat")
    assert [n.node.get_content() for n in semantic] == ["Tom the cat only eats tuna"]
    session = RippleMemRetriever(memory=alice, session_id="s2").retrieve("cat")
    assert [n.node.get_content() for n in session] == ["The quarterly report is due on Friday"]
    important = RippleMemRetriever(memory=alice, min_importance=0.7, mode="hybrid").retrieve("cat")
    assert [n.node.metadata["importance"] for n in important] == [0.8]


def test_query_engine_answers_from_memories(alice: RippleMem) -> None:
    retriever = RippleMemRetriever(memory=alice, similarity_top_k=2)
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = engine.query("What is Bob's cat called?")
    # MockLLM answers with the prompt it was given: the memories must be in it, dated.
    assert "Bob owns a cat called Tom" in str(response) and "2024-03-01" in str(response)
    assert response.source_nodes[0].node.get_content() == "Bob owns a cat called Tom"


async def test_query_engine_async(alice: RippleMem) -> None:
    retriever = RippleMemRetriever(memory=alice, similarity_top_k=1)
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = await engine.aquery("Which food does Tom eat?")
    assert [n.node.get_content() for n in response.source_nodes] == ["Tom the cat only eats tuna"]


def test_retriever_tool_returns_memory_text(alice: RippleMem) -> None:
    tool = RetrieverTool.from_defaults(RippleMemRetriever(memory=alice, similarity_top_k=1),
                                       name="user_memories", description="What the user told us.")
    output = tool.call("When is the report due?")
    assert "The quarterly report is due on Friday" in output.content
    assert tool.metadata.name == "user_memories"


def test_another_user_retrieves_nothing_of_alices(alice: RippleMem) -> None:
    bob = alice.scope(user_id="bob")
    assert RippleMemRetriever(memory=bob).retrieve("Bob's cat Tom") == []
    bob.add("Bob plays the trumpet")
    assert [n.node.get_content() for n in RippleMemRetriever(memory=bob).retrieve("Bob's cat Tom")] == [
        "Bob plays the trumpet"]


def test_bad_arguments_are_named(alice: RippleMem) -> None:
    with pytest.raises(InvalidTypeError, match="memory must be a ripplemem.RippleMem"):
        RippleMemRetriever(memory="alice")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="similarity_top_k"):
        RippleMemRetriever(memory=alice, similarity_top_k=0)
    with pytest.raises(InvalidInputError, match="mode must be one of"):
        RippleMemRetriever(memory=alice, mode="fuzzy")
    with pytest.raises(InvalidInputError, match="type must be one of"):
        RippleMemRetriever(memory=alice, types="dream").retrieve("cat")
