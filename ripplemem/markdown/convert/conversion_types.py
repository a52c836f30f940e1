"""What document conversion produces and reports: converted documents, failures, change checks."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ripplemem.errors import RippleMemError
from ripplemem.markdown.convert.discover import PathLike

DOCUMENTS_EXTRA = "pip install 'ripplemem[documents]'"
REASON_LIMIT = 300


class ConversionError(RippleMemError):
    """One file could not be converted; ``kind`` says why, ``reason`` says it in words.

    Kinds: ``unsupported`` (no converter for this format), ``corrupt`` (the converter failed on
    the bytes), ``encrypted``, ``permission``, ``missing_dependency``, ``no_text`` (nothing
    readable, e.g. a scanned PDF or an image without exiftool), ``error`` (anything else); and for
    files refused before conversion: ``symlink`` (leaves the folder, loops or is broken),
    ``special_file`` (a FIFO, socket or device), ``too_large`` (over a ``FileLimits`` cap),
    ``bad_name`` (a name that is not valid UTF-8), ``store_file`` (a file of the store itself).
    """

    def __init__(self, path: PathLike, reason: str, kind: str = "error") -> None:
        self.path = Path(path)
        self.reason = reason
        self.kind = kind
        super().__init__(f"{self.path}: {reason}")


class UnsupportedFormatError(ConversionError):
    """No converter reads this file's format."""

    def __init__(self, path: PathLike, reason: str) -> None:
        super().__init__(path, reason, kind="unsupported")


@dataclass(frozen=True)
class ConvertedDocument:
    """One file as Markdown, with what is known about where it came from.

    ``page_starts[i]`` is the character offset in ``markdown`` where page (PDF), slide (PPTX) or
    sheet (XLSX) ``i + 1`` begins, as ``page_unit`` says; empty when the format has no pages.
    Offsets never decrease; a page without text shares the offset of the page after it.
    """

    source: Path
    format: str
    markdown: str
    title: str | None
    content_hash: str
    size: int
    mtime: float
    page_starts: list[int] = field(default_factory=list)
    page_unit: str | None = None

    @property
    def page_count(self) -> int:
        """Pages (slides, sheets) found; 0 when the format has none."""
        return len(self.page_starts)

    def page_of(self, offset: int) -> int | None:
        """The 1-based page (slide, sheet) that the character at ``offset`` is on, or None."""
        if not self.page_starts or offset < 0:
            return None
        low, high = 0, len(self.page_starts)
        while low < high:  # bisect_right: the last page starting at or before offset
            middle = (low + high) // 2
            if self.page_starts[middle] <= offset:
                low = middle + 1
            else:
                high = middle
        return low or None

    def page_range(self, start: int, end: int) -> tuple[int, int] | None:
        """First and last 1-based page of the text ``markdown[start:end]``, or None without pages."""
        first = self.page_of(start)
        if first is None:
            return None
        last = self.page_of(max(start, end - 1))
        return first, last or first


@dataclass(frozen=True)
class ConversionFailure:
    """A file that could not be converted, with a reason a person can act on."""

    path: Path
    reason: str
    kind: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class ConversionReport:
    """The outcome of ``convert_many``: converted documents, unchanged files, failures."""

    documents: list[ConvertedDocument] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    errors: list[ConversionFailure] = field(default_factory=list)
    total: int = 0

    @property
    def ok(self) -> bool:
        """True when no file failed."""
        return not self.errors

    def summary(self) -> str:
        """One line, e.g. ``12 files: 10 converted, 1 unchanged, 1 failed``."""
        return (
            f"{self.total} files: {len(self.documents)} converted, {len(self.unchanged)} unchanged, "
            f"{len(self.errors)} failed"
        )


@dataclass(frozen=True)
class ConversionOutcome:
    """What happened to one file in ``iter_convert``: exactly one of the three is set/true."""

    path: Path
    document: ConvertedDocument | None = None
    error: ConversionFailure | None = None
    unchanged: bool = False


@dataclass(frozen=True)
class Change:
    """Whether a file differs from what was ingested before: ``new``, ``changed`` or ``unchanged``."""

    path: Path
    status: str
    content_hash: str

    @property
    def needs_ingest(self) -> bool:
        """True for a new or changed file."""
        return self.status != "unchanged"


# --- hashing and change detection ------------------------------------------------------------


def content_hash(source: PathLike | bytes) -> str:
    """Hex sha256 of a file's bytes (read in blocks) or of the given bytes."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return hashlib.sha256(source).hexdigest()
    digest = hashlib.sha256()
    with open(source, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def source_key(path: PathLike) -> str:
    """The string a document's source is stored under: its absolute, resolved path."""
    return str(Path(path).resolve())


def check_change(path: PathLike, previous_hash: str | None) -> Change:
    """Compare a file with the hash stored when it was last ingested (None: never ingested).

    ``unchanged``: skip it. ``changed``: convert it and replace the chunks of the old version.
    ``new``: convert it and add its chunks.
    """
    current = content_hash(path)
    if previous_hash is None:
        status = "new"
    elif previous_hash == current:
        status = "unchanged"
    else:
        status = "changed"
    return Change(Path(path), status, current)


def short_reason(text: str) -> str:
    """A reason squeezed to one line of at most a few hundred characters."""
    text = " ".join(text.split())
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 1] + "…"
