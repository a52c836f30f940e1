"""An exclusive lock shared by the threads of a process and by other processes (flock on a file),
with a change token so a holder can tell whether another process wrote since it last looked."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

try:
    import fcntl
except ImportError:  # Windows: threads are still serialised; processes are not
    fcntl = None  # type: ignore[assignment]  # the module or None: every use checks which


class ProcessLock:
    """Reentrant per thread; the file lock is taken by the outermost holder only.

    The lock file holds a token that every writer replaces (``mark_written``); ``changed`` tells a
    holder whether the token differs from the last one it saw, i.e. another process wrote.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._file = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the lock's lifetime
        self._seen: str | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock (nested holds in the same thread are free)."""
        with self._thread_lock:
            if self._depth == 0 and fcntl is not None:
                fcntl.flock(self._file.fileno(), fcntl.LOCK_EX)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and fcntl is not None:
                    fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)

    def _token(self) -> str:
        self._file.seek(0)
        return self._file.read()

    def changed(self) -> bool:
        """Whether another process wrote since this one last looked (call while holding the lock)."""
        token = self._token()
        changed = self._seen is not None and token != self._seen
        self._seen = token
        return changed

    def mark_written(self) -> None:
        """Record that this process wrote (call while holding the lock, after the write)."""
        token = f"{os.getpid()}:{uuid.uuid4().hex}"
        self._file.seek(0)
        self._file.truncate()
        self._file.write(token)
        self._file.flush()
        self._seen = token

    def close(self) -> None:
        """Close the lock file."""
        with self._thread_lock:
            self._file.close()
