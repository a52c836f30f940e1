"""Adapter fixtures: real RippleMem stores on the session's MiniLM embedder, and a scripted chat model
that calls tools, for offline agent loops (the root conftest's `embedder` is reused)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import Field

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder


class ScriptedToolModel(GenericFakeChatModel):
    """GenericFakeChatModel that accepts tools and keeps every message list it was shown."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any
    ) -> ScriptedToolModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)

    def system_prompts(self) -> list[str]:
        """The system message of each model call ('' when there was none)."""
        return [next((m.text for m in call if m.type == "system"), "") for call in self.seen]


def scripted(*replies: AIMessage) -> ScriptedToolModel:
    """A model that answers with these messages, in order."""
    return ScriptedToolModel(messages=iter(replies))


def tool_call(name: str, call_id: str, **args: Any) -> AIMessage:
    """An assistant message that calls one tool, as a provider would return it."""
    calls = [{"name": name, "args": args, "id": call_id, "type": "tool_call"}]
    return AIMessage(content="", tool_calls=calls)


@pytest.fixture
def script() -> Any:
    """The `scripted` factory, so tests need not import from conftest."""
    return scripted


@pytest.fixture
def call() -> Any:
    """The `tool_call` factory."""
    return tool_call


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    """A directory for an on-disk store that outlives one RippleMem handle."""
    return tmp_path / "memdb"


@pytest.fixture
def alice(embedder: Embedder) -> Iterator[RippleMem]:
    """Alice's handle on an in-memory store."""
    handle = RippleMem(path=None, user_id="alice", embedder=embedder)
    yield handle
    handle.close()
