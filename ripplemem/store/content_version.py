"""Whether another connection changed what this process's caches hold, or only recorded use.

SQLite's ``data_version`` changes on every commit of another connection. A recall commits too: it
counts its hits as accessed, and ripple recall reinforces the edges it walked. Dropping every
in-memory BM25 index and graph on such commits would make two processes that recall from one store
reload everything, for every user, after each other's every recall. So every write transaction
except those usage records bumps a counter in the store's ``meta`` table, and caches are dropped
only when it moved under this connection. A reinforcement made elsewhere reaches this process's
graph when it next reloads (after a content write, or at the next open); SQLite has it at once.
"""

from __future__ import annotations

from collections.abc import Callable

from ripplemem.store.connection import Connection

KEY = "content_version"


def bump(conn: Connection) -> int:
    """Count one content write, inside its transaction; returns the new version."""
    conn.execute("INSERT INTO meta(key, value) VALUES (?, '0') ON CONFLICT (key) DO NOTHING", (KEY,))
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = ?", (KEY,))
    return _read(conn)


def _read(conn: Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (KEY,)).fetchone()
    return 0 if row is None else int(row[0])


def sqlite_data_version(conn: Connection) -> int:
    """SQLite's count of other connections' commits to the file (any commit: a cheap first look)."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


class ContentVersion:
    """One connection's view of the content version: what it has seen, and what it missed."""

    def __init__(self, conn: Connection, any_commit: Callable[[Connection], int] | None = None) -> None:
        # any_commit: a counter of every commit elsewhere, read before the meta row (None: PostgreSQL
        # has none that is cheaper than reading the row itself).
        self._any_commit = any_commit
        self._data_version = None if any_commit is None else any_commit(conn)
        self._seen = _read(conn)
        self._missed = False

    def committed(self, version: int) -> None:
        """This connection committed content write `version`; a gap means another one wrote first."""
        if version != self._seen + 1:
            self._missed = True
        self._seen = version

    def changed_elsewhere(self, conn: Connection) -> bool:
        """True once after another connection committed a content write (usage records do not count)."""
        if self._any_commit is not None:
            version = self._any_commit(conn)
            if version == self._data_version and not self._missed:
                return False  # nobody else committed anything (our own commits leave data_version)
            self._data_version = version
        current = _read(conn)
        changed = self._missed or current != self._seen
        self._seen, self._missed = current, False
        return changed
