"""Telling a failure of the disk (full, read-only, failing) from any other error of a write."""

from __future__ import annotations

import errno
import sys

from ripplemem.errors import StoreError

# What SQLite (ours, or Chroma's own) and the OS say when the disk, not the caller, refused a write.
_DISK_FAILURES = ("database or disk is full", "disk i/o error", "readonly database", "read-only file system")
_DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})


def storage_failure(exc: BaseException, path: str | None) -> StoreError | None:
    """A StoreError naming the cause when a write failed for want of disk space, a read-only disk
    or an I/O error (in SQLite, the vector index or a file beside them), or Chroma reported an
    internal storage failure; None for any other error."""
    chroma_errors = sys.modules.get("chromadb.errors")  # loaded only when a Chroma index is in use
    if isinstance(exc, OSError):
        disk = exc.errno in _DISK_ERRNOS
    elif chroma_errors is not None and isinstance(exc, chroma_errors.InternalError):
        disk = True  # Chroma's storage failed under it (e.g. "Failed to apply logs" on a full disk)
    else:
        disk = isinstance(exc, Exception) and any(cause in str(exc).lower() for cause in _DISK_FAILURES)
    if not disk:
        return None
    return StoreError(
        f"could not write the store at {path!r}: {exc} ({type(exc).__name__}); the write "
        "was rolled back: free disk space or make the store writable, then retry"
    )
