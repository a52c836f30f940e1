"""RippleMemRetriever: the LangChain standard suite, what the Documents carry, filters, LCEL chains."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_ripplemem import RippleMemRetriever, format_docs
from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError, InvalidTypeError

FACTS = [
    {"content": "Alice owns a cat called Tom.", "type": "semantic", "importance": 0.8},
    {"content": "Alice adopted Tom from a shelter in Lyon.", "event_time": "2023-04-02T10:00:00+00:00"},
    {"content": "Tom the cat sleeps on the piano every afternoon.", "session_id": "s2"},
    {"content": "Alice drinks green tea every morning.", "type": "semantic", "metadata": {"topic": "food"}},
    {"content": "Bob, Alice's brother, lives in Paris.", "event_time": "2024-06-01T09:00:00+00:00"},
]


@pytest.fixture(scope="module")
def seeded(embedder: Embedder) -> Iterator[RippleMem]:
    """Alice's memories about her cat, her tea and her brother."""
    handle = RippleMem(path=None, user_id="alice", embedder=embedder)
    handle.add_many(FACTS)
    yield handle
    handle.close()


class TestStandardSuite(RetrieversIntegrationTests):
    """LangChain's own retriever checks, run against a real store."""

    @pytest.fixture(autouse=True)
    def _memory(self, seeded: RippleMem) -> None:
        self.memory = seeded

    @property
    def retriever_constructor(self) -> type[RippleMemRetriever]:
        return RippleMemRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"memory": self.memory, "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return "What is the name of Alice's cat?"


def test_documents_carry_the_memory_and_why_it_was_recalled(seeded: RippleMem) -> None:
    docs = RippleMemRetriever(memory=seeded, k=3, record_access=False).invoke("What is Alice's cat called?")
    assert docs[0].page_content == "Alice owns a cat called Tom."
    stored = {m.content: m for m in seeded.list()}
    for doc in docs:
        memory = stored[doc.page_content]
        assert doc.id == doc.metadata["memory_id"] == memory.id
        assert doc.metadata["type"] == memory.type
        assert isinstance(doc.metadata["why"], str) and doc.metadata["why"]
    scores = [doc.metadata["score"] for doc in docs]
    assert scores == sorted(scores, reverse=True)
    by_text = {d.page_content: d for d in RippleMemRetriever(memory=seeded, k=5).invoke("adopted in Lyon")}
    adopted = by_text["Alice adopted Tom from a shelter in Lyon."]
    assert adopted.metadata["event_time"] == adopted.metadata["time"] == "2023-04-02T10:00:00+00:00"
    assert adopted.metadata["time_basis"] == "event_time"
    owns = by_text["Alice owns a cat called Tom."].metadata
    assert owns["event_time"] is None and owns["time_basis"] == "created_at"
    assert owns["time"] == owns["created_at"] and owns["time"].endswith("+00:00")


def test_source_is_the_file_and_caller_metadata_is_flat(embedder: Embedder, tmp_path: Path) -> None:
    handbook = tmp_path / "handbook"
    handbook.mkdir()
    (handbook / "leave.md").write_text("# Leave\n\nEveryone gets 25 days of paid leave a year.\n")
    with RippleMem(path=None, user_id="alice", embedder=embedder) as mem:
        mem.ingest(handbook, knowledge_base="team")
        mem.add("Alice booked leave for the first week of August", metadata={"topic": "holiday"})
        docs = {d.metadata["type"]: d for d in RippleMemRetriever(memory=mem, k=2).invoke("paid leave")}
    chunk, own = docs["document"].metadata, docs["episodic"].metadata
    # Like a LangChain loader's Document: source is the file, its page and name sit at the top level.
    assert chunk["source"] == str((handbook / "leave.md").resolve())
    assert chunk["file_name"] == "leave.md" and "page" in chunk
    assert chunk["knowledge_base"] == "team" and "kb:team" not in map(str, chunk.values())
    assert own["topic"] == "holiday" and own["source"] == "ripplemem"
    assert "memory_metadata" not in chunk and "memory_metadata" not in own and "user_id" not in own


def test_types_filters_and_per_call_overrides(seeded: RippleMem) -> None:
    semantic = RippleMemRetriever(memory=seeded, types=["semantic"], record_access=False)
    assert {d.page_content for d in semantic.invoke("Alice")} == {
        "Alice owns a cat called Tom.",
        "Alice drinks green tea every morning.",
    }
    recent = RippleMemRetriever(
        memory=seeded, filters={"since": "2024-01-01T00:00:00+00:00"}, record_access=False
    )
    assert "Alice adopted Tom from a shelter in Lyon." not in [d.page_content for d in recent.invoke("Tom")]
    retriever = RippleMemRetriever(memory=seeded, k=5, record_access=False)
    food = retriever.invoke("what does Alice like", metadata={"topic": "food"})
    assert [d.page_content for d in food] == ["Alice drinks green tea every morning."]
    in_session = retriever.invoke("Tom", session_id="s2", k=2)
    assert [d.page_content for d in in_session] == ["Tom the cat sleeps on the piano every afternoon."]


def test_mode_is_passed_to_recall(seeded: RippleMem) -> None:
    # No stored word is in the query: keyword recall finds nothing, ripple still ranks by meaning.
    assert RippleMemRetriever(memory=seeded, mode="keyword").invoke("kitten") == []
    best = RippleMemRetriever(memory=seeded, k=1).invoke("kitten")[0]
    # Two memories are about the cat (cosines 0.35 and 0.34): either is the right answer.
    assert best.page_content in (
        "Alice owns a cat called Tom.",
        "Tom the cat sleeps on the piano every afternoon.",
    )


async def test_async_matches_sync(seeded: RippleMem) -> None:
    retriever = RippleMemRetriever(memory=seeded, k=3, record_access=False)
    sync_ids = [d.id for d in retriever.invoke("Alice's brother")]
    async_ids = [d.id for d in await retriever.ainvoke("Alice's brother")]
    assert async_ids == sync_ids
    assert len(await retriever.ainvoke("Alice's brother", k=1)) == 1


def test_lcel_chain_shows_the_model_the_recalled_memories(seeded: RippleMem, script: object) -> None:
    model = script(AIMessage("Your cat is called Tom."))
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from these memories:\n{context}"), ("human", "{question}")]
    )
    retriever = RippleMemRetriever(memory=seeded, k=2)
    chain = (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | prompt
        | model
        | StrOutputParser()
    )
    assert chain.invoke("What is my cat called?") == "Your cat is called Tom."
    shown = model.seen[0][0].text
    assert "] Alice owns a cat called Tom." in shown
    assert "green tea" not in shown  # k=2: only the two best memories reach the prompt


def test_format_docs_dates_each_line() -> None:
    meta = {"type": "episodic", "event_time": "2024-03-15T10:00"}
    dated = Document(page_content="Met Carol.", metadata=meta)
    docs = [dated, Document(page_content="Untyped note.")]
    assert format_docs(docs) == "- [2024-03-15, episodic] Met Carol.\n- [undated] Untyped note."


def test_bad_arguments_are_named(seeded: RippleMem) -> None:
    with pytest.raises(InvalidTypeError, match="memory must be a RippleMem"):
        RippleMemRetriever(memory="alice")
    with pytest.raises(InvalidInputError, match="k must be positive"):
        RippleMemRetriever(memory=seeded, k=0)
    with pytest.raises(InvalidInputError, match="mode must be one of"):
        RippleMemRetriever(memory=seeded, mode="semantic")
    with pytest.raises(InvalidInputError, match=r"filters has unknown keys \['user'\]"):
        RippleMemRetriever(memory=seeded, filters={"user": "bob"})
    with pytest.raises(InvalidInputError, match=r"unknown arguments \['top_k'\]"):
        RippleMemRetriever(memory=seeded).invoke("cat", top_k=2)


def test_retrieval_counts_as_access_unless_disabled(seeded: RippleMem) -> None:
    before = {m.id: m.access_count for m in seeded.list()}
    doc = RippleMemRetriever(memory=seeded, k=1, record_access=False).invoke("green tea")[0]
    assert seeded.get(doc.id).access_count == before[doc.id]
    RippleMemRetriever(memory=seeded, k=1).invoke("green tea")
    assert seeded.get(doc.id).access_count == before[doc.id] + 1
    assert seeded.get(doc.id).last_accessed > datetime(2020, 1, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("argument", "hint"),
    [
        ({"top_k": 2}, r"for top_k use k=\.\.\."),
        ({"search_type": "mmr"}, r"for search_type use mode="),
        ({"colour": "blue"}, r"unknown arguments \['colour'\]; allowed: \["),
    ],
)
def test_an_argument_the_retriever_does_not_have_is_refused_with_a_hint(
    seeded: RippleMem, argument: dict[str, object], hint: str
) -> None:
    # Before, pydantic dropped it without a word: top_k=2 returned 10 documents.
    with pytest.raises(InvalidInputError, match=hint):
        RippleMemRetriever(memory=seeded, **argument)
    assert len(RippleMemRetriever(memory=seeded, k=2).invoke("green tea")) == 2


def test_search_kwargs_are_read_as_langchain_s_vector_stores_read_them(seeded: RippleMem) -> None:
    assert len(RippleMemRetriever(memory=seeded, search_kwargs={"k": 2}).invoke("green tea")) == 2
    kept = seeded.add("I keep my passport in the blue drawer", metadata={"room": "study"})
    study = RippleMemRetriever(memory=seeded, search_kwargs={"k": 5, "filter": {"room": "study"}})
    found = study.invoke("tea")
    assert [doc.id for doc in found] == [kept.id]
    with pytest.raises(InvalidInputError, match=r"score_threshold must be in \[0, 1\]"):
        RippleMemRetriever(memory=seeded, search_kwargs={"score_threshold": 5})
    with pytest.raises(InvalidInputError, match="give score_threshold= or search_kwargs"):
        RippleMemRetriever(memory=seeded, score_threshold=0.5, search_kwargs={"score_threshold": 0.5})
    with pytest.raises(InvalidInputError, match=r"search_kwargs has unknown keys \['fetch_k'\]"):
        RippleMemRetriever(memory=seeded, search_kwargs={"fetch_k": 20})


def test_filter_takes_the_keys_the_documents_show(seeded: RippleMem) -> None:
    def texts(**arguments: object) -> set[str]:
        query = arguments.pop("query", "Alice")
        retriever = RippleMemRetriever(memory=seeded, k=10, record_access=False, **arguments)
        return {doc.page_content for doc in retriever.invoke(query)}

    assert texts(search_kwargs={"filter": {"type": "semantic"}}) == {
        "Alice owns a cat called Tom.",
        "Alice drinks green tea every morning.",
    }
    assert texts(search_kwargs={"filter": {"time": {"$lt": "2024-01-01"}}}) == {
        "Alice adopted Tom from a shelter in Lyon."
    }
    assert texts(search_kwargs={"filter": {"session_id": "s2", "type": {"$in": ["episodic"]}}}) == {
        "Tom the cat sleeps on the piano every afternoon."
    }
    retriever = RippleMemRetriever(memory=seeded, k=10, record_access=False)
    assert [d.page_content for d in retriever.invoke("Alice", filter={"topic": "food"})] == [
        "Alice drinks green tea every morning."
    ]
    with pytest.raises(InvalidInputError, match="invoke got types= and a filter on the same key"):
        retriever.invoke("Alice", types=["semantic"], filter={"type": "episodic"})
    with pytest.raises(InvalidInputError, match="give types= or a filter on 'type'"):
        RippleMemRetriever(memory=seeded, types=["semantic"], search_kwargs={"filter": {"type": "episodic"}})


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"type": {"$ne": "semantic"}}, r"operator '\$ne' on 'type' is not supported"),
        ({"$or": [{"type": "semantic"}]}, r"'\$or' is not supported"),
        ({"importance": {"$gt": 0.5}}, r"operator '\$gt' on 'importance' is not supported"),
        (
            {"importance": {"$lt": 0.5}},
            r"operator '<' is not supported on 'importance' \(supported there: >=",
        ),
        ({"source": "notes.md"}, r"cannot filter on 'source'"),
    ],
)
def test_a_filter_recall_cannot_honour_is_refused_by_name(
    seeded: RippleMem, given: dict[str, object], named: str
) -> None:
    with pytest.raises(InvalidInputError, match=named):
        RippleMemRetriever(memory=seeded, search_kwargs={"filter": given})


def test_score_threshold_keeps_only_relevant_memories(seeded: RippleMem) -> None:
    everything = RippleMemRetriever(memory=seeded, k=5, record_access=False).invoke("green tea")
    assert all(0.0 <= doc.metadata["relevance"] <= 1.0 for doc in everything) and len(everything) == 5
    for retriever in (
        RippleMemRetriever(memory=seeded, k=5, record_access=False, score_threshold=0.5),
        RippleMemRetriever(
            memory=seeded, record_access=False, search_kwargs={"k": 5, "score_threshold": 0.5}
        ),
    ):
        kept = retriever.invoke("green tea")
        assert [doc.page_content for doc in kept] == ["Alice drinks green tea every morning."]
        assert kept[0].metadata["relevance"] == 1.0 and "score" in kept[0].metadata
    loose = RippleMemRetriever(memory=seeded, k=5, record_access=False, score_threshold=0.5)
    assert len(loose.invoke("green tea", score_threshold=0.0)) == 5  # per call
    with pytest.raises(InvalidTypeError, match="score_threshold must be a number"):
        loose.invoke("green tea", score_threshold="high")
