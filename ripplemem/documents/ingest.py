"""Document ingestion into a knowledge base: discover -> convert (MarkItDown) -> chunk -> embed and
graph, one file at a time, with content-hash dedup and per-file errors that never stop the batch.

A file whose bytes hash to what was stored at its last ingest is skipped without being converted;
a changed file gets its new chunks written first and its old chunks deleted after, so a failure
half-way never loses what was stored. Chunks are ``document`` memories under the base's scope
(see ``knowledge_bases``); their entities join the base's graph, consecutive chunks of a file are
linked by NEXT edges, similar ones by SIMILAR edges.

The folder is not trusted: only regular files are read, symlinks leaving it are refused unless
``follow_outside_symlinks``, and files over the ``FileLimits`` caps (size, zip bombs) are refused;
each refusal is a per-file failure and changes nothing stored (see ``discover`` and ``file_limits``).
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ripplemem.core.progress import progress_bar
from ripplemem.core.types import Memory
from ripplemem.core.validation import check_content, check_k
from ripplemem.engine.engine import Engine
from ripplemem.engine.graph_rows import GraphInput
from ripplemem.engine.knowledge_bases import kb_scope, open_for_ingest
from ripplemem.engine.writes import delete_memories, write_batch
from ripplemem.errors import InvalidTypeError, RippleMemError
from ripplemem.markdown.chunk.chunk_types import BREADCRUMB_SEPARATOR, DEFAULT_MAX_TOKENS, Chunk
from ripplemem.markdown.chunk.chunking import chunk_text, resolve_chunker
from ripplemem.markdown.convert.convert import ConversionFailure, ConvertedDocument, iter_convert, source_key
from ripplemem.markdown.convert.discover import PathLike, discover_files
from ripplemem.markdown.convert.file_limits import FileLimits
from ripplemem.store.tables import knowledge_bases as kb_tables

# A page of running text, for formats without pages of their own (Markdown, HTML, DOCX, ...):
# about 500 words of English, the usual "standard manuscript page".
CHARS_PER_PAGE = 3000

FileProgress = Callable[[int, int, Path], None]


@dataclass
class IngestReport:
    """What one ingest did: files ingested (new), replaced (changed), unchanged and failed (with
    reasons), chunks written, pages read, and how long it took."""

    knowledge_base: str
    created: bool = False
    ingested: list[Path] = field(default_factory=list)
    replaced: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    failed: list[ConversionFailure] = field(default_factory=list)
    chunks: int = 0
    pages: int = 0
    seconds: float = 0.0

    @property
    def files(self) -> int:
        """How many files were looked at."""
        return len(self.ingested) + len(self.replaced) + len(self.unchanged) + len(self.failed)

    @property
    def ok(self) -> bool:
        """True when no file failed."""
        return not self.failed

    def summary(self) -> str:
        """One line: '12 files into 'default': 9 new, 1 replaced, 1 unchanged, 1 failed; 140 chunks ...'."""
        return (
            f"{self.files} files into {self.knowledge_base!r}: {len(self.ingested)} new, "
            f"{len(self.replaced)} replaced, {len(self.unchanged)} unchanged, {len(self.failed)} failed; "
            f"{self.chunks} chunks from {self.pages} pages in {self.seconds:.1f} s"
        )


@dataclass(frozen=True)
class IngestOptions:
    """How files are found, read and cut: folder walking, glob filters, symlinks, limits, chunker."""

    include: str | Iterable[str] | None = None
    exclude: str | Iterable[str] | None = None
    recursive: bool = True
    chunker: str = "auto"
    max_tokens: int = DEFAULT_MAX_TOKENS
    # Re-ingest files even when their bytes are unchanged (e.g. after changing the chunker).
    force: bool = False
    follow_outside_symlinks: bool = False
    limits: FileLimits = FileLimits()


def page_count(document: ConvertedDocument) -> int:
    """Pages of a document: its own (PDF pages, slides, sheets) or CHARS_PER_PAGE of text each."""
    if document.page_count:
        return document.page_count
    return max(1, -(-len(document.markdown) // CHARS_PER_PAGE))


def file_progress(progress: bool | FileProgress, total: int) -> Callable[[int, Path], None]:
    """A per-file reporter: a tqdm bar on stderr for True, the caller's (done, total, path), or nothing."""
    if callable(progress):
        return lambda done, path: progress(done, total, path)
    if not progress:
        return lambda done, path: None
    bar = progress_bar(total, "file")

    def report(done: int, path: Path) -> None:
        bar.set_postfix_str(path.name[-40:], refresh=False)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return report


def ingest_paths(
    engine: Engine,
    user_id: str,
    kb: str,
    paths: PathLike | Iterable[PathLike],
    options: IngestOptions,
    progress: bool | FileProgress = False,
) -> IngestReport:
    """Ingest files and folders into a knowledge base the user may write (created if missing)."""
    started = time.perf_counter()
    for name in ("recursive", "force", "follow_outside_symlinks"):
        if not isinstance(getattr(options, name), bool):
            raise InvalidTypeError(f"{name} must be True or False, got {getattr(options, name)!r}")
    resolve_chunker("x", options.chunker)  # a bad chunker name fails before anything is read
    check_k(options.max_tokens, "max_tokens")
    if progress is not None and not isinstance(progress, bool) and not callable(progress):
        raise InvalidTypeError(f"progress must be True, False or a callable, got {type(progress).__name__}")
    report = IngestReport(knowledge_base=kb)

    def refused(path: Path, reason: str, kind: str) -> None:
        report.failed.append(ConversionFailure(path, reason, kind))

    files = discover_files(
        paths,
        recursive=options.recursive,
        include=options.include,
        exclude=options.exclude,
        on_skip=refused,
        follow_outside_symlinks=options.follow_outside_symlinks,
    )
    files = _outside_store(engine, files, refused)
    report.created = open_for_ingest(engine, kb, user_id)
    known = {} if options.force else kb_tables.source_hashes(engine.store, kb)
    tick = file_progress(progress, len(files))
    for done, outcome in enumerate(iter_convert(files, known_hashes=known, limits=options.limits), start=1):
        if outcome.unchanged:
            report.unchanged.append(outcome.path)
        elif outcome.error is not None:
            report.failed.append(outcome.error)
        elif outcome.document is not None:
            _ingest_document(engine, kb, outcome.document, options, report)
        tick(done, outcome.path)
    report.seconds = time.perf_counter() - started
    return report


def _outside_store(
    engine: Engine, files: list[Path], refused: Callable[[Path, str, str], None]
) -> list[Path]:
    """The files that are not the store's own: reading a live database file with plain open() and
    closing it drops every SQLite lock this process holds on it (and other processes' writes)."""
    if engine.path is None:
        return files
    store = Path(os.path.realpath(engine.path))
    kept = []
    for path in files:
        if path.is_relative_to(store):
            refused(path, f"a file of this RippleMem store ({store}): never ingested", "store_file")
        else:
            kept.append(path)
    return kept


def _ingest_document(
    engine: Engine, kb: str, document: ConvertedDocument, options: IngestOptions, report: IngestReport
) -> None:
    key = source_key(document.source)
    try:
        chunks = [
            c
            for c in chunk_text(
                document.markdown,
                options.chunker,
                max_tokens=options.max_tokens,
                embedder=engine.embedder,
                page_starts=document.page_starts,
            )
            if c.text.strip()
        ]
        memories = [_chunk_memory(engine, kb, key, document, chunk, len(chunks)) for chunk in chunks]
    except RippleMemError as exc:
        report.failed.append(ConversionFailure(document.source, f"cannot be chunked: {exc}", "error"))
        return
    if not memories:
        report.failed.append(
            ConversionFailure(document.source, "no text left to store after conversion", "no_text")
        )
        return
    scope = kb_scope(kb)
    old = kb_tables.chunk_ids(engine.store, scope, key)
    # New chunks first, old ones after: a failure in between leaves both, never neither.
    write_batch(engine, scope, memories, [GraphInput() for _ in memories])
    delete_memories(engine, scope, old)
    pages = page_count(document)
    with engine.unit_of_work(scope) as work, work.transaction() as conn:
        kb_tables.record_source(
            conn,
            kb,
            kb_tables.SourceRow(
                source=key,
                content_hash=document.content_hash,
                ingested_at=engine.now(),
                chunks=len(memories),
                pages=pages,
                format=document.format,
                title=document.title,
            ),
        )
    (report.replaced if old else report.ingested).append(document.source)
    report.chunks += len(memories)
    report.pages += pages


def chunk_content(chunk: Chunk, title: str | None) -> str:
    """What a chunk is stored (and embedded) as: a header line with the document's title and the
    headings the chunk sits under, then its text; the header leaves out what the text's first
    line already shows (a chunk deep in a section would otherwise lose its headings' words)."""
    first_line = chunk.text.lstrip().split("\n", 1)[0]
    path = list(chunk.heading_path)
    if path and first_line.startswith("#") and path[-1] in first_line:
        path = path[:-1]
    if title and title not in chunk.heading_path and title not in first_line:
        path.insert(0, title)
    return f"{BREADCRUMB_SEPARATOR.join(path)}\n\n{chunk.text}" if path else chunk.text


def _chunk_memory(
    engine: Engine, kb: str, key: str, document: ConvertedDocument, chunk: Chunk, count: int
) -> Memory:
    """A chunk as a document memory, with where it came from in its metadata."""
    metadata: dict[str, Any] = {
        "knowledge_base": kb,
        "source": key,
        "file_name": document.source.name,
        "format": document.format,
        "title": document.title,
        "heading_path": list(chunk.heading_path),
        "breadcrumb": chunk.breadcrumb,
        "start": chunk.start,
        "end": chunk.end,
        "page": chunk.page,
        "end_page": chunk.end_page,
        "chunk_index": chunk.index,
        "chunk_count": count,
        "content_hash": document.content_hash,
        "chunker": chunk.chunker,
    }
    return Memory(
        id=uuid.uuid4().hex,
        user_id=kb_scope(kb),
        type="document",
        content=check_content(chunk_content(chunk, document.title), engine.settings.max_content_chars),
        # One "session" per file, so consecutive chunks are linked by NEXT edges.
        session_id="doc_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16],
        importance=engine.settings.default_importance,
        created_at=engine.clock(),
        source=key,
        metadata=metadata,
    )
