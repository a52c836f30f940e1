"""An MCP server (stdio) giving any MCP client four memory tools on one user's memories:
store_memory, recall_memory, find_connections and forget_memory. The user is fixed at start;
no tool argument can reach another user's memories."""

# No `from __future__ import annotations`: the MCP SDK reads the tools' Annotated hints at runtime.

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import Field
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12

from ripplemem import tool_replies
from ripplemem.errors import MissingDependencyError, RippleMemError
from ripplemem.hit_metadata import hit_metadata

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult

    from ripplemem.memory import RippleMem

SERVER_NAME = "ripplemem"
STORED_BY = "mcp:store_memory"

StoredType = Literal["episodic", "semantic"]
RecallType = Literal["episodic", "semantic", "working", "perceptual", "document"]

logger = logging.getLogger(__name__)
Reply = TypeVar("Reply")


class RecalledMemory(TypedDict):
    """One memory of recall_memory's structured output: its text and ripplemem.hit_metadata's dict."""

    content: str
    metadata: dict[str, Any]


class RecallOutput(TypedDict):
    """recall_memory's structured output: the query and the memories, best first."""

    query: str
    memories: list[RecalledMemory]


def _mcp_server_class() -> "type[MCPServer]":
    """The SDK's MCPServer class, or a clear error naming the package to install."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError as exc:
        raise MissingDependencyError(
            "ripplemem mcp needs the MCP Python SDK 2.x (mcp.server.mcpserver.MCPServer); "
            "install it with: pip install 'ripplemem[mcp]' (or pip install 'mcp>=2.3')") from exc
    return MCPServer


def _tool_errors(work: Callable[[], Reply]) -> Reply:
    """Run a tool's work; a RippleMem error becomes a tool error the model can read and fix
    (the SDK prefixes it with 'Error executing tool <name>: ')."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return work()
    except RippleMemError as error:
        raise ToolError(str(error)) from error


def build_server(memory: "RippleMem") -> "MCPServer":
    """An MCPServer whose four tools read and write only `memory`'s user (a handle on an open store)."""
    server_class = _mcp_server_class()
    from mcp.types import CallToolResult
    server = server_class(
        SERVER_NAME,
        instructions=(f"Long-term memory of user {memory.user_id!r}. Call recall_memory before answering "
                      "questions about the user; call store_memory for facts worth keeping."),
    )

    def store_memory(
        content: Annotated[str, Field(min_length=1, description=(
            "The memory as one self-contained sentence, e.g. 'The user is allergic to peanuts.' "
            "Name people and things explicitly."))],
        type: Annotated[StoredType, Field(description=(
            "'semantic' for lasting facts and preferences, 'episodic' for events that happened "
            "at a time."))] = "episodic",
        importance: Annotated[float | None, Field(ge=0.0, le=1.0, description=(
            "0 to 1; use 0.8 or more for health, safety and things the user asked you to "
            "remember."))] = None,
        event_time: Annotated[str | None, Field(description=(
            "When it happened, as an ISO date such as '2024-03-15', if known."))] = None,
    ) -> str:
        return _tool_errors(lambda: tool_replies.store_reply(
            memory, content, type, importance, event_time, stored_by=STORED_BY))

    def recall_memory(
        query: Annotated[str, Field(min_length=1, description=(
            "What to look for, in plain words, e.g. 'what the user eats'."))],
        k: Annotated[int, Field(ge=1, le=20, description="How many memories to return.")] = 5,
        types: Annotated[list[RecallType] | None, Field(description=(
            "Only these memory types; leave empty for all."))] = None,
    ) -> Annotated[CallToolResult, RecallOutput]:
        return _tool_errors(lambda: recall_result(memory, query, k, types))

    def find_connections(
        source: Annotated[str, Field(min_length=1, description=(
            "A name (person, place, thing) or a memory id from recall_memory."))],
        target: Annotated[str, Field(min_length=1, description="Another name or memory id.")],
        max_hops: Annotated[int, Field(ge=1, le=6, description=(
            "The longest path to look for, in links."))] = 3,
    ) -> str:
        return _tool_errors(lambda: tool_replies.connections_reply(memory, source, target, max_hops))

    def forget_memory(
        memory_id: Annotated[str, Field(min_length=1, description=(
            "The id of the memory to delete, as shown by recall_memory."))],
    ) -> str:
        return _tool_errors(lambda: tool_replies.forget_reply(memory, memory_id))

    from mcp.types import ToolAnnotations

    # What each tool does to the store, for hosts that ask before running a writing or deleting tool.
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    tools: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
        (store_memory, tool_replies.STORE_DESCRIPTION,
         ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                         open_world_hint=False)),
        (recall_memory, tool_replies.RECALL_DESCRIPTION, reads),
        (find_connections, tool_replies.CONNECTIONS_DESCRIPTION, reads),
        (forget_memory, tool_replies.FORGET_DESCRIPTION,
         ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                         open_world_hint=False)),
    ]
    for function, description, annotations in tools:
        # recall_memory's return annotation publishes its outputSchema; the others reply text only.
        structured = None if function is recall_memory else False
        server.add_tool(function, description=description, annotations=annotations,
                        structured_output=structured)
    return server


def recall_result(memory: "RippleMem", query: str, k: int = 5,
                  types: "Sequence[str] | None" = None) -> "CallToolResult":
    """recall_memory's reply: the text lines the model reads, and as structured content each memory's
    text with the same flat metadata the LangChain and LlamaIndex adapters give (hit_metadata)."""
    from mcp.types import CallToolResult, TextContent

    reply = tool_replies.recall_result(memory, query, k, types)
    output: RecallOutput = {"query": query, "memories": [
        {"content": hit.memory.content, "metadata": hit_metadata(hit)} for hit in reply.artifact]}
    return CallToolResult(content=[TextContent(type="text", text=reply.text)],
                          structured_content=dict(output))


def serve_stdio(memory: "RippleMem") -> None:
    """Serve the memory tools of `memory`'s user over stdin/stdout until the client disconnects."""
    server = build_server(memory)
    logger.info("ripplemem mcp: serving user %r of %s over stdio", memory.user_id, memory.path)
    server.run("stdio")
