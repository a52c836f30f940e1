"""The closed choices of the public API as `Literal` types, each defined once: signatures use them
so a type checker catches a misspelt mode, and the modules that check them at run time read their
valid values from here (`typing.get_args`), so the two cannot disagree."""

from __future__ import annotations

from typing import Any, Literal, get_args

MemoryTypeName = Literal["working", "episodic", "semantic", "perceptual", "document"]
"""A memory type by name (``MemoryType`` holds the same five)."""

RecallMode = Literal["ripple", "hybrid", "dense", "keyword"]
"""How recall searches: spreading activation over the graph, or a first stage alone."""

RouteTarget = Literal["memory", "documents", "both"]
"""Where a routed recall searches."""

Route = Literal["auto", "memory", "documents", "both"]
"""recall(route=...): decide by the query ("auto") or choose a target."""

ExpandMode = Literal["mqe", "hyde", "both"]
"""recall(expand=...): rewrite the query, draft an answer passage, or both."""

TimePhraseMode = Literal["boost", "filter", "off"]
"""What recall does with a time phrase in the query."""

ForgetStrategy = Literal["score", "importance", "time", "capacity"]
"""forget(strategy=...): the forgetting score or one of the simple strategies."""

Modality = Literal["text", "image", "audio", "sensor"]
"""What a memory was perceived as."""

MediaKind = Literal["image", "audio"]
"""The modalities with an encoder of their own (``mem.media.use_encoder``)."""

VectorIndexName = Literal["auto", "chroma", "numpy"]
"""The embedded vector index: Chroma, exact numpy, or as the store holds ("auto")."""

Isolation = Literal["collection", "filter"]
"""One Chroma collection per user, or one shared collection filtered by user."""

BackendName = Literal["embedded", "neo4j", "postgres"]
"""Where the store lives: a local SQLite ledger (with Neo4j for vectors and graph), or PostgreSQL whole."""

ImportFormat = Literal["auto", "jsonl", "text"]
"""import_file(format=...): by the file's suffix, JSON lines, or one memory per text line."""

Chunker = Literal["auto", "markdown", "semantic", "novel", "legal", "paper", "technical", "news"]
"""ingest(chunker=...): how documents are cut into chunks."""


def literal_values(choice: object) -> tuple[Any, ...]:
    """The valid values of a Literal choice, in their declared order (annotate the tuple with the
    choice: ``RECALL_MODES: tuple[RecallMode, ...] = literal_values(RecallMode)``)."""
    return tuple(get_args(choice))
