"""Document conversion: files -> Markdown, with page boundaries and content hashes.

``convert_file`` turns one file into a ``ConvertedDocument`` (Markdown text, title, where each
page / slide / sheet begins, sha256 of the bytes, size, mtime). ``convert_many`` walks files and
folders (see ``discover.py``), converts each, and collects per-file failures in a
``ConversionReport`` instead of stopping; ``iter_convert`` does the same one file at a time, for a
caller that chunks and stores as it goes. Given the hashes stored from an earlier run,
both skip files whose bytes have not changed (``check_change`` is the single-file form).

Plain text, Markdown, JSON and, when MarkItDown is not installed, HTML are read with the standard
library (``text_formats.py``); every other format goes through MarkItDown, which runs offline
(``markitdown_engine.py``): no plugins, no LLM captions, no cloud
converters, nothing fetched. Audio transcription (which sends the audio to a web speech service)
happens only with ``allow_network=True``. PDFs go through the same libraries MarkItDown uses
(pdfminer.six, plus its pdfplumber table reader for pages laid out as forms/tables), one page at a
time, so page boundaries are known; PPTX slide and XLSX sheet boundaries come from MarkItDown's
own markers (``page_boundaries.py``). The result and report types live in ``conversion_types.py``.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ripplemem.errors import InvalidInputError, MissingDependencyError
from ripplemem.markdown.convert import markitdown_engine
from ripplemem.markdown.convert.conversion_types import (
    DOCUMENTS_EXTRA,
    Change,
    ConversionError,
    ConversionFailure,
    ConversionOutcome,
    ConversionReport,
    ConvertedDocument,
    UnsupportedFormatError,
    check_change,
    content_hash,
    short_reason,
    source_key,
)
from ripplemem.markdown.convert.discover import PathLike, discover_files
from ripplemem.markdown.convert.file_limits import (
    ZIP_FORMATS,
    FileLimits,
    check_unpacked_size,
    read_regular_file,
)
from ripplemem.markdown.convert.markitdown_engine import markitdown_available
from ripplemem.markdown.convert.page_boundaries import (
    convert_pdf,
    office_title,
    sheet_starts,
    slide_starts,
)
from ripplemem.markdown.convert.text_formats import PLAIN_FORMATS, convert_html, convert_plain

# File extension -> format name. Anything else is tried as text when it is not binary.
FORMATS: dict[str, str] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".xls": "xls",
    ".pptx": "pptx",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".csv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".xml": "xml",
    ".txt": "txt",
    ".text": "txt",
    ".md": "md",
    ".markdown": "md",
    ".epub": "epub",
    ".ipynb": "ipynb",
    ".msg": "msg",
    ".jpg": "image",
    ".jpeg": "image",
    ".png": "image",
    ".wav": "audio",
    ".mp3": "audio",
    ".m4a": "audio",
    ".mp4": "audio",
}
TEXT_FORMATS = frozenset({"txt", "md", "csv", "json", "xml", "html", "text"})
# Formats whose "# " lines are real headings, so the first one may stand in for a missing title.
_HEADING_FORMATS = frozenset({"md", "docx", "pptx", "html", "epub"})
_UNSUPPORTED_HINTS = {
    ".doc": "legacy Word files are not supported; save it as .docx",
    ".ppt": "legacy PowerPoint files are not supported; save it as .pptx",
    ".rtf": "RTF is not supported; save it as .docx or .txt",
    ".odt": "OpenDocument text is not supported; save it as .docx",
    ".zip": "archives are not unpacked; extract the files and ingest the folder",
}
# --- converting one file ---------------------------------------------------------------------


def detect_format(path: PathLike, data: bytes | None = None) -> str:
    """The format name for a file, from its extension; ``text`` for unknown text files.

    Raises ``UnsupportedFormatError`` for a known-unsupported extension or, given ``data``, for
    binary bytes under an unknown extension.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in FORMATS:
        return FORMATS[suffix]
    if suffix in _UNSUPPORTED_HINTS:
        raise UnsupportedFormatError(path, _UNSUPPORTED_HINTS[suffix])
    if data is not None and _looks_binary(data):
        shown = f"'{suffix}' files" if suffix else "files without an extension"
        raise UnsupportedFormatError(
            path,
            f"unsupported format: {shown} are binary and no converter reads them "
            f"(supported: {', '.join(sorted(set(FORMATS.values())))})",
        )
    return "text"


def _looks_binary(data: bytes) -> bool:
    sample = data[:8192]
    if b"\x00" in sample:
        return not (sample.startswith((b"\xff\xfe", b"\xfe\xff")))  # UTF-16 text has NULs too
    return False


@dataclass(frozen=True)
class _Options:
    """How to convert: see ``convert_file``."""

    allow_network: bool = False
    pdf_tables: bool = True
    limits: FileLimits = FileLimits()


def convert_file(
    path: PathLike, *, allow_network: bool = False, pdf_tables: bool = True, limits: FileLimits | None = None
) -> ConvertedDocument:
    """Convert one file to Markdown; raises ``ConversionError`` (with ``kind``) when it cannot.

    Plain text, Markdown, HTML and JSON need only the default install; the other formats need
    MarkItDown (``MissingDependencyError`` names the extra without it). A missing path or a
    folder raises ``InvalidInputError``; a symlink is followed (it was named). Only a regular file
    within ``limits`` (``FileLimits()`` by default) is read, see ``file_limits``. With
    ``allow_network=True`` audio is transcribed when MarkItDown's ``audio-transcription`` extra is
    installed (through a web speech service); nothing else ever uses the network.
    ``pdf_tables=False`` skips MarkItDown's table/form reading of PDF pages (a pdfplumber pass
    that takes about two thirds of the PDF time) and keeps pdfminer's text alone.
    """
    path = Path(path)
    if not path.exists():
        raise InvalidInputError(f"path: no such file: {path}")
    if path.is_dir():
        raise InvalidInputError(f"path: {path} is a folder; use convert_many() for folders")
    resolved = path.resolve()
    data, mtime = read_regular_file(resolved, (limits or FileLimits()).max_file_bytes)
    return _convert_bytes(resolved, data, mtime, _Options(allow_network, pdf_tables, limits or FileLimits()))


def _convert_bytes(
    path: Path, data: bytes, mtime: float, options: _Options, digest: str | None = None
) -> ConvertedDocument:
    fmt = detect_format(path, data)
    if fmt in TEXT_FORMATS and _looks_binary(data):
        raise ConversionError(path, f"this .{fmt} file holds binary data, not text", "corrupt")
    if fmt in ZIP_FORMATS:
        check_unpacked_size(path, data, options.limits)
    title: str | None = None
    page_starts: list[int] = []
    unit: str | None = None
    if fmt in PLAIN_FORMATS:
        markdown = convert_plain(fmt, data)
    elif fmt == "html" and not markitdown_available():
        markdown, title = convert_html(data)
    elif fmt == "pdf":
        _require_markitdown(fmt)
        markdown, title, page_starts = convert_pdf(path, data, options.pdf_tables)
        unit = "page"
    else:
        _require_markitdown(fmt)
        engine = markitdown_engine.offline_engine(options.allow_network)
        markdown, title = _convert_with_markitdown(engine, path, fmt, data)
        if fmt == "pptx":
            page_starts, unit = slide_starts(markdown), "slide"
        elif fmt == "xlsx":
            page_starts, unit = sheet_starts(markdown, data), "sheet"
    if not markdown.strip() and fmt not in TEXT_FORMATS:
        raise ConversionError(path, _no_text_reason(fmt, options.allow_network), "no_text")
    if title is None and fmt in ("docx", "pptx", "xlsx"):
        title = office_title(data)
    if title is None and fmt in _HEADING_FORMATS:
        match = re.search(r"^# +(.+?)\s*$", markdown, re.MULTILINE)
        title = match.group(1) if match else None
    return ConvertedDocument(
        source=path,
        format=fmt,
        markdown=markdown,
        title=_clean_title(title),
        content_hash=digest or content_hash(data),
        size=len(data),
        mtime=mtime,
        page_starts=page_starts if page_starts else [],
        page_unit=unit if page_starts else None,
    )


def _require_markitdown(fmt: str) -> None:
    """Raise MissingDependencyError naming the extra when this format needs MarkItDown and it is absent."""
    if not markitdown_available():
        raise MissingDependencyError(
            f"{fmt.upper()} files need MarkItDown, which is not installed: {DOCUMENTS_EXTRA} "
            f"(plain text, Markdown, HTML and JSON need nothing more)"
        )


def _convert_with_markitdown(engine: Any, path: Path, fmt: str, data: bytes) -> tuple[str, str | None]:
    from markitdown import (
        FileConversionException,
        MissingDependencyException,
        StreamInfo,
        UnsupportedFormatException,
    )

    charset = None
    if fmt in TEXT_FORMATS:
        charset = "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8"
        try:
            data.decode(charset)
        except UnicodeDecodeError:
            charset = None  # let MarkItDown detect it (GBK, Latin-1, ...)
    info = StreamInfo(extension=path.suffix.lower() or None, filename=path.name, charset=charset)
    kwargs: dict[str, Any] = {}
    if fmt in ("image", "audio"):
        tool = markitdown_engine.exiftool_path()
        if tool:
            kwargs["exiftool_path"] = tool
    try:
        result = engine.convert_stream(io.BytesIO(data), stream_info=info, **kwargs)
    except UnsupportedFormatException:
        reason = f"unsupported format: no converter reads this {fmt} file"
        raise UnsupportedFormatError(path, reason) from None
    except FileConversionException as exc:
        raise _failure_from_attempts(path, fmt, exc) from None
    except MissingDependencyException as exc:
        raise ConversionError(path, short_reason(str(exc)), "missing_dependency") from None
    markdown = result.markdown or ""
    if fmt in TEXT_FORMATS:
        markdown = markdown.lstrip("\ufeff")
    return markdown, result.title


def _failure_from_attempts(path: Path, fmt: str, exc: Exception) -> ConversionError:
    from markitdown import MissingDependencyException

    errors = [a.exc_info[1] for a in (getattr(exc, "attempts", None) or []) if a.exc_info]
    for error in errors:
        if isinstance(error, MissingDependencyException):
            return ConversionError(
                path,
                f"the converter for {fmt.upper()} files is not installed: {DOCUMENTS_EXTRA} "
                f"({short_reason(str(error).splitlines()[0])})",
                "missing_dependency",
            )
    if errors:
        error = errors[0]
        detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        return ConversionError(
            path,
            f"could not read this {fmt.upper()} file; it looks corrupt or is not really "
            f"{fmt.upper()} ({short_reason(detail)})",
            "corrupt",
        )
    return ConversionError(
        path, f"could not convert this {fmt.upper()} file ({short_reason(str(exc))})", "corrupt"
    )


def _no_text_reason(fmt: str, allow_network: bool) -> str:
    if fmt == "pdf":
        return "no text found: the PDF has no text layer (a scanned document?) and OCR is not available"
    if fmt == "image":
        return (
            "no text found: MarkItDown reads images only through exiftool metadata (not installed: "
            "install exiftool or set EXIFTOOL_PATH) or an LLM caption (not enabled)"
        )
    if fmt == "audio":
        if allow_network:
            return (
                "no text found: audio needs exiftool for metadata and "
                "'pip install markitdown[audio-transcription]' for a transcript"
            )
        return (
            "no text found: audio needs exiftool for metadata (install it or set EXIFTOOL_PATH); "
            "transcription is off because it sends the audio to a web speech service "
            "(allow_network=True with markitdown[audio-transcription] turns it on)"
        )
    return f"no text found in this {fmt.upper()} file"


def _clean_title(title: str | None) -> str | None:
    if title is None:
        return None
    title = " ".join(str(title).split())
    return title or None


# --- many files ------------------------------------------------------------------------------

Progress = Callable[[int, int, Path], None]


def iter_convert(
    files: Iterable[PathLike],
    *,
    known_hashes: Mapping[str, str] | None = None,
    on_progress: Progress | None = None,
    allow_network: bool = False,
    pdf_tables: bool = True,
    limits: FileLimits | None = None,
) -> Iterator[ConversionOutcome]:
    """Convert files one at a time, yielding a ``ConversionOutcome`` per file; never stops on a bad one.

    ``known_hashes`` maps ``source_key(path)`` to the hash stored at the last ingest; a file whose
    bytes still hash to it is yielded as unchanged without being converted. ``on_progress(done,
    total, path)`` is called after each file. Without MarkItDown, plain text, Markdown, HTML and
    JSON still convert and each file of another format fails with the ``pip install`` command
    (kind ``missing_dependency``). A symlink in ``files`` is refused
    (``discover_files`` decides which links to follow and passes the files they lead to); see
    ``convert_file`` for the options.
    """
    options = _Options(allow_network, pdf_tables, limits or FileLimits())
    paths = [Path(files)] if isinstance(files, (str, os.PathLike)) else [Path(item) for item in files]
    known = {source_key(key): value for key, value in (known_hashes or {}).items()}
    total = len(paths)
    for done, path in enumerate(paths, start=1):
        outcome = _one(path, known, options)
        if on_progress is not None:
            on_progress(done, total, path)
        yield outcome


def _failed(path: Path, reason: str, kind: str = "error") -> ConversionOutcome:
    return ConversionOutcome(path, error=ConversionFailure(path, reason, kind))


def _one(path: Path, known: Mapping[str, str], options: _Options) -> ConversionOutcome:
    # Read the path itself, never through a link: a file swapped for a symlink after discovery
    # must not bring in what the link points to.
    given = Path(os.path.abspath(path))
    try:
        data, mtime = read_regular_file(given, options.limits.max_file_bytes)
    except ConversionError as exc:
        return _failed(given, exc.reason, exc.kind)
    resolved = Path(os.path.realpath(given))
    digest = content_hash(data)
    if known.get(str(resolved)) == digest:
        return ConversionOutcome(resolved, unchanged=True)
    try:
        document = _convert_bytes(resolved, data, mtime, options, digest)
        return ConversionOutcome(resolved, document=document)
    except ConversionError as exc:
        return _failed(resolved, exc.reason, exc.kind)
    except MissingDependencyError as exc:
        return _failed(resolved, str(exc), "missing_dependency")
    except RecursionError:
        return _failed(resolved, "the document is nested too deeply to convert", "corrupt")
    except Exception as exc:  # a converter bug must not sink the batch
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return _failed(resolved, f"conversion failed ({short_reason(detail)})")


def convert_many(
    paths: PathLike | Iterable[PathLike],
    *,
    recursive: bool = True,
    include: str | Iterable[str] | None = ("*",),
    exclude: str | Iterable[str] | None = (),
    known_hashes: Mapping[str, str] | None = None,
    on_progress: Progress | None = None,
    allow_network: bool = False,
    pdf_tables: bool = True,
    limits: FileLimits | None = None,
    follow_outside_symlinks: bool = False,
) -> ConversionReport:
    """Discover the files under ``paths`` and convert them all, collecting failures per file.

    See ``discover_files`` for ``recursive``/``include``/``exclude``/``follow_outside_symlinks`` (a
    missing path raises ``InvalidInputError`` before anything is converted; an unreadable subfolder
    or a refused file becomes a failure) and ``iter_convert`` for the rest.
    """
    report = ConversionReport()

    def skipped(path: Path, reason: str, kind: str) -> None:
        report.errors.append(ConversionFailure(path, reason, kind))

    files = discover_files(
        paths,
        recursive=recursive,
        include=include,
        exclude=exclude,
        on_skip=skipped,
        follow_outside_symlinks=follow_outside_symlinks,
    )
    report.total = len(files) + len(report.errors)
    for outcome in iter_convert(
        files,
        known_hashes=known_hashes,
        on_progress=on_progress,
        allow_network=allow_network,
        pdf_tables=pdf_tables,
        limits=limits,
    ):
        if outcome.document is not None:
            report.documents.append(outcome.document)
        elif outcome.unchanged:
            report.unchanged.append(outcome.path)
        elif outcome.error is not None:
            report.errors.append(outcome.error)
    return report


__all__ = [
    "Change",
    "ConversionError",
    "ConversionFailure",
    "ConversionOutcome",
    "ConversionReport",
    "ConvertedDocument",
    "FORMATS",
    "FileLimits",
    "UnsupportedFormatError",
    "check_change",
    "content_hash",
    "convert_file",
    "convert_many",
    "detect_format",
    "discover_files",
    "iter_convert",
    "markitdown_available",
    "source_key",
]
