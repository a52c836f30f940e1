"""Memory tools an agent can call: store, recall, update, find_connections, forget, and erase
(the verified erase, preview first) on a RippleMem handle, with the run's user."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, BaseToolkit, ToolException
from pydantic import BaseModel, ConfigDict, Field, SkipValidation, ValidationError

from langchain_ripplemem.documents import hit_to_document
from langchain_ripplemem.scopes import check_memory, run_scope
from langchain_ripplemem.tool_schemas import (
    EraseEverythingInput,
    EraseMemoryInput,
    FindConnectionsInput,
    ForgetMemoryInput,
    RecallMemoryInput,
    StoreMemoryInput,
    UpdateMemoryInput,
)
from ripplemem import InvalidInputError, RippleMem, RippleMemError
from ripplemem.interfaces.tool_replies import (
    CONNECTIONS_DESCRIPTION,
    DESCRIPTIONS,
    ERASE_DESCRIPTION,
    FORGET_DESCRIPTION,
    RECALL_DESCRIPTION,
    STORE_DESCRIPTION,
    TOOL_NAMES,
    UPDATE_DESCRIPTION,
    ToolReply,
    check_tool_names,
    connections_result,
    erase_result,
    forget_result,
    recall_result,
    renamed,
    store_result,
    update_result,
)

DEFAULT_TOOLS = ("store_memory", "recall_memory", "update_memory", "find_connections", "forget_memory")
READ_TOOLS = ("recall_memory", "find_connections")
ResponseFormat = Literal["content", "content_and_artifact"]


class _MemoryTool(BaseTool):
    """Shared parts: the RippleMem handle, per-run scope, errors shown to the model (not raised),
    and ``response_format="content_and_artifact"``: the text for the model, the structured result
    as the ToolMessage's artifact."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: SkipValidation[RippleMem]
    handle_tool_error: bool = True
    tool_names: dict[str, str] = Field(default_factory=dict)
    """What the other memory tools are called, for the replies that point the model to them."""

    def __init__(self, **data: Any) -> None:
        check_memory(data.get("memory"))
        data.setdefault("handle_validation_error", _validation_message)
        super().__init__(**data)

    def _run(self, *args: Any, config: RunnableConfig, **kwargs: Any) -> str | tuple[str, Any]:
        kwargs.pop("run_manager", None)
        if args:  # tool.invoke("cats"): a plain string is the first argument (the query, the content ...)
            kwargs[next(iter(self.args))] = args[0]
        # Outside the try: a run naming an invalid user is the caller's error, not the model's.
        memory = run_scope(self.memory, config)
        try:
            reply = self._call(memory, **kwargs)
        except RippleMemError as error:
            raise ToolException(f"{self.name} failed: {error}") from error
        if self.response_format == "content_and_artifact":
            return reply.text, self._artifact(reply)
        return reply.text

    async def _arun(self, *args: Any, config: RunnableConfig, **kwargs: Any) -> str | tuple[str, Any]:
        kwargs.pop("run_manager", None)
        return await asyncio.to_thread(self._run, *args, config=config, **kwargs)

    def _call(self, *args: Any, **kwargs: Any) -> ToolReply:
        """The tool's work on the run's handle (first argument) with the model's arguments."""
        raise NotImplementedError

    def _artifact(self, reply: ToolReply) -> Any:
        """The artifact of a content_and_artifact reply (JSON-ready dicts unless a tool says otherwise)."""
        return reply.artifact


class StoreMemoryTool(_MemoryTool):
    """Save a fact or event about the user to long-term memory (artifact: the memory's text and metadata)."""

    name: str = "store_memory"
    description: str = STORE_DESCRIPTION
    args_schema: type[BaseModel] = StoreMemoryInput

    def _call(
        self,
        memory: RippleMem,
        *,
        content: str,
        type: str = "episodic",
        importance: float | None = None,
        event_time: str | None = None,
    ) -> ToolReply:
        return store_result(memory, content, type, importance, event_time, stored_by=self.name)


class RecallMemoryTool(_MemoryTool):
    """Recall the memories most related to a query, with their ids and dates (artifact: Documents,
    as the retriever gives them)."""

    name: str = "recall_memory"
    description: str = RECALL_DESCRIPTION
    args_schema: type[BaseModel] = RecallMemoryInput
    mode: str = "ripple"

    def _call(
        self, memory: RippleMem, *, query: str, k: int = 5, types: list[str] | None = None
    ) -> ToolReply:
        return recall_result(memory, query, k, types, self.mode)

    def _artifact(self, reply: ToolReply) -> Any:
        return [hit_to_document(hit) for hit in reply.artifact]


class UpdateMemoryTool(_MemoryTool):
    """Correct a memory by id: its text, type, importance, date or metadata (merged)."""

    name: str = "update_memory"
    description: str = UPDATE_DESCRIPTION
    args_schema: type[BaseModel] = UpdateMemoryInput

    def _call(self, memory: RippleMem, *, memory_id: str, **changes: Any) -> ToolReply:
        return update_result(memory, memory_id, **changes, names=self.tool_names)


class FindConnectionsTool(_MemoryTool):
    """Explain how two names or memories are linked in the memory graph."""

    name: str = "find_connections"
    description: str = CONNECTIONS_DESCRIPTION
    args_schema: type[BaseModel] = FindConnectionsInput

    def _call(self, memory: RippleMem, *, source: str, target: str, max_hops: int = 3) -> ToolReply:
        return connections_result(memory, source, target, max_hops)


class ForgetMemoryTool(_MemoryTool):
    """Delete one memory by id (find the id with recall_memory first)."""

    name: str = "forget_memory"
    description: str = FORGET_DESCRIPTION
    args_schema: type[BaseModel] = ForgetMemoryInput

    def _call(self, memory: RippleMem, *, memory_id: str) -> ToolReply:
        return forget_result(memory, memory_id, names=self.tool_names)


class EraseMemoryTool(_MemoryTool):
    """The verified erase (``RippleMem.erase``) of one memory or of what a text points to, in the
    run user's memory only. Without ``confirm=true`` it only previews the texts it would erase;
    ``allow_everything=True`` adds ``everything=true`` (forget me: all of the user's memories).
    Artifact: the erase report (its preview lists ids and texts)."""

    name: str = "erase_memory"
    description: str = ERASE_DESCRIPTION
    args_schema: type[BaseModel] = EraseMemoryInput
    allow_everything: bool = False

    def __init__(self, **data: Any) -> None:
        if data.get("allow_everything") and "args_schema" not in data:
            data["args_schema"] = EraseEverythingInput
        super().__init__(**data)

    def _call(
        self,
        memory: RippleMem,
        *,
        memory_id: str | None = None,
        matching: str | None = None,
        confirm: bool = False,
        everything: bool = False,
    ) -> ToolReply:
        return erase_result(
            memory,
            memory_id=memory_id,
            matching=matching,
            everything=everything,
            confirm=confirm,
            allow_everything=self.allow_everything,
            names=self.tool_names,
        )


TOOL_CLASSES: dict[str, type[_MemoryTool]] = dict(
    zip(
        TOOL_NAMES,
        (
            StoreMemoryTool,
            RecallMemoryTool,
            UpdateMemoryTool,
            FindConnectionsTool,
            ForgetMemoryTool,
            EraseMemoryTool,
        ),
        strict=True,
    )
)


class RippleMemToolkit(BaseToolkit):
    """The memory tools on one RippleMem handle: ``RippleMemToolkit(memory=mem).get_tools()``.

    By default store_memory, recall_memory, update_memory, find_connections and forget_memory;
    ``include`` picks tools by their default names (add "erase_memory" for the verified erase),
    ``names`` and ``descriptions`` rename them and replace what the model is told (descriptions
    that name another tool name it as renamed).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: SkipValidation[RippleMem]
    """The handle the tools read and write (a run's config may name another user or session)."""
    read_only: bool = False
    """Only recall_memory and find_connections: the agent cannot store, change or delete."""
    include: tuple[str, ...] = DEFAULT_TOOLS
    """Which tools, by default name, in this order."""
    names: dict[str, str] = Field(default_factory=dict)
    """New names by default name, e.g. {"recall_memory": "search_memory"}."""
    descriptions: dict[str, str] = Field(default_factory=dict)
    """New descriptions (the model's instructions for each tool) by default name."""
    response_format: ResponseFormat = "content"
    """"content_and_artifact": each ToolMessage also carries the structured result as its artifact."""
    allow_erase_everything: bool = False
    """erase_memory may erase all of the run user's memories (everything=true, after a preview)."""

    def __init__(self, **data: Any) -> None:
        check_memory(data.get("memory"))
        super().__init__(**data)
        for option in ("include", "descriptions"):
            unknown = [tool for tool in getattr(self, option) if tool not in TOOL_NAMES]
            if unknown:
                raise InvalidInputError(
                    f"{option} names {unknown}, not memory tools; the tools are {', '.join(TOOL_NAMES)}"
                )
        check_tool_names(self.names)
        writes = [tool for tool in self.include if tool not in READ_TOOLS]
        if self.read_only and "include" in data and writes:
            raise InvalidInputError(
                f"read_only=True keeps only {' and '.join(READ_TOOLS)}, but include lists {writes}"
            )

    def get_tools(self) -> list[BaseTool]:
        """The chosen tools, named and described as configured."""
        names = check_tool_names(self.names)
        chosen = [tool for tool in self.include if not self.read_only or tool in READ_TOOLS]
        extra: dict[str, dict[str, Any]] = {"erase_memory": {"allow_everything": self.allow_erase_everything}}
        return [
            TOOL_CLASSES[tool](
                memory=self.memory,
                name=names[tool],
                description=self._description(tool, names),
                response_format=self.response_format,
                tool_names=names,
                **extra.get(tool, {}),
            )
            for tool in chosen
        ]

    def _description(self, tool: str, names: dict[str, str]) -> str:
        return self.descriptions.get(tool) or renamed(DESCRIPTIONS[tool], names)


def _validation_message(error: ValidationError) -> str:
    """What the model sees when its arguments do not fit the schema: each bad field and why."""
    problems = "; ".join(
        f"{'.'.join(str(part) for part in e['loc']) or 'input'}: {e['msg']}" for e in error.errors()
    )
    return f"Invalid arguments: {problems}. Fix them and call the tool again."
