"""RippleMemToolSpec: store, recall, update, connect, forget and erase memories as LlamaIndex agent tools."""

# No `from __future__ import annotations` here: LlamaIndex builds each tool's JSON schema from the
# method signature, and the annotations must be real types for that.

import asyncio
from collections.abc import Mapping, Sequence
from typing import Literal, get_args

from llama_index.core.tools import FunctionTool, ToolMetadata
from llama_index.core.tools.tool_spec.base import SPEC_FUNCTION_TYPE, BaseToolSpec

from llamaindex_ripplemem._common import check_memory, check_mode, check_positive_int
from llamaindex_ripplemem.retriever import hit_to_node
from ripplemem import Connection, InvalidInputError, RippleMem
from ripplemem.integration import count_phrase
from ripplemem.interfaces.tool_replies import (
    TOOL_NAMES,
    ToolReply,
    check_tool_names,
    erase_result,
    memory_record,
    recall_result,
    renamed,
    update_result,
)

_MAX_HOPS_LIMIT = 6
# What an agent may write: events and lasting facts (working and document memories come from elsewhere).
StoredType = Literal["episodic", "semantic"]
STORABLE_TYPES: tuple[str, ...] = get_args(StoredType)
RecallType = Literal["episodic", "semantic", "working", "perceptual", "document"]
MetadataValue = str | int | float | bool | None
READ_TOOLS = ("recall_memory", "find_connections")
DEFAULT_TOOLS = ("store_memory", "recall_memory", "update_memory", "find_connections", "forget_memory")
RESPONSE_FORMATS = ("content", "content_and_artifact")


class RippleMemToolSpec(BaseToolSpec):
    """Long-term memory tools for an agent: ``RippleMemToolSpec(memory=mem).to_tool_list()``.

    Every tool reads and writes only the user (and agent) of the handle it was given; each has a
    sync and an async version, so it runs in FunctionAgent, ReActAgent and AgentWorkflow alike.
    ``include`` picks tools by default name (add "erase_memory" for the verified erase, preview
    first); ``names`` and ``descriptions`` rename them and replace what the model is told;
    ``response_format="content_and_artifact"`` makes each ToolOutput's ``raw_output`` a ToolReply
    whose ``artifact`` is the structured result (recall: NodeWithScore list; erase: the report).
    """

    spec_functions = [(name, f"a{name}") for name in TOOL_NAMES]

    def __init__(
        self,
        memory: RippleMem,
        *,
        mode: str = "ripple",
        read_only: bool = False,
        max_k: int = 20,
        include: Sequence[str] = DEFAULT_TOOLS,
        names: Mapping[str, str] | None = None,
        descriptions: Mapping[str, str] | None = None,
        response_format: str = "content",
        allow_erase_everything: bool = False,
    ) -> None:
        self.memory = check_memory(memory)
        self.mode = check_mode(mode)
        self.max_k = check_positive_int("max_k", max_k)
        self.names = check_tool_names(names)
        self.descriptions = dict(descriptions or {})
        for option, given in (("include", list(include)), ("descriptions", list(self.descriptions))):
            unknown = [tool for tool in given if tool not in TOOL_NAMES]
            if unknown:
                raise InvalidInputError(
                    f"{option} names {unknown}, not memory tools; the tools are {', '.join(TOOL_NAMES)}"
                )
        if response_format not in RESPONSE_FORMATS:
            raise InvalidInputError(
                f"response_format must be one of {', '.join(RESPONSE_FORMATS)}; got {response_format!r}"
            )
        self.response_format = response_format
        self.allow_erase_everything = bool(allow_erase_everything)
        chosen = [tool for tool in include if not read_only or tool in READ_TOOLS]  # read_only: look only
        self.spec_functions = [(tool, f"a{tool}") for tool in chosen]

    def to_tool_list(
        self,
        spec_functions: list[SPEC_FUNCTION_TYPE] | None = None,
        func_to_metadata_mapping: dict[str, ToolMetadata] | None = None,
    ) -> list[FunctionTool]:
        """The tools, named and described as configured (a description naming another tool names it
        as renamed)."""
        tools = super().to_tool_list(spec_functions, func_to_metadata_mapping)
        for tool in tools:
            default = tool.metadata.name
            if default in self.names and not (func_to_metadata_mapping or {}).get(default):
                tool.metadata.name = self.names[default]
                tool.metadata.description = self.descriptions.get(default) or renamed(
                    tool.metadata.description, self.names
                )
        return tools

    def _reply(self, reply: ToolReply) -> str:
        return reply if self.response_format == "content_and_artifact" else reply.text

    def store_memory(
        self,
        content: str,
        type: StoredType = "episodic",
        importance: float | None = None,
        event_time: str | None = None,
    ) -> str:
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
        stored = self.memory.add(
            content, type=type, importance=importance, event_time=event_time, source="llamaindex:store_memory"
        )
        text = f"Stored memory {stored.id} ({stored.type}): {stored.content}"
        return self._reply(ToolReply(text, memory_record(stored)))

    async def astore_memory(
        self,
        content: str,
        type: StoredType = "episodic",
        importance: float | None = None,
        event_time: str | None = None,
    ) -> str:
        """Async twin of store_memory."""
        return await asyncio.to_thread(self.store_memory, content, type, importance, event_time)

    def recall_memory(self, query: str, k: int = 5, types: list[RecallType] | None = None) -> str:
        """Search long-term memory before answering about the user, their past, people, places or plans.

        Ask in plain words ("Where does the user's sister live?"). Related memories come back too,
        reached through the people, places and things they share. One memory per line, with its
        id (for find_connections, update_memory or forget_memory), date, type and score.

        Args:
            query (str): what you want to know, in plain words.
            k (int): how many memories to return at most (default 5).
            types (list): optional; only these memory types, e.g. ["semantic"]; leave empty for all.
        """
        limit = min(check_positive_int("k", k), self.max_k)
        reply = recall_result(self.memory, query, limit, types, self.mode)
        return self._reply(ToolReply(reply.text, [hit_to_node(hit) for hit in reply.artifact]))

    async def arecall_memory(self, query: str, k: int = 5, types: list[RecallType] | None = None) -> str:
        """Async twin of recall_memory."""
        return await asyncio.to_thread(self.recall_memory, query, k, types)

    def update_memory(
        self,
        memory_id: str,
        content: str | None = None,
        type: StoredType | None = None,
        importance: float | None = None,
        event_time: str | None = None,
        metadata: dict[str, MetadataValue] | None = None,
    ) -> str:
        """Correct or complete a memory that is outdated or incomplete, by its id from recall_memory.

        Prefer this over storing a second memory that contradicts the first.

        Args:
            memory_id (str): the id of the memory to change.
            content (str): optional; the corrected memory as one self-contained sentence.
            type (str): optional; "semantic" or "episodic".
            importance (float): optional; a new importance, 0 to 1.
            event_time (str): optional; a new date of the event, e.g. "2024-03-15".
            metadata (dict): optional; keys to set in the memory's metadata (null removes a key).
        """
        if type is not None and type not in STORABLE_TYPES:
            raise InvalidInputError(f"type must be one of {', '.join(STORABLE_TYPES)}; got {type!r}")
        return self._reply(
            update_result(
                self.memory,
                memory_id,
                content=content,
                type=type,
                importance=importance,
                event_time=event_time,
                metadata=metadata,
                names=self.names,
            )
        )

    async def aupdate_memory(
        self,
        memory_id: str,
        content: str | None = None,
        type: StoredType | None = None,
        importance: float | None = None,
        event_time: str | None = None,
        metadata: dict[str, MetadataValue] | None = None,
    ) -> str:
        """Async twin of update_memory."""
        return await asyncio.to_thread(
            self.update_memory, memory_id, content, type, importance, event_time, metadata
        )

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
        paths: list[Connection] = self.memory.graph.find_connections(source, target, max_hops=hops)
        found = [{"path": path.explain(), "hops": path.hops, "strength": path.strength} for path in paths]
        artifact = {"source": source, "target": target, "connections": found}
        if not paths:
            text = (
                f"No connection found between {source!r} and {target!r} within {hops} hops "
                "(try a larger max_hops, or recall_memory: one of them may not be in memory)."
            )
            return self._reply(ToolReply(renamed(text, self.names), artifact))
        lines = [f"{n}. {path['path']}" for n, path in enumerate(found, start=1)]
        found_count = count_phrase(len(lines), "connection", "connections")
        header = f"{found_count} between {source!r} and {target!r}, shortest first:"
        return self._reply(ToolReply("\n".join([header, *lines]), artifact))

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
            text = renamed(
                f"No memory with id {memory_id!r}; use recall_memory to find the right id.", self.names
            )
            return self._reply(ToolReply(text, {"memory_id": memory_id, "deleted": False}))
        text = f"Forgot memory {found.id}: {found.content}"
        return self._reply(ToolReply(text, {"memory_id": found.id, "deleted": True}))

    async def aforget_memory(self, memory_id: str) -> str:
        """Async twin of forget_memory."""
        return await asyncio.to_thread(self.forget_memory, memory_id)

    def erase_memory(
        self,
        memory_id: str | None = None,
        matching: str | None = None,
        confirm: bool = False,
        everything: bool = False,
    ) -> str:
        """Erase for good, from every layer, what the user asks you to forget; the first call only previews.

        Give one memory_id (from recall_memory) or a matching text in the user's words ("my medical
        condition"). Without confirm it lists what would be erased and erases nothing: show that
        list to the user, and only if they agree call again with the same arguments and confirm=true.

        Args:
            memory_id (str): optional; erase this memory.
            matching (str): optional; erase everything this text points to.
            confirm (bool): false (default) previews; true erases, after the user agreed.
            everything (bool): true erases all of the user's memories (only if the tool allows it).
        """
        return self._reply(
            erase_result(
                self.memory,
                memory_id=memory_id,
                matching=matching,
                everything=everything,
                confirm=confirm,
                allow_everything=self.allow_erase_everything,
                names=self.names,
            )
        )

    async def aerase_memory(
        self,
        memory_id: str | None = None,
        matching: str | None = None,
        confirm: bool = False,
        everything: bool = False,
    ) -> str:
        """Async twin of erase_memory."""
        return await asyncio.to_thread(self.erase_memory, memory_id, matching, confirm, everything)
