"""RippleMemToolSpec: store, recall, connect and forget memories as LlamaIndex agent tools."""

# No `from __future__ import annotations` here: LlamaIndex builds each tool's JSON schema from the
# method signature, and the annotations must be real types for that.

import asyncio
from collections.abc import Iterable

from llama_index.core.tools.tool_spec.base import BaseToolSpec

from llamaindex_ripplemem._common import check_memory, check_mode, check_positive_int, memory_line
from ripplemem import InvalidInputError, RippleMem

_MAX_HOPS_LIMIT = 6
# What an agent may write: events and lasting facts (working and document memories come from elsewhere).
STORABLE_TYPES = ("episodic", "semantic")


class RippleMemToolSpec(BaseToolSpec):
    """Long-term memory tools for an agent: ``RippleMemToolSpec(memory=mem).to_tool_list()``.

    Every tool reads and writes only the user (and agent) of the handle it was given; each has a
    sync and an async version, so it runs in FunctionAgent, ReActAgent and AgentWorkflow alike.
    """

    spec_functions = [
        ("store_memory", "astore_memory"),
        ("recall_memory", "arecall_memory"),
        ("find_connections", "afind_connections"),
        ("forget_memory", "aforget_memory"),
    ]

    def __init__(self, memory: RippleMem, *, mode: str = "ripple", types: str | Iterable[str] | None = None,
                 max_results_limit: int = 20) -> None:
        self.memory = check_memory(memory)
        self.mode = check_mode(mode)
        self.types = types
        self.max_results_limit = check_positive_int("max_results_limit", max_results_limit)

    def store_memory(self, content: str, memory_type: str = "episodic",
                     importance: float | None = None) -> str:
        """Save something about the user to long-term memory, to recall it in later conversations.

        Use it when the user shares a fact, preference, plan, name or date worth keeping, or asks
        you to remember something. Write one self-contained sentence in the third person, e.g.
        "The user's sister Ana lives in Lisbon." Returns the new memory's id.

        Args:
            content (str): the memory as one self-contained sentence.
            memory_type (str): "episodic" for an event (default), "semantic" for a lasting fact.
            importance (float): optional, 0 to 1; 0.9 for health, safety or strong wishes.
        """
        if memory_type not in STORABLE_TYPES:
            allowed = ", ".join(STORABLE_TYPES)
            raise InvalidInputError(f"memory_type must be one of {allowed}; got {memory_type!r}")
        stored = self.memory.add(content, type=memory_type, importance=importance,
                                 source="llamaindex:store_memory")
        return f"Stored memory {stored.id} ({stored.type}): {stored.content}"

    async def astore_memory(self, content: str, memory_type: str = "episodic",
                            importance: float | None = None) -> str:
        """Async twin of store_memory."""
        return await asyncio.to_thread(self.store_memory, content, memory_type, importance)

    def recall_memory(self, query: str, max_results: int = 5) -> str:
        """Search long-term memory for what you know about the user; use it before answering about them.

        Ask in plain words ("Where does the user's sister live?"). Related memories come back
        too, reached through the people, places and things they share. Each line gives the
        memory's id, when it happened, its type and its text.

        Args:
            query (str): what you want to know, in plain words.
            max_results (int): how many memories to return at most (default 5).
        """
        limit = min(check_positive_int("max_results", max_results), self.max_results_limit)
        found = self.memory.recall(query, limit, mode=self.mode, types=self.types)
        if not found.hits:
            return f"No memories found for {query!r}."
        lines = [memory_line(hit.memory) for hit in found.hits]
        noun = "memory" if len(lines) == 1 else "memories"
        return "\n".join([f"{len(lines)} {noun} for {query!r}, best first:", *lines])

    async def arecall_memory(self, query: str, max_results: int = 5) -> str:
        """Async twin of recall_memory."""
        return await asyncio.to_thread(self.recall_memory, query, max_results)

    def find_connections(self, source: str, target: str, max_hops: int = 3) -> str:
        """Explain how two people, places or things in memory are linked, via the memories that mention them.

        Use it for questions such as "How do I know Bob?" or "What links Ana to Acme?". Names are
        matched as the user wrote them; a memory id from recall_memory works too.

        Args:
            source (str): the first name (or memory id).
            target (str): the second name (or memory id).
            max_hops (int): how many links a path may have at most (default 3, at most 6).
        """
        hops = min(check_positive_int("max_hops", max_hops), _MAX_HOPS_LIMIT)
        paths = self.memory.find_connections(source, target, max_hops=hops)
        if not paths:
            return (f"No connection found between {source!r} and {target!r} within {hops} hops "
                    "(one of them may not be in memory; try recall_memory).")
        lines = [f"{n}. {path.explain()}" for n, path in enumerate(paths, start=1)]
        noun = "connection" if len(lines) == 1 else "connections"
        header = f"{len(lines)} {noun} between {source!r} and {target!r}, shortest first:"
        return "\n".join([header, *lines])

    async def afind_connections(self, source: str, target: str, max_hops: int = 3) -> str:
        """Async twin of find_connections."""
        return await asyncio.to_thread(self.find_connections, source, target, max_hops)

    def forget_memory(self, memory_id: str) -> str:
        """Delete one memory for good, by its id: when the user asks you to forget something, or it is wrong.

        Find the id with recall_memory first (the "id ..." part of a line).

        Args:
            memory_id (str): the id of the memory to delete.
        """
        found = self.memory.get(memory_id.strip() if isinstance(memory_id, str) else memory_id)
        if found is None or not self.memory.delete(found.id):
            return f"No memory with id {memory_id!r}; use recall_memory to find the right id."
        return f"Forgot memory {found.id}: {found.content}"

    async def aforget_memory(self, memory_id: str) -> str:
        """Async twin of forget_memory."""
        return await asyncio.to_thread(self.forget_memory, memory_id)
