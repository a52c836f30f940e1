"""Images and audio as perceptual memories (CLIP for images, CLAP for audio). The memory
keeps a reference to the file. Its caption or transcript (when given) is embedded with the text
embedder into the text index, as any memory; an encoder embeds the file itself into its own space,
kept in the modality's own index (ripplemem.store.vectors.modality_index), where cross-modal recall finds it.
"""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from ripplemem.core.types import Memory, Scope
from ripplemem.engine.engine import Engine
from ripplemem.engine.graph_rows import GraphInput
from ripplemem.engine.items import build_memory
from ripplemem.engine.writes import delete_memories, write_batch
from ripplemem.errors import InvalidInputError, InvalidTypeError, RippleMemError
from ripplemem.store.tables.modality_vectors import ModalitySpace
from ripplemem.store.vectors.modality_index import check_space

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


def check_encoder(kind: str, encoder: Any) -> str:
    """The encoder's model id, after checking it has the method this kind of file needs."""
    method_name = MEDIA[kind][1]
    if not callable(getattr(encoder, method_name, None)):
        raise InvalidTypeError(
            f"encoder must have an {method_name}(path) method returning a vector, "
            f"got {type(encoder).__name__}"
        )
    model_id = getattr(encoder, "model_id", None)
    if not isinstance(model_id, str) or not model_id.strip():
        raise InvalidTypeError(
            f"the {kind} encoder needs a model_id (a non-empty string naming its "
            "model): the store records it beside the vectors it makes"
        )
    return model_id


def use_encoder(engine: Engine, kind: str, encoder: Any) -> None:
    """Register an encoder for a modality on the engine (the handle and those made by its scope()):
    add_image / add_audio use it by default and recall searches with its text side."""
    model_id = check_encoder(kind, encoder)
    check_space(engine.store, kind, model_id)
    engine.media.encoders[kind] = encoder


def encode_file(kind: str, file: Path, encoder: Any) -> tuple[ModalitySpace, np.ndarray]:
    """The encoder's unit vector for a file, with the space (model id, dimension) it lies in."""
    model_id = check_encoder(kind, encoder)
    try:
        vector = np.asarray(getattr(encoder, MEDIA[kind][1])(file), dtype=np.float32).reshape(-1)
    except RippleMemError:
        raise
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"the {kind} encoder could not read {str(file)!r}: {exc}") from exc
    if not vector.size or not np.all(np.isfinite(vector)) or not np.any(vector):
        raise InvalidInputError(
            f"the {kind} encoder {model_id!r} gave no usable vector for {str(file)!r} "
            "(empty, all zeros, or not finite)"
        )
    return ModalitySpace(model_id, int(vector.shape[0])), vector / float(np.linalg.norm(vector))


def add_media(
    engine: Engine,
    scope: Scope,
    kind: str,
    path: Any,
    text: str | None,
    encoder: Any,
    *,
    importance: float | None,
    metadata: Mapping[str, Any] | None,
    event_time: datetime | str | None,
    session_id: str | None,
) -> Memory:
    """Store an image or audio file reference as a perceptual memory; returns the memory."""
    text_field = MEDIA[kind][0]
    file = check_media_file(kind, path)
    if text is not None and (not isinstance(text, str) or not text.strip()):
        raise InvalidInputError(f"{text_field} must be a non-empty string or None")
    encoder = encoder if encoder is not None else engine.media.encoders.get(kind)
    if encoder is None and text is None:
        raise InvalidInputError(
            f"add_{kind} needs a {text_field} (embedded as text) or an encoder=... that embeds "
            f"{kind}s (e.g. {'CLIP' if kind == 'image' else 'CLAP'}; see mem.media.use_encoder)"
        )
    encoded = None if encoder is None else encode_file(kind, file, encoder)
    if encoded is not None:
        check_space(engine.store, kind, encoded[0].model_id, encoded[0].dimension)
    embedded = ([] if text is None else [text_field]) + ([] if encoded is None else [kind])
    described = {
        "file": str(file),
        "file_name": file.name,
        "media_type": mimetypes.guess_type(file.name)[0] or "application/octet-stream",
        text_field: text,
        "embedded": embedded,
        "encoder": None if encoded is None else encoded[0].model_id,
    }
    item = {
        "content": text if text is not None else f"{kind} {file.name}",
        "type": "perceptual",
        "modality": kind,
        "importance": importance,
        "event_time": event_time,
        "session_id": session_id,
        "metadata": {**(metadata or {}), **described},
        "source": str(file),
    }
    memory = build_memory(item, 0, "perceptual", engine.clock(), scope, engine.settings)
    with engine.unit_of_work(scope.user_id) as work:
        [stored] = write_batch(engine, scope.user_id, [memory], [GraphInput()])
        if encoded is not None:
            try:
                work.media.add(scope.user_id, stored.id, kind, *encoded)
            except BaseException:
                delete_memories(engine, scope.user_id, [stored.id])
                raise
    if encoder is not None:
        use_encoder(engine, kind, encoder)
    return stored
