"""The public surface: every name `ripplemem` exports resolves, the facade keeps its common calls
flat and the rest in namespaces, every public method says what it does, and each async twin takes
exactly what its sync method takes."""

from __future__ import annotations

import inspect
from typing import get_args

import ripplemem
from ripplemem import RippleMem
from ripplemem.api.deprecation import Moved
from ripplemem.core import choices
from ripplemem.core.types import MEMORY_TYPES
from ripplemem.engine.engine import VECTOR_INDEXES
from ripplemem.markdown.chunk.chunking import CHUNKERS
from ripplemem.retrieval.hybrid import RECALL_MODES
from ripplemem.rules.lifecycle.forgetting import STRATEGIES
from ripplemem.store.vectors.chroma import ISOLATIONS

# The flat surface of a handle (docs/api.md): the common calls, the headline verbs, their async
# twins, the admin entry points and the namespaces. A new flat name is a decision: add it here.
FLAT = {
    "add",
    "add_many",
    "import_file",
    "recall",
    "ask",
    "get",
    "update",
    "delete",
    "list",
    "stats",
    "history",
    "scope",
    "close",
    "observe",
    "working",
    "consolidate",
    "forget",
    "maintain",
    "erase",
    "ingest",
    "aadd",
    "aadd_many",
    "arecall",
    "aget",
    "aupdate",
    "adelete",
    "alist",
    "astats",
    "ahistory",
    "aforget",
    "amaintain",
    "aerase",
    "aingest",
    "reembed",
    "check",
    "erase_user",
    "path",
    "settings",
    "user_id",
    "graph",
    "kb",
    "sensors",
    "media",
    "lifecycle",
    "analysis",
}
NAMESPACES = ("graph", "kb", "sensors", "media", "lifecycle", "analysis")


def test_every_exported_name_resolves() -> None:
    missing = [name for name in ripplemem.__all__ if getattr(ripplemem, name, None) is None]
    assert missing == []


def test_answer_connection_store_options_and_the_choice_types_are_exported() -> None:
    from ripplemem.llm.answer import Answer
    from ripplemem.retrieval.graph_queries import Connection

    assert ripplemem.Answer is Answer and ripplemem.Connection is Connection
    assert {
        "Answer",
        "Connection",
        "StoreOptions",
        "RecallMode",
        "MemoryTypeName",
        "Route",
        "ExpandMode",
        "TimePhraseMode",
        "ForgetStrategy",
        "VectorIndexName",
        "Isolation",
        "BackendName",
        "Chunker",
        "ImportFormat",
        "Modality",
        "MediaKind",
    } <= set(ripplemem.__all__)
    assert get_args(ripplemem.RecallMode) == ("ripple", "hybrid", "dense", "keyword")


def public_names(cls: type) -> set[str]:
    """The public names of a class that are not deprecated aliases."""
    return {
        name
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and not isinstance(member, Moved)
    }


def test_the_flat_surface_is_the_documented_one() -> None:
    assert public_names(RippleMem) == FLAT


def test_every_public_facade_and_namespace_method_has_a_docstring(memory_only: RippleMem) -> None:
    owners: list[object] = [RippleMem, *(type(getattr(memory_only, name)) for name in NAMESPACES)]
    undocumented = [
        f"{getattr(owner, '__name__', owner)}.{name}"
        for owner in owners
        for name in public_names(owner)  # type: ignore[arg-type]
        if not (inspect.getdoc(getattr(owner, name)) or "").strip()
    ]
    assert undocumented == []


def async_twins(owner: type) -> list[str]:
    """The async methods of a class that have a sync method of the same name without the leading a."""
    return [
        name
        for name, member in inspect.getmembers(owner, inspect.iscoroutinefunction)
        if not name.startswith("_") and hasattr(owner, name[1:])
    ]


def test_each_async_twin_takes_exactly_what_its_sync_method_takes(memory_only: RippleMem) -> None:
    owners = [RippleMem, *(type(getattr(memory_only, name)) for name in NAMESPACES)]
    twins = {f"{owner.__name__}.{name}": owner for owner in owners for name in async_twins(owner)}
    assert len(twins) == 14  # 13 flat twins and mem.lifecycle.aarchive
    for label, owner in twins.items():
        name = label.split(".")[1]
        assert inspect.signature(getattr(owner, name)) == inspect.signature(getattr(owner, name[1:])), label


def test_each_closed_choice_is_defined_once() -> None:
    """The run-time checks read their values from the Literal types the signatures use."""
    assert get_args(choices.RecallMode) == RECALL_MODES
    assert get_args(choices.MemoryTypeName) == MEMORY_TYPES
    assert get_args(choices.ForgetStrategy) == STRATEGIES
    assert get_args(choices.VectorIndexName) == VECTOR_INDEXES
    assert get_args(choices.Isolation) == ISOLATIONS
    assert get_args(choices.Chunker) == CHUNKERS
