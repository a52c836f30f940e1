"""The embedded backend: the row store in one SQLite file (WAL, secure_delete), its keywords in FTS5."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from ripplemem.errors import SchemaVersionError, StoreError
from ripplemem.store.connection import Connection
from ripplemem.store.content_version import ContentVersion, bump, sqlite_data_version
from ripplemem.store.disk_errors import storage_failure
from ripplemem.store.in_lists import in_chunks
from ripplemem.store.rows import RowStore, write_meta
from ripplemem.store.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from ripplemem.store.tables.memories import MemoryFilter, fts_query, scope_token

DB_FILENAME = "ripplemem.db"


def is_damaged(exc: BaseException) -> bool:
    """Whether SQLite refused the file as damaged or as no database at all (SQLITE_CORRUPT,
    SQLITE_NOTADB): the plain DatabaseError, not one of its subclasses (locked, full, ...)."""
    return type(exc) is sqlite3.DatabaseError


def damaged_store_error(file: str, exc: BaseException, advice: str) -> StoreError:
    """The StoreError for a damaged database file, which RippleMem leaves exactly as it is."""
    return StoreError(
        f"the SQLite file {file!r} is damaged or is not a RippleMem database ({exc}); it was not "
        f"changed: {advice}"
    )


_LOCKED_PATIENCE = 60.0  # seconds a write waits for another writer


class SQLiteStore(RowStore):
    """All rows of all users in one SQLite file (or in memory); every query is scoped."""

    keyword_join = "f.rowid = m.rowid"  # the FTS5 table's rowid is the memory's

    def __init__(self, path: str | None) -> None:
        self.path = path
        target = ":memory:" if path is None else os.path.join(path, DB_FILENAME)
        try:
            self._conn = sqlite3.connect(target, check_same_thread=False, timeout=30.0, isolation_level=None)
        except sqlite3.OperationalError as exc:
            raise StoreError(f"cannot open the SQLite store at {target!r}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        self.location = target
        self._lock = threading.RLock()
        self.closed = False
        # Called inside every write transaction, before the caller's statements (the engine marks
        # index writes in flight with it; see ripplemem.store.recovery.reconcile).
        self.on_write: Callable[[Connection], None] | None = None
        try:
            self._configure()
            self._migrate()
        except BaseException as exc:
            self._conn.close()
            if is_damaged(exc):
                raise damaged_store_error(
                    target, exc, f"run `ripplemem check --path {path}` to see what can be saved"
                ) from exc
            raise
        with self._lock:
            self._content = ContentVersion(self._conn, sqlite_data_version)

    # -- connection and schema ------------------------------------------------------------
    def _configure(self) -> None:
        try:
            if self.path is not None:
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA secure_delete=ON")
            self._conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.OperationalError as exc:
            raise StoreError(f"cannot write the SQLite store at {self.path!r}: {exc}") from exc

    def _migrate(self) -> None:
        with self.transaction(content=False) as conn:
            has_meta = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
            ).fetchone()
            version = 0
            if has_meta:
                row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
                version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"the store at {self.path!r} has schema version {version}, newer than this "
                f"RippleMem understands ({SCHEMA_VERSION}); upgrade ripplemem to open it"
            )
        for target in range(version + 1, SCHEMA_VERSION + 1):
            with self._lock:
                MIGRATIONS[target](self._conn)
                write_meta(self._conn, "schema_version", str(target))

    @contextmanager
    def transaction(self, *, content: bool = True) -> Iterator[sqlite3.Connection]:
        """One atomic write (BEGIN IMMEDIATE ... COMMIT), rolled back on any error. content=False
        is for records of use only (access counts, edge reinforcement): other processes keep their
        caches over it (ripplemem.store.content_version)."""
        with self._lock:
            self._begin_immediate()
            try:
                if self.on_write is not None:
                    self.on_write(self._conn)
                yield self._conn
                version = bump(self._conn) if content else None
                self._conn.execute("COMMIT")
                if version is not None:
                    self._content.committed(version)
            except BaseException as exc:
                if self._conn.in_transaction:  # a failed COMMIT may have ended it already
                    self._conn.execute("ROLLBACK")
                failure = storage_failure(exc, self.path)
                if failure is not None:
                    raise failure from exc
                raise

    def _begin_immediate(self) -> None:
        # The busy timeout makes BEGIN IMMEDIATE wait for another process's write; SQLite can
        # still answer "locked" at once (e.g. while a WAL is being recovered), so retry a while.
        deadline = time.monotonic() + _LOCKED_PATIENCE
        delay = 0.01
        while True:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() + delay > deadline:
                    raise StoreError(
                        f"the store at {self.path!r} stayed locked by another writer "
                        f"for over {_LOCKED_PATIENCE:.0f} s ({exc}); retry, or look for "
                        "a stuck process holding it"
                    ) from exc
                time.sleep(delay)
                delay = min(2 * delay, 0.5)

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """The connection, held for a few reads (the store is shared between threads)."""
        with self._lock:
            yield self._conn

    def close(self) -> None:
        """Close the connection (checkpointing the WAL)."""
        with self._lock:
            self._conn.close()
            self.closed = True

    def keyword_search(self, query: str, flt: MemoryFilter, limit: int) -> list[tuple[str, float]]:
        """BM25 search within the filter: (memory id, score) best first, scores > 0."""
        match = fts_query(query)
        if match is None:
            return []
        where, params = flt.where(by_id=True)
        full_match = f'scope:"{scope_token(flt.user_id)}" AND tokens:({match})'
        # Fast path: rank inside FTS5 first (the user's scope token is part of the MATCH), then
        # read and filter only the best 2 x limit rows; half the time of joining every match.
        # If fewer than `limit` of those pass the filter, the exact query below decides.
        inner = max(2 * limit, limit + 20)
        fast = (
            "WITH f AS MATERIALIZED (SELECT rowid, -bm25(memories_fts, 0.0, 1.0) AS score "
            "FROM memories_fts WHERE memories_fts MATCH ? ORDER BY score DESC LIMIT ?) "
            f"SELECT m.id, f.score FROM f JOIN memories m ON m.rowid = f.rowid WHERE {where} "
            "ORDER BY f.score DESC LIMIT ?"
        )
        exact = (
            "SELECT m.id, -bm25(memories_fts, 0.0, 1.0) AS score FROM memories_fts "
            "JOIN memories m ON m.rowid = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? AND {where} ORDER BY score DESC LIMIT ?"
        )
        with self._lock:
            rows = self._conn.execute(fast, [full_match, inner, *params, limit]).fetchall()
            if len(rows) < limit:
                rows = self._conn.execute(exact, [full_match, *params, limit]).fetchall()
        return [(row[0], float(row[1])) for row in rows]

    def keyword_match_ids(self, conn: Connection, user_id: str, terms: Sequence[str]) -> list[str]:
        """Ids of the user's memories (any status) whose keyword index holds every one of the terms."""
        if not terms:
            return []
        every = " AND ".join('"' + t.replace('"', '""') + '"' for t in terms)
        # The FTS query runs once (as a join, SQLite may run it again for every memory of the user).
        return [
            r[0]
            for r in conn.execute(
                "SELECT id FROM memories WHERE user_id = ? AND rowid IN "
                "(SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)",
                (user_id, f'scope:"{scope_token(user_id)}" AND tokens:({every})'),
            )
        ]

    def orphan_keyword_rows(self, conn: Connection, user_id: str) -> int:
        """How many keyword-index rows of the user no memory row backs (what is left of deleted text)."""
        row = conn.execute(
            "SELECT COUNT(*) FROM memories_fts f WHERE memories_fts MATCH ? AND NOT EXISTS "
            "(SELECT 1 FROM memories m WHERE m.rowid = f.rowid)",
            (f'scope:"{scope_token(user_id)}"',),
        ).fetchone()
        return int(row[0])

    def write_keyword_rows(self, conn: Connection, rows: Sequence[tuple[str, int, str]]) -> None:
        """Insert keyword rows: (user id, memory rowid, space-joined tokens), in the caller's transaction."""
        conn.executemany(
            "INSERT INTO memories_fts(rowid, scope, tokens) VALUES (?, ?, ?)",
            [(rowid, scope_token(user_id), tokens) for user_id, rowid, tokens in rows],
        )

    def delete_keyword_rows(self, conn: Connection, user_id: str, rowids: Sequence[int]) -> None:
        """Delete the keyword rows of some of a user's memory rows (rowids are unique: the user is
        not needed), in the caller's transaction."""
        for marks, chunk in in_chunks(rowids):
            conn.execute(f"DELETE FROM memories_fts WHERE rowid IN ({marks})", chunk)

    def compact_keywords(self, conn: Connection) -> None:
        """Merge FTS5's segments: deleted tokens stay in old segments until merged."""
        conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")

    def reset_generated_keys(self, conn: Connection) -> None:
        """Nothing to move: an INTEGER PRIMARY KEY always continues after the largest key there."""

    def changed_elsewhere(self) -> bool:
        """True once after another connection committed a content write to the file (records of
        use, such as a recall's access counts, do not count)."""
        with self._lock:
            return self._content.changed_elsewhere(self._conn)
