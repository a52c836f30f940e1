"""The memory graph's rows in SQLite: entities and typed, weighted edges, always scoped to a user.

Functions take a connection inside the caller's transaction (writes) or the store (reads), so a
memory and its graph are written in one atomic step.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ripplemem.store.connection import Connection
from ripplemem.store.in_lists import count_in, in_chunks
from ripplemem.store.rows import RowStore

EDGE_TYPES = ("MENTIONS", "RELATES", "NEXT", "SIMILAR", "ALIAS", "SUMMARIZES", "SUPERSEDES", "CONTRADICTS")
ENTITY_PREFIX = "ent_"


def entity_id(user_id: str, canonical: str) -> str:
    """The stable id of a user's entity with this canonical name (the same in every process)."""
    digest = hashlib.sha256(f"{user_id}\x00{canonical}".encode()).hexdigest()[:24]
    return ENTITY_PREFIX + digest


def is_entity(node_id: str) -> bool:
    """True for entity node ids, False for memory ids."""
    return node_id.startswith(ENTITY_PREFIX)


@dataclass(frozen=True)
class EntityRow:
    """One entity of a user's graph."""

    id: str
    name: str
    canonical: str
    type: str


@dataclass(frozen=True)
class EdgeRow:
    """One typed edge; src -> dst direction matters only for RELATES (subject -> object)."""

    src: str
    dst: str
    type: str
    weight: float = 1.0
    confidence: float = 1.0
    predicate: str = ""
    created_at: float = 0.0
    last_activated: float | None = None
    activations: int = 0


def insert_entities(
    conn: Connection, user_id: str, agent_id: str | None, entities: Iterable[EntityRow], now: float
) -> None:
    """Create entities that do not exist yet (an existing canonical name keeps its first spelling)."""
    conn.executemany(
        "INSERT INTO entities (id, user_id, agent_id, name, canonical, type, aliases, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, '[]', ?) ON CONFLICT DO NOTHING",
        [(e.id, user_id, agent_id, e.name, e.canonical, e.type, now) for e in entities],
    )


def insert_edges(conn: Connection, user_id: str, edges: Iterable[EdgeRow]) -> None:
    """Create edges; an edge that exists already keeps the larger weight and confidence."""
    conn.executemany(
        "INSERT INTO edges (src, dst, type, user_id, predicate, weight, confidence, created_at, "
        "last_activated, activations) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (user_id, src, dst, type, predicate) DO UPDATE SET "
        "weight = MAX(edges.weight, excluded.weight), "
        "confidence = MAX(edges.confidence, excluded.confidence)",
        [
            (
                e.src,
                e.dst,
                e.type,
                user_id,
                e.predicate,
                e.weight,
                e.confidence,
                e.created_at,
                e.last_activated,
                e.activations,
            )
            for e in edges
        ],
    )


def existing_entity_ids(conn: Connection, user_id: str, ids: Sequence[str]) -> set[str]:
    """Which of these entity ids the user already has."""
    found: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        found.update(
            r[0]
            for r in conn.execute(
                f"SELECT id FROM entities WHERE user_id = ? AND id IN ({','.join('?' * len(chunk))})",
                [user_id, *chunk],
            )
        )
    return found


def entities_containing_word(conn: Connection, user_id: str, word: str) -> list[EntityRow]:
    """The user's multi-word entities with `word` as one of their words ('frank' -> 'frank ocean')."""
    pattern = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    rows = conn.execute(
        "SELECT id, name, canonical, type FROM entities WHERE user_id = ? AND canonical != ? AND "
        "(canonical LIKE ? ESCAPE '\\' OR canonical LIKE ? ESCAPE '\\' OR canonical LIKE ? ESCAPE '\\')",
        (user_id, word, f"{pattern} %", f"% {pattern}", f"% {pattern} %"),
    ).fetchall()
    return [EntityRow(r[0], r[1], r[2], r[3]) for r in rows]


def known_cjk_entities(conn: Connection, user_id: str) -> list[tuple[str, str]]:
    """(canonical name, id) of the user's entities whose names contain CJK characters."""
    rows = conn.execute(
        "SELECT canonical, id FROM entities WHERE user_id = ? AND length(canonical) BETWEEN 2 AND 30 "
        "AND canonical GLOB '*[^ -~]*'",
        (user_id,),
    ).fetchall()
    return [(r[0], r[1]) for r in rows if any("\u3400" <= ch <= "\u9fff" for ch in r[0])]


def last_memory_in_session(
    conn: Connection, user_id: str, session_id: str, exclude: Sequence[str]
) -> str | None:
    """The most recently stored active memory of a session, other than the excluded ids."""
    marks = ",".join("?" * len(exclude)) or "''"
    row = conn.execute(
        "SELECT id FROM memories WHERE user_id = ? AND session_id = ? AND status = 'active' "
        f"AND id NOT IN ({marks}) ORDER BY rowid DESC LIMIT 1",
        [user_id, session_id, *exclude],
    ).fetchone()
    return None if row is None else row[0]


_EDGE_PAGE = (
    "SELECT src, dst, type, weight, confidence, predicate, created_at, last_activated, activations "
    "FROM edges WHERE user_id = ? {after}ORDER BY user_id, src, dst, type, predicate LIMIT ?"
)
_AFTER = "AND (src, dst, type, predicate) > (?, ?, ?, ?) "


def iter_edges(store: RowStore, user_id: str, batch: int = 20_000) -> Iterator[list[EdgeRow]]:
    """Stream every edge of a user, batch by batch."""
    for rows in iter_edge_rows(store, user_id, batch):
        yield [EdgeRow(*r) for r in rows]


def iter_edge_rows(store: RowStore, user_id: str, batch: int = 20_000) -> Iterator[list[Sequence[Any]]]:
    """Every edge of a user as rows in EdgeRow's field order, batch by batch (loading the in-memory
    graph reads them as columns).

    Each batch continues along the primary key where the last one stopped. (Paging by rowid made
    SQLite find and sort all of the user's remaining edges for every batch: quadratic, minutes
    at a million memories.)
    """
    after: tuple[str, str, str, str] | None = None
    while True:
        with store.read() as conn:
            if after is None:
                rows = conn.execute(_EDGE_PAGE.format(after=""), (user_id, batch)).fetchall()
            else:
                rows = conn.execute(_EDGE_PAGE.format(after=_AFTER), (user_id, *after, batch)).fetchall()
        if not rows:
            return
        last = rows[-1]
        after = (last[0], last[1], last[2], last[5])
        yield rows


def edges_between(store: RowStore, user_id: str, nodes: Sequence[str]) -> list[EdgeRow]:
    """Every edge of the user whose two ends are both among `nodes`."""
    if not nodes:
        return []
    node_list = list(dict.fromkeys(nodes))[:900]
    marks = ",".join("?" * len(node_list))
    with store.read() as conn:
        rows = conn.execute(
            "SELECT src, dst, type, weight, confidence, predicate, created_at, last_activated, activations "
            f"FROM edges WHERE user_id = ? AND src IN ({marks}) AND dst IN ({marks})",
            [user_id, *node_list, *node_list],
        ).fetchall()
    return [EdgeRow(*r) for r in rows]


def edges_of(store: RowStore, user_id: str, node: str) -> list[EdgeRow]:
    """Every edge of the user touching `node`, in either direction."""
    with store.read() as conn:
        rows = conn.execute(
            "SELECT src, dst, type, weight, confidence, predicate, created_at, last_activated, activations "
            "FROM edges WHERE user_id = ? AND (src = ? OR dst = ?)",
            (user_id, node, node),
        ).fetchall()
    return [EdgeRow(*r) for r in rows]


def get_entities(store: RowStore, user_id: str, ids: Sequence[str]) -> dict[str, EntityRow]:
    """The user's entities with these ids."""
    found: dict[str, EntityRow] = {}
    with store.read() as conn:
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            for r in conn.execute(
                "SELECT id, name, canonical, type FROM entities WHERE user_id = ? "
                f"AND id IN ({','.join('?' * len(chunk))})",
                [user_id, *chunk],
            ):
                found[r[0]] = EntityRow(r[0], r[1], r[2], r[3])
    return found


def reinforce_edges(
    store: RowStore, user_id: str, pairs: Iterable[tuple[str, str]], now: float, boost: float, cap: float
) -> None:
    """Strengthen traversed edges (either direction): weight + boost up to cap, stamp the time."""
    pairs = list(pairs)
    if not pairs:
        return
    # One statement per direction, so each uses the (user_id, src, dst, ...) primary key.
    both = [(a, b) for a, b in pairs] + [(b, a) for a, b in pairs]
    with store.transaction(content=False) as conn:  # a record of use: other processes keep their graphs
        conn.executemany(
            "UPDATE edges SET weight = MIN(?, weight + ?), last_activated = ?, activations = activations + 1 "
            "WHERE user_id = ? AND src = ? AND dst = ?",
            [(cap, boost, now, user_id, a, b) for a, b in both],
        )


def delete_orphan_entities(conn: Connection, user_id: str, candidates: Sequence[str]) -> list[str]:
    """Delete candidate entities no memory mentions any more (with their edges); returns their ids."""
    orphans = []
    for entity in dict.fromkeys(candidates):
        mentioned = conn.execute(
            "SELECT 1 FROM edges WHERE user_id = ? AND dst = ? AND type = 'MENTIONS' LIMIT 1",
            (user_id, entity),
        ).fetchone()
        if mentioned is None:
            orphans.append(entity)
    for entity in orphans:
        conn.execute(
            "DELETE FROM edges WHERE user_id = ? AND (src = ? OR dst = ?)", (user_id, entity, entity)
        )
        conn.execute("DELETE FROM entities WHERE user_id = ? AND id = ?", (user_id, entity))
    return orphans


def mentioned_entities(conn: Connection, user_id: str, memory_ids: Sequence[str]) -> list[str]:
    """Entity ids the given memories mention."""
    found: list[str] = []
    for start in range(0, len(memory_ids), 500):
        chunk = list(memory_ids[start : start + 500])
        found.extend(
            r[0]
            for r in conn.execute(
                "SELECT dst FROM edges WHERE user_id = ? AND type = 'MENTIONS' "
                f"AND src IN ({','.join('?' * len(chunk))})",
                [user_id, *chunk],
            )
        )
    return found


def mentioning_memories(conn: Connection, user_id: str, entity_ids: Sequence[str]) -> list[str]:
    """Ids of the memories mentioning these entities (once per mention)."""
    # Named index: without statistics SQLite scans all the user's edges for each chunk instead
    # (its primary key covers the query but starts with src).
    return [
        r[0]
        for marks, chunk in in_chunks(entity_ids)
        for r in conn.execute(
            "SELECT src FROM edges INDEXED BY ix_edges_user_dst "
            f"WHERE user_id = ? AND type = 'MENTIONS' AND dst IN ({marks})",
            [user_id, *chunk],
        )
    ]


def rarely_mentioned(conn: Connection, user_id: str, entity_ids: Sequence[str], most: int) -> list[str]:
    """Those of these entities that at most ``most`` memories mention."""
    return [
        r[0]
        for marks, chunk in in_chunks(entity_ids)
        for r in conn.execute(
            f"SELECT dst FROM edges WHERE user_id = ? AND type = 'MENTIONS' AND dst IN ({marks}) "
            "GROUP BY dst HAVING COUNT(*) <= ?",
            [user_id, *chunk, most],
        )
    ]


def user_entities(conn: Connection, user_id: str) -> list[EntityRow]:
    """Every entity of a user."""
    rows = conn.execute("SELECT id, name, canonical, type FROM entities WHERE user_id = ?", (user_id,))
    return [EntityRow(r[0], r[1], r[2], r[3]) for r in rows]


def entity_texts(conn: Connection, user_id: str) -> Iterator[str]:
    """Each of a user's entities as one text, its name and aliases JSON joined by a NUL."""
    # Joined here, not in SQL: PostgreSQL's text cannot hold a NUL.
    return (
        f"{r[0]}\0{r[1]}"
        for r in conn.execute("SELECT name, aliases FROM entities WHERE user_id = ?", (user_id,))
    )


def count_entities_named(conn: Connection, user_id: str, names: Sequence[str]) -> int:
    """How many of the user's entities have one of these names."""
    return count_in(
        conn, "SELECT COUNT(*) FROM entities WHERE user_id = ? AND name IN ({})", names, [user_id]
    )


def count_edges_touching(conn: Connection, user_id: str, node_ids: Sequence[str]) -> int:
    """How many of the user's edges start at one of these nodes, plus how many end at one."""
    starting = count_in(
        conn, "SELECT COUNT(*) FROM edges WHERE user_id = ? AND src IN ({})", node_ids, [user_id]
    )
    return starting + count_in(
        conn,
        "SELECT COUNT(*) FROM edges INDEXED BY ix_edges_user_dst WHERE user_id = ? AND dst IN ({})",
        node_ids,
        [user_id],
    )


def set_entity_vectors(conn: Connection, user_id: str, vectors: Sequence[tuple[str, np.ndarray]]) -> None:
    """Store the name vectors of some of a user's entities."""
    conn.executemany(
        "UPDATE entities SET embedding = ? WHERE user_id = ? AND id = ?",
        [(np.asarray(v, dtype=np.float32).tobytes(), user_id, node) for node, v in vectors],
    )


def entity_vectors(store: RowStore, user_id: str) -> tuple[list[str], np.ndarray | None]:
    """(ids, name vectors) of the user's entities that have one."""
    with store.read() as conn:
        rows = conn.execute(
            "SELECT id, embedding FROM entities WHERE user_id = ? AND embedding IS NOT NULL", (user_id,)
        ).fetchall()
    if not rows:
        return [], None
    return [r[0] for r in rows], np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])


def aliases_json(names: Iterable[str]) -> str:
    """An entity's alias list as stored."""
    return json.dumps(sorted(set(names)), ensure_ascii=False)


def next_in_session(store: RowStore, user_id: str, ids: Sequence[str]) -> dict[str, str]:
    """The memory that follows each of these memories in its session (its NEXT edge), if any."""
    if not ids:
        return {}
    found: dict[str, str] = {}
    with store.read() as conn:
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            found.update(
                conn.execute(
                    f"SELECT src, dst FROM edges WHERE user_id = ? AND type = 'NEXT' "
                    f"AND src IN ({','.join('?' * len(chunk))})",
                    [user_id, *chunk],
                ).fetchall()
            )
    return found
