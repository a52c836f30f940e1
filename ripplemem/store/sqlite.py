"""The embedded source of truth: memories, entities, edges and the FTS5 keyword index in SQLite."""

from __future__ import annotations

import builtins
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ripplemem.core.text import keyword_tokens
from ripplemem.errors import SchemaVersionError, StoreError
from ripplemem.store.content_version import ContentVersion, bump
from ripplemem.store.disk_errors import storage_failure
from ripplemem.store.memory_rows import (
    READABLE_EPOCHS,
    MemoryFilter,
    from_epoch,
    fts_query,
    index_metadata,
    row_to_memory,
    scope_token,
    to_epoch,
)
from ripplemem.store.schema import MIGRATIONS, SCHEMA_VERSION, indexed_value
from ripplemem.types import Memory

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
_COLUMNS = (
    "id, user_id, agent_id, session_id, type, content, modality, importance, created_at, "
    "event_time, last_accessed, access_count, mention_count, tier, status, valid_from, valid_to, "
    "source, metadata"
)

_M_COLUMNS = ", ".join("m." + c.strip() for c in _COLUMNS.split(","))


def read_meta(conn: sqlite3.Connection, key: str) -> str | None:
    """One value of the store's metadata table, read on this connection (inside its transaction)."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])


def write_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    """Set one value of the store's metadata table on this connection (inside its transaction)."""
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))


class SQLiteStore:
    """All rows of all users in one SQLite file (or in memory); every query is scoped."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        target = ":memory:" if path is None else os.path.join(path, DB_FILENAME)
        try:
            self._conn = sqlite3.connect(target, check_same_thread=False, timeout=30.0, isolation_level=None)
        except sqlite3.OperationalError as exc:
            raise StoreError(f"cannot open the SQLite store at {target!r}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        self.closed = False
        # Called inside every write transaction, before the caller's statements (the engine marks
        # index writes in flight with it; see ripplemem.store.reconcile).
        self.on_write: Callable[[sqlite3.Connection], None] | None = None
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
            self._content = ContentVersion(self._conn)

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
                self._conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(target),)
                )

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

    def embedding_dimension(self) -> int | None:
        """The length of the stored vectors (None while no memory has one)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT length(embedding) FROM memories WHERE embedding IS NOT NULL LIMIT 1"
            ).fetchone()
        return None if row is None else int(row[0]) // np.dtype(np.float32).itemsize

    def get_meta(self, key: str) -> str | None:
        """One value of the store's metadata table."""
        with self._lock:
            return read_meta(self._conn, key)

    def set_meta(self, key: str, value: str) -> None:
        """Set one value of the store's metadata table."""
        with self.transaction() as conn:
            write_meta(conn, key, value)

    def set_meta_once(self, key: str, value: str) -> None:
        """Set one value of the store's metadata table unless it is set already (by any process)."""
        with self.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # -- writes ------------------------------------------------------------------------------
    def insert(self, memories: Sequence[Memory], embeddings: np.ndarray) -> None:
        """Insert memories with their vectors and keyword tokens in one transaction."""
        with self.transaction() as conn:
            self.insert_rows(conn, memories, embeddings)

    def insert_rows(
        self, conn: sqlite3.Connection, memories: Sequence[Memory], embeddings: np.ndarray
    ) -> None:
        """Insert memories with their vectors and keyword tokens inside the caller's transaction."""
        rows = []
        for memory, vector in zip(memories, embeddings, strict=True):
            rows.append(
                (
                    memory.id,
                    memory.user_id,
                    memory.agent_id,
                    memory.session_id,
                    memory.type,
                    memory.content,
                    memory.modality,
                    memory.importance,
                    to_epoch(memory.created_at),
                    to_epoch(memory.event_time),
                    to_epoch(memory.last_accessed),
                    memory.access_count,
                    memory.mention_count,
                    memory.tier,
                    memory.status,
                    to_epoch(memory.valid_from),
                    to_epoch(memory.valid_to),
                    memory.source,
                    json.dumps(memory.metadata, ensure_ascii=False),
                    np.asarray(vector, dtype=np.float32).tobytes(),
                )
            )
        conn.executemany(f"INSERT INTO memories ({_COLUMNS}, embedding) VALUES ({','.join('?' * 20)})", rows)
        self._index_keywords(conn, [m.id for m in memories])

    def _index_keywords(self, conn: sqlite3.Connection, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            found = conn.execute(
                f"SELECT rowid, user_id, content FROM memories WHERE id IN ({','.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
            conn.executemany(
                "INSERT INTO memories_fts(rowid, scope, tokens) VALUES (?, ?, ?)",
                [(r[0], scope_token(r[1]), " ".join(keyword_tokens(r[2]))) for r in found],
            )

    def update(
        self, memory_id: str, user_id: str, fields: dict[str, Any], embedding: np.ndarray | None = None
    ) -> None:
        """Change columns of one memory (and its vector and keywords when content changes)."""
        with self.transaction() as conn:
            self.update_rows(conn, memory_id, user_id, fields, embedding)

    def update_rows(
        self,
        conn: sqlite3.Connection,
        memory_id: str,
        user_id: str,
        fields: dict[str, Any],
        embedding: np.ndarray | None = None,
    ) -> None:
        """Like update, inside the caller's transaction."""
        values = dict(fields)
        if "metadata" in values:
            values["metadata"] = json.dumps(values["metadata"], ensure_ascii=False)
        if embedding is not None:
            values["embedding"] = np.asarray(embedding, dtype=np.float32).tobytes()
        assignments = ", ".join(f"{column} = ?" for column in values)
        conn.execute(
            f"UPDATE memories SET {assignments} WHERE id = ? AND user_id = ?",
            [*values.values(), memory_id, user_id],
        )
        if "content" in values:
            rowid = conn.execute("SELECT rowid FROM memories WHERE id=?", (memory_id,)).fetchone()[0]
            conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (rowid,))
            self._index_keywords(conn, [memory_id])

    def delete(self, memory_ids: Sequence[str], user_id: str) -> list[str]:
        """Delete memories of one user (rows, keywords, edges); returns the ids that existed."""
        with self.transaction() as conn:
            return self.delete_rows(conn, memory_ids, user_id)

    def delete_rows(self, conn: sqlite3.Connection, memory_ids: Sequence[str], user_id: str) -> list[str]:
        """Like delete, inside the caller's transaction."""
        deleted: list[str] = []
        for start in range(0, len(memory_ids), 500):
            chunk = list(memory_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            found = conn.execute(
                f"SELECT rowid, id FROM memories WHERE +user_id = ? AND id IN ({marks})",
                [user_id, *chunk],
            ).fetchall()
            if not found:
                continue
            rowids = [r[0] for r in found]
            ids = [r[1] for r in found]
            rmarks = ",".join("?" * len(rowids))
            imarks = ",".join("?" * len(ids))
            conn.execute(f"DELETE FROM memories_fts WHERE rowid IN ({rmarks})", rowids)
            conn.execute(f"DELETE FROM memories WHERE rowid IN ({rmarks})", rowids)
            conn.execute(
                f"DELETE FROM edges WHERE user_id = ? AND (src IN ({imarks}) OR dst IN ({imarks}))",
                [user_id, *ids, *ids],
            )
            deleted.extend(ids)
        return deleted

    def touch(self, memory_ids: Iterable[str], user_id: str, now: float) -> None:
        """Record one access of each memory (recall bumps access_count and last_accessed)."""
        ids = list(memory_ids)
        if not ids:
            return
        with self.transaction(content=False) as conn:
            conn.execute(
                f"UPDATE memories SET access_count = access_count + 1, last_accessed = ? "
                f"WHERE +user_id = ? AND id IN ({','.join('?' * len(ids))})",
                [now, user_id, *ids],
            )

    # -- reads -------------------------------------------------------------------------------
    def get(self, memory_id: str, user_id: str) -> Memory | None:
        """One memory of this user by id, whatever its status, or None."""
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE id = ? AND user_id = ?", (memory_id, user_id)
            ).fetchone()
        return None if row is None else row_to_memory(row)

    def ids_by_metadata(
        self, user_id: str, key: str, values: Sequence[str], *, agent_id: str | None = None
    ) -> dict[str, builtins.list[str]]:
        """The active memories (ids, newest first) whose metadata[key] is each of these values,
        through the key's index (one of INDEXED_METADATA_KEYS); values not found are left out."""
        found: dict[str, builtins.list[str]] = {}
        value = indexed_value(key, "metadata")
        scope = "" if agent_id is None else " AND agent_id = ?"
        with self._lock:
            for start in range(0, len(values), 500):
                chunk = list(values[start : start + 500])
                rows = self._conn.execute(
                    f"SELECT id, {value} FROM memories WHERE user_id = ? AND {value} IN "
                    f"({','.join('?' * len(chunk))}) AND status = 'active'{scope} "
                    "ORDER BY COALESCE(event_time, created_at) DESC, rowid DESC",
                    [user_id, *chunk, *([] if agent_id is None else [agent_id])],
                ).fetchall()
                for memory_id, stored in rows:
                    found.setdefault(stored, []).append(memory_id)
        return found

    def contents(self, memory_ids: Sequence[str], user_id: str) -> dict[str, str]:
        """The text of some of a user's memories, by id."""
        found: dict[str, str] = {}
        with self._lock:
            for start in range(0, len(memory_ids), 500):
                chunk = list(memory_ids[start : start + 500])
                found.update(
                    (r[0], r[1])
                    for r in self._conn.execute(
                        "SELECT id, content FROM memories WHERE +user_id = ? "
                        f"AND id IN ({','.join('?' * len(chunk))})",
                        [user_id, *chunk],
                    )
                )
        return found

    def embedding_of(self, memory_id: str, user_id: str) -> np.ndarray | None:
        """The stored vector of one of a user's memories, or None (unknown id, or archived)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT embedding FROM memories WHERE id = ? AND user_id = ?", (memory_id, user_id)
            ).fetchone()
        if row is None or row[0] is None:
            return None
        return np.frombuffer(row[0], dtype=np.float32)

    def fetch(
        self, memory_ids: Sequence[str], flt: MemoryFilter, with_embeddings: bool = False
    ) -> tuple[list[Memory], np.ndarray | None]:
        """The memories among memory_ids that pass the filter, optionally with their vectors."""
        rows, matrix = self.fetch_rows(memory_ids, flt, with_embeddings)
        return [row_to_memory(row) for row in rows], matrix

    def fetch_rows(
        self, memory_ids: Sequence[str], flt: MemoryFilter, with_embeddings: bool = False
    ) -> tuple[list[sqlite3.Row], np.ndarray | None]:
        """Like fetch, but raw rows: recall scores them and builds Memory objects for the top k only."""
        if not memory_ids:
            return [], None
        where, params = flt.where(by_id=True)
        extra = ", m.embedding" if with_embeddings else ""
        found: list[sqlite3.Row] = []
        with self._lock:
            for start in range(0, len(memory_ids), 500):
                chunk = list(memory_ids[start : start + 500])
                found.extend(
                    self._conn.execute(
                        f"SELECT {_M_COLUMNS}{extra} "
                        f"FROM memories m WHERE m.id IN ({','.join('?' * len(chunk))}) AND {where}",
                        [*chunk, *params],
                    ).fetchall()
                )
        return found, _embedding_matrix(found) if with_embeddings else None

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

    def list(self, flt: MemoryFilter, limit: int, offset: int, newest_first: bool) -> list[Memory]:
        """Memories passing the filter, ordered by when they happened."""
        where, params = flt.where()
        order = "DESC" if newest_first else "ASC"
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_COLUMNS} FROM memories m WHERE {where} "
                f"ORDER BY COALESCE(m.event_time, m.created_at) {order}, m.rowid {order} LIMIT ? OFFSET ?",
                [*params, limit, offset],
            ).fetchall()
        return [row_to_memory(row) for row in rows]

    def _pages(
        self, select: str, where: str, params: Sequence[Any], batch: int, one_user: bool
    ) -> Iterator[builtins.list[sqlite3.Row]]:
        """The rows of ``select ... WHERE where`` in batches, each continuing where the last stopped.

        One user's rows page along the (user_id, created_at) index in its own order, every user's
        along the rowid. (Paging one user's rows by rowid made SQLite find and sort all of the
        remaining rows for every batch: quadratic, minutes at a million memories.)
        """
        key, after = ("m.created_at, m.rowid", [float("-inf"), 0]) if one_user else ("m.rowid", [0])
        while True:
            with self._lock:
                rows = self._conn.execute(
                    f"{select} WHERE {where} AND ({key}) > ({','.join('?' * len(after))}) "
                    f"ORDER BY {key} LIMIT ?",
                    [*params, *after, batch],
                ).fetchall()
            if not rows:
                return
            after = [rows[-1]["created_at"], rows[-1]["rowid"]] if one_user else [rows[-1]["rowid"]]
            yield rows

    def iter_embeddings(
        self, user_id: str | None = None, batch: int = 5000
    ) -> Iterator[tuple[builtins.list[str], builtins.list[dict[str, Any]], np.ndarray]]:
        """Stream (ids, index metadata, vectors) of active memories, for (re)building an index.

        Cold memories are left out: their vectors live in the archive, not in the index.
        """
        where = "m.status = 'active' AND m.embedding IS NOT NULL"
        where += " AND m.user_id = ?" if user_id is not None else ""
        select = (
            "SELECT m.rowid, m.id, m.user_id, m.agent_id, m.session_id, m.type, m.event_time, "
            "m.created_at, m.embedding FROM memories m"
        )
        for rows in self._pages(
            select, where, [user_id] if user_id is not None else [], batch, one_user=user_id is not None
        ):
            metas = [
                index_metadata(
                    r["user_id"],
                    r["agent_id"],
                    r["session_id"],
                    r["type"],
                    r["event_time"] if r["event_time"] is not None else r["created_at"],
                )
                for r in rows
            ]
            yield (
                [r["id"] for r in rows],
                metas,
                np.stack([np.frombuffer(r["embedding"], dtype=np.float32) for r in rows]),
            )

    def iter_contents(self, batch: int = 1000) -> Iterator[builtins.list[tuple[str, str]]]:
        """Stream (id, content) of every memory, for re-embedding a store."""
        for rows in self._pages(
            "SELECT m.rowid, m.id, m.content FROM memories m", "1", [], batch, one_user=False
        ):
            yield [(r["id"], r["content"]) for r in rows]

    def set_embeddings(self, pairs: Sequence[tuple[str, np.ndarray]]) -> None:
        """Replace the stored vectors of memories (used when re-embedding)."""
        with self.transaction() as conn:
            conn.executemany(
                "UPDATE memories SET embedding = ? WHERE id = ?",
                [(np.asarray(v, dtype=np.float32).tobytes(), i) for i, v in pairs],
            )

    def counts_all(self) -> int:
        """How many memories the store holds, over every user and status."""
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])

    def iter_keyword_tokens(
        self, user_id: str, batch: int = 5000
    ) -> Iterator[builtins.list[tuple[str, str]]]:
        """Stream (memory id, space-joined keyword tokens) of a user's active memories."""
        select = (
            "SELECT m.rowid, m.created_at, m.id, f.tokens FROM memories m "
            "JOIN memories_fts f ON f.rowid = m.rowid"
        )
        for rows in self._pages(
            select, "m.user_id = ? AND m.status = 'active'", [user_id], batch, one_user=True
        ):
            yield [(r["id"], r["tokens"]) for r in rows]

    def changed_elsewhere(self) -> bool:
        """True once after another connection committed a content write to the file (records of
        use, such as a recall's access counts, do not count)."""
        with self._lock:
            return self._content.changed_elsewhere(self._conn)

    def user_ids(self) -> builtins.list[str]:
        """Every user with at least one memory."""
        with self._lock:
            return [r[0] for r in self._conn.execute("SELECT DISTINCT user_id FROM memories")]

    def counts(self, user_id: str) -> dict[str, Any]:
        """Per-type, per-tier and per-status counts and the time span of one user's memories."""
        with self._lock:
            by_type = dict(
                self._conn.execute(
                    "SELECT type, COUNT(*) FROM memories WHERE user_id=? AND status='active' GROUP BY type",
                    (user_id,),
                ).fetchall()
            )
            by_tier = dict(
                self._conn.execute(
                    "SELECT tier, COUNT(*) FROM memories WHERE user_id=? AND status='active' GROUP BY tier",
                    (user_id,),
                ).fetchall()
            )
            by_status = dict(
                self._conn.execute(
                    "SELECT status, COUNT(*) FROM memories WHERE user_id=? GROUP BY status", (user_id,)
                ).fetchall()
            )
            # A time no datetime can hold (stored by an older version) is left out of the span.
            span = self._conn.execute(
                "SELECT MIN(CASE WHEN w BETWEEN ? AND ? THEN w END), "
                "MAX(CASE WHEN w BETWEEN ? AND ? THEN w END), "
                "COUNT(DISTINCT session_id) FROM (SELECT COALESCE(event_time, created_at) AS w, session_id "
                "FROM memories WHERE user_id=? AND status='active')",
                (*READABLE_EPOCHS, *READABLE_EPOCHS, user_id),
            ).fetchone()
        return {
            "by_type": by_type,
            "by_tier": by_tier,
            "by_status": by_status,
            "oldest": from_epoch(span[0]),
            "newest": from_epoch(span[1]),
            "sessions": span[2],
        }


def _embedding_matrix(rows: Sequence[sqlite3.Row]) -> np.ndarray | None:
    """The rows' vectors as a matrix; a cold memory (vector archived, NULL here) gets zeros, so
    it scores no dense similarity. None when no row has a vector."""
    width = next((len(row["embedding"]) for row in rows if row["embedding"] is not None), None)
    if width is None:
        return None
    zeros = bytes(width)
    return np.frombuffer(b"".join([row["embedding"] or zeros for row in rows]), dtype=np.float32).reshape(
        len(rows), -1
    )
