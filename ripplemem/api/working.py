"""RippleMem's working-memory and consolidation methods: observe turns, read a session's working
memory, consolidate it into long-term memory (mixed into the RippleMem facade)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ripplemem.api.crud import CrudMethods
from ripplemem.core.validation import check_flag, check_identifier
from ripplemem.errors import InvalidTypeError
from ripplemem.lifecycle.consolidate import (
    ConsolidationReport,
    consolidate_working,
    promote_stored,
    summarize_episodic,
)
from ripplemem.lifecycle.observe import observe_turn
from ripplemem.llm.chat import require_llm
from ripplemem.rules.lifecycle.working import WorkingItem, WorkingMemory


class WorkingMethods(CrudMethods):
    """observe, working and consolidate of a RippleMem handle."""

    # -- working memory ----------------------------------------------------------------------
    def observe(
        self,
        role: str,
        text: str,
        *,
        session_id: str | None = None,
        importance: float | None = None,
        remember: bool = False,
        metadata: Mapping[str, Any] | None = None,
    ) -> WorkingItem:
        """Feed one conversation turn into the session's working memory (capacity, TTL, mentions).

        An explicit request ("remember that ...", "记住", or ``remember=True``) or an urgent or
        emotional statement by the user is written to long-term memory at once;
        questions, assistant and system turns, and everything else wait in working memory.
        """
        session = check_identifier("session_id", session_id, required=False) or self.scope_info.session_id
        return observe_turn(
            self._engine,
            self.user_id,
            session,
            role,
            text,
            importance=importance,
            remember=remember,
            metadata=metadata,
            store=self.add,
        )

    def consolidate(
        self, session_id: str | None = None, *, dry_run: bool = False, summarize: bool | None = None
    ) -> ConsolidationReport:
        """Move what deserves it into long-term memory and return what happened and why.

        Working items of the session (every session of this user when None) are written when the
        consolidation score says so (mentioned 3 times, related to known entities, older than an hour,
        ...; docs/design-notes.md#consolidation); stored memories are promoted (working -> episodic at
        importance >= 0.7, episodic -> semantic at >= 0.8). With ``summarize`` (by default: when the handle
        has an ``llm``), each cluster of related episodic memories (>= 3 sharing an entity or
        alike) not yet summarised is summarised by the chat model into a semantic memory with
        SUMMARIZES edges to its sources; ``summarize=True`` without an llm is an error.
        ``dry_run=True`` reports without changing anything or calling the model.
        """
        engine = self._engine
        session = check_identifier("session_id", session_id, required=False)
        dry = check_flag(dry_run)
        if summarize is not None and not isinstance(summarize, bool):
            raise InvalidTypeError(f"summarize must be True, False or None, got {type(summarize).__name__}")
        if summarize:
            require_llm(self.llm, "consolidate(summarize=True)")
        sessions: list[str | None] = [session]
        if session is None:
            sessions = engine.working(self.user_id).sessions()
        report = ConsolidationReport(dry_run=dry)
        consolidate_working(engine, self.user_id, sessions, report.dry_run, self.add, report)
        promote_stored(engine, self.user_id, report.dry_run, report)
        if summarize or (summarize is None and self.llm is not None):
            summarize_episodic(engine, self.scope_info, self.llm, report.dry_run, report)
        return report

    def working(self, session_id: str | None = None) -> WorkingMemory:
        """The working memory of a session (the handle's session by default): items, context()."""
        session = check_identifier("session_id", session_id, required=False) or self.scope_info.session_id
        return self._engine.working(self.user_id).session(session)
