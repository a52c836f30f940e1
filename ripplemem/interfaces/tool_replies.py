"""The agent memory operations (store, recall, update, connect, forget, erase) as replies for a
model: the LangChain tools, the LlamaIndex tool spec and the MCP server call these.

Each ``*_result`` returns a ToolReply: ``text`` for the model and ``artifact``, the structured result
for the program (LangChain's ``content_and_artifact``); each ``*_reply`` returns the text alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from ripplemem.core.choices import MemoryTypeName, RecallMode
from ripplemem.core.text import count_phrase
from ripplemem.core.types import Hit, format_hit_line
from ripplemem.errors import InvalidInputError, MemoryNotFoundError
from ripplemem.interfaces.hit_metadata import memory_metadata

if TYPE_CHECKING:
    from ripplemem.core.types import Memory
    from ripplemem.memory import RippleMem
    from ripplemem.privacy.erase import EraseReport
    from ripplemem.retrieval.graph_queries import Connection

TOOL_NAMES = (
    "store_memory",
    "recall_memory",
    "update_memory",
    "find_connections",
    "forget_memory",
    "erase_memory",
)
STORE_DESCRIPTION = (
    "Save something worth remembering across conversations: a fact, preference or event about the "
    "user or their world. Write it as one self-contained sentence. Returns the new memory's id."
)
RECALL_DESCRIPTION = (
    "Search long-term memory before answering questions about the user, their past, people, places "
    "or plans. Returns the best memories, one per line with id, date, type and score; ids can be "
    "passed to find_connections or forget_memory."
)
UPDATE_DESCRIPTION = (
    "Correct or complete a memory that is outdated or incomplete, by its id (from recall_memory): "
    "give the new text as one self-contained sentence, and/or a new type, importance, date or "
    "metadata. Prefer this over storing a second, conflicting memory."
)
CONNECTIONS_DESCRIPTION = (
    "Find how two things are connected through what you remember: give two names (people, places, "
    "things) or memory ids. Returns the linking paths, shortest first, e.g. "
    '[Calvin] -MENTIONS- "Calvin bought a Ferrari" -MENTIONS- [Ferrari].'
)
FORGET_DESCRIPTION = (
    "Delete a memory that is wrong, outdated, or that the user asked you to forget. Call "
    "recall_memory first to find its id, then pass that id here."
)
ERASE_DESCRIPTION = (
    "Erase for good, from every layer, what the user asks you to forget: one memory by id, or "
    "everything a text points to (matching='my medical condition'). The first call only previews "
    "what would go; show that list to the user, and only after they agree call again with the same "
    "arguments and confirm=true. The erase is verified and cannot be undone."
)
DESCRIPTIONS = dict(
    zip(
        TOOL_NAMES,
        (
            STORE_DESCRIPTION,
            RECALL_DESCRIPTION,
            UPDATE_DESCRIPTION,
            CONNECTIONS_DESCRIPTION,
            FORGET_DESCRIPTION,
            ERASE_DESCRIPTION,
        ),
        strict=True,
    )
)
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what model providers accept as a function name
_PREVIEW_CHARS = 200
_PREVIEW_LINES = 30  # a forget-me preview of thousands of memories shows the first ones and a count


class ToolReply(str):
    """A tool's answer: the text for the model (the string itself) and ``artifact``, the structured
    result for the program, never shown to the model (LangChain's content_and_artifact)."""

    artifact: Any

    def __new__(cls, text: str, artifact: Any = None) -> ToolReply:
        """The reply ``text`` carrying ``artifact``."""
        reply = super().__new__(cls, text)
        reply.artifact = artifact
        return reply

    @property
    def text(self) -> str:
        """The text alone, as a plain str."""
        return str.__str__(self)


def check_tool_names(names: Mapping[str, str] | None) -> dict[str, str]:
    """Each tool's name, with the caller's renames: known tools, valid and distinct function names."""
    chosen = dict(zip(TOOL_NAMES, TOOL_NAMES, strict=True))
    for tool, name in (names or {}).items():
        if tool not in chosen:
            raise InvalidInputError(
                f"no memory tool {tool!r} to rename; the tools are {', '.join(TOOL_NAMES)}"
            )
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise InvalidInputError(
                f"tool name {name!r} (for {tool}) must be 1 to 64 letters, digits, "
                "'_' or '-', as model providers require"
            )
        chosen[tool] = name
    if len(set(chosen.values())) != len(chosen):
        raise InvalidInputError(f"two tools would share a name: {names!r}")
    return chosen


def renamed(text: str, names: Mapping[str, str] | None) -> str:
    """A description with every default tool name it mentions replaced by the tool's chosen name."""
    if not names:
        return text
    pattern = re.compile(r"\b(" + "|".join(TOOL_NAMES) + r")\b")
    return pattern.sub(lambda found: names.get(found.group(1), found.group(1)), text)


def memory_record(memory: Memory) -> dict[str, Any]:
    """A memory as a JSON-ready artifact: its text and its public metadata (as recall gives it)."""
    return {"content": memory.content, "metadata": memory_metadata(memory)}


def store_result(
    memory: RippleMem,
    content: str,
    type: str = "episodic",
    importance: float | None = None,
    event_time: str | None = None,
    *,
    stored_by: str,
) -> ToolReply:
    """Store one memory and say so with its id: 'Stored memory <id> (semantic): <text>'."""
    # A model's tool call gives plain strings; the facade checks each choice at run time (the casts below).
    stored = memory.add(
        content,
        type=cast(MemoryTypeName, type),
        importance=importance,
        event_time=event_time,
        metadata={"stored_by": stored_by},
    )
    return ToolReply(f"Stored memory {stored.id} ({stored.type}): {stored.content}", memory_record(stored))


def store_reply(
    memory: RippleMem,
    content: str,
    type: str = "episodic",
    importance: float | None = None,
    event_time: str | None = None,
    *,
    stored_by: str,
) -> str:
    """store_result's text."""
    return store_result(memory, content, type, importance, event_time, stored_by=stored_by).text


def hits_reply(query: str, hits: Sequence[Hit]) -> str:
    """Recalled memories as the model reads them: a count, then one numbered line each, best first."""
    if not hits:
        return f"No memories found for {query!r}."
    lines = [f"{count_phrase(len(hits), 'memory', 'memories')} for {query!r}, best first:"]
    lines += [format_hit_line(number, hit) for number, hit in enumerate(hits, start=1)]
    return "\n".join(lines)


def recall_result(
    memory: RippleMem, query: str, k: int = 5, types: Sequence[str] | None = None, mode: str = "ripple"
) -> ToolReply:
    """The best memories for a query: the lines of hits_reply, and the hits as the artifact."""
    hits = memory.recall(
        query,
        k=k,
        mode=cast(RecallMode, mode),
        types=[cast(MemoryTypeName, t) for t in types] if types else None,
    ).hits
    return ToolReply(hits_reply(query, hits), hits)


def recall_reply(
    memory: RippleMem, query: str, k: int = 5, types: Sequence[str] | None = None, mode: str = "ripple"
) -> str:
    """recall_result's text."""
    return recall_result(memory, query, k, types, mode).text


def update_result(
    memory: RippleMem,
    memory_id: str,
    *,
    content: str | None = None,
    importance: float | None = None,
    type: str | None = None,
    event_time: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    names: Mapping[str, str] | None = None,
) -> ToolReply:
    """Change one of the handle's memories by id; metadata is merged (a key set to None is removed)."""
    found = memory.get(memory_id.strip())
    if found is None:
        return ToolReply(
            renamed(
                f"No memory with id {memory_id!r}; nothing was updated. Use recall_memory to find the id.",
                names,
            ),
            {"memory_id": memory_id, "updated": False},
        )
    merged = None
    if metadata:
        merged = {key: value for key, value in {**found.metadata, **metadata}.items() if value is not None}
    if content is None and importance is None and type is None and event_time is None and merged is None:
        raise InvalidInputError("nothing to update: give content, type, importance, event_time or metadata")
    updated = memory.update(
        found.id,
        content=content,
        importance=importance,
        type=cast(MemoryTypeName | None, type),
        event_time=event_time,
        metadata=merged,
    )
    return ToolReply(
        f"Updated memory {updated.id} ({updated.type}): {updated.content}", memory_record(updated)
    )


def connections_result(memory: RippleMem, source: str, target: str, max_hops: int = 3) -> ToolReply:
    """The explained paths between two names or memory ids, shortest first."""
    connections: list[Connection] = memory.graph.find_connections(source, target, max_hops=max_hops, limit=5)
    paths = [{"path": path.explain(), "hops": path.hops, "strength": path.strength} for path in connections]
    artifact = {"source": source, "target": target, "connections": paths}
    if not connections:
        return ToolReply(f"No connection between {source!r} and {target!r} within {max_hops} hops.", artifact)
    found = count_phrase(len(connections), "connection", "connections")
    lines = [f"{found} between {source!r} and {target!r}:"]
    lines += [f"{number}. {path['path']}" for number, path in enumerate(paths, start=1)]
    return ToolReply("\n".join(lines), artifact)


def connections_reply(memory: RippleMem, source: str, target: str, max_hops: int = 3) -> str:
    """connections_result's text."""
    return connections_result(memory, source, target, max_hops).text


def forget_result(memory: RippleMem, memory_id: str, *, names: Mapping[str, str] | None = None) -> ToolReply:
    """Delete one of the handle's memories by id, or say that it has none with that id."""
    found = memory.get(memory_id.strip())
    if found is None or not memory.delete(found.id):
        return ToolReply(
            renamed(
                f"No memory with id {memory_id!r}; nothing was deleted. Use recall_memory to find the id.",
                names,
            ),
            {"memory_id": memory_id, "deleted": False},
        )
    return ToolReply(f"Forgot memory {found.id}: {found.content}", {"memory_id": found.id, "deleted": True})


def forget_reply(memory: RippleMem, memory_id: str) -> str:
    """forget_result's text."""
    return forget_result(memory, memory_id).text


def erase_result(
    memory: RippleMem,
    *,
    memory_id: str | None = None,
    matching: str | None = None,
    everything: bool = False,
    confirm: bool = False,
    allow_everything: bool = False,
    names: Mapping[str, str] | None = None,
) -> ToolReply:
    """Preview (default) or, with ``confirm``, run the verified erase of one memory, of what a text
    points to, or of all the handle user's memories; the artifact is the erase report."""
    given = [name for name, value in (("memory_id", memory_id), ("matching", matching)) if value]
    if everything:
        if not allow_everything:
            raise InvalidInputError(
                "erasing all of the user's memories is turned off for this tool; "
                "erase by memory_id or matching instead"
            )
        given.append("everything")
    if len(given) != 1:
        raise InvalidInputError(
            f"give exactly one of memory_id, matching or everything=true; got {', '.join(given) or 'none'}"
        )
    request: dict[str, Any] = (
        {"user_id": memory.user_id}
        if everything
        else {"matching": matching}
        if matching
        else {"memory_id": (memory_id or "").strip()}
    )
    try:
        report = memory.erase(**request, dry_run=not confirm)
    except MemoryNotFoundError:
        return ToolReply(
            renamed(
                f"No memory with id {memory_id!r}; nothing to erase. Use recall_memory to find the id.", names
            ),
            None,
        )
    what = (
        "all of the user's memories"
        if everything
        else f"matching {matching!r}"
        if matching
        else f"id {memory_id!r}"
    )
    if not report.memory_ids:
        return ToolReply(f"Nothing to erase: no memory {what}.", report.as_dict())
    text = _preview_text(report, what, names) if not confirm else _erased_text(report)
    return ToolReply(text, report.as_dict())


def _preview_text(report: EraseReport, what: str, names: Mapping[str, str] | None) -> str:
    count = count_phrase(len(report.memory_ids), "memory", "memories")
    lines = [
        f"Preview, nothing erased yet: {count} {what} would be erased for good, with their "
        "other versions and summaries:"
    ]
    shown = report.preview[:_PREVIEW_LINES]
    lines += [f"{n}. [id={memory_id}] {_short(text)}" for n, (memory_id, text) in enumerate(shown, 1)]
    if len(report.preview) > len(shown):
        lines.append(f"... and {len(report.preview) - len(shown)} more.")
    lines.append(
        renamed(
            "Show this list to the user. Only if they agree, call erase_memory again with the "
            "same arguments and confirm=true.",
            names,
        )
    )
    return "\n".join(lines)


def _erased_text(report: EraseReport) -> str:
    count = count_phrase(len(report.memory_ids), "memory", "memories")
    if report.verified:
        return f"Erased {count} for good; verified: nothing of them is left in any layer."
    residues = {layer: n for layer, n in report.verification.get("residues", {}).items() if n}
    return f"Erased {count}, but the verification found residues in {residues}; tell the user."


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW_CHARS else flat[: _PREVIEW_CHARS - 1] + "…"
