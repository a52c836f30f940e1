"""LangChain Embeddings and LlamaIndex BaseEmbedding objects as RippleMem(embedder=...): recall works,
queries go through the query method, the model id is recorded and a store refuses another model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.embeddings import MockEmbedding
from pydantic import PrivateAttr

from ripplemem import (
    EmbedderOutputError,
    EmbeddingModelMismatchError,
    FrameworkEmbedder,
    InvalidInputError,
    InvalidTypeError,
    RippleMem,
)
from ripplemem.embedding.embedders import Embedder

FACTS = [
    "I started reading The Three-Body Problem, a science fiction novel by Liu Cixin",
    "I drink green tea every morning before work",
    "My sister moved to Berlin for a job at an architecture firm",
    "The dentist appointment is on Tuesday at nine",
]
QUERY = "which sci-fi book am I reading?"


class MiniLMEmbeddings(Embeddings):
    """A LangChain Embeddings over the session's real MiniLM, counting which method was called."""

    def __init__(self, inner: Embedder, model: str = "all-MiniLM-L6-v2") -> None:
        self.inner = inner
        self.model = model
        self.calls: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append("embed_documents")
        return [list(map(float, row)) for row in self.inner.embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        self.calls.append("embed_query")
        return list(map(float, self.inner.embed_query(text)))


class MiniLMEmbedding(BaseEmbedding):
    """A LlamaIndex BaseEmbedding over the session's real MiniLM, counting query embeddings."""

    _inner: Any = PrivateAttr()
    _queries: list[str] = PrivateAttr(default_factory=list)

    def __init__(self, inner: Embedder, **kwargs: Any) -> None:
        super().__init__(model_name="all-MiniLM-L6-v2", **kwargs)
        self._inner = inner

    def _get_query_embedding(self, query: str) -> list[float]:
        self._queries.append(query)
        return list(map(float, self._inner.embed_query(query)))

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return list(map(float, self._inner.embed_documents([text])[0]))


def _top(mem: RippleMem, query: str, mode: str = "dense") -> str:
    return mem.recall(query, k=1, mode=mode).hits[0].memory.content


def test_langchain_embeddings_object_is_an_embedder(embedder: Embedder) -> None:
    lc = MiniLMEmbeddings(embedder, model="all-MiniLM-L6-v2-lc")
    mem = RippleMem(user_id="alice", embedder=lc)
    mem.add_many(FACTS)
    assert set(lc.calls) == {"embed_documents"}
    assert _top(mem, QUERY) == FACTS[0]  # no word in common: found by meaning
    assert "embed_query" in lc.calls  # recall embeds the query as a query
    assert mem.stats()["embedding_model"] == "all-MiniLM-L6-v2-lc"


def test_llamaindex_embedding_object_is_an_embedder(embedder: Embedder) -> None:
    li = MiniLMEmbedding(embedder)
    mem = RippleMem(user_id="alice", embedder=li)
    mem.add_many(FACTS)
    assert _top(mem, QUERY) == FACTS[0]
    assert li._queries == [QUERY]
    assert mem.stats()["embedding_model"] == "all-MiniLM-L6-v2"


def test_unnamed_embeddings_need_a_model_id_on_disk_only(tmp_path: Path) -> None:
    # A store in memory is never reopened, so there is nothing to check the name against.
    for unnamed, name in [
        (DeterministicFakeEmbedding(size=6), "DeterministicFakeEmbedding"),
        (MockEmbedding(embed_dim=8), "MockEmbedding"),  # its model_name is 'unknown'
    ]:
        with RippleMem(path=None, user_id="alice", embedder=unnamed) as in_memory:
            in_memory.add("the tea is green")
            assert in_memory.stats()["embedding_model"] == name
            assert _top(in_memory, "green tea", mode="ripple") == "the tea is green"
        with pytest.raises(
            InvalidInputError, match=rf"FrameworkEmbedder\({name}\(\.\.\.\), model_id=\.\.\.\)"
        ):
            RippleMem(path=tmp_path / name, user_id="alice", embedder=unnamed)
    mem = RippleMem(
        tmp_path / "named",
        user_id="alice",
        embedder=FrameworkEmbedder(DeterministicFakeEmbedding(size=6), model_id="fake-6"),
    )
    mem.add_many(["foo", "bar", "baz"])
    assert _top(mem, "bar") == "bar"
    li = RippleMem(user_id="bob", embedder=FrameworkEmbedder(MockEmbedding(embed_dim=8), model_id="mock-8"))
    li.add("the tea is green")
    assert _top(li, "green tea", mode="ripple") == "the tea is green"


def test_model_id_from_the_object() -> None:
    class Remote(DeterministicFakeEmbedding):
        model: str = "text-embedding-3-small"
        dimensions: int | None = None

    assert FrameworkEmbedder(Remote(size=6)).model_id == "text-embedding-3-small"
    assert FrameworkEmbedder(Remote(size=6, dimensions=256)).model_id == "text-embedding-3-small:256"
    assert FrameworkEmbedder(Remote(size=6), model_id="mine").model_id == "mine"
    assert FrameworkEmbedder(MockEmbedding(embed_dim=8, model_name="bge-small")).model_id == "bge-small"


def test_dimension_comes_from_the_first_vector_and_vectors_are_unit() -> None:
    wrapped = FrameworkEmbedder(DeterministicFakeEmbedding(size=6), model_id="fake-6")
    assert wrapped.dimension is None
    vectors = wrapped.embed_documents(["foo", "bar"])
    assert wrapped.dimension == 6 and vectors.shape == (2, 6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.allclose(wrapped.embed_query("foo"), vectors[0], atol=1e-6)


def test_a_store_refuses_another_model_id(tmp_path: Path) -> None:
    path = tmp_path / "db"
    with RippleMem(
        path=path,
        user_id="alice",
        embedder=FrameworkEmbedder(DeterministicFakeEmbedding(size=6), model_id="fake-a"),
    ) as mem:
        mem.add("foo")
    with pytest.raises(EmbeddingModelMismatchError, match="'fake-a'.*'fake-b'"):
        RippleMem(
            path=path,
            user_id="alice",
            embedder=FrameworkEmbedder(DeterministicFakeEmbedding(size=6), model_id="fake-b"),
        )
    with RippleMem(
        path=path,
        user_id="alice",
        embedder=FrameworkEmbedder(DeterministicFakeEmbedding(size=6), model_id="fake-a"),
    ) as mem:
        assert _top(mem, "foo") == "foo"


def test_reembed_takes_a_framework_object(tmp_path: Path, embedder: Embedder) -> None:
    path = tmp_path / "db"
    with RippleMem(
        path=path,
        user_id="alice",
        embedder=FrameworkEmbedder(DeterministicFakeEmbedding(size=6), model_id="fake-6"),
    ) as mem:
        mem.add_many(FACTS)
    lc = MiniLMEmbeddings(embedder, model="minilm-via-langchain")
    assert RippleMem.reembed(path, embedder=lc) == len(FACTS)
    with RippleMem(path=path, user_id="alice", embedder=lc) as mem:
        assert _top(mem, QUERY) == FACTS[0]


class Ragged(Embeddings):
    model = "ragged"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0], [1.0]][: len(texts)] if len(texts) > 1 else [[1.0, 0.0]]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


def test_bad_objects_and_outputs_are_named() -> None:
    with pytest.raises(InvalidTypeError, match="LangChain Embeddings .* LlamaIndex BaseEmbedding"):
        FrameworkEmbedder(object())
    with pytest.raises(InvalidInputError, match="model_id must be a non-empty string"):
        FrameworkEmbedder(DeterministicFakeEmbedding(size=6), model_id=" ")
    mem = RippleMem(user_id="alice", embedder=Ragged())
    with pytest.raises(EmbedderOutputError, match=r"Ragged\.embed_documents \(model 'ragged'\)"):
        mem.add_many(["one", "two"])
