"""pgvector as the vector index: one table per embedding space, every row keyed by its user.

``{schema}.vectors_{space}`` holds (user_id, id, agent_id, session_id, type, at, embedding) with
PRIMARY KEY (user_id, id); every key leads with user_id, so the table can be hash-partitioned by
user later. A user with fewer than ``exact_below`` vectors is searched exactly (a scan of that
user's rows); a bigger one through the table's one HNSW index (vector_cosine_ops, built when the
first user gets that big), which pgvector 0.6 filters only after the index scan: when fewer than
k rows survive the user (and VectorFilter) conditions, the query is answered exactly instead.
"""

from __future__ import annotations

import contextlib
import re
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.adapt import Dumper
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import Format
from psycopg.rows import TupleRow, tuple_row
from psycopg_pool import ConnectionPool

from ripplemem.errors import InvalidInputError, StoreError
from ripplemem.store.postgres.connection import first_line
from ripplemem.store.postgres.uri import scrubbed
from ripplemem.store.vectors.base import VectorFilter, VectorIndex

# benchmarks/pgvector_exact_vs_hnsw.py (pgvector 0.6.2, one user's 384-d vectors, k=10, 2 cores
# shared with other work), p50 exact scan vs HNSW at the smallest ef_search with recall@10 >= 0.98
# (40 at every size): 1k 0.29 vs 0.37 ms, 2k 0.51 vs 0.31, 5k 2.9 vs 0.32, 10k 4.5 vs 0.68,
# 20k 16 vs 0.42, 50k 37 vs 0.82. They cross between 1k and 2k; below 2k the scan is within 0.2 ms,
# exact, needs no index to be built, and cannot be crowded out by other users' rows (_nearest).
EXACT_BELOW = 2_000
# Candidates an HNSW scan keeps (pgvector's default is 40, enough alone in a table): the user
# condition is applied after the scan, so other users' rows take candidate places.
EF_SEARCH = 200
# pgvector's binary input: dimension (uint16), an unused uint16, then big-endian float4 values.
_VECTOR_HEADER = struct.Struct(">HH")
_SPACE_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
_WRITE_BATCH = 1000
_MAX_EF_SEARCH = 1000  # pgvector's limit
# Building the index at once takes 0.7 s at 2k vectors, 2.3 s at 10k, 16 s at 50k; inserting into
# it costs 1.5-1.9 ms a vector against 0.02-0.05 ms without it (the same benchmark): so the index
# is built when a user first passes EXACT_BELOW, and drop_all drops it before a refill. A graph
# that outgrows maintenance_work_mem builds many times slower: at least this much for the build.
_BUILD_MEMORY_KB = 512 * 1024
Cursor = psycopg.Cursor[TupleRow]


class VectorDumper(Dumper):
    """A numpy vector in pgvector's binary format.

    Not the pgvector package: its register_vector() looks the vector type's oid up on every new
    connection (a pool configure hook the pool's owner would have to set), and we never read a
    vector back. With oid 0 the server takes the type from the statement's ``::vector`` cast;
    binary is ~4x faster to send than float8[] lists and ~10x faster than text (5k rows of 384-d).
    """

    format = Format.BINARY
    oid = 0

    def dump(self, obj: Any) -> bytes:
        """The vector's bytes as pgvector's vector_recv reads them."""
        values = np.asarray(obj, dtype=">f4").reshape(-1)
        return _VECTOR_HEADER.pack(len(values), 0) + values.tobytes()


@contextmanager
def vector_cursor(conn: psycopg.Connection[Any]) -> Iterator[Cursor]:
    """A cursor that sends numpy arrays as pgvector vectors (the connection's other cursors do
    not) and returns tuples, whatever row factory the pool's connections have."""
    with conn.cursor(row_factory=tuple_row) as cur:
        cur.adapters.register_dumper(np.ndarray, VectorDumper)
        yield cur


def _conninfo(pool: ConnectionPool[Any]) -> dict[str, Any]:
    """The pool's connection parameters ({} when given by a callable or unparsable)."""
    if not isinstance(pool.conninfo, str):
        return {}
    try:
        return conninfo_to_dict(pool.conninfo)
    except psycopg.ProgrammingError:
        return {}


def server_label(params: dict[str, Any]) -> str:
    """Where a pool connects, for messages: host, port and database, never the password."""
    if not params:
        return "the configured PostgreSQL server"
    host = str(params.get("host") or "localhost")
    port = f":{params['port']}" if params.get("port") else ""
    return f"PostgreSQL at {host}{port}, database {params.get('dbname') or params.get('user') or '?'}"


class PgVectorIndex:
    """Vectors of every user in one pgvector table per space, inside ``schema``; every statement
    names the user as a bound parameter. PostgreSQL keeps its own files: nothing to report broken."""

    name = "pgvector"
    persistent = True
    remote = True
    on_damage: Callable[[], None] | None = None  # nothing of ours on disk to break

    def __init__(
        self,
        pool: ConnectionPool[Any],
        schema: str,
        dimension: int | None = None,
        *,
        space: str = "text",
        exact_below: int = EXACT_BELOW,
        ef_search: int = EF_SEARCH,
    ) -> None:
        if not _SPACE_NAME.fullmatch(space):
            raise InvalidInputError(
                f"a vector space name is 1-40 lowercase letters, digits or _ (a letter first); got {space!r}"
            )
        if not schema or len(schema) > 63:
            raise InvalidInputError(f"schema must be a PostgreSQL name of 1-63 characters; got {schema!r}")
        if dimension is not None and not 0 < dimension <= 16000:
            raise InvalidInputError(f"pgvector stores 1 to 16000 dimensions; got dimension={dimension!r}")
        self._pool = pool
        self._schema = schema
        self._space = space
        self._dimension = dimension
        self._opened_dimension = dimension
        self._exact_below = exact_below
        self._ef_search = ef_search
        self._table_name = f"vectors_{space}"
        self._ready = False  # the table exists with our dimension
        t = sql.Identifier(schema, self._table_name)
        index = f"{self._table_name}_hnsw"
        self._index_name = sql.Identifier(schema, index)
        self._sql = {
            "upsert": sql.SQL(
                "INSERT INTO {t} (user_id, id, agent_id, session_id, type, at, embedding) "
                "VALUES (%s, %s, %s, %s, %s, %s, %b::vector) ON CONFLICT (user_id, id) DO UPDATE SET "
                "agent_id = EXCLUDED.agent_id, session_id = EXCLUDED.session_id, type = EXCLUDED.type, "
                "at = EXCLUDED.at, embedding = EXCLUDED.embedding"
            ).format(t=t),
            "delete": sql.SQL("DELETE FROM {t} WHERE user_id = %s AND id = ANY(%s)").format(t=t),
            "drop": sql.SQL("DELETE FROM {t} WHERE user_id = %s").format(t=t),
            "ids": sql.SQL("SELECT id FROM {t} WHERE user_id = %s").format(t=t),
            "count": sql.SQL("SELECT count(*) FROM {t} WHERE user_id = %s").format(t=t),
            # Whether the user is big (counting no further than the threshold), whether the index
            # exists, and for a big user the settings of an HNSW scan, in one round trip. enable_sort
            # off: every other plan needs a Sort, so the planner takes the HNSW index even where its
            # estimates (a table not analyzed yet) favour scanning the user's rows.
            "plan": sql.SQL(
                "SELECT big, to_regclass(%(i)s) IS NOT NULL, CASE WHEN big AND %(hnsw)s THEN "
                "set_config('hnsw.ef_search', %(ef)s, true) || set_config('enable_sort', 'off', true) END "
                "FROM (SELECT count(*) >= %(n)s AS big FROM "
                "(SELECT 1 FROM {t} WHERE user_id = %(u)s LIMIT %(n)s) AS mine) AS size"
            ).format(t=t),
            "any": sql.SQL("SELECT EXISTS (SELECT 1 FROM {t})").format(t=t),
            "foreign": sql.SQL(
                "SELECT user_id, count(*) FROM {t} WHERE NOT (user_id = ANY(%s)) GROUP BY user_id"
            ).format(t=t),
            "drop table": sql.SQL("DROP TABLE IF EXISTS {t}").format(t=t),
            "create index": sql.SQL(
                "CREATE INDEX IF NOT EXISTS {i} ON {t} USING hnsw (embedding vector_cosine_ops)"
            ).format(i=sql.Identifier(index), t=t),
            "drop index": sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(schema, index)),
        }
        self._table = t

    @contextmanager
    def _cursor(self, *, pipelined: bool = False) -> Iterator[Cursor]:
        """A vector cursor on a pooled connection, in a transaction committed at the end (also on a
        pool of autocommit connections); a lost server is a StoreError. ``pipelined``: in pipeline
        mode, so BEGIN travels with the first statement (one round trip fewer)."""
        try:
            with self._pool.connection() as conn:
                pipeline = conn.pipeline() if pipelined else contextlib.nullcontext()
                with pipeline, conn.transaction(), vector_cursor(conn) as cur:
                    yield cur
        except psycopg.OperationalError as exc:  # also the pool's PoolTimeout
            raise StoreError(
                f"the {self._table_name} vector table in {server_label(_conninfo(self._pool))} cannot be "
                f"reached ({self._scrubbed(exc)}); the call was not completed: check that the server "
                "is up, then retry (the pool reconnects on the next call)"
            ) from exc
        except psycopg.Error as exc:
            if isinstance(exc, psycopg.errors.UndefinedTable):
                self._ready = False  # dropped by someone else: created again by the next add
            raise StoreError(
                f"{server_label(_conninfo(self._pool))} refused a statement on the {self._table_name} "
                f"vector table: {self._scrubbed(exc)}"
            ) from exc

    def _scrubbed(self, exc: Exception) -> str:
        """The error's text without the password, should the driver ever quote the connection string."""
        conninfo = self._pool.conninfo
        return scrubbed(first_line(exc), conninfo) if isinstance(conninfo, str) else first_line(exc)

    @contextmanager
    def _existing(self, *, pipelined: bool = False) -> Iterator[Cursor | None]:
        """A vector cursor on the table; None while it does not exist (nothing stored yet)."""
        with self._cursor(pipelined=pipelined) as cur:
            if not self._ready:
                name = self._table.as_string(cur.connection)
                if cur.execute("SELECT to_regclass(%s) IS NULL", (name,)).fetchone() == (True,):
                    yield None
                    return
                self._check_dimension(cur)  # another process created it
                self._ready = True
            yield cur

    def _lock_ddl(self, cur: Cursor) -> None:
        """Take turns with other processes creating or dropping this table or its index, until the
        transaction ends (CREATE ... IF NOT EXISTS alone can still fail with a unique violation in
        pg_class when two race)."""
        key = f"ripplemem vector table {self._schema}.{self._table_name}"
        cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))

    def _ensure_table(self, cur: Cursor, dimension: int) -> None:
        """Create the schema and table (the HNSW index waits for the first big user: _nearest)."""
        self._lock_ddl(cur)
        cur.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self._schema)))
        cur.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {t} (user_id TEXT NOT NULL, id TEXT NOT NULL, "
                "agent_id TEXT NOT NULL, session_id TEXT NOT NULL, type TEXT NOT NULL, "
                "at DOUBLE PRECISION NOT NULL, embedding vector({d}) NOT NULL, PRIMARY KEY (user_id, id))"
            ).format(t=self._table, d=sql.Literal(dimension))
        )
        self._check_dimension(cur)

    def _create_index(self, cur: Cursor) -> None:
        """Build the HNSW index over every row at once, in this transaction: far faster than
        growing it row by row (see _BUILD_MEMORY_KB), and only once a user needs it."""
        self._lock_ddl(cur)
        cur.execute(
            "SELECT set_config('maintenance_work_mem', %(kb)s || 'kB', true) FROM pg_settings "
            "WHERE name = 'maintenance_work_mem' AND setting::bigint < %(kb)s::bigint",
            {"kb": str(_BUILD_MEMORY_KB)},
        )
        cur.execute(self._sql["create index"])

    def _check_dimension(self, cur: Cursor) -> None:
        """Learn the table's dimension, or refuse one that differs from this index's."""
        found = cur.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'embedding'",
            (self._table.as_string(cur.connection),),
        ).fetchone()
        stored = int(found[0]) if found else None
        if stored is not None and self._dimension is not None and stored != self._dimension:
            raise StoreError(
                f"the table {self._schema}.{self._table_name} holds vectors of {stored} dimensions, "
                f"but this index was opened for {self._dimension}; use another schema for stores of "
                "another embedder"
            )
        self._dimension = stored or self._dimension

    def add(
        self, user_id: str, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]
    ) -> None:
        """Add (or replace) vectors of one user, in one transaction."""
        if not len(ids):
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(ids) or len(metadatas) != len(ids):
            raise InvalidInputError(
                f"add needs one vector and one metadata dict per id: got {len(ids)} ids, "
                f"vectors of shape {vectors.shape} and {len(metadatas)} metadata dicts"
            )
        if self._dimension is not None and vectors.shape[1] != self._dimension:
            raise InvalidInputError(
                f"the {self._space} vectors here have {self._dimension} dimensions; got {vectors.shape[1]}"
            )
        rows = [
            (
                user_id,
                memory_id,
                str(meta.get("agent_id", "")),
                str(meta.get("session_id", "")),
                str(meta.get("type", "")),
                float(meta.get("when", 0.0)),
                vector,
            )
            for memory_id, vector, meta in zip(ids, vectors, metadatas, strict=True)
        ]
        # By id (stable: of an id given twice the last wins): two processes upserting overlapping
        # ids lock the rows in one order and cannot deadlock.
        rows.sort(key=lambda row: row[1])
        if not self._ready:
            with self._cursor() as cur:  # committed on its own, before any row is written
                self._ensure_table(cur, int(vectors.shape[1]))
            self._ready = True
        with self._cursor() as cur:
            for start in range(0, len(rows), _WRITE_BATCH):
                cur.executemany(self._sql["upsert"], rows[start : start + _WRITE_BATCH])

    def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """Remove vectors of one user; unknown ids are ignored."""
        if len(ids):
            self._write("delete", (user_id, sorted(ids)))

    def drop(self, user_id: str) -> None:
        """Remove every vector of one user."""
        self._write("drop", (user_id,))

    def _write(self, statement: str, params: tuple[Any, ...]) -> None:
        with self._existing() as cur:
            if cur is not None:
                cur.execute(self._sql[statement], params)

    def query(
        self, user_id: str, vector: np.ndarray, k: int, flt: VectorFilter | None = None
    ) -> list[tuple[str, float]]:
        """The k nearest vectors of one user as (id, cosine similarity), best first."""
        rows = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        return self._nearest(user_id, rows, k, flt or VectorFilter())[0]

    def query_many(self, user_id: str, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """The k nearest of one user's vectors for each row of `vectors` (one connection, one plan)."""
        return self._nearest(user_id, np.asarray(vectors, dtype=np.float32), k, VectorFilter())

    def _nearest(
        self, user_id: str, vectors: np.ndarray, k: int, flt: VectorFilter
    ) -> list[list[tuple[str, float]]]:
        """Exact for a small user; through the HNSW index for a big one, exact again for each
        vector whose index candidates held fewer than k of the user's (filtered) rows."""
        if k <= 0 or not len(vectors):
            return [[] for _ in range(len(vectors))]
        with self._existing(pipelined=True) as cur:
            if cur is None:
                return [[] for _ in range(len(vectors))]
            found: list[list[tuple[str, float]] | None] = [None] * len(vectors)
            hnsw = k <= _MAX_EF_SEARCH
            params = {
                "u": user_id,
                "n": self._exact_below,
                "i": self._index_name.as_string(cur.connection),
                "hnsw": hnsw,
                "ef": str(min(_MAX_EF_SEARCH, max(self._ef_search, k))),
            }
            big, indexed, _ = cur.execute(self._sql["plan"], params).fetchone() or (False, False, None)
            if big and hnsw:
                if not indexed:
                    self._create_index(cur)
                for number, vector in enumerate(vectors):
                    hits = self._search(cur, user_id, vector, k, flt, exact=False)
                    found[number] = hits if len(hits) == k else None
                if None in found:
                    cur.execute("SELECT set_config('enable_sort', 'on', true)")
            return [
                hits if hits is not None else self._search(cur, user_id, vector, k, flt, exact=True)
                for hits, vector in zip(found, vectors, strict=True)
            ]

    def _search(
        self, cur: Cursor, user_id: str, q: np.ndarray, k: int, flt: VectorFilter, *, exact: bool
    ) -> list[tuple[str, float]]:
        """One user's k nearest by cosine, scanning the user's rows (exact) or the HNSW index."""
        where, params = _filter_sql(flt)
        # "+ 0": an ORDER BY the HNSW index does not match, so the planner scans the user's rows.
        order = sql.SQL("(embedding <=> %(q)b::vector) + 0" if exact else "embedding <=> %(q)b::vector")
        query = sql.SQL(
            "SELECT id, 1 - (embedding <=> %(q)b::vector) FROM {t} WHERE user_id = %(u)s{w} "
            "ORDER BY {o} LIMIT %(k)s"
        ).format(t=self._table, w=where, o=order)
        rows = cur.execute(query, {**params, "u": user_id, "q": q, "k": k}).fetchall()
        return [(str(memory_id), float(score)) for memory_id, score in rows]

    def count(self, user_id: str) -> int:
        """How many vectors one user has."""
        with self._existing() as cur:
            found = None if cur is None else cur.execute(self._sql["count"], (user_id,)).fetchone()
            return int(found[0]) if found else 0

    def ids(self, user_id: str) -> set[str]:
        """The ids of every vector one user has (compared with SQLite by the consistency check)."""
        with self._existing() as cur:
            return set() if cur is None else {row[0] for row in cur.execute(self._sql["ids"], (user_id,))}

    def is_empty(self) -> bool:
        """Whether this space's table holds no vector (or does not exist yet)."""
        with self._existing() as cur:
            return cur is None or cur.execute(self._sql["any"]).fetchone() != (True,)

    def drop_all(self) -> None:
        """Remove every vector of this space, users known or not (before a rebuild: the table goes,
        so a million rows leave no dead tuples, and the rebuild may bring another dimension)."""
        with self._cursor() as cur:
            self._lock_ddl(cur)
            cur.execute(self._sql["drop table"])
        self._ready = False
        self._dimension = self._opened_dimension

    def foreign(self, user_ids: Sequence[str]) -> dict[str, int]:
        """{user: vector count} of the users outside `user_ids` who have vectors here."""
        with self._existing() as cur:
            if cur is None:
                return {}
            return {user: int(n) for user, n in cur.execute(self._sql["foreign"], (list(user_ids),))}

    def drop_foreign(self, part: str) -> None:
        """Remove every vector of one user foreign() reported (a part is a user id)."""
        self.drop(part)

    def damage(self) -> list[str]:
        """None: PostgreSQL looks after its own files."""
        return []

    def clear_damage(self) -> None:
        """Nothing to forget (see damage)."""

    def exclusive(self) -> AbstractContextManager[None]:
        """Nothing beyond the engine's write lock, under which a check runs: every process reads and
        writes the one table on the server, so no process holds a copy that could go stale."""
        return contextlib.nullcontext()

    def open_space(self, space: str) -> VectorIndex:
        """The index of another embedding space: its own table in the same schema and pool."""
        return PgVectorIndex(
            self._pool, self._schema, space=space, exact_below=self._exact_below, ef_search=self._ef_search
        )

    def close(self) -> None:
        """Nothing to release: the pool belongs to the caller, who closes it."""


def _filter_sql(flt: VectorFilter) -> tuple[sql.Composable, dict[str, Any]]:
    """The AND-clauses of a VectorFilter (after the user condition) and their parameters."""
    clauses: list[str] = []
    params: dict[str, Any] = {}
    for column, value in (("agent_id", flt.agent_id), ("session_id", flt.session_id)):
        if value is not None:
            clauses.append(f" AND {column} = %({column})s")
            params[column] = value
    if flt.types:
        clauses.append(" AND type = ANY(%(types)s)")
        params["types"] = list(flt.types)
    if flt.since is not None:
        clauses.append(" AND at >= %(since)s")
        params["since"] = float(flt.since)
    if flt.until is not None:
        clauses.append(" AND at < %(until)s")
        params["until"] = float(flt.until)
    return sql.SQL("".join(clauses)), params
