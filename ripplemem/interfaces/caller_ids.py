"""Memories found by an id a caller keeps in their metadata (a LangChain document id, a LlamaIndex
node or source document id), through the store's index on that key: the vector-store adapters'
lookups, without reading every memory of the user."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ripplemem.store.tables.memories import MemoryFilter

if TYPE_CHECKING:
    from ripplemem.core.types import Memory
    from ripplemem.memory import RippleMem


def memories_by_metadata(memory: RippleMem, key: str, values: Sequence[str]) -> dict[str, list[Memory]]:
    """The handle's active memories whose metadata[key] is each value (newest first); ``key`` is one
    of ripplemem.store.tables.memories.INDEXED_METADATA_KEYS. Values no memory has are left out."""
    store = memory._engine.store
    agent_id = memory.scope_info.agent_id
    ids = store.ids_by_metadata(memory.user_id, key, list(dict.fromkeys(values)), agent_id=agent_id)
    wanted = [memory_id for found in ids.values() for memory_id in found]
    rows, _ = store.fetch(wanted, MemoryFilter(user_id=memory.user_id, agent_id=agent_id))
    by_id = {row.id: row for row in rows}
    return {value: [by_id[i] for i in found if i in by_id] for value, found in ids.items()}


def memories_by_caller_id(memory: RippleMem, key: str, ids: Sequence[str]) -> dict[str, Memory]:
    """The memory of each caller id that has one: the newest memory carrying it under ``key``, or,
    for a memory written another way (no ``key``), the memory whose own id it is."""
    stored = memories_by_metadata(memory, key, ids)
    found = {caller_id: memories[0] for caller_id, memories in stored.items() if memories}
    for caller_id in ids:
        native = None if caller_id in found else memory.get(caller_id)
        if native is not None and key not in native.metadata:
            found[caller_id] = native
    return found
