"""Recall accesses held in RAM and written to SQLite in batches.

Counting a recall as an access (access_count + 1, last_accessed = now) used to be a write
transaction of its own on every recall: about ten rewritten pages, a large share of a hybrid
recall's own time. The store now keeps them here and writes them inside the next write
transaction, before any read that returns access figures, when a recall's candidates include a
pending memory, when too many are pending or the oldest has waited too long, on close, and when
an unclosed store is collected or the interpreter exits. Readers of this store handle therefore
always see them; other processes see them once written, and a killed process loses its last few.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterable
from typing import Any

MAX_PENDING = 512  # memories with an unwritten access
MAX_WAIT_S = 2.0  # seconds the oldest unwritten access may wait (checked when recording one)

_WRITE = ("UPDATE memories SET access_count = access_count + ?, last_accessed = ? "
          "WHERE id = ? AND +user_id = ?")


class PendingAccesses:
    """Per memory: how many recalls counted it since the last write, and the latest one's time."""

    def __init__(self) -> None:
        self._by_id: dict[str, tuple[str, int, float]] = {}  # id -> (user_id, count, last_accessed)
        self._since = 0.0  # monotonic time the oldest pending access was recorded

    def __len__(self) -> int:
        return len(self._by_id)

    def record(self, memory_ids: Iterable[str], user_id: str, now: float) -> None:
        """One access of each memory at `now` (a later access's time replaces an earlier one's)."""
        if not self._by_id:
            self._since = time.monotonic()
        for memory_id in memory_ids:
            _, count, _ = self._by_id.get(memory_id, (user_id, 0, now))
            self._by_id[memory_id] = (user_id, count + 1, now)

    def due(self) -> bool:
        """Whether they should be written now: too many, or waiting too long."""
        return len(self._by_id) >= MAX_PENDING or (
            bool(self._by_id) and time.monotonic() - self._since >= MAX_WAIT_S)

    def touches(self, memory_ids: Iterable[str]) -> bool:
        """Whether any of these memories has an unwritten access."""
        return bool(self._by_id) and not self._by_id.keys().isdisjoint(memory_ids)

    def write(self, conn: sqlite3.Connection) -> dict[str, tuple[str, int, float]]:
        """Write them inside the caller's open transaction; returns what was written, so a
        rolled-back transaction can give it back with ``restore``."""
        written, self._by_id = self._by_id, {}
        if written:
            conn.executemany(_WRITE, [(count, last, memory_id, user_id)
                                      for memory_id, (user_id, count, last) in written.items()])
        return written

    def restore(self, written: dict[str, tuple[str, int, float]]) -> None:
        """Take back accesses whose write was rolled back (newer ones recorded since stay on top)."""
        for memory_id, (user_id, count, last) in written.items():
            _, newer, newer_last = self._by_id.get(memory_id, (user_id, 0, last))
            self._by_id[memory_id] = (user_id, count + newer, newer_last)
        if written:
            self._since = time.monotonic()


def write_left_over(conn: sqlite3.Connection, accesses: PendingAccesses, lock: Any) -> None:
    """Write what is still pending when an unclosed store is collected or the interpreter exits."""
    with lock:
        if not len(accesses):
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
            accesses.write(conn)
            conn.execute("COMMIT")
        except sqlite3.Error:
            # Closed or locked: access figures only rank and age memories, so losing a last few
            # loses nothing stored; a half-begun transaction is rolled back when the connection goes.
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
