"""Crash recovery: bring SQLite (the source of truth) and the vector index back in step.

A write touches SQLite (rows, keywords and graph in one transaction) and the vector index, one
after the other, so a process killed between the two, or inside Chroma, can leave rows without
vectors or vectors without rows. While a thread holds the engine's write lock, the first write
transaction it begins creates a marker file for this writer under ``<store>/pending-writes/``
(before anything is written, outside SQLite so it exists even if the transaction never commits);
the outermost release of the lock removes it, unless the hold ended in an error. On open, a marker
left by a dead writer means a write was cut short, and only then is the full check run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np

from ripplemem.core.text import keyword_tokens
from ripplemem.errors import InvalidInputError, StoreError
from ripplemem.store.check_report import CheckReport, take_damage, take_foreign
from ripplemem.store.connection import Connection
from ripplemem.store.graph_tables import delete_orphan_entities
from ripplemem.store.info import open_rows, store_exists
from ripplemem.store.memory_rows import index_metadata
from ripplemem.store.modality_index import check_opened, opened_for_check, sync_modality
from ripplemem.store.modality_vectors import recorded_modalities
from ripplemem.store.postgres.options import PostgresOptions
from ripplemem.store.postgres.uri import redacted
from ripplemem.store.rows import RowStore
from ripplemem.store.sqlite import DB_FILENAME, SQLiteStore, damaged_store_error, is_damaged
from ripplemem.store.vectors.base import VectorIndex
from ripplemem.store.vectors.chroma import ChromaIndex
from ripplemem.store.vectors.chroma_server import ChromaServer, store_namespace

PENDING_DIRNAME = "pending-writes"
_log = logging.getLogger(__name__)
# A further check run by check_store under its guard: (report, repair) -> None.
ExtraCheck = Callable[[CheckReport, bool], None]


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


def _dead_markers(markers: list[str]) -> list[str]:
    """Markers of processes on this host that no longer run (live or remote writers keep theirs)."""
    host = socket.gethostname()
    dead = []
    for name in markers:
        parts = name.rsplit(":", 2)
        if len(parts) != 3 or parts[0] != host or not parts[1].isdigit():
            continue
        pid = parts[1]
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            dead.append(name)
        except PermissionError:
            continue
    return dead


def check_store(
    store: RowStore, index: VectorIndex | None, *, repair: bool, extra: ExtraCheck | None = None
) -> CheckReport:
    """Compare SQLite with the vector index, the keyword index and the graph; repair if asked.
    ``extra(report, repair)`` checks more indexes (the modality indexes) under the same guard.

    ``index=None`` (a numpy store, rebuilt from SQLite on every open) checks SQLite alone. The
    check holds the index exclusively (Chroma on disk: its inter-process lock) and reads the index
    before SQLite, so a concurrent writer (SQLite first, index second) is never mistaken for damage.
    """
    started = time.perf_counter()
    report = CheckReport(
        path=store.path, vector_index="none" if index is None else index.name, repaired=repair
    )
    guard = contextlib.nullcontext() if index is None else index.exclusive()
    with guard:
        markers = pending_markers(store.path)
        report.interrupted_writes = len(markers)
        users = store.user_ids()
        report.users = len(users)
        if index is not None:
            take_damage(report, index, repair)
            _check_index(store, index, users, report, repair)
        _check_graph(store, report, repair)
        _check_keywords(store, report, repair)
        if extra is not None:
            extra(report, repair)
        if repair and markers:
            _clear_markers(store, _dead_markers(markers))
    report.seconds = time.perf_counter() - started
    return report


def _check_index(
    store: RowStore, index: VectorIndex, users: list[str], report: CheckReport, repair: bool
) -> None:
    """Each user's vectors against SQLite, then the vectors of users SQLite has no row of."""
    for user_id in users:
        _check_vectors(store, index, user_id, report, repair)
    take_foreign(report, index, users, repair)


def _check_vectors(
    store: RowStore, index: VectorIndex, user_id: str, report: CheckReport, repair: bool
) -> None:
    indexed = index.ids(user_id)
    with store.read() as conn:
        expected = {
            r[0]
            for r in conn.execute(
                "SELECT id FROM memories WHERE user_id = ? AND status = 'active' AND embedding IS NOT NULL",
                (user_id,),
            )
        }
    missing = sorted(expected - indexed)
    stray = sorted(indexed - expected)
    report.memories += len(expected)
    report.vectors += len(indexed)
    report.missing_vectors += len(missing)
    report.stray_vectors += len(stray)
    if not repair:
        return
    if stray:
        index.delete(user_id, stray)
    for start in range(0, len(missing), 500):
        ids, vectors, metas = _stored_vectors(store, user_id, missing[start : start + 500])
        if ids:
            index.add(user_id, ids, vectors, metas)


def _stored_vectors(
    store: RowStore, user_id: str, ids: list[str]
) -> tuple[list[str], np.ndarray, list[dict[str, Any]]]:
    with store.read() as conn:
        rows = conn.execute(
            "SELECT id, agent_id, session_id, type, COALESCE(event_time, created_at), embedding "
            "FROM memories WHERE user_id = ? AND embedding IS NOT NULL "
            f"AND id IN ({','.join('?' * len(ids))})",
            [user_id, *ids],
        ).fetchall()
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32), []
    vectors = np.stack([np.frombuffer(r[5], dtype=np.float32) for r in rows])
    return [r[0] for r in rows], vectors, [index_metadata(user_id, r[1], r[2], r[3], r[4]) for r in rows]


_DANGLING_EDGES = """
SELECT e.user_id, e.src, e.dst, e.type, e.predicate FROM edges e WHERE
  (NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = e.src AND m.user_id = e.user_id)
   AND NOT EXISTS (SELECT 1 FROM entities n WHERE n.id = e.src AND n.user_id = e.user_id))
  OR
  (NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = e.dst AND m.user_id = e.user_id)
   AND NOT EXISTS (SELECT 1 FROM entities n WHERE n.id = e.dst AND n.user_id = e.user_id))
"""

# Entities that no existing memory mentions (the same rule deletes use for orphans).
_ORPHAN_ENTITIES = """
SELECT n.user_id, n.id FROM entities n WHERE NOT EXISTS (
  SELECT 1 FROM edges e JOIN memories m ON m.id = e.src AND m.user_id = e.user_id
  WHERE e.user_id = n.user_id AND e.dst = n.id AND e.type = 'MENTIONS')
"""


def _check_graph(store: RowStore, report: CheckReport, repair: bool) -> None:
    with store.read() as conn:
        dangling = [tuple(r) for r in conn.execute(_DANGLING_EDGES)]  # primary keys
        orphans: dict[str, list[str]] = {}
        for user_id, entity in conn.execute(_ORPHAN_ENTITIES):
            orphans.setdefault(user_id, []).append(entity)
    report.dangling_edges = len(dangling)
    report.orphan_entities = sum(len(v) for v in orphans.values())
    if not repair or not (dangling or orphans):
        return
    with store.transaction() as conn:
        conn.executemany(
            "DELETE FROM edges WHERE user_id = ? AND src = ? AND dst = ? AND type = ? AND predicate = ?",
            dangling,
        )
        for user_id, entities in orphans.items():
            delete_orphan_entities(conn, user_id, entities)


def _check_keywords(store: RowStore, report: CheckReport, repair: bool) -> None:
    with store.read() as conn:
        # (rowid, scope): a stray row may belong to no user a memory names; its scope token is its own.
        stray = conn.execute(
            "SELECT f.rowid, f.scope FROM memories_fts f WHERE NOT EXISTS "
            f"(SELECT 1 FROM memories m WHERE {store.keyword_join})"
        ).fetchall()
        missing = conn.execute(
            "SELECT m.rowid, m.user_id, m.content FROM memories m WHERE NOT EXISTS "
            f"(SELECT 1 FROM memories_fts f WHERE {store.keyword_join})"
        ).fetchall()
    report.stray_keywords = len(stray)
    report.missing_keywords = len(missing)
    if not repair or not (stray or missing):
        return
    with store.transaction() as conn:
        conn.executemany(
            "DELETE FROM memories_fts WHERE rowid = ? AND scope = ?", [(r[0], r[1]) for r in stray]
        )
        store.write_keyword_rows(conn, [(r[1], r[0], " ".join(keyword_tokens(r[2]))) for r in missing])


def _clear_markers(store: RowStore, names: list[str]) -> None:
    assert store.path is not None
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(store.path, PENDING_DIRNAME, name))


def sync_index(index: VectorIndex, store: RowStore) -> int:
    """Add and remove the vectors of an index kept in this process's memory so they match SQLite
    after another process wrote; returns how many vectors changed."""
    report = CheckReport(path=store.path, vector_index=index.name, repaired=True)
    _check_index(store, index, sorted(store.user_ids()), report, repair=True)
    return report.missing_vectors + report.stray_vectors


def reconcile_on_open(
    store: RowStore, index: VectorIndex, extra: ExtraCheck | None = None
) -> CheckReport | None:
    """The open-time hook: a full check and repair only if an interrupted write left a marker or
    the index found broken files (then its vectors are rebuilt from SQLite, with a warning). A
    store on a server is checked at every open: a writer on another host leaves no marker here,
    and the check tolerates live writers (it reads the index before the rows they write first)."""
    if not store.on_server and not pending_markers(store.path) and not index.damage():
        return None
    report = check_store(store, index, repair=True, extra=extra)
    if report.index_damage:
        _log.warning(
            "the vector index of %s was damaged and is rebuilt from SQLite (%d vectors): %s",
            store.path,
            report.missing_vectors,
            "; ".join(report.index_damage),
        )
    return report


def check_path(
    path: str | os.PathLike[str] | PostgresOptions, *, repair: bool = True, server: ChromaServer | None = None
) -> CheckReport:
    """Open the store at `path` (a folder, or a PostgreSQL schema) without an embedder, check it,
    repair it if asked, close it. A store whose vectors are on a Chroma server is checked against
    that ``server``."""
    if isinstance(path, PostgresOptions):
        return _check_server_store(path, repair)
    folder = os.path.abspath(os.fspath(path))
    if not os.path.isfile(os.path.join(folder, DB_FILENAME)):
        raise StoreError(f"no RippleMem store at {folder!r} to check")
    try:
        store = SQLiteStore(folder)
    except StoreError as exc:
        if exc.__cause__ is None or not is_damaged(exc.__cause__):
            raise
        file = os.path.join(folder, DB_FILENAME)
        raise damaged_store_error(
            file,
            exc.__cause__,
            "check cannot repair SQLite's own file; restore it from a backup, or salvage its "
            f"readable rows into a new file with the sqlite3 shell (sqlite3 {file!r} .recover | "
            "sqlite3 recovered.db), move the damaged file aside, put recovered.db in its place "
            "as ripplemem.db and run check again",
        ) from exc
    try:
        kind = store.get_meta("vector_index") or ""
        if not kind.startswith("chroma"):
            report = check_store(store, None, repair=repair)
            report.vector_index = "numpy (rebuilt from SQLite on every open; vectors not compared)"
            return report
        index = (
            ChromaIndex(folder, verify="probe", repair=repair)
            if kind == "chroma"
            else _server_index(store, server)
        )
        try:
            with opened_for_check(store, folder, repair) as modalities:
                return check_store(
                    store,
                    index,
                    repair=repair,
                    extra=lambda report, fix: check_opened(store, modalities, report, fix),
                )
        finally:
            index.close()
    finally:
        store.close()


def _check_server_store(options: PostgresOptions, repair: bool) -> CheckReport:
    """Check a PostgreSQL store's rows, keyword rows and graph against its pgvector tables (the
    text space and every modality's), repairing what disagrees if asked."""
    if not store_exists(options):
        raise StoreError(f"no RippleMem store at {redacted(options.uri)} (schema {options.schema}) to check")
    store = open_rows(options)
    try:
        index = store.open_vector_index()
        assert index is not None  # a PostgreSQL store keeps its vectors beside its rows

        def check_modalities(report: CheckReport, fix: bool) -> None:
            for modality in recorded_modalities(store):
                sync_modality(store, modality, index.open_space(modality), report, fix)

        return check_store(store, index, repair=repair, extra=check_modalities)
    finally:
        store.close()


def _server_index(store: RowStore, server: ChromaServer | None) -> VectorIndex:
    """The Chroma server index of a store that keeps its vectors there (its URL must be given)."""
    if server is None:
        raise InvalidInputError(
            f"the store at {store.path!r} keeps its vectors on a Chroma server (last opened at "
            f"{store.get_meta('chroma_url')}); pass its chroma_url (--chroma-url) to check it"
        )
    return ChromaIndex(client=server.connect(), namespace=store_namespace(store))
