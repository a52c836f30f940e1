"""RippleMemRetriever: memories as LlamaIndex nodes, in a query engine and as a retriever tool."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, QueryBundle
from llama_index.core.tools import RetrieverTool
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from llamaindex_ripplemem import RippleMemRetriever
from ripplemem import InvalidInputError, InvalidTypeError, RippleMem


@pytest.fixture
def alice(memory_only: RippleMem) -> RippleMem:
    memory_only.add(
        "Bob owns a cat called Tom",
        event_time="2024-03-01T09:30:00+00:00",
        session_id="s1",
        metadata={"source": "chat with Bob"},
    )
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
    assert meta["event_time"] == meta["time"] == "2024-03-01T09:30:00+00:00"
    assert meta["time_basis"] == "event_time" and meta["source"] == "chat with Bob"
    assert "matched by" in meta["why"]
    assert top.score is not None and nodes[1].score is not None and top.score >= nodes[1].score
    # What an answering LLM reads: the text with its type and date, not ids or scoring notes.
    llm_view = top.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "type: episodic" in llm_view and "2024-03-01" in llm_view
    assert "source: chat with Bob" in llm_view  # where it came from
    assert stored.id not in llm_view and "matched by" not in llm_view and "importance" not in llm_view
    assert top.node.get_content(metadata_mode=MetadataMode.EMBED) == "Bob owns a cat called Tom"


def test_the_answering_llm_reads_a_chunk_with_its_file_and_page_not_internal_fields(
    alice: RippleMem, tmp_path: Path
) -> None:
    handbook = tmp_path / "handbook"
    handbook.mkdir()
    (handbook / "leave.md").write_text("# Leave\n\nEveryone gets 25 days of paid leave a year.\n")
    alice.ingest(handbook, knowledge_base="team")
    alice.add("Alice asked for leave in August", metadata={"turn": "D4:2"})
    nodes = RippleMemRetriever(memory=alice, similarity_top_k=2).retrieve("How many days of paid leave?")
    chunk = next(n.node for n in nodes if n.node.metadata["type"] == "document")
    llm_view = chunk.get_content(metadata_mode=MetadataMode.LLM)
    header = llm_view[: -len(chunk.get_content())]
    # Was 13 internal fields (500+ characters) for this chunk; now: kind, time, file.
    assert header.splitlines() == [
        "type: document",
        f"source: {(handbook / 'leave.md').resolve()}",
        f"time: {chunk.metadata['time']}",
        "",
    ]
    assert len(header) < 120 + len(str(tmp_path))
    for internal in ("content_hash", "chunker", "chunk_index", "memory_id", "why", "kb:team", "session_id"):
        assert internal not in llm_view
    own = next(n.node for n in nodes if n.node.metadata["type"] == "episodic")
    assert "turn: D4:2" in own.get_content(metadata_mode=MetadataMode.LLM)  # the caller's own keys


def test_metadata_filters_narrow_recall_by_the_keys_nodes_show(alice: RippleMem) -> None:
    def texts(*filters: MetadataFilter, condition: str = "and") -> list[str]:
        given = MetadataFilters(filters=list(filters), condition=condition)
        nodes = RippleMemRetriever(memory=alice, filters=given, record_access=False).retrieve("cat")
        return sorted(n.node.get_content() for n in nodes)

    assert texts(MetadataFilter(key="type", value="semantic")) == ["Tom the cat only eats tuna"]
    assert texts(
        MetadataFilter(key="type", value=["semantic"], operator=FilterOperator.IN),
        MetadataFilter(key="importance", value=0.7, operator=FilterOperator.GTE),
    ) == ["Tom the cat only eats tuna"]
    assert texts(MetadataFilter(key="time", value="2024-06-01", operator=FilterOperator.LT)) == [
        "Bob owns a cat called Tom"
    ]
    assert texts(MetadataFilter(key="session_id", value="s2")) == ["The quarterly report is due on Friday"]
    assert texts(MetadataFilter(key="session_id", value="s1"), condition="or") == [
        "Bob owns a cat called Tom"
    ]


@pytest.mark.parametrize(
    ("filters", "named"),
    [
        (
            MetadataFilters(
                filters=[MetadataFilter(key="type", value="semantic", operator=FilterOperator.NE)]
            ),
            r"FilterOperator.NE \('!='\) on 'type' is not supported",
        ),
        (
            MetadataFilters(
                filters=[MetadataFilter(key="importance", value=0.5, operator=FilterOperator.GT)]
            ),
            r"FilterOperator.GT \('>'\) on 'importance' is not supported",
        ),
        (
            MetadataFilters(
                filters=[MetadataFilter(key="importance", value=0.5, operator=FilterOperator.LT)]
            ),
            r"operator '<' is not supported on 'importance' \(supported there: >=\)",
        ),
        (
            MetadataFilters(
                filters=[
                    MetadataFilter(key="type", value="semantic"),
                    MetadataFilter(key="session_id", value="s1"),
                ],
                condition=FilterCondition.OR,
            ),
            r"FilterCondition.OR is not supported",
        ),
        (MetadataFilters(filters=[MetadataFilter(key="why", value="x")]), r"cannot filter on 'why'"),
    ],
)
def test_metadata_filters_recall_cannot_honour_are_refused_by_name(
    alice: RippleMem, filters: MetadataFilters, named: str
) -> None:
    with pytest.raises(InvalidInputError, match=named):
        RippleMemRetriever(memory=alice, filters=filters)


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
    tool = RetrieverTool.from_defaults(
        RippleMemRetriever(memory=alice, similarity_top_k=1),
        name="user_memories",
        description="What the user told us.",
    )
    output = tool.call("When is the report due?")
    assert "The quarterly report is due on Friday" in output.content
    assert tool.metadata.name == "user_memories"


def test_another_user_retrieves_nothing_of_alices(alice: RippleMem) -> None:
    bob = alice.scope(user_id="bob")
    assert RippleMemRetriever(memory=bob).retrieve("Bob's cat Tom") == []
    bob.add("Bob plays the trumpet")
    assert [n.node.get_content() for n in RippleMemRetriever(memory=bob).retrieve("Bob's cat Tom")] == [
        "Bob plays the trumpet"
    ]


def test_bad_arguments_are_named(alice: RippleMem) -> None:
    with pytest.raises(InvalidTypeError, match="memory must be a ripplemem.RippleMem"):
        RippleMemRetriever(memory="alice")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="similarity_top_k"):
        RippleMemRetriever(memory=alice, similarity_top_k=0)
    with pytest.raises(InvalidInputError, match="mode must be one of"):
        RippleMemRetriever(memory=alice, mode="fuzzy")
    with pytest.raises(InvalidInputError, match="type must be one of"):
        RippleMemRetriever(memory=alice, types="dream").retrieve("cat")
    with pytest.raises(InvalidTypeError, match="filters must be a llama_index.*MetadataFilters"):
        RippleMemRetriever(memory=alice, filters={"type": "semantic"})  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="filters= and session_id= both set"):
        RippleMemRetriever(
            memory=alice,
            session_id="s1",
            filters=MetadataFilters(filters=[MetadataFilter(key="session_id", value="s2")]),
        )


def test_score_threshold_keeps_relevant_memories_and_relevance_stays_out_of_the_prompt(
    alice: RippleMem,
) -> None:
    everything = RippleMemRetriever(memory=alice, similarity_top_k=3).retrieve("what does Tom eat?")
    assert len(everything) == 3 and all(0.0 <= n.node.metadata["relevance"] <= 1.0 for n in everything)
    strict = RippleMemRetriever(memory=alice, similarity_top_k=3, score_threshold=0.5)
    kept = strict.retrieve("quarterly report")
    assert [n.node.get_content() for n in kept] == ["The quarterly report is due on Friday"]
    assert kept[0].node.metadata["relevance"] == 1.0 and kept[0].score is not None  # the ranking score
    assert "relevance" not in kept[0].node.get_content(metadata_mode=MetadataMode.LLM)
    with pytest.raises(InvalidInputError, match=r"score_threshold must be in \[0, 1\]"):
        RippleMemRetriever(memory=alice, score_threshold=1.2)
