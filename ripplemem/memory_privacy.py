"""RippleMem's verified erase (mixed into the facade): one memory, what a text points to, or the
handle's whole user; and the admin entry point that erases any user of a store."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ripplemem.errors import StoreError, UserMismatchError
from ripplemem.privacy import DEFAULT_MIN_SIMILARITY, EraseReport, erase
from ripplemem.validation import check_text

if TYPE_CHECKING:
    from ripplemem.embeddings import Embedder
    from ripplemem.engine import Engine


class PrivacyMethods:
    """erase of a RippleMem handle, its async twin, and RippleMem.erase_user for administrators."""

    _engine: Engine
    user_id: str

    def erase(self, memory_id: str | None = None, *, user_id: str | None = None, matching: str | None = None,
              dry_run: bool = False, min_similarity: float = DEFAULT_MIN_SIMILARITY) -> EraseReport:
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
                "an administrator erases any user with RippleMem.erase_user(path, user_id)")
        if isinstance(memory_id, str):
            check_text("memory_id", memory_id)
        return erase(self._engine, self.user_id, memory_id=memory_id, matching=matching,
                     whole_user=user_id is not None, dry_run=dry_run, min_similarity=min_similarity)

    async def aerase(self, memory_id: str | None = None, **kwargs: Any) -> EraseReport:
        """Async twin of erase."""
        return await asyncio.to_thread(self.erase, memory_id, **kwargs)

    @staticmethod
    def erase_user(path: str | os.PathLike[str], user_id: str, *, dry_run: bool = False,
                   embedder: str | Embedder | None = None, chroma_url: str | None = None,
                   chroma_headers: Mapping[str, str] | None = None) -> EraseReport:
        """Erase every trace of one user from the store at ``path`` (administrators, "forget me"
        requests handled outside the user's own session); returns the audit report. A store whose
        vectors are on a Chroma server needs its ``chroma_url`` (and headers)."""
        from ripplemem.cli import recorded_embedder
        from ripplemem.memory import RippleMem

        folder = os.fspath(path)
        model = embedder or recorded_embedder(folder)
        if model is None:
            raise StoreError(f"no RippleMem store at {folder!r} to erase from")
        with RippleMem(folder, user_id=user_id, embedder=model, chroma_url=chroma_url,
                       chroma_headers=chroma_headers) as handle:
            return handle.erase(user_id=user_id, dry_run=dry_run)
