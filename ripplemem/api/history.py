"""RippleMem's change history: every change to a memory with its time and cause (mixed into the
facade); the reading is retrieval/history.py's."""

from __future__ import annotations

import asyncio

from ripplemem.api.handle import HandleState
from ripplemem.core.validation import check_text
from ripplemem.errors import InvalidTypeError
from ripplemem.retrieval.history import memory_history
from ripplemem.store.tables.history import HistoryEvent


class HistoryMethods(HandleState):
    """The history methods of a RippleMem handle."""

    def history(self, memory_id: str) -> list[HistoryEvent]:
        """Every change to a memory, oldest first: added, merged, updated, superseded, contradicted,
        promoted, summarized, tier moves ... each with its time (``event.when``), cause and detail.

        The versions linked to it by updates (what it superseded and what superseded it) are
        included, so one call tells the story of a value ("10 mg" -> "20 mg" -> "40 mg"). A memory
        of another user is not found, exactly like a missing one.
        """
        if not isinstance(memory_id, str) or not memory_id:
            raise InvalidTypeError(f"memory_id must be a non-empty string, got {memory_id!r}")
        check_text("memory_id", memory_id)
        return memory_history(self._engine, self.user_id, memory_id)

    async def ahistory(self, memory_id: str) -> list[HistoryEvent]:
        """Async twin of history."""
        return await asyncio.to_thread(self.history, memory_id)
