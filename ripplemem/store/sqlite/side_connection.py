"""A second connection to a store's database, for erase: checkpoint the WAL and read every stored
byte. It comes from the same SQLite library as the store's own connection, so closing it keeps
every lock of the store's connection (SQLite defers the close of its descriptor; a plain
open()/close() of the file would drop them: see privacy/files.py)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator

from ripplemem.store.sqlite.rows import DB_FILENAME

# Seconds a checkpoint waits for other processes' readers before giving up (it blocks writers).
CHECKPOINT_PATIENCE = 1.0


@contextlib.contextmanager
def side_connection(root: str) -> Iterator[sqlite3.Connection]:
    """A second connection to the database of the store at ``root``, closed when the block ends."""
    conn = sqlite3.connect(
        os.path.join(root, DB_FILENAME),
        timeout=CHECKPOINT_PATIENCE,
        isolation_level=None,
        check_same_thread=False,
    )
    try:
        yield conn
    finally:
        conn.close()


def checkpoint_wal(root: str) -> bool:
    """Copy the WAL into the database and truncate it (old page images live on there); False when
    another process's reader kept it busy past CHECKPOINT_PATIENCE."""
    with side_connection(root) as conn:
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    return not busy


def database_image(conn: sqlite3.Connection) -> bytes | None:
    """Every page of the database as SQLite sees it now (the WAL's newest pages, the freelist and
    unused space included; sqlite3_serialize), or None on Python 3.10, which has no serialize()."""
    return conn.serialize() if hasattr(conn, "serialize") else None


def database_values(conn: sqlite3.Connection) -> Iterator[bytes]:
    """Every text and blob value of every table, each followed by a NUL byte (stored text holds
    none, so no needle spans two values). With secure_delete=ON, what was deleted is zeroed, so the
    values are what the pages hold."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        for row in conn.execute(f'SELECT * FROM "{table}"'):
            for value in row:
                if isinstance(value, str):
                    yield value.encode("utf-8", "surrogatepass") + b"\0"
                elif isinstance(value, bytes):
                    yield value + b"\0"
