"""RippleMem: tiered, associative long-term memory for LLM agents.

Public API: ``RippleMem`` (the facade), the data types ``Memory``, ``Hit``, ``Recall``, ``Scope``,
``MemoryType``, the ``Settings`` object, embedders, and the errors. Heavy modules load lazily so
``import ripplemem`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "RippleMem": "ripplemem.memory",
    "Memory": "ripplemem.types",
    "Hit": "ripplemem.types",
    "Recall": "ripplemem.types",
    "Scope": "ripplemem.types",
    "MemoryType": "ripplemem.types",
    "Settings": "ripplemem.config",
    "ScoreProfile": "ripplemem.config",
    "Embedder": "ripplemem.embeddings",
    "SentenceTransformerEmbedder": "ripplemem.embeddings",
    "OpenAIEmbedder": "ripplemem.embeddings",
    "HashingEmbedder": "ripplemem.embeddings",
    "MultilingualE5Embedder": "ripplemem.embeddings",
    "OnnxMiniLMEmbedder": "ripplemem.onnx_embedder",
    "export_minilm_onnx": "ripplemem.onnx_embedder",
    "RippleMemError": "ripplemem.errors",
    "InvalidInputError": "ripplemem.errors",
    "InvalidTypeError": "ripplemem.errors",
    "MemoryNotFoundError": "ripplemem.errors",
    "StoreError": "ripplemem.errors",
    "SchemaVersionError": "ripplemem.errors",
    "EmbeddingModelMismatchError": "ripplemem.errors",
    "MissingDependencyError": "ripplemem.errors",
    "UserMismatchError": "ripplemem.errors",
    "EraseReport": "ripplemem.privacy",
    "KnowledgeBaseAccessError": "ripplemem.errors",
    "IngestReport": "ripplemem.ingest",
    "KnowledgeBase": "ripplemem.knowledge_bases",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from ripplemem.config import ScoreProfile, Settings
    from ripplemem.embeddings import (
        Embedder, HashingEmbedder, MultilingualE5Embedder, OpenAIEmbedder, SentenceTransformerEmbedder,
    )
    from ripplemem.onnx_embedder import OnnxMiniLMEmbedder, export_minilm_onnx
    from ripplemem.errors import (
        EmbeddingModelMismatchError, InvalidInputError, InvalidTypeError, MemoryNotFoundError,
        KnowledgeBaseAccessError, MissingDependencyError, RippleMemError, SchemaVersionError, StoreError,
        UserMismatchError,
    )
    from ripplemem.ingest import IngestReport
    from ripplemem.knowledge_bases import KnowledgeBase
    from ripplemem.memory import RippleMem
    from ripplemem.privacy import EraseReport
    from ripplemem.types import Hit, Memory, MemoryType, Recall, Scope


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ripplemem' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
