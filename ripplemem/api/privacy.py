"""RippleMem's verified erase (mixed into the facade): one memory, what a text points to, or the
handle's whole user (the admin entry point, RippleMem.erase_user, is on the facade)."""

from __future__ import annotations

import asyncio

from ripplemem.api.handle import HandleState
from ripplemem.core.validation import check_text
from ripplemem.errors import UserMismatchError
from ripplemem.privacy.erase import DEFAULT_MIN_SIMILARITY, EraseReport, erase


class PrivacyMethods(HandleState):
    """erase of a RippleMem handle and its async twin."""

    def erase(
        self,
        memory_id: str | None = None,
        *,
        user_id: str | None = None,
        matching: str | None = None,
        dry_run: bool = False,
        min_similarity: float = DEFAULT_MIN_SIMILARITY,
    ) -> EraseReport:
        """Erase for good, through every layer, then verify; returns the audit report.

        ``erase(memory_id)`` erases the memory with its other versions and the summaries made from
        it. ``erase(matching="my medical condition")`` erases every memory the text points to (the
        text in its content or metadata, all its keywords, an entity it names, or for a description
        in words a dense similarity >= ``min_similarity`` that stands clearly above the user's other
        memories), with their versions and summaries; the text is capped at 100,000 characters.
        Preview it first with ``dry_run=True``: the report's ``preview`` lists (id, text) of each
        memory it would erase. ``erase(user_id=...)`` erases everything of the handle's own user
        ("forget me"); another user's id is refused (administrators use ``RippleMem.erase_user``).
        ``dry_run=True`` changes nothing. The report of an erase (``.to_json()``) lists ids,
        per-layer counts and the verification result (``verified``: nothing of the memories, nor
        the request text, is left in any layer or file), never the text.
        """
        if user_id is not None and user_id != self.user_id:
            raise UserMismatchError(
                f"this handle belongs to user {self.user_id!r} and cannot erase user {user_id!r}; "
                "an administrator erases any user with RippleMem.erase_user(path, user_id)"
            )
        if isinstance(memory_id, str):
            check_text("memory_id", memory_id)
        return erase(
            self._engine,
            self.user_id,
            memory_id=memory_id,
            matching=matching,
            whole_user=user_id is not None,
            dry_run=dry_run,
            min_similarity=min_similarity,
        )

    async def aerase(
        self,
        memory_id: str | None = None,
        *,
        user_id: str | None = None,
        matching: str | None = None,
        dry_run: bool = False,
        min_similarity: float = DEFAULT_MIN_SIMILARITY,
    ) -> EraseReport:
        """Async twin of erase."""
        return await asyncio.to_thread(
            self.erase,
            memory_id,
            user_id=user_id,
            matching=matching,
            dry_run=dry_run,
            min_similarity=min_similarity,
        )
