"""Knowledge-base rows in SQLite: the bases, who may read them (grants) and the files ingested
into each (source key, content hash, chunk count). Chunks themselves are ordinary memory rows
under the base's reserved scope id; these tables only say who may see them and what they hold.

Writers take the connection of the caller's transaction; readers take the store.
"""

from __future__ import annotations

from dataclasses import dataclass

from ripplemem.store.connection import Connection
from ripplemem.store.rows import RowStore

# The reserved scope id of a knowledge base is this prefix + its name (see engine/knowledge_bases.py).
KB_SCOPE_PREFIX = "\x1fkb\x1f"


def kb_name_of(scope_id: str) -> str | None:
    """The knowledge base a scope id belongs to, or None for a user's own scope."""
    return scope_id[len(KB_SCOPE_PREFIX) :] if scope_id.startswith(KB_SCOPE_PREFIX) else None


@dataclass(frozen=True)
class SourceRow:
    """One file ingested into a knowledge base, as recorded at its last ingest."""

    source: str
    content_hash: str
    ingested_at: float
    chunks: int
    pages: int
    format: str
    title: str | None


def kb_exists(conn: Connection, kb: str) -> bool:
    """Whether a knowledge base of this name exists (whoever may read it)."""
    return conn.execute("SELECT 1 FROM knowledge_bases WHERE name = ?", (kb,)).fetchone() is not None


def create_kb(conn: Connection, kb: str, user_id: str, now: float) -> None:
    """Create a knowledge base and grant it to its creator."""
    conn.execute(
        "INSERT INTO knowledge_bases (name, created_at, created_by) VALUES (?, ?, ?)", (kb, now, user_id)
    )
    add_grant(conn, kb, user_id, user_id, now)


def add_grant(conn: Connection, kb: str, user_id: str, granted_by: str, now: float) -> bool:
    """Let a user read a knowledge base; False if they could already."""
    cursor = conn.execute(
        "INSERT INTO kb_grants (kb, user_id, granted_at, granted_by) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (kb, user_id) DO NOTHING",
        (kb, user_id, now, granted_by),
    )
    return cursor.rowcount > 0


def remove_grant(conn: Connection, kb: str, user_id: str) -> bool:
    """Take a user's access to a knowledge base away; False if they had none."""
    return conn.execute("DELETE FROM kb_grants WHERE kb = ? AND user_id = ?", (kb, user_id)).rowcount > 0


def has_grant(conn: Connection, kb: str, user_id: str) -> bool:
    """Whether a user may read (and ingest into) a knowledge base."""
    return (
        conn.execute("SELECT 1 FROM kb_grants WHERE kb = ? AND user_id = ?", (kb, user_id)).fetchone()
        is not None
    )


def readers(conn: Connection, kb: str) -> list[str]:
    """The users a knowledge base is granted to, sorted."""
    return [r[0] for r in conn.execute("SELECT user_id FROM kb_grants WHERE kb = ? ORDER BY user_id", (kb,))]


def rename_user(conn: Connection, user_id: str, name: str) -> None:
    """Replace a user's id by ``name`` where bases record who granted or created them (erasure)."""
    conn.execute("UPDATE kb_grants SET granted_by = ? WHERE granted_by = ?", (name, user_id))
    conn.execute("UPDATE knowledge_bases SET created_by = ? WHERE created_by = ?", (name, user_id))


def granted_kbs(store: RowStore, user_id: str) -> list[str]:
    """The names of the knowledge bases a user may read, sorted."""
    with store.read() as conn:
        rows = conn.execute("SELECT kb FROM kb_grants WHERE user_id = ? ORDER BY kb", (user_id,)).fetchall()
    return [r[0] for r in rows]


def kb_created(conn: Connection, kb: str) -> tuple[float, str]:
    """(created_at, created_by) of an existing knowledge base."""
    row = conn.execute("SELECT created_at, created_by FROM knowledge_bases WHERE name = ?", (kb,)).fetchone()
    return float(row[0]), str(row[1])


def source_hashes(store: RowStore, kb: str) -> dict[str, str]:
    """{source key: content hash} of every file ingested into a knowledge base."""
    with store.read() as conn:
        rows = conn.execute("SELECT source, content_hash FROM kb_sources WHERE kb = ?", (kb,)).fetchall()
    return {r[0]: r[1] for r in rows}


def list_sources(store: RowStore, kb: str) -> list[SourceRow]:
    """Every file ingested into a knowledge base, by source key."""
    with store.read() as conn:
        rows = conn.execute(
            "SELECT source, content_hash, ingested_at, chunks, pages, format, title FROM kb_sources "
            "WHERE kb = ? ORDER BY source",
            (kb,),
        ).fetchall()
    return [SourceRow(*row) for row in rows]


def record_source(conn: Connection, kb: str, row: SourceRow) -> None:
    """Record (or replace) what was ingested from one file."""
    conn.execute(
        "INSERT INTO kb_sources (kb, source, content_hash, ingested_at, chunks, pages, format, title) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (kb, source) DO UPDATE SET "
        "content_hash = excluded.content_hash, ingested_at = excluded.ingested_at, chunks = excluded.chunks, "
        "pages = excluded.pages, format = excluded.format, title = excluded.title",
        (kb, row.source, row.content_hash, row.ingested_at, row.chunks, row.pages, row.format, row.title),
    )


def remove_source(conn: Connection, kb: str, source: str) -> bool:
    """Forget the record of one ingested file; False if there was none."""
    return conn.execute("DELETE FROM kb_sources WHERE kb = ? AND source = ?", (kb, source)).rowcount > 0


def chunk_ids(store: RowStore, scope_id: str, source: str | None = None) -> list[str]:
    """Ids of the chunk rows stored under a knowledge base's scope (of one source, if given)."""
    sql = "SELECT id FROM memories WHERE user_id = ?"
    params: list[str] = [scope_id]
    if source is not None:
        sql += " AND source = ?"
        params.append(source)
    with store.read() as conn:
        return [r[0] for r in conn.execute(sql + " ORDER BY rowid", params)]


def active_chunks(store: RowStore, scope_id: str) -> int:
    """How many active chunks a knowledge base's scope holds."""
    with store.read() as conn:
        return int(
            conn.execute(
                "SELECT COUNT(*) FROM memories WHERE user_id = ? AND status = 'active'", (scope_id,)
            ).fetchone()[0]
        )


def drop_kb_rows(conn: Connection, kb: str) -> None:
    """Delete a knowledge base's own rows: the base, its grants and its source records."""
    conn.execute("DELETE FROM kb_sources WHERE kb = ?", (kb,))
    conn.execute("DELETE FROM kb_grants WHERE kb = ?", (kb,))
    conn.execute("DELETE FROM knowledge_bases WHERE name = ?", (kb,))
