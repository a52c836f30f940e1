"""Memory tools an agent can call: store_memory, recall_memory, find_connections, forget_memory."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, BaseToolkit, ToolException
from pydantic import BaseModel, ConfigDict, Field, SkipValidation, ValidationError

from langchain_ripplemem.scopes import check_memory, run_scope
from ripplemem import RippleMem
from ripplemem.errors import RippleMemError
from ripplemem.graph_queries import Connection
from ripplemem.text import count_phrase
from ripplemem.types import format_hit_line

StoredType = Literal["episodic", "semantic"]


class StoreMemoryInput(BaseModel):
    """Arguments of store_memory."""

    content: str = Field(description="The memory as one self-contained sentence, e.g. "
                                     "'The user is allergic to peanuts.' Name people and things explicitly.")
    type: StoredType = Field(default="episodic", description="'semantic' for lasting facts and preferences, "
                                                             "'episodic' for events that happened at a time.")
    importance: float | None = Field(default=None, ge=0.0, le=1.0,
                                     description="0 to 1; use 0.8 or more for health, safety and "
                                                 "things the user asked you to remember.")
    event_time: str | None = Field(default=None, description="When it happened, as an ISO date such as "
                                                             "'2024-03-15', if known.")


class RecallMemoryInput(BaseModel):
    """Arguments of recall_memory."""

    query: str = Field(description="What to look for, in plain words, e.g. 'what the user eats'.")
    k: int = Field(default=5, ge=1, le=20, description="How many memories to return.")
    types: list[Literal["episodic", "semantic", "working", "perceptual", "document"]] | None = Field(
        default=None, description="Only these memory types; leave empty for all.")


class FindConnectionsInput(BaseModel):
    """Arguments of find_connections."""

    source: str = Field(description="A name (person, place, thing) or a memory id from recall_memory.")
    target: str = Field(description="Another name or memory id.")
    max_hops: int = Field(default=3, ge=1, le=6, description="The longest path to look for, in links.")


class ForgetMemoryInput(BaseModel):
    """Arguments of forget_memory."""

    memory_id: str = Field(description="The id of the memory to delete, as shown by recall_memory.")


class _MemoryTool(BaseTool):
    """Shared parts: the RippleMem handle, per-run scope, and errors shown to the model, not raised."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: SkipValidation[RippleMem]
    handle_tool_error: bool = True

    def __init__(self, **data: Any) -> None:
        check_memory(data.get("memory"))
        data.setdefault("handle_validation_error", _validation_message)
        super().__init__(**data)

    def _run(self, *args: Any, config: RunnableConfig, **kwargs: Any) -> str:
        kwargs.pop("run_manager", None)
        if args:  # tool.invoke("cats"): a plain string is the first argument (the query, the content ...)
            kwargs[next(iter(self.args))] = args[0]
        try:
            return self._call(run_scope(self.memory, config), **kwargs)
        except RippleMemError as error:
            raise ToolException(f"{self.name} failed: {error}") from error

    async def _arun(self, *args: Any, config: RunnableConfig, **kwargs: Any) -> str:
        kwargs.pop("run_manager", None)
        return await asyncio.to_thread(self._run, *args, config=config, **kwargs)

    def _call(self, *args: Any, **kwargs: Any) -> str:
        """The tool's work on the run's handle (first argument) with the model's arguments."""
        raise NotImplementedError


class StoreMemoryTool(_MemoryTool):
    """Save a fact or event about the user to long-term memory."""

    name: str = "store_memory"
    description: str = (
        "Save something worth remembering across conversations: a fact, preference or event about the "
        "user or their world. Write it as one self-contained sentence. Returns the new memory's id.")
    args_schema: type[BaseModel] = StoreMemoryInput

    def _call(self, memory: RippleMem, *, content: str, type: str = "episodic",
              importance: float | None = None, event_time: str | None = None) -> str:
        stored = memory.add(content, type=type, importance=importance, event_time=event_time,
                            metadata={"stored_by": "store_memory"})
        return f"Stored memory {stored.id} ({stored.type}): {stored.content}"


class RecallMemoryTool(_MemoryTool):
    """Recall the memories most related to a query, with their ids and dates."""

    name: str = "recall_memory"
    description: str = (
        "Search long-term memory before answering questions about the user, their past, people, places "
        "or plans. Returns the best memories, one per line with id, date, type and score; ids can be "
        "passed to find_connections or forget_memory.")
    args_schema: type[BaseModel] = RecallMemoryInput
    mode: str = "ripple"

    def _call(self, memory: RippleMem, *, query: str, k: int = 5, types: list[str] | None = None) -> str:
        recall = memory.recall(query, k=k, mode=self.mode, types=types or None)
        if not recall.hits:
            return f"No memories found for {query!r}."
        lines = [f"{count_phrase(len(recall.hits), 'memory', 'memories')} for {query!r}, best first:"]
        lines += [format_hit_line(number, hit) for number, hit in enumerate(recall.hits, start=1)]
        return "\n".join(lines)


class FindConnectionsTool(_MemoryTool):
    """Explain how two names or memories are linked in the memory graph."""

    name: str = "find_connections"
    description: str = (
        "Find how two things are connected through what you remember: give two names (people, places, "
        "things) or memory ids. Returns the linking paths, shortest first, e.g. "
        "[Calvin] -MENTIONS- \"Calvin bought a Ferrari\" -MENTIONS- [Ferrari].")
    args_schema: type[BaseModel] = FindConnectionsInput

    def _call(self, memory: RippleMem, *, source: str, target: str, max_hops: int = 3) -> str:
        connections: list[Connection] = memory.find_connections(source, target, max_hops=max_hops, limit=5)
        if not connections:
            return f"No connection between {source!r} and {target!r} within {max_hops} hops."
        count = count_phrase(len(connections), "connection", "connections")
        lines = [f"{count} between {source!r} and {target!r}:"]
        lines += [f"{number}. {path.explain()}" for number, path in enumerate(connections, start=1)]
        return "\n".join(lines)


class ForgetMemoryTool(_MemoryTool):
    """Delete one memory by id (find the id with recall_memory first)."""

    name: str = "forget_memory"
    description: str = (
        "Delete a memory that is wrong, outdated, or that the user asked you to forget. Call "
        "recall_memory first to find its id, then pass that id here.")
    args_schema: type[BaseModel] = ForgetMemoryInput

    def _call(self, memory: RippleMem, *, memory_id: str) -> str:
        found = memory.get(memory_id.strip())
        if found is None or not memory.delete(found.id):
            return f"No memory with id {memory_id!r}; nothing was deleted."
        return f"Forgot memory {found.id}: {found.content}"


class RippleMemToolkit(BaseToolkit):
    """The four memory tools on one RippleMem handle: ``RippleMemToolkit(memory=mem).get_tools()``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: SkipValidation[RippleMem]
    """The handle the tools read and write (a run's config may name another user or session)."""
    read_only: bool = False
    """Only recall_memory and find_connections: the agent cannot store or delete."""

    def __init__(self, **data: Any) -> None:
        check_memory(data.get("memory"))
        super().__init__(**data)

    def get_tools(self) -> list[BaseTool]:
        """The tools: store_memory, recall_memory, find_connections, forget_memory (or the read ones)."""
        classes: list[type[_MemoryTool]] = [RecallMemoryTool, FindConnectionsTool]
        if not self.read_only:
            classes = [StoreMemoryTool, *classes, ForgetMemoryTool]
        return [cls(memory=self.memory) for cls in classes]


def _validation_message(error: ValidationError) -> str:
    """What the model sees when its arguments do not fit the schema: each bad field and why."""
    problems = "; ".join(f"{'.'.join(str(part) for part in e['loc']) or 'input'}: {e['msg']}"
                         for e in error.errors())
    return f"Invalid arguments: {problems}. Fix them and call the tool again."
