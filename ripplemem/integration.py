"""The public surface for adapter authors: what a framework adapter (langchain_ripplemem,
llamaindex_ripplemem, or your own) needs of RippleMem beyond ``ripplemem``'s own exports.

- A handle's parts: the embedder it embeds with, its clock, whether its store lives in memory only,
  the users of its store, its stored vectors and the memories nearest a vector.
- Lookups by an id the caller keeps in metadata (a document or node id): ``memories_by_caller_id``,
  ``memories_by_metadata``.
- The flat metadata of a memory (``memory_metadata``; a hit's is ``ripplemem.hit_metadata``) and its
  keys: ``MEMORY_KEYS``, ``RIPPLEMEM_KEYS``, ``DEFAULT_SOURCE``.
- Filters as recall options: ``Condition``, ``OPERATORS``, ``recall_options``.
- The checks RippleMem applies to its own arguments, with its error messages: ``check_k``,
  ``check_mode`` (with ``RECALL_MODES``), ``check_type``, ``check_types``, ``check_identifier``,
  ``check_score_threshold``; and ``remember_cue`` ("remember that ...") and ``count_phrase``.

The tool descriptions and replies the adapters' agent tools share with the MCP server are in
``ripplemem.interfaces.tool_replies``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from ripplemem.core.text import count_phrase
from ripplemem.core.validation import check_identifier, check_k, check_mode, check_type, check_types
from ripplemem.interfaces.caller_ids import memories_by_caller_id, memories_by_metadata
from ripplemem.interfaces.hit_metadata import DEFAULT_SOURCE, MEMORY_KEYS, RIPPLEMEM_KEYS, memory_metadata
from ripplemem.interfaces.metadata_filters import OPERATORS, Condition, recall_options
from ripplemem.retrieval.hybrid import RECALL_MODES
from ripplemem.retrieval.relevance import check_score_threshold
from ripplemem.rules.lifecycle import remember_cue
from ripplemem.store.tables.knowledge_bases import kb_name_of

if TYPE_CHECKING:
    from ripplemem.core.types import Memory
    from ripplemem.embedding.base import Embedder
    from ripplemem.memory import RippleMem

__all__ = [
    "DEFAULT_SOURCE",
    "MEMORY_KEYS",
    "OPERATORS",
    "RECALL_MODES",
    "RIPPLEMEM_KEYS",
    "Condition",
    "check_identifier",
    "check_k",
    "check_mode",
    "check_score_threshold",
    "check_type",
    "check_types",
    "count_phrase",
    "handle_embedder",
    "handle_now",
    "held_in_memory",
    "memories_by_caller_id",
    "memories_by_metadata",
    "memory_metadata",
    "nearest_memories",
    "recall_options",
    "remember_cue",
    "store_users",
    "stored_vectors",
]


def handle_embedder(memory: RippleMem) -> Embedder:
    """The embedder behind a RippleMem handle (the store embeds every value with it), wrapped in the
    check of its output; the wrapped object is its ``inner``."""
    return memory._engine.embedder


def held_in_memory(memory: RippleMem) -> bool:
    """Whether the handle's store lives in memory only (path=None and no server), never reopened."""
    return memory.path is None and not memory._engine.store.on_server


def handle_now(memory: RippleMem) -> datetime:
    """The handle's clock (``RippleMem(clock=...)``): the time memories are dated by, and TTLs run on."""
    return memory._engine.clock()


def store_users(memory: RippleMem) -> list[str]:
    """Every user with memories in the handle's store (knowledge bases are not users)."""
    return [user for user in memory._engine.store.user_ids() if kb_name_of(user) is None]


def stored_vectors(memory: RippleMem, memories: Sequence[Memory]) -> np.ndarray:
    """The stored (unit) vector of each memory, one row each; an archived memory keeps none in the
    store, so its text is embedded again."""
    engine = memory._engine
    rows = []
    for item in memories:
        vector = engine.store.embedding_of(item.id, item.user_id)
        rows.append(vector if vector is not None else engine.embedder.embed_documents([item.content])[0])
    return np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32)


def nearest_memories(
    memory: RippleMem, vector: np.ndarray, k: int, metadata: Mapping[str, Any] | None
) -> list[Memory]:
    """The handle's k memories nearest a unit vector, best first, within its scope (agent) and with
    these metadata values."""
    engine = memory._engine
    ids = [memory_id for memory_id, _ in engine.index.query(memory.user_id, vector, k)]
    flt = memory._filter(metadata=tuple((metadata or {}).items()))
    found, _ = engine.store.fetch(ids, flt)
    by_id = {item.id: item for item in found}
    return [by_id[memory_id] for memory_id in ids if memory_id in by_id]
