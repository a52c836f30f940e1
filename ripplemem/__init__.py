"""RippleMem: tiered, associative long-term memory for LLM agents.

Public API: ``RippleMem`` (the facade) and its ``StoreOptions``, the data types ``Memory``, ``Hit``,
``Recall``, ``Scope``, ``MemoryType``, ``Answer``, ``Connection`` and the reports, the ``Literal``
types of the closed choices (``RecallMode``, ``Route``, ...), the ``Settings`` objects, embedders,
the errors, and the helpers the docs use (``hit_metadata``, ``graph_view``, ``write_graph_html``,
``build_server``, ``index_damage``, ``migrate``). Everything public is exported here (and, for
adapter authors, in ``ripplemem.integration``); the sub-packages are the implementation. Heavy
modules load lazily so ``import ripplemem`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ripplemem.core.version import __version__

_EXPORTS = {
    "RippleMem": "ripplemem.memory",
    "Memory": "ripplemem.core.types",
    "Hit": "ripplemem.core.types",
    "Recall": "ripplemem.core.types",
    "Scope": "ripplemem.core.types",
    "MemoryType": "ripplemem.core.types",
    "Settings": "ripplemem.config",
    "ScoreProfile": "ripplemem.config",
    "Embedder": "ripplemem.embedding.base",
    "SentenceTransformerEmbedder": "ripplemem.embedding.embedders",
    "OpenAIEmbedder": "ripplemem.embedding.embedders",
    "HashingEmbedder": "ripplemem.embedding.embedders",
    "MultilingualE5Embedder": "ripplemem.embedding.embedders",
    "OnnxMiniLMEmbedder": "ripplemem.embedding.onnx",
    "FrameworkEmbedder": "ripplemem.embedding.framework",
    "export_minilm_onnx": "ripplemem.embedding.onnx",
    "RippleMemError": "ripplemem.errors",
    "InvalidInputError": "ripplemem.errors",
    "InvalidTypeError": "ripplemem.errors",
    "MemoryNotFoundError": "ripplemem.errors",
    "StoreError": "ripplemem.errors",
    "ClosedError": "ripplemem.errors",
    "EmbedderOutputError": "ripplemem.errors",
    "SchemaVersionError": "ripplemem.errors",
    "EmbeddingModelMismatchError": "ripplemem.errors",
    "MissingDependencyError": "ripplemem.errors",
    "UserMismatchError": "ripplemem.errors",
    "EraseReport": "ripplemem.privacy.erase",
    "KnowledgeBaseAccessError": "ripplemem.errors",
    "IngestReport": "ripplemem.documents.ingest",
    "ImportReport": "ripplemem.api.bulk_import",
    "KnowledgeBase": "ripplemem.engine.knowledge_bases",
    "LifecycleReport": "ripplemem.lifecycle.report",
    "MaintenanceReport": "ripplemem.lifecycle.report",
    "ConsolidationReport": "ripplemem.lifecycle.consolidate",
    "HistoryEvent": "ripplemem.store.tables.history",
    "Predecessor": "ripplemem.retrieval.history",
    "Reading": "ripplemem.rules.perceptual",
    "MetricStats": "ripplemem.rules.perceptual",
    "GraphQualityReport": "ripplemem.analysis.graph_quality",
    "GraphIssue": "ripplemem.analysis.graph_quality",
    "CheckReport": "ripplemem.store.recovery.check_report",
    "LLMRequiredError": "ripplemem.llm.chat",
    "ImageEncoder": "ripplemem.embedding.media_encoders",
    "AudioEncoder": "ripplemem.embedding.media_encoders",
    "SentenceTransformerImageEncoder": "ripplemem.embedding.media_encoders",
    "ClapAudioEncoder": "ripplemem.embedding.media_encoders",
    "LifecycleSettings": "ripplemem.rules.lifecycle.settings",
    "SensorSettings": "ripplemem.rules.perceptual",
    "MetricRule": "ripplemem.rules.perceptual",
    "DEFAULT_METRICS": "ripplemem.rules.perceptual",
    "hit_metadata": "ripplemem.interfaces.hit_metadata",
    "graph_view": "ripplemem.interfaces.viz.data",
    "write_graph_html": "ripplemem.interfaces.viz.page",
    "build_server": "ripplemem.interfaces.mcp_server",
    "index_damage": "ripplemem.store.vectors.chroma_health",
    "migrate": "ripplemem.lifecycle.migrate",
    "MigrationReport": "ripplemem.store.transfer",
    "Answer": "ripplemem.llm.answer",
    "Connection": "ripplemem.retrieval.graph_queries",
    "StoreOptions": "ripplemem.api.options",
    "MemoryTypeName": "ripplemem.core.choices",
    "RecallMode": "ripplemem.core.choices",
    "Route": "ripplemem.core.choices",
    "ExpandMode": "ripplemem.core.choices",
    "TimePhraseMode": "ripplemem.core.choices",
    "ForgetStrategy": "ripplemem.core.choices",
    "Modality": "ripplemem.core.choices",
    "MediaKind": "ripplemem.core.choices",
    "VectorIndexName": "ripplemem.core.choices",
    "Isolation": "ripplemem.core.choices",
    "BackendName": "ripplemem.core.choices",
    "ImportFormat": "ripplemem.core.choices",
    "Chunker": "ripplemem.core.choices",
}

# A literal list: mypy reads `__all__` only when it is spelled out (and tests/contract/test_typed_surface.py
# checks it against _EXPORTS and the imports below).
__all__ = [
    "__version__",
    "RippleMem",
    "Memory",
    "Hit",
    "Recall",
    "Scope",
    "MemoryType",
    "Settings",
    "ScoreProfile",
    "Embedder",
    "SentenceTransformerEmbedder",
    "OpenAIEmbedder",
    "HashingEmbedder",
    "MultilingualE5Embedder",
    "OnnxMiniLMEmbedder",
    "FrameworkEmbedder",
    "export_minilm_onnx",
    "RippleMemError",
    "InvalidInputError",
    "InvalidTypeError",
    "MemoryNotFoundError",
    "StoreError",
    "ClosedError",
    "EmbedderOutputError",
    "SchemaVersionError",
    "EmbeddingModelMismatchError",
    "MissingDependencyError",
    "UserMismatchError",
    "EraseReport",
    "KnowledgeBaseAccessError",
    "IngestReport",
    "ImportReport",
    "KnowledgeBase",
    "LifecycleReport",
    "MaintenanceReport",
    "ConsolidationReport",
    "HistoryEvent",
    "Predecessor",
    "Reading",
    "MetricStats",
    "GraphQualityReport",
    "GraphIssue",
    "CheckReport",
    "LLMRequiredError",
    "ImageEncoder",
    "AudioEncoder",
    "SentenceTransformerImageEncoder",
    "ClapAudioEncoder",
    "LifecycleSettings",
    "SensorSettings",
    "MetricRule",
    "DEFAULT_METRICS",
    "hit_metadata",
    "graph_view",
    "write_graph_html",
    "build_server",
    "index_damage",
    "migrate",
    "MigrationReport",
    "Answer",
    "Connection",
    "StoreOptions",
    "MemoryTypeName",
    "RecallMode",
    "Route",
    "ExpandMode",
    "TimePhraseMode",
    "ForgetStrategy",
    "Modality",
    "MediaKind",
    "VectorIndexName",
    "Isolation",
    "BackendName",
    "ImportFormat",
    "Chunker",
]

if TYPE_CHECKING:
    from ripplemem.analysis.graph_quality import GraphIssue, GraphQualityReport
    from ripplemem.api.bulk_import import ImportReport
    from ripplemem.api.options import StoreOptions
    from ripplemem.config import ScoreProfile, Settings
    from ripplemem.core.choices import (
        BackendName,
        Chunker,
        ExpandMode,
        ForgetStrategy,
        ImportFormat,
        Isolation,
        MediaKind,
        MemoryTypeName,
        Modality,
        RecallMode,
        Route,
        TimePhraseMode,
        VectorIndexName,
    )
    from ripplemem.core.types import Hit, Memory, MemoryType, Recall, Scope
    from ripplemem.documents.ingest import IngestReport
    from ripplemem.embedding.base import Embedder
    from ripplemem.embedding.embedders import (
        HashingEmbedder,
        MultilingualE5Embedder,
        OpenAIEmbedder,
        SentenceTransformerEmbedder,
    )
    from ripplemem.embedding.framework import FrameworkEmbedder
    from ripplemem.embedding.media_encoders import (
        AudioEncoder,
        ClapAudioEncoder,
        ImageEncoder,
        SentenceTransformerImageEncoder,
    )
    from ripplemem.embedding.onnx import OnnxMiniLMEmbedder, export_minilm_onnx
    from ripplemem.engine.knowledge_bases import KnowledgeBase
    from ripplemem.errors import (
        ClosedError,
        EmbedderOutputError,
        EmbeddingModelMismatchError,
        InvalidInputError,
        InvalidTypeError,
        KnowledgeBaseAccessError,
        MemoryNotFoundError,
        MissingDependencyError,
        RippleMemError,
        SchemaVersionError,
        StoreError,
        UserMismatchError,
    )
    from ripplemem.interfaces.hit_metadata import hit_metadata
    from ripplemem.interfaces.mcp_server import build_server
    from ripplemem.interfaces.viz.data import graph_view
    from ripplemem.interfaces.viz.page import write_graph_html
    from ripplemem.lifecycle.consolidate import ConsolidationReport
    from ripplemem.lifecycle.migrate import migrate
    from ripplemem.lifecycle.report import LifecycleReport, MaintenanceReport
    from ripplemem.llm.answer import Answer
    from ripplemem.llm.chat import LLMRequiredError
    from ripplemem.memory import RippleMem
    from ripplemem.privacy.erase import EraseReport
    from ripplemem.retrieval.graph_queries import Connection
    from ripplemem.retrieval.history import Predecessor
    from ripplemem.rules.lifecycle.settings import LifecycleSettings
    from ripplemem.rules.perceptual import DEFAULT_METRICS, MetricRule, MetricStats, Reading, SensorSettings
    from ripplemem.store.recovery.check_report import CheckReport
    from ripplemem.store.tables.history import HistoryEvent
    from ripplemem.store.transfer import MigrationReport
    from ripplemem.store.vectors.chroma_health import index_damage


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ripplemem' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
