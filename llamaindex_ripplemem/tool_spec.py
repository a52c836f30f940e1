"""RippleMemToolSpec: store, recall, connect and forget memories as LlamaIndex agent tools."""

# No `from __future__ import annotations` here: LlamaIndex builds each tool's JSON schema from the
# method signature, and the annotations must be real types for that.

import asyncio
from typing import TYPE_CHECKING, Literal, get_args

from llama_index.core.tools.tool_spec.base import BaseToolSpec

from llamaindex_ripplemem._common import check_memory, check_mode, check_positive_int
from ripplemem import InvalidInputError, RippleMem
from ripplemem.text import count_phrase
from ripplemem.tool_replies import recall_reply

if TYPE_CHECKING:
    from ripplemem.graph_queries import Connection

_MAX_HOPS_LIMIT = 6
# What an agent may write: events and lasting facts (working and document memories come from elsewhere).
StoredType = Literal["episodic", "semantic"]
STORABLE_TYPES: tuple[str, ...] = get_args(StoredType)
RecallType = Literal["episodic", "semantic", "working", "perceptual", "document"]
READ_TOOLS = ("recall_memory", "find_connections")


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

    def __init__(self, memory: RippleMem, *, mode: str = "ripple", read_only: bool = False,
                 max_k: int = 20) -> None:
        self.memory = check_memory(memory)
        self.mode = check_mode(mode)
        self.max_k = check_positive_int("max_k", max_k)
        if read_only:  # the agent may look, not write or delete
            self.spec_functions = [pair for pair in self.spec_functions if pair[0] in READ_TOOLS]

    def store_memory(self, content: str, type: StoredType = "episodic", importance: float | None = None,
                     event_time: str | None = None) -> str:
        """Save something about the user to long-term memory, to recall it in later conversations.

        Use it when the user shares a fact, preference, plan, name or date worth keeping, or asks
        you to remember something. Write one self-contained sentence that names people and things,
        e.g. "The user's sister Ana lives in Lisbon." Returns the new memory's id.

        Args:
            content (str): the memory as one self-contained sentence.
            type (str): "semantic" for lasting facts and preferences, "episodic" for events (default).
            importance (float): optional, 0 to 1; 0.8 or more for health, safety or explicit requests.
            event_time (str): optional; when it happened, as an ISO date such as "2024-03-15".
        """
        if type not in STORABLE_TYPES:
            raise InvalidInputError(f"type must be one of {', '.join(STORABLE_TYPES)}; got {type!r}")
        stored = self.memory.add(content, type=type, importance=importance, event_time=event_time,
                                 source="llamaindex:store_memory")
        return f"Stored memory {stored.id} ({stored.type}): {stored.content}"

    async def astore_memory(self, content: str, type: StoredType = "episodic",
                            importance: float | None = None, event_time: str | None = None) -> str:
        """Async twin of store_memory."""
        return await asyncio.to_thread(self.store_memory, content, type, importance, event_time)

    def recall_memory(self, query: str, k: int = 5, types: list[RecallType] | None = None) -> str:
        """Search long-term memory before answering about the user, their past, people, places or plans.

        Ask in plain words ("Where does the user's sister live?"). Related memories come back too,
        reached through the people, places and things they share. One memory per line, with its
        id (for find_connections or forget_memory), date, type and score.

        Args:
            query (str): what you want to know, in plain words.
            k (int): how many memories to return at most (default 5).
            types (list): optional; only these memory types, e.g. ["semantic"]; leave empty for all.
        """
        limit = min(check_positive_int("k", k), self.max_k)
        return recall_reply(self.memory, query, limit, types, self.mode)

    async def arecall_memory(self, query: str, k: int = 5, types: list[RecallType] | None = None) -> str:
        """Async twin of recall_memory."""
        return await asyncio.to_thread(self.recall_memory, query, k, types)

    def find_connections(self, source: str, target: str, max_hops: int = 3) -> str:
        """Explain how two people, places or things in memory are linked, via the memories that mention them.

        Use it for questions such as "How do I know Bob?" or "What links Ana to Acme?". Names are
        matched as the user wrote them; a memory id from recall_memory works too.

        Args:
            source (str): the first name (or memory id).
            target (str): the second name (or memory id).
            max_hops (int): the longest path, in links (default 3; up to 6 if nothing is found).
        """
        hops = min(check_positive_int("max_hops", max_hops), _MAX_HOPS_LIMIT)
        # Typed here: RippleMem.list shadows the builtin in the facade's class body, so mypy misreads it.
        paths: list[Connection] = self.memory.find_connections(source, target, max_hops=hops)
        if not paths:
            return (f"No connection found between {source!r} and {target!r} within {hops} hops "
                    "(try a larger max_hops, or recall_memory: one of them may not be in memory).")
        lines = [f"{n}. {path.explain()}" for n, path in enumerate(paths, start=1)]
        found = count_phrase(len(lines), "connection", "connections")
        header = f"{found} between {source!r} and {target!r}, shortest first:"
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
