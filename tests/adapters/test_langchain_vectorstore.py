"""RippleMemVectorStore: LangChain's standard vector-store suite, ripple recall behind it, the indexing
API, ids, the user's other memories, and precise errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cookbook_runner import run_recipe
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_core.indexing import InMemoryRecordManager, index
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import VectorStoreIntegrationTests

from langchain_ripplemem import RippleMemVectorStore
from ripplemem import FrameworkEmbedder, RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import EmbeddingModelMismatchError, InvalidInputError, InvalidTypeError

FAKE_ID = "deterministic-fake-6"


class TestStandardSuite(VectorStoreIntegrationTests):
    """LangChain's own vector-store checks, on a real on-disk store (SQLite + Chroma) with the
    suite's DeterministicFakeEmbedding as the embedder."""

    @pytest.fixture
    def vectorstore(self, tmp_path: Path) -> Iterator[VectorStore]:  # type: ignore[override]
        """An empty store for one user, with recall in its default mode (ripple)."""
        embedder = FrameworkEmbedder(self.get_embeddings(), model_id=FAKE_ID)
        with RippleMem(path=tmp_path / "db", user_id="alice", embedder=embedder) as mem:
            yield RippleMemVectorStore(memory=mem)


def test_search_is_ripple_recall_not_vector_order_alone() -> None:
    """With an embedder that knows nothing (random vectors), dense order is noise; ripple recall
    still finds the document by its words."""
    embedder = FrameworkEmbedder(DeterministicFakeEmbedding(size=6), model_id=FAKE_ID)
    with RippleMem(path=None, user_id="alice", embedder=embedder) as mem:
        store = RippleMemVectorStore(memory=mem)
        store.add_texts(
            [
                "Apple pie needs cinnamon",
                "The car needs new engine oil",
                "Green tea is brewed at 80 degrees",
                "Invoice 4411 is overdue",
            ]
        )
        for query, expected in [
            ("green tea temperature", "Green tea is brewed at 80 degrees"),
            ("engine oil", "The car needs new engine oil"),
            ("invoice overdue", "Invoice 4411 is overdue"),
        ]:
            assert store.similarity_search(query, k=1)[0].page_content == expected
        dense = [
            store.similarity_search(q, k=1, mode="dense")[0].page_content
            for q in ("green tea temperature", "engine oil", "invoice overdue")
        ]
        assert dense != [
            "Green tea is brewed at 80 degrees",
            "The car needs new engine oil",
            "Invoice 4411 is overdue",
        ]


class MiniLMEmbeddings(Embeddings):
    """The session's real MiniLM as a LangChain Embeddings (what a user brings from langchain-*)."""

    model = "all-MiniLM-L6-v2"

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in self.inner.embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        return list(map(float, self.inner.embed_query(text)))


DOCS = [
    Document(
        page_content="The Three-Body Problem is a science fiction novel by Liu Cixin.",
        metadata={"source": "books.md", "shelf": "fiction"},
    ),
    Document(
        page_content="Green tea is brewed at 80 degrees for two minutes.",
        metadata={"source": "tea.md", "shelf": "kitchen"},
    ),
    Document(
        page_content="Our office moved to Kreuzberg, Berlin, in March.",
        metadata={"source": "news.md", "shelf": "work"},
    ),
]


@pytest.fixture
def minilm_store(embedder: Embedder, tmp_path: Path) -> Iterator[RippleMemVectorStore]:
    """from_documents on a new on-disk store for alice, embedding with MiniLM through LangChain."""
    store = RippleMemVectorStore.from_documents(
        DOCS, MiniLMEmbeddings(embedder), path=str(tmp_path / "db"), user_id="alice"
    )
    yield store
    store.memory.close()


def test_similarity_search_finds_by_meaning(minilm_store: RippleMemVectorStore) -> None:
    found = minilm_store.similarity_search_with_score("which sci-fi book should I read?", k=2)
    first, score = found[0]
    assert first.page_content == DOCS[0].page_content
    assert first.metadata == {"source": "books.md", "shelf": "fiction"}  # as added: nothing else
    assert isinstance(score, float) and score >= found[1][1]
    retriever = minilm_store.as_retriever(search_kwargs={"k": 1})
    assert [d.page_content for d in retriever.invoke("how hot should the water be for tea?")] == [
        DOCS[1].page_content
    ]


def test_relevance_scores_are_comparable_and_thresholdable(minilm_store: RippleMemVectorStore) -> None:
    for query, meant in [
        ("which sci-fi book should I read?", DOCS[0]),
        ("when did the team relocate?", DOCS[2]),
    ]:
        scored = minilm_store.similarity_search_with_relevance_scores(query, k=3)
        assert [doc.page_content for doc, _ in scored] == [
            doc.page_content for doc in minilm_store.similarity_search(query, k=3)
        ]  # recall's order
        assert all(0.0 <= relevance <= 1.0 for _, relevance in scored)
        assert scored[0][0].page_content == meant.page_content and scored[0][1] > 0.5
        retriever = minilm_store.as_retriever(
            search_type="similarity_score_threshold", search_kwargs={"k": 3, "score_threshold": 0.5}
        )
        assert [doc.page_content for doc in retriever.invoke(query)] == [meant.page_content]


def test_filter_is_metadata_equality(minilm_store: RippleMemVectorStore) -> None:
    found = minilm_store.similarity_search("science fiction novel", k=3, filter={"shelf": "work"})
    assert [d.metadata["source"] for d in found] == ["news.md"]


def test_the_users_other_memories_come_with_their_memory_id(minilm_store: RippleMemVectorStore) -> None:
    mem = minilm_store.memory
    native = mem.add("I finished The Three-Body Problem last night", metadata={"rating": 5})
    found = minilm_store.similarity_search("Three-Body Problem", k=3)
    mine = next(d for d in found if d.id == native.id)
    assert mine.metadata["memory_id"] == native.id and mine.metadata["rating"] == 5
    assert minilm_store.get_by_ids([native.id])[0].page_content == native.content
    minilm_store.delete([native.id])
    assert mem.get(native.id) is None


def test_a_store_written_by_ids_reopens_and_refuses_another_model(embedder: Embedder, tmp_path: Path) -> None:
    path = str(tmp_path / "db")
    store = RippleMemVectorStore.from_documents(
        DOCS, MiniLMEmbeddings(embedder), path=path, user_id="alice", ids=["b", "t", "n"]
    )
    store.memory.close()
    with RippleMem(path=path, user_id="alice", embedder=MiniLMEmbeddings(embedder)) as mem:
        reopened = RippleMemVectorStore(memory=mem)
        assert [d.id for d in reopened.get_by_ids(["n", "b"])] == ["n", "b"]
    fake = FrameworkEmbedder(DeterministicFakeEmbedding(size=384), model_id=FAKE_ID)
    with pytest.raises(EmbeddingModelMismatchError):
        RippleMem(path=path, user_id="alice", embedder=fake)


def test_indexing_api_adds_skips_updates_and_cleans_up(minilm_store: RippleMemVectorStore) -> None:
    manager = InMemoryRecordManager(namespace="ripplemem/alice")
    manager.create_schema()
    minilm_store.delete([d.id for d in minilm_store.similarity_search("anything", k=10)])
    first = index(
        DOCS, manager, minilm_store, cleanup="incremental", source_id_key="source", key_encoder="sha256"
    )
    assert (first["num_added"], first["num_skipped"], first["num_deleted"]) == (3, 0, 0)
    cooler = Document(page_content="Green tea is brewed at 75 degrees.", metadata=DOCS[1].metadata)
    changed = [DOCS[0], cooler, DOCS[2]]
    second = index(
        changed, manager, minilm_store, cleanup="incremental", source_id_key="source", key_encoder="sha256"
    )
    assert (second["num_added"], second["num_skipped"], second["num_deleted"]) == (1, 2, 1)
    texts = sorted(d.page_content for d in minilm_store.similarity_search("tea", k=10))
    assert texts == sorted(d.page_content for d in changed)
    third = index(
        changed[:1], manager, minilm_store, cleanup="full", source_id_key="source", key_encoder="sha256"
    )
    assert third["num_deleted"] == 2
    assert [d.page_content for d in minilm_store.similarity_search("tea", k=10)] == [DOCS[0].page_content]


def test_recall_mode_can_be_dense(minilm_store: RippleMemVectorStore) -> None:
    dense = RippleMemVectorStore(memory=minilm_store.memory, mode="dense")
    assert dense.similarity_search("a story about aliens", k=1)[0].metadata["source"] == "books.md"
    assert minilm_store.similarity_search("a story about aliens", k=1, mode="keyword") == []


def test_bad_input_is_named(minilm_store: RippleMemVectorStore, embedder: Embedder) -> None:
    store = minilm_store
    with pytest.raises(InvalidInputError, match="unknown argument.*top_k"):
        store.similarity_search("tea", top_k=2)
    with pytest.raises(InvalidInputError, match="delete needs ids"):
        store.delete()
    with pytest.raises(InvalidInputError, match="'langchain_id' is reserved"):
        store.add_texts(["x"], [{"langchain_id": "1"}])
    with pytest.raises(InvalidInputError, match="one entry per text"):
        store.add_texts(["x", "y"], ids=["1"])
    with pytest.raises(InvalidTypeError, match="document ids must be non-empty strings"):
        store.add_texts(["x"], ids=[7])  # type: ignore[list-item]
    with pytest.raises(InvalidTypeError, match="filter must be a dict"):
        store.similarity_search("tea", filter=lambda d: True)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="mode must be one of"):
        RippleMemVectorStore(memory=store.memory, mode="bm25")
    with pytest.raises(InvalidInputError, match="embedding must be a non-zero list of 384 numbers"):
        store.similarity_search_by_vector([0.1] * 6)
    with pytest.raises(InvalidInputError, match="fetch_k \\(2\\) must be at least k \\(4\\)"):
        store.max_marginal_relevance_search("tea", k=4, fetch_k=2)
    with pytest.raises(InvalidInputError, match=r"lambda_mult must be a number in \[0, 1\]"):
        store.max_marginal_relevance_search("tea", lambda_mult=2)
    with pytest.raises(InvalidInputError, match="unknown argument.*top_k"):
        store.max_marginal_relevance_search("tea", top_k=2)
    with pytest.raises(InvalidInputError, match=r"score_threshold must be in \[0, 1\]"):
        store.similarity_search_with_relevance_scores("tea", score_threshold=2)
    with pytest.raises(InvalidInputError, match="needs memory=RippleMem"):
        RippleMemVectorStore.from_texts(["x"], MiniLMEmbeddings(embedder))
    with pytest.raises(InvalidInputError, match="embedding is 'deterministic-fake-6' but memory="):
        RippleMemVectorStore.from_texts(
            ["x"], DeterministicFakeEmbedding(size=6), memory=store.memory, model_id=FAKE_ID
        )
    with pytest.raises(InvalidInputError, match="^from_documents needs memory=RippleMem"):
        RippleMemVectorStore.from_documents(DOCS, MiniLMEmbeddings(embedder))


def test_an_unnamed_embedding_is_named_by_class_in_memory_and_by_model_id_on_disk(tmp_path: Path) -> None:
    unnamed = DeterministicFakeEmbedding(size=6)  # no model, model_name or model_id
    in_memory = RippleMemVectorStore.from_texts(["Green tea is brewed at 80 degrees"], unnamed, user_id="bob")
    assert in_memory.memory.stats()["embedding_model"] == "DeterministicFakeEmbedding"
    assert (
        in_memory.similarity_search("green tea", k=1)[0].page_content == "Green tea is brewed at 80 degrees"
    )
    # On disk the name is recorded, so it must be given; the error says how, and that way works.
    on_disk = str(tmp_path / "db")
    with pytest.raises(InvalidInputError, match="from_texts/from_documents\\(..., model_id=...\\)"):
        RippleMemVectorStore.from_texts(["x"], unnamed, user_id="bob", path=on_disk)
    store = RippleMemVectorStore.from_texts(["x"], unnamed, user_id="bob", path=on_disk, model_id=FAKE_ID)
    assert store.memory.stats()["embedding_model"] == FAKE_ID
    store.memory.close()


BREWING = [
    "Green tea is brewed at 80 degrees for two minutes.",
    "Brew green tea with water at 80 °C, for about two minutes.",
    "For green tea, let the water cool to 80 degrees and steep it two minutes.",
]
LEAVES = "Green tea comes from Camellia sinensis leaves that are steamed, not oxidised."


def test_mmr_trades_a_repeat_for_a_different_document(embedder: Embedder, tmp_path: Path) -> None:
    store = RippleMemVectorStore.from_texts(
        [*BREWING, LEAVES, "Our office moved to Kreuzberg, Berlin, in March."],
        MiniLMEmbeddings(embedder),
        path=str(tmp_path / "db"),
        user_id="alice",
    )
    question = "how do I brew green tea?"
    assert {d.page_content for d in store.similarity_search(question, k=2)} <= set(BREWING)
    options = {"k": 2, "fetch_k": 4, "lambda_mult": 0.3}
    picked = [
        d.page_content for d in store.as_retriever(search_type="mmr", search_kwargs=options).invoke(question)
    ]
    assert picked[0] in BREWING and picked[1] == LEAVES
    vector = MiniLMEmbeddings(embedder).embed_query(question)
    assert [
        d.page_content for d in store.max_marginal_relevance_search_by_vector(vector, **options)
    ] == picked
    by_vector = [d.page_content for d in store.similarity_search_by_vector(vector, k=2)]
    assert by_vector[0] == picked[0] and by_vector[1] in BREWING
    store.memory.close()


@pytest.mark.parametrize(
    "documents",
    ["The Three-Body Problem", Document(page_content="The Three-Body Problem")],
    ids=["str", "doc"],
)
def test_one_document_where_a_list_is_expected_is_refused(
    minilm_store: RippleMemVectorStore, documents: object
) -> None:
    before = minilm_store.memory.stats()["total"]
    with pytest.raises(InvalidTypeError, match="documents must be a list of Documents.*wrap a single one"):
        minilm_store.add_documents(documents)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match=r"documents\[1\] must be a Document, got str"):
        minilm_store.add_documents([Document(page_content="fine"), "not a document"])  # type: ignore[list-item]
    assert minilm_store.memory.stats()["total"] == before


@pytest.mark.slow
def test_cookbook_recipe_indexes_a_wiki_and_searches_it_beside_the_users_memories() -> None:
    out = run_recipe("langchain_vectorstore.py")
    assert "index: {'num_added': 3, 'num_updated': 0, 'num_skipped': 0, 'num_deleted': 0}" in out
    assert "after an edit: {'num_added': 1, 'num_updated': 0, 'num_skipped': 2, 'num_deleted': 1}" in out
    lisbon = out.split("> What do I need to do for my Lisbon trip?\n")[1].split(">")[0].splitlines()
    assert "ripplemem  I'm flying to Lisbon on 3 June" in lisbon[0]
    assert any("wiki/travel.md  Travel policy" in line for line in lisbon[1:])
    assert "retriever: ['Expenses: submit receipts within 45 days" in out
