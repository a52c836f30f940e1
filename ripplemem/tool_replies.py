"""The four agent memory operations (store, recall, connect, forget) as plain-text replies for a
model: the LangChain tools and the MCP server call these, the LlamaIndex tool spec its recall."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ripplemem.text import count_phrase
from ripplemem.types import format_hit_line

if TYPE_CHECKING:
    from ripplemem.graph_queries import Connection
    from ripplemem.memory import RippleMem
    from ripplemem.types import Hit

STORE_DESCRIPTION = (
    "Save something worth remembering across conversations: a fact, preference or event about the "
    "user or their world. Write it as one self-contained sentence. Returns the new memory's id.")
RECALL_DESCRIPTION = (
    "Search long-term memory before answering questions about the user, their past, people, places "
    "or plans. Returns the best memories, one per line with id, date, type and score; ids can be "
    "passed to find_connections or forget_memory.")
CONNECTIONS_DESCRIPTION = (
    "Find how two things are connected through what you remember: give two names (people, places, "
    "things) or memory ids. Returns the linking paths, shortest first, e.g. "
    "[Calvin] -MENTIONS- \"Calvin bought a Ferrari\" -MENTIONS- [Ferrari].")
FORGET_DESCRIPTION = (
    "Delete a memory that is wrong, outdated, or that the user asked you to forget. Call "
    "recall_memory first to find its id, then pass that id here.")


def store_reply(memory: RippleMem, content: str, type: str = "episodic", importance: float | None = None,
                event_time: str | None = None, *, stored_by: str) -> str:
    """Store one memory and say so with its id: 'Stored memory <id> (semantic): <text>'."""
    stored = memory.add(content, type=type, importance=importance, event_time=event_time,
                        metadata={"stored_by": stored_by})
    return f"Stored memory {stored.id} ({stored.type}): {stored.content}"


def recall_reply(memory: RippleMem, query: str, k: int = 5, types: Sequence[str] | None = None,
                 mode: str = "ripple") -> str:
    """The best memories for a query, one numbered line each with id, date, type and score."""
    recall = memory.recall(query, k=k, mode=mode, types=list(types) if types else None)
    return hits_reply(query, recall.hits)


def hits_reply(query: str, hits: Sequence[Hit]) -> str:
    """A recall's hits as recall_reply words them (for a caller that also needs the hits)."""
    if not hits:
        return f"No memories found for {query!r}."
    lines = [f"{count_phrase(len(hits), 'memory', 'memories')} for {query!r}, best first:"]
    lines += [format_hit_line(number, hit) for number, hit in enumerate(hits, start=1)]
    return "\n".join(lines)


def connections_reply(memory: RippleMem, source: str, target: str, max_hops: int = 3) -> str:
    """The explained paths between two names or memory ids, shortest first."""
    connections: list[Connection] = memory.find_connections(source, target, max_hops=max_hops, limit=5)
    if not connections:
        return f"No connection between {source!r} and {target!r} within {max_hops} hops."
    found = count_phrase(len(connections), "connection", "connections")
    lines = [f"{found} between {source!r} and {target!r}:"]
    lines += [f"{number}. {path.explain()}" for number, path in enumerate(connections, start=1)]
    return "\n".join(lines)


def forget_reply(memory: RippleMem, memory_id: str) -> str:
    """Delete one of the handle's memories by id, or say that it has none with that id."""
    found = memory.get(memory_id.strip())
    if found is None or not memory.delete(found.id):
        return f"No memory with id {memory_id!r}; nothing was deleted. Use recall_memory to find the id."
    return f"Forgot memory {found.id}: {found.content}"
