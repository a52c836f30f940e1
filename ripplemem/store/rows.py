"""The rows every backend holds (memories, their keywords and vectors, meta), read and written
through one connection per store in the SQL both SQLite and PostgreSQL speak; a backend supplies
the connection, its transactions and migrations (store/sqlite/, store/postgres/)."""

from __future__ import annotations

import builtins
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from ripplemem.core.clock import READABLE_EPOCHS, from_epoch
from ripplemem.core.text import keyword_tokens
from ripplemem.core.types import Memory
from ripplemem.store.connection import Connection, Row
from ripplemem.store.in_lists import in_chunks
from ripplemem.store.tables.memories import (
    MemoryFilter,
    index_metadata,
    indexed_value,
    row_to_memory,
    to_epoch,
)

if TYPE_CHECKING:
    from ripplemem.store.vectors.base import VectorIndex

COLUMNS = (
    "id, user_id, agent_id, session_id, type, content, modality, importance, created_at, "
    "event_time, last_accessed, access_count, mention_count, tier, status, valid_from, valid_to, "
    "source, metadata"
)
_M_COLUMNS = ", ".join("m." + c.strip() for c in COLUMNS.split(","))


def read_meta(conn: Connection, key: str) -> str | None:
    """One value of the store's metadata table, read on this connection (inside its transaction)."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])


def write_meta(conn: Connection, key: str, value: str) -> None:
    """Set one value of the store's metadata table on this connection (inside its transaction)."""
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


class RowStore(ABC):
    """All rows of all users in one database; every query is scoped. A backend subclass opens the
    connection and defines ``transaction``, ``read``, ``close``, ``changed_elsewhere`` and
    ``keyword_search``."""

    path: str | None
    """The store's directory (None: in memory, or on a server)."""
    location: str
    """Where the rows live, for messages (a file, or a server URI without its password)."""
    closed: bool
    on_server: bool = False
    """Whether the rows live on a database server that other hosts share (not in a local file)."""
    on_write: Callable[[Connection], None] | None
    keyword_join: str
    """The condition that meets a memory row ``m`` with its keyword row ``f``."""

    @abstractmethod
    def transaction(self, *, content: bool = True) -> AbstractContextManager[Connection]:
        """One atomic write, rolled back on any error. content=False is for records of use only
        (access counts, edge reinforcement): other processes keep their caches over it."""

    @abstractmethod
    def read(self) -> AbstractContextManager[Connection]:
        """The connection, held for a few reads (the store is shared between threads)."""

    @abstractmethod
    def close(self) -> None:
        """Close the connection."""

    @abstractmethod
    def changed_elsewhere(self) -> bool:
        """True once after another connection committed a content write (records of use, such
        as a recall's access counts, do not count)."""

    @abstractmethod
    def keyword_search(self, query: str, flt: MemoryFilter, limit: int) -> list[tuple[str, float]]:
        """BM25 search within the filter: (memory id, score) best first, scores > 0."""

    @abstractmethod
    def keyword_match_ids(self, conn: Connection, user_id: str, terms: Sequence[str]) -> builtins.list[str]:
        """Ids of the user's memories (any status) whose keyword index holds every one of the terms."""

    @abstractmethod
    def orphan_keyword_rows(self, conn: Connection, user_id: str) -> int:
        """How many keyword-index rows of the user no memory row backs (what is left of deleted text)."""

    @abstractmethod
    def write_keyword_rows(self, conn: Connection, rows: Sequence[tuple[str, int, str]]) -> None:
        """Insert keyword rows: (user id, memory rowid, space-joined tokens), in the caller's transaction."""

    @abstractmethod
    def delete_keyword_rows(self, conn: Connection, user_id: str, rowids: Sequence[int]) -> None:
        """Delete the keyword rows of some of a user's memory rows, in the caller's transaction."""

    @abstractmethod
    def compact_keywords(self, conn: Connection) -> None:
        """Make the keyword index drop what deleted rows left in it (inside a transaction)."""

    def open_vector_index(self) -> VectorIndex | None:
        """The vector index a server keeps beside the rows (pgvector); None for a local store,
        whose caller opens the index it chose (Chroma, numpy, a Chroma server)."""
        return None

    def rewrite_tables(self) -> list[str]:
        """Rewrite the tables that held erased rows so no file keeps their bytes; returns the tables
        rewritten (none for SQLite, whose secure_delete zeroes freed cells as it deletes)."""
        return []

    #: What an erase cannot check on this backend (a server's WAL, replicas, backups).
    unverifiable: tuple[str, ...] = ()

    @abstractmethod
    def reset_generated_keys(self, conn: Connection) -> None:
        """After rows came in with their own keys (a copied store): the next memories.rowid,
        history.seq and readings.id follow the largest there."""

    def server_bytes(self) -> int:
        """What the store takes on a database server (tables and indexes); 0 for a local file."""
        return 0

    def embedding_dimension(self) -> int | None:
        """The length of the stored vectors (None while no memory has one)."""
        with self.read() as conn:
            row = conn.execute(
                "SELECT length(embedding) FROM memories WHERE embedding IS NOT NULL LIMIT 1"
            ).fetchone()
        return None if row is None else int(row[0]) // np.dtype(np.float32).itemsize

    def get_meta(self, key: str) -> str | None:
        """One value of the store's metadata table."""
        with self.read() as conn:
            return read_meta(conn, key)

    def set_meta(self, key: str, value: str) -> None:
        """Set one value of the store's metadata table."""
        with self.transaction() as conn:
            write_meta(conn, key, value)

    def set_meta_once(self, key: str, value: str) -> None:
        """Set one value of the store's metadata table unless it is set already (by any process)."""
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", (key, value)
            )

    # -- writes ------------------------------------------------------------------------------
    def insert(self, memories: Sequence[Memory], embeddings: np.ndarray) -> None:
        """Insert memories with their vectors and keyword tokens in one transaction."""
        with self.transaction() as conn:
            self.insert_rows(conn, memories, embeddings)

    def insert_rows(self, conn: Connection, memories: Sequence[Memory], embeddings: np.ndarray) -> None:
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
        conn.executemany(f"INSERT INTO memories ({COLUMNS}, embedding) VALUES ({','.join('?' * 20)})", rows)
        by_user: dict[str, builtins.list[str]] = {}
        for memory in memories:
            by_user.setdefault(memory.user_id, []).append(memory.id)
        for user_id, ids in by_user.items():
            self._index_keywords(conn, user_id, ids)

    def _index_keywords(self, conn: Connection, user_id: str, ids: Sequence[str]) -> None:
        for marks, chunk in in_chunks(ids):
            found = conn.execute(
                f"SELECT rowid, content FROM memories WHERE +user_id = ? AND id IN ({marks})",
                [user_id, *chunk],
            ).fetchall()
            self.write_keyword_rows(conn, [(user_id, r[0], " ".join(keyword_tokens(r[1]))) for r in found])

    def update(
        self, memory_id: str, user_id: str, fields: dict[str, Any], embedding: np.ndarray | None = None
    ) -> None:
        """Change columns of one memory (and its vector and keywords when content changes)."""
        with self.transaction() as conn:
            self.update_rows(conn, memory_id, user_id, fields, embedding)

    def update_rows(
        self,
        conn: Connection,
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
            rowid = conn.execute(
                "SELECT rowid FROM memories WHERE id = ? AND +user_id = ?", (memory_id, user_id)
            ).fetchone()[0]
            self.delete_keyword_rows(conn, user_id, [rowid])
            self._index_keywords(conn, user_id, [memory_id])

    def delete(self, memory_ids: Sequence[str], user_id: str) -> list[str]:
        """Delete memories of one user (rows, keywords, edges); returns the ids that existed."""
        with self.transaction() as conn:
            return self.delete_rows(conn, memory_ids, user_id)

    def delete_rows(self, conn: Connection, memory_ids: Sequence[str], user_id: str) -> list[str]:
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
            self.delete_keyword_rows(conn, user_id, rowids)
            conn.execute(
                f"DELETE FROM memories WHERE +user_id = ? AND rowid IN ({rmarks})", [user_id, *rowids]
            )
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
        with self.read() as conn:
            row = conn.execute(
                f"SELECT {COLUMNS} FROM memories WHERE id = ? AND user_id = ?", (memory_id, user_id)
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
        with self.read() as conn:
            for start in range(0, len(values), 500):
                chunk = list(values[start : start + 500])
                rows = conn.execute(
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
        with self.read() as conn:
            for start in range(0, len(memory_ids), 500):
                chunk = list(memory_ids[start : start + 500])
                found.update(
                    (r[0], r[1])
                    for r in conn.execute(
                        "SELECT id, content FROM memories WHERE +user_id = ? "
                        f"AND id IN ({','.join('?' * len(chunk))})",
                        [user_id, *chunk],
                    )
                )
        return found

    def embedding_of(self, memory_id: str, user_id: str) -> np.ndarray | None:
        """The stored vector of one of a user's memories, or None (unknown id, or archived)."""
        with self.read() as conn:
            row = conn.execute(
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
    ) -> tuple[list[Row], np.ndarray | None]:
        """Like fetch, but raw rows: recall scores them and builds Memory objects for the top k only."""
        if not memory_ids:
            return [], None
        where, params = flt.where(by_id=True)
        extra = ", m.embedding" if with_embeddings else ""
        found: list[Row] = []
        with self.read() as conn:
            for start in range(0, len(memory_ids), 500):
                chunk = list(memory_ids[start : start + 500])
                found.extend(
                    conn.execute(
                        f"SELECT {_M_COLUMNS}{extra} "
                        f"FROM memories m WHERE m.id IN ({','.join('?' * len(chunk))}) AND {where} "
                        "ORDER BY m.id",  # SQLite reads them in id order; PostgreSQL keeps no order
                        [*chunk, *params],
                    ).fetchall()
                )
        return found, _embedding_matrix(found) if with_embeddings else None

    def list(self, flt: MemoryFilter, limit: int, offset: int, newest_first: bool) -> list[Memory]:
        """Memories passing the filter, ordered by when they happened."""
        where, params = flt.where()
        order = "DESC" if newest_first else "ASC"
        with self.read() as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM memories m WHERE {where} "
                f"ORDER BY COALESCE(m.event_time, m.created_at) {order}, m.rowid {order} LIMIT ? OFFSET ?",
                [*params, limit, offset],
            ).fetchall()
        return [row_to_memory(row) for row in rows]

    def _pages(
        self, select: str, where: str, params: Sequence[Any], batch: int, one_user: bool
    ) -> Iterator[builtins.list[Row]]:
        """The rows of ``select ... WHERE where`` in batches, each continuing where the last stopped.

        One user's rows page along the (user_id, created_at) index in its own order, every user's
        along the rowid. (Paging one user's rows by rowid made SQLite find and sort all of the
        remaining rows for every batch: quadratic, minutes at a million memories.)
        """
        key, after = ("m.created_at, m.rowid", [float("-inf"), 0]) if one_user else ("m.rowid", [0])
        while True:
            with self.read() as conn:
                rows = conn.execute(
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

    def iter_contents(self, batch: int = 1000) -> Iterator[builtins.list[tuple[str, str, str]]]:
        """Stream (user id, id, content) of every memory, for re-embedding a store."""
        for rows in self._pages(
            "SELECT m.rowid, m.user_id, m.id, m.content FROM memories m", "TRUE", [], batch, one_user=False
        ):
            yield [(r["user_id"], r["id"], r["content"]) for r in rows]

    def set_embeddings(self, vectors: Sequence[tuple[str, str, np.ndarray]]) -> None:
        """Replace the stored vectors of memories, each (user id, id, vector) (used when re-embedding)."""
        with self.transaction() as conn:
            conn.executemany(
                "UPDATE memories SET embedding = ? WHERE id = ? AND +user_id = ?",
                [(np.asarray(v, dtype=np.float32).tobytes(), i, u) for u, i, v in vectors],
            )

    def counts_all(self) -> int:
        """How many memories the store holds, over every user and status."""
        with self.read() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])

    def iter_keyword_tokens(
        self, user_id: str, batch: int = 5000
    ) -> Iterator[builtins.list[tuple[str, str]]]:
        """Stream (memory id, space-joined keyword tokens) of a user's active memories."""
        select = (
            "SELECT m.rowid, m.created_at, m.id, f.tokens FROM memories m "
            f"JOIN memories_fts f ON {self.keyword_join}"
        )
        for rows in self._pages(
            select, "m.user_id = ? AND m.status = 'active'", [user_id], batch, one_user=True
        ):
            yield [(r["id"], r["tokens"]) for r in rows]

    def user_ids(self) -> builtins.list[str]:
        """Every user with at least one memory."""
        with self.read() as conn:
            return [r[0] for r in conn.execute("SELECT DISTINCT user_id FROM memories")]

    def counts(self, user_id: str) -> dict[str, Any]:
        """Per-type, per-tier and per-status counts and the time span of one user's memories."""
        with self.read() as conn:
            by_type = dict(
                conn.execute(
                    "SELECT type, COUNT(*) FROM memories WHERE user_id=? AND status='active' GROUP BY type",
                    (user_id,),
                ).fetchall()
            )
            by_tier = dict(
                conn.execute(
                    "SELECT tier, COUNT(*) FROM memories WHERE user_id=? AND status='active' GROUP BY tier",
                    (user_id,),
                ).fetchall()
            )
            by_status = dict(
                conn.execute(
                    "SELECT status, COUNT(*) FROM memories WHERE user_id=? GROUP BY status", (user_id,)
                ).fetchall()
            )
            # A time no datetime can hold (stored by an older version) is left out of the span.
            span = conn.execute(
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


def _embedding_matrix(rows: Sequence[Row]) -> np.ndarray | None:
    """The rows' vectors as a matrix; a cold memory (vector archived, NULL here) gets zeros, so
    it scores no dense similarity. None when no row has a vector."""
    width = next((len(row["embedding"]) for row in rows if row["embedding"] is not None), None)
    if width is None:
        return None
    zeros = bytes(width)
    return np.frombuffer(b"".join([row["embedding"] or zeros for row in rows]), dtype=np.float32).reshape(
        len(rows), -1
    )
