"""RippleMemMemory: a LlamaIndex chat memory that feeds every turn to RippleMem and recalls long-term context.

Use it as ``agent.run(user_msg, memory=RippleMemMemory(memory=mem, session_id="s1"))``. The chat
history lives in a LlamaIndex ``Memory`` (the primary memory); every user and assistant turn also
enters RippleMem's working memory. A user turn is written to long-term memory at once when it is
an explicit request ("remember that ...") or urgent, and later when the consolidation rules say so
(e.g. mentioned three times); assistant turns and plain questions only count as mentions.
``get()`` returns the chat history with the long-term memories recalled for the latest user
message in front of that message (or in the leading system message, ``insert_method="system"``,
which llama-index-core 0.14's ``ReActAgent`` drops unless the agent has a ``system_prompt``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, TextBlock
from llama_index.core.bridge.pydantic import Field, PrivateAttr, SerializeAsAny
from llama_index.core.memory import BaseMemory
from llama_index.core.memory import Memory as ChatHistoryMemory

from llamaindex_ripplemem._common import (
    check_memory,
    check_mode,
    check_positive_int,
    check_roles,
    recall_query,
    role_of,
)
from llamaindex_ripplemem.turns import consolidate_due, observe_messages
from ripplemem import InvalidInputError, InvalidTypeError, Memory, RecallMode, RippleMem

CONTEXT_HEADER = "Long-term memories about the user (RippleMem), best first:"
INSERT_METHODS = ("system", "user")


class RippleMemMemory(BaseMemory):
    """Chat history plus RippleMem long-term memory for LlamaIndex agents and chat engines."""

    primary_memory: SerializeAsAny[BaseMemory] = Field(description="Holds this session's chat history.")
    session_id: str = Field(description="The conversation; turns are observed and stored under it.")
    k: int = Field(default=5, description="How many long-term memories to recall per message.")
    token_budget: int = Field(default=500, description="Token budget of the recalled-memories text.")
    mode: RecallMode = Field(default="ripple", description="RippleMem recall mode.")
    recall_window: int = Field(default=1, description="How many recent user messages form the recall query.")
    observe_roles: tuple[str, ...] = Field(
        default=("user", "assistant"), description="Roles whose turns enter working memory."
    )
    store_roles: tuple[str, ...] = Field(
        default=("user",), description="Roles whose turns may become long-term memories."
    )
    insert_method: str = Field(
        default="user",
        description="Where recalled memories go: the latest 'user' message or the 'system' one.",
    )

    _memory: RippleMem = PrivateAttr()
    _consolidated: set[str] = PrivateAttr(default_factory=set)
    _cached: tuple[str, str] | None = PrivateAttr(default=None)

    def __init__(
        self,
        memory: RippleMem,
        *,
        session_id: str | None = None,
        primary_memory: BaseMemory | None = None,
        k: int = 5,
        token_budget: int = 500,
        mode: RecallMode = "ripple",
        recall_window: int = 1,
        observe_roles: Iterable[str] = ("user", "assistant"),
        store_roles: Iterable[str] = ("user",),
        insert_method: str = "user",
    ) -> None:
        handle = check_memory(memory)
        session = session_id or handle.scope_info.session_id or uuid.uuid4().hex
        if not isinstance(session, str):
            raise InvalidTypeError(f"session_id must be a string, got {type(session).__name__}")
        if not session.strip():
            raise InvalidInputError("session_id must not be empty or whitespace")
        if primary_memory is not None and not isinstance(primary_memory, BaseMemory):
            raise InvalidTypeError(
                f"primary_memory must be a LlamaIndex BaseMemory, got {type(primary_memory).__name__}"
            )
        super().__init__(  # type: ignore[call-arg]  # pydantic fields; mypy runs without the plugin
            primary_memory=primary_memory or ChatHistoryMemory.from_defaults(session_id=session),
            session_id=session,
            k=check_positive_int("k", k),
            token_budget=check_positive_int("token_budget", token_budget),
            mode=check_mode(mode),
            recall_window=check_positive_int("recall_window", recall_window),
            observe_roles=check_roles("observe_roles", observe_roles),
            store_roles=check_roles("store_roles", store_roles),
            insert_method=check_insert_method(insert_method),
        )
        self._memory = handle

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serialises this memory under."""
        return "RippleMemMemory"

    @classmethod
    def from_defaults(cls, memory: RippleMem | None = None, **kwargs: Any) -> RippleMemMemory:
        """Build one like the constructor: ``RippleMemMemory.from_defaults(memory=mem, session_id="s1")``."""
        if memory is None:
            raise InvalidInputError("RippleMemMemory needs memory=RippleMem(path=..., user_id=...)")
        return cls(memory, **kwargs)

    @property
    def memory(self) -> RippleMem:
        """The RippleMem handle (one user's long-term memory) this chat memory writes to."""
        return self._memory

    # -- reading -----------------------------------------------------------------------------
    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        """The chat history, with the memories recalled for `input` (or the last user message) in front."""
        messages = self.primary_memory.get(input=input, **kwargs)
        context = self._context_for(recall_query(messages, input, self.recall_window))
        return with_context(messages, context, self.insert_method)

    async def aget(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        """Async twin of get."""
        messages = await self.primary_memory.aget(input=input, **kwargs)
        query = recall_query(messages, input, self.recall_window)
        return with_context(messages, await asyncio.to_thread(self._context_for, query), self.insert_method)

    def get_all(self) -> list[ChatMessage]:
        """The whole chat history, without recalled memories."""
        return self.primary_memory.get_all()

    async def aget_all(self) -> list[ChatMessage]:
        """Async twin of get_all."""
        return await self.primary_memory.aget_all()

    def _context_for(self, query: str) -> str:
        if not query:
            return ""
        if self._cached is not None and self._cached[0] == query:
            return self._cached[1]
        found = self._memory.recall(query, self.k, mode=self.mode)
        context = found.context(self.token_budget, header=CONTEXT_HEADER)
        self._cached = (query, context)
        return context

    # -- writing -----------------------------------------------------------------------------
    def put(self, message: ChatMessage) -> None:
        """Add a message to the chat history and let RippleMem observe it."""
        self.primary_memory.put(message)
        self._observe([message])

    async def aput(self, message: ChatMessage) -> None:
        """Async twin of put."""
        await self.primary_memory.aput(message)
        await asyncio.to_thread(self._observe, [message])

    def put_messages(self, messages: list[ChatMessage]) -> None:
        """Add several messages (e.g. an agent step's tool calls and results)."""
        self.primary_memory.put_messages(messages)
        self._observe(messages)

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        """Async twin of put_messages."""
        await self.primary_memory.aput_messages(messages)
        await asyncio.to_thread(self._observe, messages)

    def set(self, messages: list[ChatMessage]) -> None:
        """Replace the chat history; only messages beyond the current history are observed (as new turns)."""
        known = len(self.primary_memory.get_all())
        self.primary_memory.set(messages)
        self._observe(messages[known:])

    async def aset(self, messages: list[ChatMessage]) -> None:
        """Async twin of set."""
        known = len(await self.primary_memory.aget_all())
        await self.primary_memory.aset(messages)
        await asyncio.to_thread(self._observe, messages[known:])

    def reset(self) -> None:
        """Start the conversation over: clear the chat history and the session's working memory.

        Long-term memories stay; turns already due are written before working memory is cleared.
        """
        self.consolidate()
        self.primary_memory.reset()
        self._memory.working(self.session_id).clear()
        self._cached = None

    async def areset(self) -> None:
        """Async twin of reset."""
        await asyncio.to_thread(self.reset)

    def consolidate(self) -> list[Memory]:
        """Write the working-memory turns the consolidation rules call due now; returns the new memories."""
        return consolidate_due(self._memory, self.session_id, self._consolidated, self.store_roles)

    def _observe(self, messages: Sequence[ChatMessage]) -> None:
        if observe_messages(self._memory, self.session_id, messages, self.observe_roles, self.store_roles):
            if any(role_of(m) == "user" for m in messages):
                self._cached = None
            self.consolidate()


def check_insert_method(value: Any) -> str:
    """'system' or 'user', else InvalidInputError naming `insert_method`."""
    if value not in INSERT_METHODS:
        raise InvalidInputError(f"insert_method must be one of {', '.join(INSERT_METHODS)}; got {value!r}")
    return str(value)


def with_context(messages: list[ChatMessage], context: str, insert_method: str = "user") -> list[ChatMessage]:
    """The messages with the recalled context added, in the last user message or the leading system message.

    "user" puts it in front of the latest user message, where every agent passes it on; "system"
    appends it to the leading system message (or adds one), which ReActAgent drops when it has no
    system_prompt of its own.
    """
    if not context:
        return messages
    result = list(messages)
    if insert_method == "user":
        last_user = next((i for i in range(len(result) - 1, -1, -1) if role_of(result[i]) == "user"), None)
        if last_user is not None:
            result[last_user] = _prepend(result[last_user], context + "\n")
            return result
        return [*result, ChatMessage(role="user", content=context)]
    if result and role_of(result[0]) == "system":
        result[0] = _append(result[0], "\n" + context)
        return result
    return [ChatMessage(role="system", content=context), *result]


def _prepend(message: ChatMessage, text: str) -> ChatMessage:
    return ChatMessage(
        role=message.role,
        blocks=[TextBlock(text=text), *message.blocks],
        additional_kwargs=dict(message.additional_kwargs),
    )


def _append(message: ChatMessage, text: str) -> ChatMessage:
    return ChatMessage(
        role=message.role,
        blocks=[*message.blocks, TextBlock(text=text)],
        additional_kwargs=dict(message.additional_kwargs),
    )
