"""Copy every row of one row store into another (SQLite to PostgreSQL and back), losslessly: the
same ids, row keys, times, history, edges, tiers, knowledge bases, readings and vectors, and the
cold tier's archive segments. ("migrate" in store/ already names the schema migrations.)

The source is held still for the copy (its write lock: writers elsewhere wait); the target's rows
are written in one transaction, counted before it commits, so a failed copy leaves the target as
it was. The target's vector index is not copied: the backend-specific meta keys that name it are
left out, so the first open of the target rebuilds it from the copied vectors."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ripplemem.errors import InvalidInputError, StoreError
from ripplemem.store.cold_segments import archive_of
from ripplemem.store.connection import Connection
from ripplemem.store.content_version import KEY as CONTENT_VERSION_KEY
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.memories import scope_token
from ripplemem.store.vectors.chroma_server import STORE_ID_KEY

BATCH = 1000
SEGMENTS = "archive segments"


@dataclass(frozen=True)
class Table:
    """One table both backends hold: its columns, and the key its rows are paged and ordered by."""

    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]


_MEMORY_COLUMNS = (
    "rowid, id, user_id, agent_id, session_id, type, content, modality, importance, created_at, "
    "event_time, last_accessed, access_count, mention_count, tier, status, valid_from, valid_to, "
    "source, metadata, embedding, archive_segment"
)

# In the order they are copied: modality_vectors references memories.
TABLES = (
    Table("meta", ("key", "value"), ("key",)),
    Table("memories", tuple(c.strip() for c in _MEMORY_COLUMNS.split(",")), ("rowid",)),
    Table("memories_fts", ("rowid", "scope", "tokens"), ("rowid",)),
    Table(
        "entities",
        ("id", "user_id", "agent_id", "name", "canonical", "type", "aliases", "created_at", "embedding"),
        ("id",),
    ),
    Table(
        "edges",
        (
            "src",
            "dst",
            "type",
            "user_id",
            "predicate",
            "weight",
            "confidence",
            "created_at",
            "last_activated",
            "activations",
        ),
        ("user_id", "src", "dst", "type", "predicate"),
    ),
    Table("history", ("seq", "memory_id", "user_id", "at", "event", "cause", "detail"), ("seq",)),
    Table("knowledge_bases", ("name", "created_at", "created_by"), ("name",)),
    Table("kb_grants", ("kb", "user_id", "granted_at", "granted_by"), ("kb", "user_id")),
    Table(
        "kb_sources",
        ("kb", "source", "content_hash", "ingested_at", "chunks", "pages", "format", "title"),
        ("kb", "source"),
    ),
    Table("readings", ("id", "user_id", "metric", "value", "unit", "at", "source", "memory_id"), ("id",)),
    Table("modality_vectors", ("memory_id", "user_id", "modality", "embedding"), ("memory_id",)),
)

# Meta keys that describe one backend's copy, not the memories: the target keeps its own schema
# version and content version, and its vector indexes (text, and "modality_index:<kind>") and
# Chroma server identity are made anew, so the first open rebuilds them from the copied vectors.
_OWN_KEYS = ("schema_version", CONTENT_VERSION_KEY, "vector_index", "chroma_url", STORE_ID_KEY)
_OWN_PREFIXES = ("modality_index:",)
# What a replaced target keeps of its own meta (the rest goes with its rows).
_KEPT_ON_REPLACE = ("schema_version", CONTENT_VERSION_KEY, STORE_ID_KEY, "chroma_url")


def copied_meta_key(key: str) -> bool:
    """Whether a meta key travels with the rows (the embedding model, its cosine scale, import
    progress, the modality spaces), not with one backend's copy."""
    return key not in _OWN_KEYS and not key.startswith(_OWN_PREFIXES)


@dataclass
class MigrationReport:
    """What a copy of a store moved: rows per table and archive segments, and how long it took."""

    source: str
    target: str
    counts: dict[str, int] = field(default_factory=dict)
    replaced: bool = False
    seconds: float = 0.0

    @property
    def rows(self) -> int:
        """Rows copied over every table."""
        return sum(n for name, n in self.counts.items() if name != SEGMENTS)

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values."""
        return {
            "source": self.source,
            "target": self.target,
            "counts": dict(self.counts),
            "rows": self.rows,
            "replaced": self.replaced,
            "seconds": round(self.seconds, 3),
        }

    def summary(self) -> str:
        """A table of the counts for a person, with where from, where to and the time taken."""
        width = max(len(name) for name in self.counts)
        lines = [
            f"copied {self.source} -> {self.target}" + (" (replacing its rows)" if self.replaced else "")
        ]
        lines += [f"  {name:<{width}}  {count:>9}" for name, count in self.counts.items()]
        segments = self.counts.get(SEGMENTS, 0)
        plural = "" if segments == 1 else "s"
        lines.append(f"{self.rows} rows and {segments} archive segment{plural} in {self.seconds:.2f} s")
        return "\n".join(lines)


def table_counts(store: RowStore) -> dict[str, int]:
    """The rows of each table a copy moves (meta: only the keys that travel)."""
    with store.read() as conn:
        return _counts(conn)


def _counts(conn: Connection) -> dict[str, int]:
    counts = {}
    for table in TABLES:
        if table.name == "meta":
            keys = [r[0] for r in conn.execute("SELECT key FROM meta")]
            counts["meta"] = sum(copied_meta_key(k) for k in keys)
        else:
            counts[table.name] = int(conn.execute(f"SELECT COUNT(*) FROM {table.name}").fetchone()[0])
    return counts


def _segment_names(conn: Connection) -> list[str]:
    rows = conn.execute(
        "SELECT DISTINCT archive_segment FROM memories WHERE archive_segment IS NOT NULL "
        "ORDER BY archive_segment"
    ).fetchall()
    return [r[0] for r in rows]


def copy_store(
    source: RowStore,
    target: RowStore,
    *,
    replace: bool = False,
    progress: Callable[[int], None] | None = None,
) -> MigrationReport:
    """Copy every row and archive segment of ``source`` into ``target``; ``progress`` is called
    with the rows copied so far after each batch. A target that holds rows is refused unless
    ``replace`` (its rows are then deleted in the same transaction that writes the copy)."""
    start = time.perf_counter()
    report = MigrationReport(source.location, target.location, replaced=replace)
    with source.transaction(content=False) as src:
        wanted = _counts(src)
        if not any(n for name, n in wanted.items() if name != "meta"):
            raise InvalidInputError(
                f"the source store {source.location} holds nothing to move; check its folder or schema"
            )
        with target.read() as conn:
            present = {name: n for name, n in _counts(conn).items() if n and name != "meta"}
            old_segments = _segment_names(conn)
        if present and not replace:
            held = ", ".join(f"{n} {name}" for name, n in present.items())
            raise InvalidInputError(
                f"the target store {target.location} is not empty ({held}); move into a new folder or "
                "schema, or pass replace=True (--replace) to delete its rows and copy over them"
            )
        segments = _segment_names(src)
        source_archive, target_archive = archive_of(source), archive_of(target)
        for name in segments:  # files (or rows on a server) outside the row transaction
            target_archive.shelf.put(name, source_archive.shelf.get(name))
        done = 0
        with target.transaction() as dst:
            _clear(dst, rows=replace)
            owners = _scope_owners(src)
            for table in TABLES:
                for rows in _pages(src, table):
                    if table.name == "memories_fts":
                        _write_keywords(dst, target, rows, owners)
                    else:
                        _write(dst, table, rows, target.location)
                    done += len(rows)
                    if progress is not None:
                        progress(done)
            target.reset_generated_keys(dst)
            written = _counts(dst)
            if written != wanted:
                lost = {n: (wanted[n], written[n]) for n in wanted if wanted[n] != written[n]}
                raise StoreError(f"the copy into {target.location} does not add up (source, target): {lost}")
    for name in set(old_segments) - set(segments):
        target_archive.shelf.drop(name)
    report.counts = {**wanted, SEGMENTS: len(segments)}
    report.seconds = time.perf_counter() - start
    return report


def _clear(conn: Connection, *, rows: bool) -> None:
    """Delete the target's meta about rows (it has none, or they go too) and, if asked, its rows."""
    if rows:
        for table in reversed(TABLES[1:]):  # modality_vectors before the memories it references
            conn.execute(f"DELETE FROM {table.name}")
    conn.execute(
        f"DELETE FROM meta WHERE key NOT IN ({','.join('?' * len(_KEPT_ON_REPLACE))})", _KEPT_ON_REPLACE
    )


def _pages(conn: Connection, table: Table) -> Iterator[list[tuple[Any, ...]]]:
    """The table's rows in batches, in key order, each batch continuing after the last row read
    (a server's cursor would otherwise hold the whole table in memory at once)."""
    if table.name == "meta":  # a few keys
        rows = [tuple(r) for r in conn.execute("SELECT key, value FROM meta ORDER BY key")]
        yield [r for r in rows if copied_meta_key(r[0])]
        return
    columns, key = ", ".join(table.columns), ", ".join(table.key)
    positions = [table.columns.index(k) for k in table.key]
    after: list[Any] = []
    while True:
        where = f" WHERE ({key}) > ({','.join('?' * len(after))})" if after else ""
        rows = [
            tuple(r)
            for r in conn.execute(
                f"SELECT {columns} FROM {table.name}{where} ORDER BY {key} LIMIT ?", [*after, BATCH]
            ).fetchall()
        ]
        if not rows:
            return
        yield rows
        after = [rows[-1][p] for p in positions]


def _scope_owners(conn: Connection) -> dict[str, str]:
    """{scope token: user id} of every user with a memory (a keyword row names its user by token)."""
    return {scope_token(r[0]): r[0] for r in conn.execute("SELECT DISTINCT user_id FROM memories")}


def _write_keywords(
    conn: Connection, target: RowStore, rows: Sequence[tuple[Any, ...]], owners: dict[str, str]
) -> None:
    """Insert one batch of keyword rows (rowid, scope, tokens) in the target's own form: a
    PostgreSQL store keys them by user too."""
    unowned = sum(row[1] not in owners for row in rows)
    if unowned:
        raise StoreError(
            f"the source's keyword index holds {unowned} rows of no user's memory: run `ripplemem check` "
            "on the source (it deletes them), then move it again; the target is unchanged"
        )
    target.write_keyword_rows(conn, [(owners[scope], rowid, tokens) for rowid, scope, tokens in rows])


def _write(conn: Connection, table: Table, rows: Sequence[tuple[Any, ...]], target: str) -> None:
    """Insert one batch of a table's rows, an error naming the table."""
    if not rows:
        return
    marks = ",".join("?" * len(table.columns))
    try:
        conn.executemany(f"INSERT INTO {table.name} ({', '.join(table.columns)}) VALUES ({marks})", rows)
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(
            f"cannot copy the rows of table {table.name} into {target}: {exc}; the target is unchanged"
        ) from exc
