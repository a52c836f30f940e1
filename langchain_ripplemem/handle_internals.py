"""What the LangChain adapters need of a RippleMem handle beyond its public API, in one place: the
embedder it embeds with, whether its store is in memory only, the clock it dates memories by, the
users of the store it is open on, and its stored vectors (for maximal marginal relevance and search
by a bare vector)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ripplemem import Memory, RippleMem
from ripplemem.store.tables.knowledge_bases import kb_name_of


def handle_embedder(memory: RippleMem) -> Any:
    """The embedder behind a RippleMem handle (the store embeds every value with it)."""
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
    memory: RippleMem, vector: np.ndarray, k: int, metadata: dict[str, Any] | None
) -> list[Memory]:
    """The handle's k memories nearest a unit vector, best first, within its scope (agent) and with
    these metadata values."""
    engine = memory._engine
    ids = [memory_id for memory_id, _ in engine.index.query(memory.user_id, vector, k)]
    flt = memory._filter(metadata=tuple((metadata or {}).items()))
    found, _ = engine.store.fetch(ids, flt)
    by_id = {item.id: item for item in found}
    return [by_id[memory_id] for memory_id in ids if memory_id in by_id]
