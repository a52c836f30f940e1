"""Conversation turns into working memory, and the ones that go to long-term memory at once."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ripplemem.core.validation import check_content, check_importance, check_metadata, check_text
from ripplemem.engine.engine import Engine
from ripplemem.rules.lifecycle.working import WorkingItem

_USER_ROLES = frozenset({"user", "human"})
_QUESTION = re.compile(
    r"[?？]\s*$|^\s*(?:who|what|when|where|why|how|which|do|does|did|is|are|can|could|"
    r"would|should|will)\b",
    re.IGNORECASE,
)
# A question that asks to store something ("Could you remember that my gate is B12?"), unlike one
# that asks to recall ("Can you remember what Mia is allergic to?").
_REQUEST = re.compile(
    r"\b(?:remember|note|keep in mind|don't forget)\s+(?:that|this|to)\b|记住|记一下|别忘了", re.IGNORECASE
)


def states_something(role: str, text: str) -> bool:
    """True for a user's statement or request to remember ("Could you remember that my gate is
    B12?"): the only turns that may go to long-term memory at once."""
    if role.strip().lower() not in _USER_ROLES:
        return False
    return not _QUESTION.search(text.strip()) or _REQUEST.search(text) is not None


def observe_turn(
    engine: Engine,
    user_id: str,
    session: str | None,
    role: str,
    text: str,
    *,
    importance: float | None,
    remember: bool,
    metadata: Mapping[str, Any] | None,
    store: Callable[..., Any],
) -> WorkingItem:
    """Add a turn to the session's working memory; write it through `store` when the consolidation
    decision says at once (an explicit request, or an urgent or emotional statement by the user).
    The turn is checked as add() checks a memory first, so one that could not be stored is not kept either."""
    check_text("role", role, max_chars=64)
    check_content(text, engine.settings.max_content_chars, field="text")
    if importance is not None:
        check_importance(importance)
    metadata = check_metadata(metadata)
    working = engine.working(user_id)
    item = working.observe(session, role, text, importance=importance, remember=remember, metadata=metadata)
    if not states_something(role, text):
        return item  # questions and the assistant's replies stay short-term (they count as mentions)
    decision = next((d for i, d in working.session(session).decide() if i.id == item.id), None)
    if decision is None or decision.action != "immediate" or item.id in engine.consolidated_working_ids:
        return item
    engine.consolidated_working_ids.add(item.id)
    store(
        item.text,
        type=decision.target or "episodic",
        session_id=session,
        importance=decision.importance,
        metadata={**dict(item.metadata), "role": item.role, "working_id": item.id},
    )
    return item
