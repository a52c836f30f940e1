"""Reading files that may be hostile: regular files only, opened without following a symlink or
blocking, no larger than a cap; zip containers (DOCX, PPTX, XLSX, EPUB) are checked for
decompression bombs in their central directory before any converter unpacks them.

``FileLimits`` holds the caps (``max_file_bytes`` 100 MB, ``max_unpacked_bytes`` 200 MB,
``max_compression_ratio`` 100:1 by default); a file over one fails with kind ``too_large``, one
that is not a regular file (FIFO, socket, device, folder) with ``special_file``.
"""

from __future__ import annotations

import io
import os
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ripplemem.core.validation import check_k, check_number
from ripplemem.errors import InvalidInputError
from ripplemem.markdown.convert.conversion_types import ConversionError
from ripplemem.markdown.convert.discover import file_type, special_file_reason

DEFAULT_MAX_FILE_BYTES = 100_000_000
DEFAULT_MAX_UNPACKED_BYTES = 200_000_000
DEFAULT_MAX_COMPRESSION_RATIO = 100
# Parts this small are not held to the ratio: a few hundred kilobytes of repeated XML may
# compress better than 100:1 and cannot hurt.
RATIO_EXEMPT_BYTES = 1_000_000
ZIP_FORMATS = frozenset({"docx", "pptx", "xlsx", "epub"})
# Read without following a final symlink, and without blocking if a FIFO slipped in after the
# check (opening one for reading waits for a writer otherwise).
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


@dataclass(frozen=True)
class FileLimits:
    """Caps on what one ingested file may cost: its size on disk, and for zip-based formats the
    total size of its unpacked parts and the compression ratio of any part over 1 MB."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_unpacked_bytes: int = DEFAULT_MAX_UNPACKED_BYTES
    max_compression_ratio: float = DEFAULT_MAX_COMPRESSION_RATIO

    def __post_init__(self) -> None:
        for name in ("max_file_bytes", "max_unpacked_bytes"):
            check_k(getattr(self, name), name)  # a positive integer within SQLite's (and a float's) range
        ratio = check_number("max_compression_ratio", self.max_compression_ratio, "a finite number >= 1")
        if ratio < 1:
            raise InvalidInputError(f"max_compression_ratio must be a finite number >= 1, got {ratio}")


def _megabytes(size: float) -> str:
    return f"{size / 1_000_000:,.1f} MB"


def read_regular_file(path: Path, max_bytes: int) -> tuple[bytes, float]:
    """The bytes and mtime of a regular file of at most ``max_bytes``; raises ``ConversionError``
    (kind ``symlink``, ``special_file``, ``too_large``, ``permission`` or ``error``) otherwise."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise ConversionError(path, "the file disappeared before it was read") from None
    except PermissionError:
        raise ConversionError(path, "permission denied: the file cannot be read", "permission") from None
    except OSError as exc:
        raise _open_failure(path, exc) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        what = file_type(info.st_mode)
        if what is not None:
            raise ConversionError(path, special_file_reason(what), "special_file")
        too_large = ConversionError(
            path,
            f"{_megabytes(info.st_size)}, over the limit of {_megabytes(max_bytes)} (max_file_bytes)",
            "too_large",
        )
        if info.st_size > max_bytes:
            raise too_large
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise ConversionError(path, f"cannot read the file: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # it grew after the size was checked
        raise too_large
    return data, info.st_mtime


def _open_failure(path: Path, error: OSError) -> ConversionError:
    """Why a file that exists could not be opened: a symlink (O_NOFOLLOW), a socket, or else."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        mode = stat.S_IFREG
    if stat.S_ISLNK(mode):
        return ConversionError(
            path,
            "a symlink: only what a link leads to is read, and ingest decides which links to follow",
            "symlink",
        )
    what = file_type(mode)
    if what is not None:
        return ConversionError(path, special_file_reason(what), "special_file")
    return ConversionError(path, f"cannot read the file: {error.strerror or error}")


def check_unpacked_size(path: Path, data: bytes, limits: FileLimits) -> None:
    """Raise ``ConversionError`` (kind ``too_large``) when a zip container would unpack past the
    limits; bytes that are not a readable zip are left to the converter to report."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        return
    # The sizes come from the central directory; Python's zipfile (which every converter here
    # unpacks with) never inflates a part past its recorded size, so they bound the real cost.
    for part in parts:
        ratio = part.file_size / max(part.compress_size, 1)
        if part.file_size > RATIO_EXEMPT_BYTES and ratio > limits.max_compression_ratio:
            raise ConversionError(
                path,
                f"refused as a possible zip bomb: its part {part.filename!r} unpacks "
                f"{ratio:,.0f}:1 to {_megabytes(part.file_size)}, over the limit of "
                f"{limits.max_compression_ratio:g}:1 (max_compression_ratio)",
                "too_large",
            )
    total = sum(part.file_size for part in parts)
    if total > limits.max_unpacked_bytes:
        raise ConversionError(
            path,
            f"refused as a possible zip bomb: it unpacks to {_megabytes(total)}, over the limit "
            f"of {_megabytes(limits.max_unpacked_bytes)} (max_unpacked_bytes)",
            "too_large",
        )
