"""RippleMem's document ingestion into knowledge bases (mixed into the RippleMem facade), and the
knowledge bases themselves, their chunks and grants (``mem.kb``)."""

from __future__ import annotations

import asyncio
import builtins
import os
from collections.abc import Iterable

from ripplemem.api.handle import HandleState, Namespace
from ripplemem.core.choices import Chunker
from ripplemem.core.types import Memory
from ripplemem.core.validation import check_identifier, check_k
from ripplemem.documents.ingest import FileProgress, IngestOptions, IngestReport, ingest_paths
from ripplemem.engine import knowledge_bases as kbs
from ripplemem.engine.knowledge_bases import DEFAULT_KNOWLEDGE_BASE, KnowledgeBase, check_kb_name
from ripplemem.errors import InvalidInputError
from ripplemem.markdown.chunk.chunk_types import DEFAULT_MAX_TOKENS
from ripplemem.markdown.convert.discover import PathLike
from ripplemem.markdown.convert.file_limits import (
    DEFAULT_MAX_COMPRESSION_RATIO,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_UNPACKED_BYTES,
    FileLimits,
)


class DocumentMethods(HandleState):
    """ingest of a RippleMem handle and its async twin."""

    def ingest(
        self,
        paths: PathLike | Iterable[PathLike],
        knowledge_base: str = DEFAULT_KNOWLEDGE_BASE,
        *,
        include: str | Iterable[str] | None = None,
        exclude: str | Iterable[str] | None = None,
        recursive: bool = True,
        chunker: Chunker = "auto",
        max_tokens: int = DEFAULT_MAX_TOKENS,
        force: bool = False,
        progress: bool | FileProgress = False,
        follow_outside_symlinks: bool = False,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_unpacked_bytes: int = DEFAULT_MAX_UNPACKED_BYTES,
        max_compression_ratio: float = DEFAULT_MAX_COMPRESSION_RATIO,
    ) -> IngestReport:
        """Convert files and folders (PDF, DOCX, XLSX, PPTX, HTML, CSV, JSON, XML, TXT, MD, EPUB, ...)
        to Markdown, chunk them and store the chunks in a knowledge base; returns an IngestReport.

        The knowledge base is created and granted to this user if missing; one that exists and is
        not shared with this user raises KnowledgeBaseAccessError. ``include``/``exclude`` are glob
        patterns for files found in folders. An unchanged file (same bytes as at its last ingest) is
        skipped; a changed one replaces its old chunks (``force=True`` re-ingests every file). A file
        that fails is reported in ``IngestReport.failed`` and the others go in. ``progress=True``
        shows a progress bar; a callable gets (files done, total files, path) after each file.

        The folder need not be trusted: only regular files are read (FIFOs, sockets and devices
        fail as ``special_file``); a symlink is followed only to a file inside the folder it was
        found in, unless ``follow_outside_symlinks=True`` (else it fails as ``symlink``, as do
        link loops and broken links); a file over ``max_file_bytes`` (100 MB), or a DOCX, PPTX,
        XLSX or EPUB whose parts unpack past ``max_unpacked_bytes`` (200 MB) or any part over 1 MB
        by more than ``max_compression_ratio`` (100:1), fails as ``too_large``; a name that is not
        valid UTF-8 fails as ``bad_name``. A failed file changes nothing already stored.
        """
        limits = FileLimits(max_file_bytes, max_unpacked_bytes, max_compression_ratio)
        options = IngestOptions(
            include=include,
            exclude=exclude,
            recursive=recursive,
            chunker=chunker,
            max_tokens=max_tokens,
            force=force,
            follow_outside_symlinks=follow_outside_symlinks,
            limits=limits,
        )
        kb = check_kb_name(knowledge_base)
        return ingest_paths(self._engine, self.user_id, kb, paths, options, progress)

    async def aingest(
        self,
        paths: PathLike | Iterable[PathLike],
        knowledge_base: str = DEFAULT_KNOWLEDGE_BASE,
        *,
        include: str | Iterable[str] | None = None,
        exclude: str | Iterable[str] | None = None,
        recursive: bool = True,
        chunker: Chunker = "auto",
        max_tokens: int = DEFAULT_MAX_TOKENS,
        force: bool = False,
        progress: bool | FileProgress = False,
        follow_outside_symlinks: bool = False,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_unpacked_bytes: int = DEFAULT_MAX_UNPACKED_BYTES,
        max_compression_ratio: float = DEFAULT_MAX_COMPRESSION_RATIO,
    ) -> IngestReport:
        """Async twin of ingest (runs in a worker thread)."""
        if not isinstance(paths, (str, os.PathLike)):
            paths = list(paths)
        return await asyncio.to_thread(
            self.ingest,
            paths,
            knowledge_base,
            include=include,
            exclude=exclude,
            recursive=recursive,
            chunker=chunker,
            max_tokens=max_tokens,
            force=force,
            progress=progress,
            follow_outside_symlinks=follow_outside_symlinks,
            max_file_bytes=max_file_bytes,
            max_unpacked_bytes=max_unpacked_bytes,
            max_compression_ratio=max_compression_ratio,
        )


class KnowledgeBases(Namespace):
    """``mem.kb``: the knowledge bases this user can read, their chunks and who may read them."""

    def grant(self, knowledge_base: str, user_id: str) -> bool:
        """Share a knowledge base this user can read with another user (read and ingest); False if
        they had it already."""
        target = check_identifier("user_id", user_id, required=True)
        assert target is not None
        return kbs.grant(self._engine, check_kb_name(knowledge_base), self.user_id, target)

    def revoke(self, knowledge_base: str, user_id: str) -> bool:
        """Stop sharing a knowledge base with a user (this user must read it); False if they had no
        access. The last reader cannot be revoked: delete the knowledge base instead."""
        target = check_identifier("user_id", user_id, required=True)
        assert target is not None
        return kbs.revoke(self._engine, check_kb_name(knowledge_base), self.user_id, target)

    def list(self) -> builtins.list[KnowledgeBase]:
        """The knowledge bases this user can read, with chunk, file and page counts and readers."""
        return kbs.describe(self._engine, self.user_id)

    def chunks(
        self,
        knowledge_base: str = DEFAULT_KNOWLEDGE_BASE,
        *,
        source: PathLike | None = None,
        limit: int = 1000,
        offset: int = 0,
    ) -> builtins.list[Memory]:
        """The chunks of a knowledge base this user can read (of one file if ``source`` is given), in
        the order they were stored; ``Memory.metadata`` holds source, heading path, offsets, pages."""
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise InvalidInputError(f"offset must be a non-negative integer, got {offset!r}")
        return kbs.list_chunks(
            self._engine, check_kb_name(knowledge_base), self.user_id, source, check_k(limit, "limit"), offset
        )

    def forget_source(self, path: PathLike, knowledge_base: str = DEFAULT_KNOWLEDGE_BASE) -> int:
        """Delete one file's chunks from a knowledge base (the file itself is untouched); returns
        how many chunks were deleted. The path may be the file's path or its stored source key."""
        return kbs.forget_source(self._engine, check_kb_name(knowledge_base), self.user_id, path)

    def delete(self, knowledge_base: str) -> int:
        """Delete a knowledge base this user can read, for every reader; returns the chunks deleted."""
        return kbs.delete_knowledge_base(self._engine, check_kb_name(knowledge_base), self.user_id)
