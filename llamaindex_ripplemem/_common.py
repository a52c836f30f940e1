"""Checks and conversions the LlamaIndex adapters share: arguments, chat messages, memory lines."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, TextBlock
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from ripplemem import InvalidInputError, InvalidTypeError, RecallMode, RippleMem
from ripplemem.integration import OPERATORS, Condition, recall_options
from ripplemem.integration import check_mode as check_recall_mode

RECALL_MODES: tuple[RecallMode, ...] = ("ripple", "hybrid", "dense", "keyword")
_WORD = re.compile(r"\w")


def check_memory(memory: Any) -> RippleMem:
    """The RippleMem handle an adapter wraps, or InvalidTypeError naming `memory`."""
    if not isinstance(memory, RippleMem):
        raise InvalidTypeError(
            "memory must be a ripplemem.RippleMem handle, e.g. RippleMem(path='./memdb', user_id='alice'); "
            f"got {type(memory).__name__}"
        )
    return memory


def check_positive_int(name: str, value: Any) -> int:
    """A positive int (not a bool), or an error naming the argument."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"{name} must be a positive integer, got {type(value).__name__}")
    if value <= 0:
        raise InvalidInputError(f"{name} must be a positive integer, got {value}")
    return value


def check_mode(mode: Any) -> RecallMode:
    """A recall mode RippleMem knows, or InvalidInputError listing them."""
    return check_recall_mode(mode, RECALL_MODES)


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


def filters_to_recall(filters: Any) -> dict[str, Any]:
    """LlamaIndex MetadataFilters on the nodes' metadata keys as recall options; what recall cannot
    express (OR, NOT, NE, NIN, GT, LTE, text matches, ...) is refused with the operator named."""
    if not isinstance(filters, MetadataFilters):
        raise InvalidTypeError(
            "filters must be a llama_index.core.vector_stores.types.MetadataFilters, "
            f"got {type(filters).__name__}"
        )
    return recall_options(_conditions(filters))


def _conditions(filters: MetadataFilters) -> list[Condition]:
    """The conditions of MetadataFilters that must all hold (nested AND groups flattened)."""
    condition = filters.condition or FilterCondition.AND
    if condition == FilterCondition.NOT:
        raise InvalidInputError(
            "FilterCondition.NOT is not supported: recall keeps memories matching every filter (AND)"
        )
    if condition == FilterCondition.OR and len(filters.filters) > 1:
        raise InvalidInputError(
            "FilterCondition.OR is not supported: recall keeps memories matching "
            "every filter (AND); for one key with several values use FilterOperator.IN"
        )
    found: list[Condition] = []
    for item in filters.filters:
        if isinstance(item, MetadataFilters):
            found += _conditions(item)
        elif isinstance(item, MetadataFilter):
            operator = FilterOperator(item.operator)
            if operator.value not in OPERATORS:
                raise InvalidInputError(
                    f"FilterOperator.{operator.name} ({operator.value!r}) on {item.key!r} is not supported; "
                    "recall takes EQ, IN (type), GTE (time, importance) and LT (time)"
                )
            found.append(Condition(item.key, operator.value, item.value))
    return found
