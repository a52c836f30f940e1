"""The row store on a PostgreSQL server: one schema of one database holds every row, shared by
every process on every host. Writes are serialised by a transaction-level advisory lock (what
BEGIN IMMEDIATE is to SQLite), the content version in ``meta`` tells each process when another
one changed what its caches hold, and connections come from a psycopg pool that replaces a
connection the server dropped."""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ripplemem.errors import MissingDependencyError, SchemaVersionError, StoreError
from ripplemem.index.bm25 import KeywordIndex, query_terms, stem
from ripplemem.store.connection import Connection
from ripplemem.store.content_version import ContentVersion, bump
from ripplemem.store.memory_rows import MemoryFilter, scope_token
from ripplemem.store.postgres.connection import PgConnection, first_line, pg_row_factory, server_error
from ripplemem.store.postgres.schema import MIGRATIONS, SCHEMA_VERSION
from ripplemem.store.postgres.uri import redacted, scrubbed
from ripplemem.store.rows import RowStore, read_meta, write_meta
from ripplemem.store.vectors.base import VectorIndex

DEFAULT_SCHEMA = "ripplemem"
DEFAULT_POOL_SIZE = 4
_CONNECT_PATIENCE = 30.0  # seconds to wait for the server, or for a free pooled connection


def advisory_key(schema: str, purpose: str) -> int:
    """The 64-bit advisory lock key of one purpose ("write", "migrate") in one schema."""
    digest = hashlib.sha256(f"ripplemem:{schema}:{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PostgresStore(RowStore):
    """All rows of all users in one PostgreSQL schema; every query is scoped."""

    on_server = True
    unverifiable = (
        "the server's WAL segments (recycled by the server, not erased)",
        "replicas and standbys",
        "backups and WAL archives",
    )

    def __init__(self, uri: str, *, schema: str = DEFAULT_SCHEMA, pool_size: int = DEFAULT_POOL_SIZE) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise MissingDependencyError(
                "a PostgreSQL store needs psycopg and psycopg-pool: pip install 'ripplemem[postgres]'"
            ) from exc
        self.path = None
        self.uri = uri
        self.schema = schema
        self.location = f"{redacted(uri)} (schema {schema})"
        self.closed = False
        self.on_write = None
        self._lock = threading.RLock()
        self._held: PgConnection | None = None
        self._write_key = advisory_key(schema, "write")
        search_path = psycopg.sql.SQL("SET search_path TO {}, public").format(psycopg.sql.Identifier(schema))

        def configure(raw: Any) -> None:
            raw.execute(search_path)

        # One connection serves the store's statements at a time (under the store's lock, as
        # SQLite's one connection does); the pool keeps spares for the vector index and replaces a
        # connection the server closed (check=) so the next call after a restart just works.
        self._pool = ConnectionPool(
            uri,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True, "row_factory": pg_row_factory},
            configure=configure,
            check=ConnectionPool.check_connection,
            timeout=_CONNECT_PATIENCE,
            open=False,
            name=f"ripplemem-{schema}",
        )
        try:
            # One plain connection first: a refused connection or a wrong password fails at once
            # with the server's reason, where the pool would retry until its timeout.
            psycopg.connect(uri, connect_timeout=int(_CONNECT_PATIENCE)).close()
            self._pool.open(wait=True, timeout=_CONNECT_PATIENCE)
        except Exception as exc:
            self._pool.close()
            reason = scrubbed(first_line(exc), uri)
            raise StoreError(
                f"cannot connect to the PostgreSQL store at {redacted(uri)}: {reason}; "
                "check that the server runs and the URI is right"
            ) from None
        try:
            self._migrate()
            with self.read() as conn:
                self._content = ContentVersion(conn)
        except BaseException:
            self._pool.close()
            raise

    @property
    def pool(self) -> Any:
        """The psycopg connection pool (the pgvector index takes its connections from it too)."""
        return self._pool

    def open_vector_index(self) -> VectorIndex:
        """The store's vectors in pgvector tables of its schema, on the store's connection pool."""
        from ripplemem.store.postgres.vectors import PgVectorIndex  # imports psycopg

        return PgVectorIndex(self._pool, self.schema)

    @contextmanager
    def _connection(self) -> Iterator[PgConnection]:
        with self._lock:
            if self._held is not None:  # a read inside this thread's transaction sees its writes
                yield self._held
                return
            try:
                checkout = self._pool.connection()
                raw = checkout.__enter__()
            except Exception as exc:
                raise StoreError(
                    f"no connection to the PostgreSQL store at {redacted(self.uri)}: {exc}; "
                    "the next call tries again"
                ) from None
            self._held = PgConnection(raw, self.uri)
            try:
                yield self._held
            except BaseException as exc:
                self._held = None
                checkout.__exit__(type(exc), exc, exc.__traceback__)
                raise
            self._held = None
            checkout.__exit__(None, None, None)

    def _migrate(self) -> None:
        import psycopg

        with self._connection() as conn:
            raw = conn.raw
            try:
                with raw.transaction():
                    # One process creates or upgrades the schema; the others wait here, then see it done.
                    raw.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(self.schema, "migrate"),))
                    raw.execute(
                        psycopg.sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                            psycopg.sql.Identifier(self.schema)
                        )
                    )
                    _ensure_pgvector(raw, self.location)
                    has_meta = raw.execute(
                        "SELECT 1 FROM information_schema.tables "
                        "WHERE table_schema = %s AND table_name = 'meta'",
                        (self.schema,),
                    ).fetchone()
                    version = int(read_meta(conn, "schema_version") or 0) if has_meta else 0
                    if version > SCHEMA_VERSION:
                        raise SchemaVersionError(
                            f"the PostgreSQL store at {self.location} has schema version {version}, "
                            f"newer than this RippleMem understands ({SCHEMA_VERSION}); "
                            "upgrade ripplemem to open it"
                        )
                    for target in range(version + 1, SCHEMA_VERSION + 1):
                        MIGRATIONS[target](raw)
                        write_meta(conn, "schema_version", str(target))
            except psycopg.Error as exc:
                raise server_error(exc, self.uri) from exc

    @contextmanager
    def transaction(self, *, content: bool = True) -> Iterator[Connection]:
        """One atomic write (BEGIN, the store's advisory lock, ... COMMIT), rolled back on any error.
        content=False is for records of use only: other processes keep their caches over it."""
        with self._connection() as conn:
            conn.execute("BEGIN")
            try:
                conn.execute("SELECT pg_advisory_xact_lock(?)", (self._write_key,))
                if self.on_write is not None:
                    self.on_write(conn)
                yield conn
                version = bump(conn) if content else None
                conn.execute("COMMIT")
                if version is not None:
                    self._content.committed(version)
            except BaseException:
                if not conn.raw.closed and conn.in_transaction:
                    # A connection gone mid-way: the server rolled the transaction back itself.
                    with contextlib.suppress(Exception):
                        conn.raw.execute("ROLLBACK")
                raise

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A connection for a few reads (each statement its own snapshot, as on SQLite)."""
        with self._connection() as conn:
            yield conn

    def close(self) -> None:
        """Close every pooled connection."""
        with self._lock:
            self._pool.close()
            self.closed = True

    def keyword_match_ids(self, conn: Connection, user_id: str, terms: Sequence[str]) -> list[str]:
        """Ids of the user's memories (any status) whose keyword tokens hold every one of the terms."""
        if not terms:
            return []
        return [
            r[0]
            for r in conn.execute(
                "SELECT m.id FROM memories m JOIN memories_fts f ON f.rowid = m.rowid "
                "WHERE m.user_id = ? AND string_to_array(f.tokens, ' ') @> (?)::text[]",
                (user_id, list(terms)),
            )
        ]

    def orphan_keyword_rows(self, conn: Connection, user_id: str) -> int:
        """How many keyword rows of the user no memory row backs (what is left of deleted text)."""
        row = conn.execute(
            "SELECT COUNT(*) FROM memories_fts f WHERE f.scope = ? AND NOT EXISTS "
            "(SELECT 1 FROM memories m WHERE m.rowid = f.rowid)",
            (scope_token(user_id),),
        ).fetchone()
        return int(row[0])

    def compact_keywords(self, conn: Connection) -> None:
        """Nothing to merge: a memory's keyword row is deleted with it (its dead tuple is vacuumed)."""

    def rewrite_tables(self) -> list[str]:
        """VACUUM FULL every table of the schema: plain VACUUM marks dead tuples free but leaves
        their bytes in the table file (measured), VACUUM FULL writes each table anew and removes
        the old file. It locks each table while it is copied: other processes wait that long."""
        import psycopg

        with self._connection() as conn:
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = ? AND c.relkind = 'r' ORDER BY c.relname",
                    (self.schema,),
                )
            ]
            for table in tables:  # outside any transaction: VACUUM cannot run inside one
                conn.raw.execute(
                    psycopg.sql.SQL("VACUUM FULL {}.{}").format(
                        psycopg.sql.Identifier(self.schema), psycopg.sql.Identifier(table)
                    )
                )
        return tables

    def server_bytes(self) -> int:
        """The size of every table and index of the store's schema on the server."""
        with self.read() as conn:
            row = conn.execute(
                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relkind = 'r'",
                (self.schema,),
            ).fetchone()
        return int(row[0])

    def changed_elsewhere(self) -> bool:
        """True once after another process committed a content write (one small read of meta)."""
        with self.read() as conn:
            return self._content.changed_elsewhere(conn)

    def keyword_search(self, query: str, flt: MemoryFilter, limit: int) -> list[tuple[str, float]]:
        """BM25 within the filter, ranked in this process over the rows the filter passes (the
        engine's per-user index serves unfiltered searches): (memory id, score) best first."""
        terms = query_terms(query)
        if not terms:
            return []
        where, params = flt.where()
        with self.read() as conn:
            rows = conn.execute(
                "SELECT m.id, f.tokens FROM memories m JOIN memories_fts f ON f.rowid = m.rowid "
                f"WHERE {where}",
                params,
            ).fetchall()
        index = KeywordIndex()
        index.add((row[0], [stem(t) for t in row[1].split()]) for row in rows)
        return index.search(terms, limit)


def _ensure_pgvector(raw: Any, location: str) -> None:
    """Create the vector extension unless it exists; a server without pgvector, or a role that may
    not create it, is a StoreError saying what to run."""
    import psycopg

    if raw.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    try:
        with raw.transaction():  # a savepoint: a refusal leaves the migration's transaction usable
            raw.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as exc:
        raise StoreError(
            f"the PostgreSQL store at {location} needs the pgvector extension, and it could not be "
            f"created ({first_line(exc)}): install pgvector on the server and run "
            "CREATE EXTENSION vector; as a role allowed to"
        ) from None
