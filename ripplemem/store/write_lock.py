"""The engine's write lock and the pending-write markers it leaves for crash recovery.

While a thread holds the engine's write lock, the first write transaction it begins creates a marker
file for this writer under ``<store>/pending-writes/`` (before anything is written, outside SQLite so
it exists even if the transaction never commits); the outermost release of the lock removes it,
unless the hold ended in an error. A marker left by a dead writer tells recovery
(store/recovery/reconcile.py) that a write was cut short.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid

from ripplemem.store.connection import Connection
from ripplemem.store.rows import RowStore

PENDING_DIRNAME = "pending-writes"


class MarkedWriteLock:
    """The engine's reentrant write lock: while a thread holds it, the store's write transactions
    leave this writer's pending marker file; the outermost successful release removes it."""

    def __init__(self, store: RowStore, *, enabled: bool) -> None:
        self._lock = threading.RLock()
        self._owner: int | None = None
        self._depth = 0
        self._marked = False
        path = store.path if enabled else None
        self._folder = None if path is None else os.path.join(path, PENDING_DIRNAME)
        self.marker: str | None = self._new_marker()
        if self.marker is not None:
            store.on_write = self.mark

    def _new_marker(self) -> str | None:
        if self._folder is None:
            return None
        return os.path.join(self._folder, f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}")

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take the lock (reentrant)."""
        if not self._lock.acquire(blocking, timeout):
            return False
        self._owner = threading.get_ident()
        self._depth += 1
        return True

    def release(self, failed: bool = False) -> None:
        """Give the lock back; the outermost release removes the marker unless the hold failed."""
        try:
            self._depth -= 1
            if self._depth == 0:
                self._owner = None
                if self._marked and failed:
                    # The write failed part-way: its marker stays for the next open to check.
                    self.marker = self._new_marker()
                elif self._marked and self.marker is not None:
                    # A marker that cannot be removed only costs a full check on the next open.
                    with contextlib.suppress(OSError):
                        os.unlink(self.marker)
                self._marked = False
        finally:
            self._lock.release()

    def __enter__(self) -> MarkedWriteLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.release(failed=exc_type is not None)

    def mark(self, conn: Connection) -> None:
        """Store hook, at the start of a write transaction: the lock holder leaves its marker."""
        folder, marker = self._folder, self.marker
        if self._marked or folder is None or marker is None or self._owner != threading.get_ident():
            return
        os.makedirs(folder, exist_ok=True)
        with open(marker, "w", encoding="utf-8") as handle:
            handle.write(repr(time.time()))
        self._marked = True


def pending_markers(path: str | None) -> list[str]:
    """The marker files of writes in flight or cut short in a store directory."""
    folder = None if path is None else os.path.join(path, PENDING_DIRNAME)
    if folder is None or not os.path.isdir(folder):
        return []
    return sorted(os.listdir(folder))
