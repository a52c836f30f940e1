"""LangChain ``Embeddings`` and LlamaIndex ``BaseEmbedding`` objects as RippleMem embedders.

Duck-typed: neither framework is imported. A LangChain object is used through ``embed_documents``
(memories) and ``embed_query`` (recall); a LlamaIndex one through ``get_text_embedding_batch`` and
``get_query_embedding``. Vectors are L2-normalised; the dimension is the first vector's length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ripplemem.embedding.base import Embedder, as_text_list, normalise_rows
from ripplemem.errors import EmbedderOutputError, InvalidInputError, InvalidTypeError

# Attributes that name the model, in the order frameworks use them (OpenAI/Ollama: model,
# HuggingFace/LlamaIndex: model_name, Bedrock: model_id).
MODEL_ATTRIBUTES = ("model_id", "model", "model_name")
# Placeholders some objects carry instead of a name (LlamaIndex's MockEmbedding: "unknown").
_NO_NAME = {"", "unknown", "default", "none"}


@runtime_checkable
class LangChainEmbeddingsLike(Protocol):
    """The two methods RippleMem uses of a LangChain ``Embeddings``."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors of texts to store."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """The vector of a search query."""
        ...


@runtime_checkable
class LlamaIndexEmbeddingLike(Protocol):
    """The two methods RippleMem uses of a LlamaIndex ``BaseEmbedding``."""

    def get_text_embedding_batch(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        """Vectors of texts to store."""
        ...

    def get_query_embedding(self, query: str) -> list[float]:
        """The vector of a search query."""
        ...


# What ``RippleMem(embedder=...)`` takes (None or "auto": the default, auto_embedder): a name, an
# Embedder, or a LangChain / LlamaIndex embeddings object (wrapped in FrameworkEmbedder).
EmbedderSpec = str | Embedder | LangChainEmbeddingsLike | LlamaIndexEmbeddingLike | None
# What ``RippleMem.reembed`` takes: the same, but a model must be named.
TargetEmbedder = str | Embedder | LangChainEmbeddingsLike | LlamaIndexEmbeddingLike


def is_llamaindex_embedding(obj: Any) -> bool:
    """Whether obj looks like a LlamaIndex BaseEmbedding (batch text and query methods)."""
    return callable(getattr(obj, "get_text_embedding_batch", None)) and callable(
        getattr(obj, "get_query_embedding", None)
    )


def is_langchain_embeddings(obj: Any) -> bool:
    """Whether obj is a LangChain Embeddings (by its class) or has its two methods and no model_id."""
    if not (callable(getattr(obj, "embed_documents", None)) and callable(getattr(obj, "embed_query", None))):
        return False
    from_langchain = any(cls.__module__.startswith("langchain_core.embeddings") for cls in type(obj).__mro__)
    return from_langchain or not isinstance(getattr(obj, "model_id", None), str)


def model_id_of(obj: Any) -> str | None:
    """The model name an embeddings object carries (model_id, model or model_name), with
    ":<dimensions>" when it asks the model for shortened vectors (OpenAI's dimensions=); else None."""
    for attribute in MODEL_ATTRIBUTES:
        value = getattr(obj, attribute, None)
        if isinstance(value, str) and value.strip().lower() not in _NO_NAME:
            dimensions = getattr(obj, "dimensions", None)
            shortened = isinstance(dimensions, int) and not isinstance(dimensions, bool)
            return f"{value.strip()}:{dimensions}" if shortened else value.strip()
    return None


class FrameworkEmbedder:
    """A LangChain or LlamaIndex embeddings object as an Embedder: ``RippleMem(embedder=obj)``.

    ``model_id`` names the embedding space recorded with the store (a store built with one model
    refuses to open with another); it defaults to the object's ``model_id``, ``model`` or
    ``model_name``. An object without one (fakes, custom classes) needs it spelled out for a store
    on disk; with ``in_memory=True`` (a store with ``path=None``, never reopened) it is named by
    its class.
    """

    def __init__(self, embeddings: Any, *, model_id: str | None = None, in_memory: bool = False) -> None:
        if is_llamaindex_embedding(embeddings):
            self.framework = "llamaindex"
        elif is_langchain_embeddings(embeddings):
            self.framework = "langchain"
        else:
            raise InvalidTypeError(
                "FrameworkEmbedder takes a LangChain Embeddings (embed_documents, embed_query) or a "
                "LlamaIndex BaseEmbedding (get_text_embedding_batch, get_query_embedding); got "
                f"{type(embeddings).__name__}"
            )
        if model_id is not None and (not isinstance(model_id, str) or not model_id.strip()):
            raise InvalidInputError(f"model_id must be a non-empty string, got {model_id!r}")
        named = model_id.strip() if model_id is not None else model_id_of(embeddings)
        kind = type(embeddings).__name__
        if named is None and in_memory:
            named = kind
        if named is None:
            raise InvalidInputError(
                f"cannot tell which model the {kind} object is (it has no model, model_name or model_id); "
                "a store on disk records it so it is never reopened with another model: name it with "
                f"model_id='<model name>', as in RippleMem(path, embedder=FrameworkEmbedder({kind}(...), "
                "model_id=...)) or the vector stores' from_texts/from_documents(..., model_id=...); "
                "a store in memory (path=None) needs no name"
            )
        self.embeddings = embeddings
        self.model_id = named
        self.dimension: int | None = None

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for texts to store (LangChain embed_documents / LlamaIndex get_text_embedding_batch)."""
        items = as_text_list(texts)
        if not items:
            return np.zeros((0, self.dimension or 0), dtype=np.float32)
        if self.framework == "llamaindex":
            raw = self.embeddings.get_text_embedding_batch(items)
        else:
            raw = self.embeddings.embed_documents(items)
        return self._vectors(
            raw, "get_text_embedding_batch" if self.framework == "llamaindex" else "embed_documents"
        )

    def embed_query(self, text: str) -> np.ndarray:
        """The vector for one recall query (LangChain embed_query / LlamaIndex get_query_embedding)."""
        if not isinstance(text, str):
            raise InvalidTypeError(f"query must be a str, got {type(text).__name__}")
        if self.framework == "llamaindex":
            vectors = self._vectors([self.embeddings.get_query_embedding(text)], "get_query_embedding")
        else:
            vectors = self._vectors([self.embeddings.embed_query(text)], "embed_query")
        vector: np.ndarray = vectors[0]
        return vector

    def _vectors(self, raw: Any, method: str) -> np.ndarray:
        try:
            matrix = np.asarray(raw, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbedderOutputError(
                f"{type(self.embeddings).__name__}.{method} (model {self.model_id!r}) returned something "
                f"that is not a list of equal-length number lists: {exc}"
            ) from None
        if matrix.ndim == 2 and self.dimension is None:
            self.dimension = int(matrix.shape[1])
        return normalise_rows(matrix) if matrix.ndim == 2 else matrix

    def __repr__(self) -> str:
        return f"FrameworkEmbedder({type(self.embeddings).__name__}, model_id={self.model_id!r})"


def as_embedder(spec: Any, *, in_memory: bool = False) -> Any:
    """A framework embeddings object wrapped in FrameworkEmbedder (named by its class when it has no
    model name and the store is ``in_memory``); anything else unchanged."""
    if isinstance(spec, (str, FrameworkEmbedder)) or spec is None:
        return spec
    if is_llamaindex_embedding(spec) or is_langchain_embeddings(spec):
        return FrameworkEmbedder(spec, in_memory=in_memory)
    return spec
