"""Images and audio as perceptual memories (seed 001: CLIP for images, CLAP for audio). The memory
keeps a reference to the file; its vector comes from a pluggable encoder that maps the file into the
store's text embedding space, so a text query recalls it (cross-modal). Without an encoder the
caption or transcript is what gets embedded.
"""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ripplemem.embeddings import LazyModel
from ripplemem.engine import Engine
from ripplemem.errors import InvalidInputError, InvalidTypeError, MissingDependencyError, RippleMemError
from ripplemem.graph_builder import GraphInput
from ripplemem.items import build_memory
from ripplemem.types import Memory, Scope
from ripplemem.writes import index_meta, write_batch


class ImageEncoder(Protocol):
    """Embeds an image file into the same space as the store's text embedder."""

    model_id: str

    def embed_image(self, path: Path) -> np.ndarray:
        """One vector of shape (dimension,) for the image at `path`."""
        ...


class AudioEncoder(Protocol):
    """Embeds an audio file into the same space as the store's text embedder."""

    model_id: str

    def embed_audio(self, path: Path) -> np.ndarray:
        """One vector of shape (dimension,) for the audio at `path`."""
        ...


class SentenceTransformerImageEncoder:
    """CLIP image embeddings through sentence-transformers (e.g. "clip-ViT-B-32"), for a store whose
    embedder is the same CLIP model's text side: ``RippleMem(embedder=SentenceTransformerEmbedder(
    "clip-ViT-B-32"))``. Needs Pillow and the model on disk or reachable; nothing is downloaded
    by RippleMem itself."""

    def __init__(self, model_name_or_path: str = "clip-ViT-B-32") -> None:
        self.model_id = model_name_or_path
        self._model = LazyModel(self._load)

    def _load(self) -> Any:
        from sentence_transformers import SentenceTransformer

        try:
            return SentenceTransformer(self.model_id)
        except (OSError, ValueError) as exc:
            raise InvalidInputError(f"cannot load the image model {self.model_id!r}: {exc}; pass the path "
                                    "of a local CLIP model or a name the Hugging Face hub can serve") from exc

    def embed_image(self, path: Path) -> np.ndarray:
        """The normalised CLIP vector of one image."""
        try:
            from PIL import Image
        except ImportError as exc:
            raise MissingDependencyError("image encoding with CLIP needs Pillow: pip install pillow") from exc
        with Image.open(path) as image:
            vector = self._model.get().encode(image.convert("RGB"), normalize_embeddings=True)
        return np.asarray(vector, dtype=np.float32)


MEDIA = {"image": ("caption", "embed_image"), "audio": ("transcript", "embed_audio")}


def check_media_file(kind: str, path: Any) -> Path:
    """An existing, readable file path."""
    if not isinstance(path, str | os.PathLike):
        raise InvalidTypeError(f"the {kind} path must be a string or a Path, got {type(path).__name__}")
    file = Path(path).expanduser()
    if not file.is_file():
        raise InvalidInputError(f"no {kind} file at {str(file)!r}")
    if not os.access(file, os.R_OK):
        raise InvalidInputError(f"the {kind} file {str(file)!r} is not readable")
    return file.resolve()


def encode_file(engine: Engine, kind: str, file: Path, encoder: Any) -> np.ndarray:
    """The encoder's unit vector for a file, checked against the store's embedding dimension."""
    method_name = MEDIA[kind][1]
    method = getattr(encoder, method_name, None)
    if not callable(method):
        raise InvalidTypeError(f"encoder must have an {method_name}(path) method returning a vector, "
                               f"got {type(encoder).__name__}")
    try:
        vector = np.asarray(method(file), dtype=np.float32).reshape(-1)
    except RippleMemError:
        raise
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"the {kind} encoder could not read {str(file)!r}: {exc}") from exc
    expected = len(engine.embedder.embed_query(kind))
    if vector.shape[0] != expected or not np.all(np.isfinite(vector)) or not np.any(vector):
        raise InvalidInputError(
            f"the {kind} encoder gave a {vector.shape[0]}-dimensional vector, but this store embeds text "
            f"with {engine.embedder.model_id!r} ({expected} dimensions, finite, non-zero); cross-modal "
            "recall needs one space, e.g. the same CLIP model as embedder and image encoder")
    return vector / float(np.linalg.norm(vector))


def add_media(engine: Engine, scope: Scope, kind: str, path: Any, text: str | None, encoder: Any, *,
              importance: float | None, metadata: Mapping[str, Any] | None, event_time: datetime | str | None,
              session_id: str | None) -> Memory:
    """Store an image or audio file reference as a perceptual memory; returns the memory."""
    text_field = MEDIA[kind][0]
    file = check_media_file(kind, path)
    if text is not None and (not isinstance(text, str) or not text.strip()):
        raise InvalidInputError(f"{text_field} must be a non-empty string or None")
    if encoder is None and text is None:
        raise InvalidInputError(
            f"add_{kind} needs a {text_field} (embedded as text) or an encoder=... that embeds "
            f"{kind}s into the store's text space (e.g. CLIP through sentence-transformers)")
    vector = None if encoder is None else encode_file(engine, kind, file, encoder)
    described = {"file": str(file), "file_name": file.name,
                 "media_type": mimetypes.guess_type(file.name)[0] or "application/octet-stream",
                 text_field: text, "embedded": kind if vector is not None else text_field,
                 "encoder": None if encoder is None else getattr(encoder, "model_id", type(encoder).__name__)}
    item = {"content": text if text is not None else f"{kind} {file.name}", "type": "perceptual",
            "modality": kind, "importance": importance, "event_time": event_time, "session_id": session_id,
            "metadata": {**(metadata or {}), **described}, "source": str(file)}
    memory = build_memory(item, 0, "perceptual", engine.clock(), scope, engine.settings)
    with engine.write_lock:
        [stored] = write_batch(engine, scope.user_id, [memory], [GraphInput()])
        if vector is not None:
            # The row and index were written with the text's vector; the file's vector replaces it.
            engine.store.set_embeddings([(stored.id, vector)])
            engine.index.add(scope.user_id, [stored.id], vector[None, :], [index_meta(stored)])
    return stored
