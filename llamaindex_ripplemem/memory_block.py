"""RippleMemMemoryBlock: long-term memory as a block of ``Memory.from_defaults(memory_blocks=[...])``.

On every read it recalls the memories that answer the latest user message and returns them as a
user message, which ``Memory`` puts in front of the chat history. Not as text for the system
message: llama-index-core 0.14's ``ReActAgent`` drops the leading system message of the history
it is given (taking it for its own system prompt, which it has already), so memories there never
reached the model. LlamaIndex hands a block messages only when they overflow the short-term chat
history (more than ``token_limit * chat_history_token_ratio`` tokens); those turns are stored as
episodic memories.
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory import BaseMemoryBlock

from llamaindex_ripplemem._common import (
    check_memory,
    check_mode,
    check_positive_int,
    check_roles,
    recall_query,
)
from llamaindex_ripplemem.memory import CONTEXT_HEADER
from llamaindex_ripplemem.turns import store_turns
from ripplemem import RecallMode, RippleMem


class RippleMemMemoryBlock(BaseMemoryBlock[list[ChatMessage]]):
    """Recalled RippleMem memories as a LlamaIndex memory block: ``RippleMemMemoryBlock(memory=mem)``."""

    name: str = Field(default="ripple_memory", description="The block's name (its tag in the prompt).")
    description: str | None = Field(default="Long-term memories recalled from RippleMem.")
    k: int = Field(default=5, description="How many memories to recall per read.")
    token_budget: int = Field(default=400, description="Token budget of the recalled-memories text.")
    mode: RecallMode = Field(default="ripple", description="RippleMem recall mode.")
    recall_window: int = Field(default=1, description="How many recent user messages form the recall query.")
    store_roles: tuple[str, ...] = Field(
        default=("user", "assistant"), description="Roles whose overflowing turns are stored."
    )

    _memory: RippleMem = PrivateAttr()

    def __init__(self, memory: RippleMem, **data: Any) -> None:
        handle = check_memory(memory)
        for name in ("k", "token_budget", "recall_window"):
            if name in data:
                check_positive_int(name, data[name])
        if "mode" in data:
            check_mode(data["mode"])
        if "store_roles" in data:
            data["store_roles"] = check_roles("store_roles", data["store_roles"])
        super().__init__(**data)
        self._memory = handle

    @property
    def memory(self) -> RippleMem:
        """The RippleMem handle (one user's long-term memory) this block reads and writes."""
        return self._memory

    async def _aget(
        self, messages: list[ChatMessage] | None = None, **block_kwargs: Any
    ) -> list[ChatMessage]:
        """The memories recalled for the latest user message, as dated lines in one user message
        (none when nothing is recalled); see the module docstring for why not the system message."""
        query = recall_query(messages or [], None, self.recall_window)
        if not query:
            return []
        found = await self._memory.arecall(query, self.k, mode=self.mode)
        text = found.context(self.token_budget, header=CONTEXT_HEADER)
        return [ChatMessage(role="user", content=text)] if text else []

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Store the turns that overflowed the short-term chat history as episodic memories."""
        await asyncio.to_thread(store_turns, self._memory, messages, self.store_roles)
