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
from ripplemem.tool_replies import (
    CONNECTIONS_DESCRIPTION,
    FORGET_DESCRIPTION,
    RECALL_DESCRIPTION,
    STORE_DESCRIPTION,
    connections_reply,
    forget_reply,
    recall_reply,
    store_reply,
)

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
        # Outside the try: a run naming an invalid user is the caller's error, not the model's.
        memory = run_scope(self.memory, config)
        try:
            return self._call(memory, **kwargs)
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
    description: str = STORE_DESCRIPTION
    args_schema: type[BaseModel] = StoreMemoryInput

    def _call(self, memory: RippleMem, *, content: str, type: str = "episodic",
              importance: float | None = None, event_time: str | None = None) -> str:
        return store_reply(memory, content, type, importance, event_time, stored_by="store_memory")


class RecallMemoryTool(_MemoryTool):
    """Recall the memories most related to a query, with their ids and dates."""

    name: str = "recall_memory"
    description: str = RECALL_DESCRIPTION
    args_schema: type[BaseModel] = RecallMemoryInput
    mode: str = "ripple"

    def _call(self, memory: RippleMem, *, query: str, k: int = 5, types: list[str] | None = None) -> str:
        return recall_reply(memory, query, k, types, self.mode)


class FindConnectionsTool(_MemoryTool):
    """Explain how two names or memories are linked in the memory graph."""

    name: str = "find_connections"
    description: str = CONNECTIONS_DESCRIPTION
    args_schema: type[BaseModel] = FindConnectionsInput

    def _call(self, memory: RippleMem, *, source: str, target: str, max_hops: int = 3) -> str:
        return connections_reply(memory, source, target, max_hops)


class ForgetMemoryTool(_MemoryTool):
    """Delete one memory by id (find the id with recall_memory first)."""

    name: str = "forget_memory"
    description: str = FORGET_DESCRIPTION
    args_schema: type[BaseModel] = ForgetMemoryInput

    def _call(self, memory: RippleMem, *, memory_id: str) -> str:
        return forget_reply(memory, memory_id)


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
