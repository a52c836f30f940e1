"""Chat turns into RippleMem: observe them in working memory, then write the ones due for long-term memory.

Turns of the store roles (the user's, by default) go through `RippleMem.observe`, which writes
explicit and urgent turns at once ("remember that ..."). Other turns (the assistant's) and plain
questions enter working memory only: they count as mentions of what they name but are never
written by themselves (a question asks for a memory; it does not state one). The other consolidation
rules (docs/design-notes.md#consolidation: a turn mentioned three times, an old turn about known
things) say "consolidate" later; `consolidate_due` applies them on top of the public API, marking
each written memory with the working item's id so no turn is written twice.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableSet

from llama_index.core.base.llms.types import ChatMessage

from llamaindex_ripplemem._common import has_words, message_text, role_of
from ripplemem import Memory, RippleMem
from ripplemem.integration import remember_cue

CHAT_SOURCE = "llamaindex:chat"


def is_plain_question(text: str) -> bool:
    """A question, not a request to remember: "What am I allergic to?" but not "Can you remember ...?"."""
    return text.rstrip().endswith(("?", "\uff1f")) and remember_cue(text) is None


def observe_messages(
    memory: RippleMem,
    session_id: str,
    messages: Iterable[ChatMessage],
    observe_roles: tuple[str, ...],
    store_roles: tuple[str, ...],
) -> int:
    """Feed the text turns of the observed roles into the session's working memory; returns how many."""
    observed = 0
    for message in messages:
        role = role_of(message)
        text = message_text(message)
        if role not in observe_roles or not has_words(text):
            continue
        if role in store_roles and not is_plain_question(text):
            memory.observe(role, text, session_id=session_id)
        else:
            memory.working(session_id).observe(role, text)
        observed += 1
    return observed


def consolidate_due(
    memory: RippleMem, session_id: str, done: MutableSet[str], store_roles: tuple[str, ...]
) -> list[Memory]:
    """Write the session's working items the consolidation rules call due; returns the new memories.

    Only turns of the store roles that are not plain questions are written. `done` holds the
    working item ids already known to be in long-term memory (updated here).
    """
    written: list[Memory] = []
    for item, decision in memory.working(session_id).decide():
        if decision.action != "consolidate" or item.id in done:
            continue
        done.add(item.id)
        if item.role not in store_roles or is_plain_question(item.text):
            continue
        if memory.list(metadata={"working_id": item.id}, session_id=session_id, limit=1):
            continue  # observe() already wrote it as an explicit or urgent turn
        written.append(
            memory.add(
                item.text,
                type=decision.target or "episodic",
                session_id=session_id,
                importance=decision.importance,
                source=CHAT_SOURCE,
                metadata={**dict(item.metadata), "role": item.role, "working_id": item.id},
            )
        )
    return written


def store_turns(
    memory: RippleMem,
    messages: Iterable[ChatMessage],
    roles: tuple[str, ...],
    default_session: str | None = None,
) -> list[Memory]:
    """Write the text turns of the given roles straight to long-term memory as episodic memories."""
    items = []
    for message in messages:
        role = role_of(message)
        text = message_text(message)
        if role in roles and has_words(text):
            session = message.additional_kwargs.get("session_id") or default_session
            items.append(
                {
                    "content": text,
                    "type": "episodic",
                    "session_id": session,
                    "source": CHAT_SOURCE,
                    "metadata": {"role": role},
                }
            )
    return memory.add_many(items) if items else []
