"""Checks and conversions the LlamaIndex adapters share: arguments, chat messages, memory lines."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, TextBlock

from ripplemem import InvalidInputError, InvalidTypeError, RippleMem

RECALL_MODES = ("ripple", "hybrid", "dense", "keyword")
_WORD = re.compile(r"\w")


def check_memory(memory: Any) -> RippleMem:
    """The RippleMem handle an adapter wraps, or InvalidTypeError naming `memory`."""
    if not isinstance(memory, RippleMem):
        raise InvalidTypeError(
            "memory must be a ripplemem.RippleMem handle, e.g. RippleMem(path='./memdb', user_id='alice'); "
            f"got {type(memory).__name__}")
    return memory


def check_positive_int(name: str, value: Any) -> int:
    """A positive int (not a bool), or an error naming the argument."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"{name} must be a positive integer, got {type(value).__name__}")
    if value <= 0:
        raise InvalidInputError(f"{name} must be a positive integer, got {value}")
    return value


def check_mode(mode: Any) -> str:
    """A recall mode RippleMem knows, or InvalidInputError listing them."""
    if mode not in RECALL_MODES:
        raise InvalidInputError(f"mode must be one of {', '.join(RECALL_MODES)}; got {mode!r}")
    return str(mode)


def check_roles(name: str, roles: Any) -> tuple[str, ...]:
    """Chat roles as a tuple of strings, or InvalidTypeError naming the argument."""
    if isinstance(roles, str) or not isinstance(roles, Iterable):
        raise InvalidTypeError(f"{name} must be a list such as ['user', 'assistant'], got {roles!r}")
    values = tuple(roles)
    if not all(isinstance(role, str) and role for role in values):
        raise InvalidTypeError(f"{name} must hold non-empty strings, got {values!r}")
    return values


def message_text(message: ChatMessage) -> str:
    """The text of a chat message (its text blocks joined), stripped; '' when it has none."""
    parts = [block.text for block in message.blocks if isinstance(block, TextBlock)]
    return "\n".join(parts).strip()


def has_words(text: str) -> bool:
    """True when the text holds a letter or digit (RippleMem refuses punctuation-only turns)."""
    return bool(_WORD.search(text))


def role_of(message: ChatMessage) -> str:
    """The message role as a plain string ('user', 'assistant', ...)."""
    role = message.role
    return str(getattr(role, "value", role))


def recall_query(messages: Sequence[ChatMessage], input: str | None = None, window: int = 1) -> str:
    """What to recall for: the input if given, else the last `window` user messages joined."""
    if input and input.strip():
        return input.strip()
    texts = [message_text(m) for m in messages if role_of(m) == "user"]
    texts = [text for text in texts if text]
    return "\n".join(texts[-window:])
