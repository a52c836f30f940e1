"""An MCP server (stdio) giving any MCP client memory tools on one user's memories: store_memory,
recall_memory, update_memory, find_connections and forget_memory, and, when the server is started
with allow_erase, erase_memory (the verified erase, previewed first). The user is fixed at start;
no tool argument can reach another user's memories."""

# No `from __future__ import annotations`: the MCP SDK reads the tools' Annotated hints at runtime.

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import Field
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12

from ripplemem.errors import MissingDependencyError, RippleMemError
from ripplemem.interfaces import tool_replies
from ripplemem.interfaces.hit_metadata import hit_metadata

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, ToolAnnotations

    from ripplemem.memory import RippleMem

SERVER_NAME = "ripplemem"
STORED_BY = "mcp:store_memory"

StoredType = Literal["episodic", "semantic"]
MetadataValue = str | int | float | bool | None
RecallType = Literal["episodic", "semantic", "working", "perceptual", "document"]

UNSEEN_NOTE = (
    "Nothing erased: confirm=true only erases what this server showed in a preview of the "
    "same request first. "
)
_EraseId = Annotated[str | None, Field(description="Erase this memory (id from recall_memory).")]
_EraseMatching = Annotated[
    str | None,
    Field(
        description=(
            "Or erase everything this text points to, in the user's words, e.g. 'my medical condition'."
        )
    ),
]
_EraseConfirm = Annotated[
    bool,
    Field(
        description=(
            "false (default): only preview what would be erased. true: erase for good, only after the user "
            "agreed to the preview."
        )
    ),
]
_EraseEverything = Annotated[
    bool,
    Field(
        description=(
            "true: erase all of the user's memories (only when the user asks you to forget them entirely)."
        )
    ),
]

logger = logging.getLogger(__name__)
Reply = TypeVar("Reply")


class RecalledMemory(TypedDict):
    """One memory of recall_memory's structured output: its text and ripplemem.hit_metadata()'s dict."""

    content: str
    metadata: dict[str, Any]


class RecallOutput(TypedDict):
    """recall_memory's structured output: the query and the memories, best first."""

    query: str
    memories: list[RecalledMemory]


class UpdateOutput(TypedDict):
    """update_memory's structured output: whether a memory was changed, and its text and metadata now."""

    updated: bool
    memory_id: str
    content: str | None
    metadata: dict[str, Any] | None


class ErasedMemory(TypedDict):
    """One memory an erase_memory preview lists."""

    memory_id: str
    content: str


class EraseOutput(TypedDict):
    """erase_memory's structured output: a preview (the memories it would erase) or what it erased."""

    erased: bool
    memory_ids: list[str]
    preview: list[ErasedMemory]
    verified: bool


def _mcp_server_class() -> "type[MCPServer]":
    """The SDK's MCPServer class, or a clear error naming the package to install."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError as exc:
        raise MissingDependencyError(
            "ripplemem mcp needs the MCP Python SDK 2.x (mcp.server.mcpserver.MCPServer); "
            "install it with: pip install 'ripplemem[mcp]' (or pip install 'mcp>=2.3')"
        ) from exc
    return MCPServer


def _tool_errors(work: Callable[[], Reply]) -> Reply:
    """Run a tool's work; a RippleMem error becomes a tool error the model can read and fix
    (the SDK prefixes it with 'Error executing tool <name>: ')."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return work()
    except RippleMemError as error:
        raise ToolError(str(error)) from error


def build_server(
    memory: "RippleMem", *, allow_erase: bool = False, allow_erase_everything: bool = False
) -> "MCPServer":
    """An MCPServer whose tools read and write only `memory`'s user (a handle on an open store).

    ``allow_erase`` adds erase_memory (by id or by what a text points to); ``allow_erase_everything``
    adds it too, with ``everything=true`` (all of the user's memories). Both are off by default.
    """
    server_class = _mcp_server_class()
    server = server_class(
        SERVER_NAME,
        instructions=(
            f"Long-term memory of user {memory.user_id!r}. Call recall_memory before answering "
            "questions about the user; call store_memory for facts worth keeping and "
            "update_memory to correct one."
        ),
    )
    tools = _memory_tools(memory)
    if allow_erase or allow_erase_everything:
        tools.append(_erase_tool(memory, allow_erase_everything))
    for function, description, annotations in tools:
        # A tool whose return annotation names its output type publishes that outputSchema.
        structured = None if function.__name__ in _STRUCTURED else False
        server.add_tool(
            function,
            name=function.__name__.removesuffix("_everything"),
            description=description,
            annotations=annotations,
            structured_output=structured,
        )
    return server


_STRUCTURED = ("recall_memory", "update_memory", "erase_memory", "erase_memory_everything")
_Tool = tuple[Callable[..., Any], str, "ToolAnnotations"]


def _hints(
    read_only: bool, destructive: bool | None = None, idempotent: bool | None = None
) -> "ToolAnnotations":
    """What a tool does to the store, for hosts that ask before running a writing or deleting tool."""
    from mcp.types import ToolAnnotations

    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


def _memory_tools(memory: "RippleMem") -> list[_Tool]:
    """store, recall, update, find_connections and forget on `memory`, with their annotations."""
    from mcp.types import CallToolResult

    def store_memory(
        content: Annotated[
            str,
            Field(
                min_length=1,
                description=(
                    "The memory as one self-contained sentence, e.g. 'The user is allergic to peanuts.' "
                    "Name people and things explicitly."
                ),
            ),
        ],
        type: Annotated[
            StoredType,
            Field(
                description=(
                    "'semantic' for lasting facts and preferences, 'episodic' for events that happened "
                    "at a time."
                )
            ),
        ] = "episodic",
        importance: Annotated[
            float | None,
            Field(
                ge=0.0,
                le=1.0,
                description=(
                    "0 to 1; use 0.8 or more for health, safety and things the user asked you to remember."
                ),
            ),
        ] = None,
        event_time: Annotated[
            str | None,
            Field(description=("When it happened, as an ISO date such as '2024-03-15', if known.")),
        ] = None,
    ) -> str:
        return _tool_errors(
            lambda: tool_replies.store_reply(
                memory, content, type, importance, event_time, stored_by=STORED_BY
            )
        )

    def recall_memory(
        query: Annotated[
            str,
            Field(min_length=1, description=("What to look for, in plain words, e.g. 'what the user eats'.")),
        ],
        k: Annotated[int, Field(ge=1, le=20, description="How many memories to return.")] = 5,
        types: Annotated[
            list[RecallType] | None, Field(description=("Only these memory types; leave empty for all."))
        ] = None,
    ) -> Annotated[CallToolResult, RecallOutput]:
        return _tool_errors(lambda: recall_result(memory, query, k, types))

    def find_connections(
        source: Annotated[
            str,
            Field(
                min_length=1, description=("A name (person, place, thing) or a memory id from recall_memory.")
            ),
        ],
        target: Annotated[str, Field(min_length=1, description="Another name or memory id.")],
        max_hops: Annotated[
            int, Field(ge=1, le=6, description=("The longest path to look for, in links."))
        ] = 3,
    ) -> str:
        return _tool_errors(lambda: tool_replies.connections_reply(memory, source, target, max_hops))

    def forget_memory(
        memory_id: Annotated[
            str,
            Field(min_length=1, description=("The id of the memory to delete, as shown by recall_memory.")),
        ],
    ) -> str:
        return _tool_errors(lambda: tool_replies.forget_reply(memory, memory_id))

    return [
        (store_memory, tool_replies.STORE_DESCRIPTION, _hints(False, False, False)),
        (recall_memory, tool_replies.RECALL_DESCRIPTION, _hints(True)),
        (_update_tool(memory), tool_replies.UPDATE_DESCRIPTION, _hints(False, True, True)),
        (find_connections, tool_replies.CONNECTIONS_DESCRIPTION, _hints(True)),
        (forget_memory, tool_replies.FORGET_DESCRIPTION, _hints(False, True, True)),
    ]


def _update_tool(memory: "RippleMem") -> Callable[..., Any]:
    """update_memory on `memory`: LangChain's UpdateMemoryTool (tool_replies.update_result)."""
    from mcp.types import CallToolResult

    def update_memory(
        memory_id: Annotated[
            str,
            Field(min_length=1, description=("The id of the memory to change, as shown by recall_memory.")),
        ],
        content: Annotated[
            str | None,
            Field(
                min_length=1,
                description=(
                    "The corrected memory as one self-contained sentence; leave out to keep the text."
                ),
            ),
        ] = None,
        type: Annotated[
            StoredType | None, Field(description=("A new type: 'semantic' or 'episodic'."))
        ] = None,
        importance: Annotated[
            float | None, Field(ge=0.0, le=1.0, description=("A new importance, 0 to 1."))
        ] = None,
        event_time: Annotated[
            str | None, Field(description=("A new date of the event, e.g. '2024-03-15'."))
        ] = None,
        metadata: Annotated[
            dict[str, MetadataValue] | None,
            Field(description=("Keys to set in the memory's metadata; a key set to null is removed.")),
        ] = None,
    ) -> Annotated[CallToolResult, UpdateOutput]:
        return _tool_errors(
            lambda: update_output(
                tool_replies.update_result(
                    memory,
                    memory_id,
                    content=content,
                    type=type,
                    importance=importance,
                    event_time=event_time,
                    metadata=metadata,
                )
            )
        )

    return update_memory


def update_output(reply: tool_replies.ToolReply) -> "CallToolResult":
    """update_memory's reply: its text, and the memory as it is now (or updated=false)."""
    artifact = reply.artifact
    updated = "content" in artifact
    output: UpdateOutput = {
        "updated": updated,
        "memory_id": artifact["metadata"]["memory_id"] if updated else artifact["memory_id"],
        "content": artifact["content"] if updated else None,
        "metadata": artifact["metadata"] if updated else None,
    }
    return _result(reply.text, dict(output))


def _erase_tool(memory: "RippleMem", allow_everything: bool) -> _Tool:
    """erase_memory on `memory`: LangChain's EraseMemoryTool (tool_replies.erase_result), and a
    confirm=true only erases a request this server has previewed (else it answers with the preview)."""
    from mcp.types import CallToolResult

    previewed: set[tuple[str, str, bool]] = set()

    def run(memory_id: str | None, matching: str | None, everything: bool, confirm: bool) -> CallToolResult:
        request = ((memory_id or "").strip(), matching or "", everything)
        unseen = confirm and request not in previewed
        reply = tool_replies.erase_result(
            memory,
            memory_id=memory_id,
            matching=matching,
            everything=everything,
            confirm=confirm and not unseen,
            allow_everything=allow_everything,
        )
        report = reply.artifact or {}
        if report.get("dry_run") and report.get("memory_ids"):
            previewed.add(request)
        elif confirm:
            previewed.discard(request)
        shown = UNSEEN_NOTE + reply.text if unseen and report.get("memory_ids") else reply.text
        return erase_output(reply, shown)

    def erase_memory(
        memory_id: _EraseId = None, matching: _EraseMatching = None, confirm: _EraseConfirm = False
    ) -> Annotated[CallToolResult, EraseOutput]:
        return _tool_errors(lambda: run(memory_id, matching, False, confirm))

    def erase_memory_everything(
        memory_id: _EraseId = None,
        matching: _EraseMatching = None,
        everything: _EraseEverything = False,
        confirm: _EraseConfirm = False,
    ) -> Annotated[CallToolResult, EraseOutput]:
        return _tool_errors(lambda: run(memory_id, matching, everything, confirm))

    return (
        erase_memory_everything if allow_everything else erase_memory,
        tool_replies.ERASE_DESCRIPTION,
        _hints(False, True, True),
    )


def erase_output(reply: tool_replies.ToolReply, text: str) -> "CallToolResult":
    """erase_memory's reply: the text, and the preview's memories (ids and texts) or the erased ids."""
    report = reply.artifact or {}
    dry_run = bool(report.get("dry_run", True))
    output: EraseOutput = {
        "erased": not dry_run and bool(report.get("memory_ids")),
        "memory_ids": list(report.get("memory_ids", [])),
        "preview": [
            {"memory_id": memory_id, "content": content} for memory_id, content in report.get("preview", [])
        ],
        "verified": bool(report.get("verified")),
    }
    return _result(text, dict(output))


def _result(text: str, structured: dict[str, Any]) -> "CallToolResult":
    """A tool result: the text the model reads and the structured content for the program."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def recall_result(
    memory: "RippleMem", query: str, k: int = 5, types: "Sequence[str] | None" = None
) -> "CallToolResult":
    """recall_memory's reply: the text lines the model reads, and as structured content each memory's
    text with the same flat metadata the LangChain and LlamaIndex adapters give (hit_metadata)."""
    reply = tool_replies.recall_result(memory, query, k, types)
    output: RecallOutput = {
        "query": query,
        "memories": [
            {"content": hit.memory.content, "metadata": hit_metadata(hit)} for hit in reply.artifact
        ],
    }
    return _result(reply.text, dict(output))


def serve_stdio(
    memory: "RippleMem", *, allow_erase: bool = False, allow_erase_everything: bool = False
) -> None:
    """Serve the memory tools of `memory`'s user over stdin/stdout until the client disconnects
    (erase_memory only if allowed: see build_server)."""
    server = build_server(memory, allow_erase=allow_erase, allow_erase_everything=allow_erase_everything)
    logger.info("ripplemem mcp: serving user %r of %s over stdio", memory.user_id, memory.path)
    server.run("stdio")
