"""A finished exchange into RippleMem: the user's turn through ``observe``, the answer into working
memory only, then the working items the consolidation rules call due written to long-term memory.

``observe`` writes explicit and urgent turns at once ("remember that ...", an allergy). Only the
user's statements are written: an answer that repeats them ("I'll remember Mia's peanut allergy")
and a plain question ("Am I allergic to anything?") only count as mentions in working memory.
The later consolidation rules (a turn mentioned three times, ...; docs/design-notes.md#consolidation)
say "consolidate"; ``consolidate_due``
applies them, marking each memory with its working item's id so no turn is written twice.
"""

from __future__ import annotations

from ripplemem import InvalidInputError, Memory, RippleMem
from ripplemem.integration import remember_cue


def is_plain_question(text: str) -> bool:
    """A question, not a request to remember: "What am I allergic to?" but not "Can you remember ...?"."""
    return text.rstrip().endswith(("?", "\uff1f")) and remember_cue(text) is None


def observe_exchange(
    memory: RippleMem, user_text: str | None, answer_text: str | None, *, source: str
) -> list[Memory]:
    """Observe one exchange in the handle's session; returns the memories consolidation wrote."""
    metadata = {"source": source}
    try:
        if user_text and user_text.strip():
            if is_plain_question(user_text):
                memory.working().observe("user", user_text, metadata=metadata)
            else:
                memory.observe("user", user_text, metadata=metadata)
        if answer_text and answer_text.strip():
            memory.working().observe("assistant", answer_text, metadata=metadata)
    except InvalidInputError:  # a turn without words ("?", an image only) holds nothing to keep
        pass
    return consolidate_due(memory, source=source)


def consolidate_due(memory: RippleMem, *, source: str) -> list[Memory]:
    """Write the user statements in working memory that the consolidation rules call due."""
    session = memory.scope_info.session_id
    written = []
    for item, decision in memory.working().decide():
        if decision.action != "consolidate" or item.role != "user" or is_plain_question(item.text):
            continue
        if memory.list(metadata={"working_id": item.id}, session_id=session, limit=1):
            continue  # already written (by observe's immediate path or an earlier turn)
        written.append(
            memory.add(
                item.text,
                type=decision.target or "episodic",
                session_id=session,
                importance=decision.importance,
                metadata={**dict(item.metadata), "role": item.role, "working_id": item.id},
            )
        )
    return written
