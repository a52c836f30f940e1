"""Scripted langchain-core chat models for the expansion, router and answer tests."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.language_models import SimpleChatModel
from langchain_core.messages import BaseMessage
from pydantic import Field, PrivateAttr

Reply = str | Exception


class ScriptedChatModel(SimpleChatModel):
    """Gives its replies in order (an Exception is raised) and keeps every conversation it saw."""

    replies: list[Reply]
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        with self._lock:
            self.seen.append(list(messages))
            if not self.replies:
                raise AssertionError("the model was called more often than scripted")
            reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


class ByPromptChatModel(SimpleChatModel):
    """Replies from the script whose key occurs in the system prompt, so concurrent calls stay
    deterministic (MQE and HyDE go out in one batch)."""

    script: dict[str, list[Reply]]
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "by-prompt"

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        with self._lock:
            self.seen.append(list(messages))
            key = next(key for key in self.script if key in messages[0].content)
            reply = self.script[key].pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def timeout() -> TimeoutError:
    """What an unreachable endpoint raises."""
    return TimeoutError("Request timed out after 60 s")
