"""The public metadata of a recalled memory: one flat dict with the same keys in the LangChain and
LlamaIndex adapters and in the MCP server's recall output.

The caller's own metadata (``mem.add(..., metadata={...})``, an ingested chunk's page and file name)
sits flat beside RippleMem's keys. RippleMem's keys (``RIPPLEMEM_KEYS``) always mean the same
thing; where a caller key has the same name, RippleMem's value wins (as mem0 and LlamaIndex's vector
stores do with their own keys) and the caller's value moves to ``metadata_<key>``, never dropped.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ripplemem.core.types import Hit, Memory

#: Where a memory came from when nothing better is known (an ingested chunk's is its file's path).
DEFAULT_SOURCE = "ripplemem"
#: What a caller key that collides with one of RippleMem's keys is renamed to: metadata_<key>.
SHADOWED_PREFIX = "metadata_"

#: RippleMem's keys in every memory's metadata, in this order.
MEMORY_KEYS = (
    "memory_id",
    "type",
    "source",
    "time",
    "time_basis",
    "event_time",
    "created_at",
    "session_id",
    "knowledge_base",
    "importance",
)
#: The keys a recalled memory adds: its ranking score, its relevance in [0, 1] (comparable across
#: queries, what a score threshold cuts on) and how recall reached it (provenance).
HIT_KEYS = ("score", "relevance", "why")
#: Every key RippleMem owns; a caller key of the same name moves to metadata_<key>.
RIPPLEMEM_KEYS = MEMORY_KEYS + HIT_KEYS


def hit_metadata(hit: Hit) -> dict[str, Any]:
    """A recalled memory's public metadata: memory_metadata's keys plus score, relevance and why."""
    return _public(hit.memory, {"score": float(hit.score), "relevance": float(hit.relevance), "why": hit.why})


def memory_metadata(memory: Memory) -> dict[str, Any]:
    """A memory's public metadata: RippleMem's keys first, then the caller's own keys, flat.

    ``time`` is when the memory happened if known (``time_basis`` "event_time"), else when it was
    stored ("created_at"); all times are ISO-8601 in UTC with the offset. ``source`` is the origin
    (an ingested file's path, ``add(source=...)``, the caller's ``metadata["source"]``), else
    "ripplemem". ``knowledge_base`` names a shared document chunk's base (None for the user's own).
    """
    return _public(memory, {})


def _public(memory: Memory, hit_fields: dict[str, Any]) -> dict[str, Any]:
    """RippleMem's keys (with a hit's score, relevance and why), then the caller's keys, renamed on a
    clash."""
    time, basis = (
        (memory.event_time, "event_time") if memory.event_time else (memory.created_at, "created_at")
    )
    caller = dict(memory.metadata)
    knowledge_base = knowledge_base_of(memory)
    public: dict[str, Any] = {
        "memory_id": memory.id,
        "type": memory.type,
        "source": memory.source or _text_or_none(caller.get("source")) or DEFAULT_SOURCE,
        "time": iso_time(time),
        "time_basis": basis if time is not None else None,
        "event_time": iso_time(memory.event_time),
        "created_at": iso_time(memory.created_at),
        # A chunk's session is an internal per-file id (it links neighbouring chunks): not shown.
        "session_id": None if knowledge_base else memory.session_id,
        "knowledge_base": knowledge_base,
        "importance": memory.importance,
        **hit_fields,
    }
    for key, value in caller.items():
        if key in public and value == public[key]:
            continue  # an ingested chunk's source / knowledge_base: the same fact, said once
        public[_free_name(key, caller)] = value
    return public


def knowledge_base_of(memory: Memory) -> str | None:
    """The knowledge base a shared document chunk belongs to (it reads "kb:NAME" as its user), or None."""
    name = memory.metadata.get("knowledge_base")
    if memory.type == "document" and isinstance(name, str) and memory.user_id == f"kb:{name}":
        return name
    return None


def iso_time(value: datetime | None) -> str | None:
    """A time as ISO-8601 in UTC with its offset, to the second ('2024-03-01T09:30:00+00:00');
    a naive time is read as UTC, as the store reads it."""
    if value is None:
        return None
    aware = value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
    return aware.isoformat(timespec="seconds")


def caller_key(key: str) -> str:
    """The caller metadata key a public key stands for ('metadata_type' -> 'type', 'page' -> 'page')."""
    if key.startswith(SHADOWED_PREFIX) and key[len(SHADOWED_PREFIX) :] in RIPPLEMEM_KEYS:
        return key[len(SHADOWED_PREFIX) :]
    return key


def _free_name(key: str, caller: dict[str, Any]) -> str:
    """The caller's key, or metadata_<key> when RippleMem owns that name (prefixed again while the
    caller already has a key of the new name)."""
    name = key
    while name in RIPPLEMEM_KEYS or (name != key and name in caller):
        name = SHADOWED_PREFIX + name
    return name


def _text_or_none(value: Any) -> str | None:
    """A non-empty string, else None (a caller's metadata["source"] may be anything)."""
    return value if isinstance(value, str) and value.strip() else None
