"""The statements of an erase on the memories table and its keyword index, and those spanning every
table: what a request selects, the per-layer counts before and after, the verification's probes,
and the FTS5 merge that drops deleted tokens. What to erase and what counts as a residue is decided
in privacy/; the graph, history, readings and grant statements sit with their tables.

Functions take a connection: inside the caller's transaction for writes, inside ``store.read()``
for reads (several reads then see the store without another thread's write in between)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ripplemem.store.connection import Connection
from ripplemem.store.in_lists import count_in, in_chunks
from ripplemem.store.tables.memories import scope_token

# Every table whose rows belong to one user (its user_id column).
USER_TABLES = ("memories", "entities", "edges", "history", "readings", "kb_grants", "modality_vectors")


def user_memory_ids(conn: Connection, user_id: str) -> list[str]:
    """Ids of all the user's memories (any status), oldest row first."""
    rows = conn.execute("SELECT id FROM memories WHERE user_id = ? ORDER BY rowid", (user_id,))
    return [r[0] for r in rows]


def memory_places(
    conn: Connection, user_id: str, ids: Sequence[str] | None
) -> list[tuple[int, str, str, str | None]]:
    """(rowid, id, content, archive segment) of the user's memories with these ids, or of all of
    them (oldest row first) when ``ids`` is None."""
    rows = _memory_rows(
        conn, "SELECT rowid, id, content, archive_segment FROM memories", user_id, ids, " ORDER BY rowid"
    )
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def memory_vectors(
    conn: Connection, user_id: str, ids: Sequence[str] | None
) -> list[tuple[str, bytes | None, str | None]]:
    """(id, stored vector bytes, archive segment) of the user's memories with these ids, or of all."""
    rows = _memory_rows(conn, "SELECT id, embedding, archive_segment FROM memories", user_id, ids)
    return [(r[0], r[1], r[2]) for r in rows]


def _memory_rows(
    conn: Connection, select: str, user_id: str, ids: Sequence[str] | None, order: str = ""
) -> Iterator[Any]:
    """The rows a SELECT on the memories table gives for the user's memories with these ids (in
    chunks, unordered), or for all of them (``order`` appended)."""
    if ids is None:
        return iter(conn.execute(f"{select} WHERE user_id = ?{order}", (user_id,)))
    return (
        r
        for marks, chunk in in_chunks(ids)
        for r in conn.execute(f"{select} WHERE user_id = ? AND id IN ({marks})", [user_id, *chunk])
    )


def memory_texts(conn: Connection, user_id: str) -> Iterator[tuple[str, str, str]]:
    """(id, content, metadata JSON) of every memory of the user (any status), read as the caller iterates."""
    return iter(conn.execute("SELECT id, content, metadata FROM memories WHERE user_id = ?", (user_id,)))


def memory_text_blobs(conn: Connection, user_id: str) -> Iterator[str]:
    """Each memory of the user as one text, its content and metadata JSON joined by a NUL."""
    # Joined here, not in SQL: PostgreSQL's text cannot hold a NUL.
    return (
        f"{r[0]}\0{r[1]}"
        for r in conn.execute("SELECT content, metadata FROM memories WHERE user_id = ?", (user_id,))
    )


def count_user_rows(conn: Connection, table: str, user_id: str) -> int:
    """How many rows of the user one of USER_TABLES holds."""
    if table not in USER_TABLES:
        raise ValueError(f"{table!r} is not a table of user rows; expected one of {USER_TABLES}")
    return int(conn.execute(f"SELECT COUNT(*) FROM {table} WHERE user_id = ?", (user_id,)).fetchone()[0])


# The keyword rows of a user are found by its scope token: SQLite's FTS5 table has no user_id.
def count_keyword_rows(conn: Connection, user_id: str, rowids: Sequence[int]) -> int:
    """How many of these rowids of the user's memories the keyword index still holds."""
    return count_in(
        conn,
        "SELECT COUNT(*) FROM memories_fts WHERE scope = ? AND rowid IN ({})",
        rowids,
        [scope_token(user_id)],
    )


def count_unbacked_keyword_rows(conn: Connection, user_id: str, rowids: Sequence[int]) -> int:
    """How many of these rowids the keyword index holds for the user with no memory row of the
    user behind them."""
    return count_in(
        conn,
        "SELECT COUNT(*) FROM memories_fts f WHERE f.scope = ? AND NOT EXISTS "
        "(SELECT 1 FROM memories m WHERE +m.user_id = ? AND m.rowid = f.rowid) AND f.rowid IN ({})",
        rowids,
        [scope_token(user_id), user_id],
    )


def count_memories_by_id(conn: Connection, user_id: str, ids: Sequence[str]) -> int:
    """How many of these ids of the user's memories are still stored."""
    return count_in(conn, "SELECT COUNT(*) FROM memories WHERE +user_id = ? AND id IN ({})", ids, [user_id])


def count_memories_by_content(conn: Connection, user_id: str, contents: Sequence[str]) -> int:
    """How many of the user's memories have exactly one of these contents."""
    return count_in(
        conn, "SELECT COUNT(*) FROM memories WHERE user_id = ? AND content IN ({})", contents, [user_id]
    )


def text_held_anywhere(conn: Connection, text: str) -> bool:
    """Whether any memory (any user, content or metadata) or entity (name or aliases) contains the text."""
    return (
        conn.execute(
            "SELECT 1 FROM memories WHERE instr(content, ?) > 0 OR instr(metadata, ?) > 0 UNION ALL "
            "SELECT 1 FROM entities WHERE instr(name, ?) > 0 OR instr(aliases, ?) > 0 LIMIT 1",
            (text, text, text, text),
        ).fetchone()
        is not None
    )
