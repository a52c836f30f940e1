"""The one way a test reaches beneath the public API, so every such reach is named and easy to find.

Tests use the public API (`stats()`, `list()`, `get()`, `history()`, `check()`) wherever it shows
what a user would notice; `engine_of` is for the few that inspect storage itself: crash recovery,
the vector and media indexes, the ledger's rows, the cold archive, the caches.
"""

from __future__ import annotations

from ripplemem import RippleMem
from ripplemem.engine.engine import Engine


def engine_of(mem: RippleMem) -> Engine:
    """The engine beneath a handle: its SQLite ledger, vector and media indexes, caches and clock."""
    return mem._engine


def stored_rows(mem: RippleMem, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """The rows a query finds in what the store really holds, read on a connection of the test's own
    (sqlite3 on the store's file, psycopg on a PostgreSQL store's schema); ``?`` placeholders."""
    import sqlite3
    from pathlib import Path

    if mem.path is not None:
        with sqlite3.connect(Path(mem.path) / "ripplemem.db") as conn:
            return conn.execute(sql, params).fetchall()
    import psycopg
    from psycopg import sql as pg_sql

    store = engine_of(mem).store
    with psycopg.connect(store.uri, autocommit=True) as conn:  # type: ignore[attr-defined]
        conn.execute(pg_sql.SQL("SET search_path TO {}").format(pg_sql.Identifier(store.schema)))  # type: ignore[attr-defined]
        return [tuple(row) for row in conn.execute(sql.replace("?", "%s"), params).fetchall()]
