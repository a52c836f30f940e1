"""What add and add_many accept: one item (a dict or a string) checked and turned into a Memory."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ripplemem.config import Settings
from ripplemem.core.choices import Modality, literal_values
from ripplemem.core.clock import in_utc
from ripplemem.core.types import Memory, Scope
from ripplemem.core.validation import (
    check_content,
    check_datetime,
    check_identifier,
    check_importance,
    check_metadata,
    check_text,
    check_type,
)
from ripplemem.errors import InvalidInputError, InvalidTypeError

ADD_FIELDS = frozenset(
    {
        "content",
        "type",
        "session_id",
        "event_time",
        "importance",
        "metadata",
        "source",
        "modality",
        "relations",
    }
)
MODALITIES = literal_values(Modality)


def build_memory(
    item: Mapping[str, Any] | str,
    position: int,
    default_type: str,
    now: datetime,
    scope: Scope,
    settings: Settings,
    *,
    label: str | None = None,
) -> Memory:
    """A new Memory (with a fresh id) from one add_many item, every field checked; errors name the
    item by its position, or by ``label`` (e.g. a file's line) when given."""
    where = label or f"item {position}"
    if isinstance(item, str):
        item = {"content": item}
    if not isinstance(item, Mapping):
        raise InvalidTypeError(f"{where} must be a dict or a string, got {type(item).__name__}")
    unknown = set(item) - ADD_FIELDS
    if unknown:
        raise InvalidInputError(
            f"{where} has unknown fields {sorted(unknown)}; allowed: {sorted(ADD_FIELDS)}"
        )
    if "content" not in item:
        raise InvalidInputError(f"{where} has no 'content'")
    importance = item.get("importance")
    modality = item.get("modality") or "text"
    if modality not in MODALITIES:
        raise InvalidInputError(f"modality must be one of {', '.join(MODALITIES)}; got {modality!r}")
    session_id = item.get("session_id")
    if session_id is None:
        session_id = scope.session_id
    try:
        return _checked_memory(item, default_type, now, scope, settings, session_id, importance, modality)
    except (InvalidInputError, InvalidTypeError) as exc:
        # Name a later item of a batch, so its one bad item can be found (nothing is stored); the
        # first item is also what a single add() checks, whose errors name only the field.
        if position == 0 and label is None:
            raise
        raise type(exc)(f"{where}: {exc}") from exc


def _checked_memory(
    item: Mapping[str, Any],
    default_type: str,
    now: datetime,
    scope: Scope,
    settings: Settings,
    session_id: Any,
    importance: Any,
    modality: str,
) -> Memory:
    return Memory(
        id=uuid.uuid4().hex,
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        session_id=check_identifier("session_id", session_id, required=False),
        type=check_type(item.get("type") or default_type),
        content=check_content(item["content"], settings.max_content_chars),
        modality=modality,
        importance=settings.default_importance if importance is None else check_importance(importance),
        created_at=in_utc(now),
        event_time=_in_utc(check_datetime("event_time", item.get("event_time"))),
        metadata=check_metadata(item.get("metadata")),
        source=None if item.get("source") is None else check_text("source", item["source"]),
    )


def _in_utc(value: datetime | None) -> datetime | None:
    return None if value is None else in_utc(value)
