"""The memory graph mirrored from the SQLite ledger into Neo4j, and read back from it.

Every write site (writes, revisions, consolidation, repairs, erasure) changes rows in SQLite; TEMP
triggers on this process's connection note which memory, entity and edge keys changed, inside the
same transaction (a rolled-back write notes nothing). ``flush`` reads the notes with the rows as
they are now and sends them to Neo4j in one transaction of UNWIND batches; the notes are dropped
only once Neo4j has them, so a failed flush is retried by the next. A process that dies between
commit and flush loses its notes; ``reconcile`` on open compares per-user fingerprints of the two
stores and re-syncs a user whose differ.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ripplemem.store.neo4j import cypher
from ripplemem.store.neo4j.connection import Neo4jConnection, Statement, statement
from ripplemem.store.neo4j.index import Neo4jIndex
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.graph import EdgeRow
from ripplemem.store.write_lock import MarkedWriteLock

_BATCH = 1000
_SWEEP = 10_000
_NOTE = "INSERT INTO neo4j_changes (kind, user_id, a, b, type, predicate) VALUES"
# (table, kind of note, the noted key columns of a row as NEW./OLD. expressions).
_NOTED = (
    ("memories", "memory", "{row}.id, '', '', ''"),
    ("entities", "entity", "{row}.id, '', '', ''"),
    ("edges", "edge", "{row}.src, {row}.dst, {row}.type, {row}.predicate"),
)
# Memory columns Neo4j holds (access counts and times change on every recall and are not mirrored).
_UPDATES = {
    "memories": "UPDATE OF content, type, tier, status, importance, agent_id, session_id, "
    "event_time, modality"
}
_TRIGGERS = (
    "CREATE TEMP TABLE IF NOT EXISTS neo4j_changes (kind TEXT NOT NULL, user_id TEXT NOT NULL, "
    "a TEXT NOT NULL, b TEXT NOT NULL DEFAULT '', type TEXT NOT NULL DEFAULT '', "
    "predicate TEXT NOT NULL DEFAULT '')",
    *(
        f"CREATE TEMP TRIGGER IF NOT EXISTS neo4j_{table}_{name} AFTER {event} ON main.{table} BEGIN "
        + " ".join(f"{_NOTE} ('{kind}', {row}.user_id, {keys.format(row=row)});" for row in rows)
        + " END"
        for table, kind, keys in _NOTED
        # An update notes the old key too: a row whose key changed leaves a relationship to delete.
        for name, event, rows in (
            ("insert", "INSERT", ("NEW",)),
            ("delete", "DELETE", ("OLD",)),
            ("update", _UPDATES.get(table, "UPDATE"), ("OLD", "NEW")),
        )
    ),
)
_CHANGED_MEMORIES = """
SELECT c.user_id, c.a, m.agent_id, m.session_id, m.type, m.modality, m.tier, m.status, m.importance,
       m.created_at, COALESCE(m.event_time, m.created_at), m.content
FROM (SELECT DISTINCT user_id, a FROM temp.neo4j_changes WHERE kind = 'memory' AND rowid <= ?) c
LEFT JOIN memories m ON m.id = c.a AND m.user_id = c.user_id
"""
_CHANGED_ENTITIES = """
SELECT c.user_id, c.a, n.name, n.canonical, n.type
FROM (SELECT DISTINCT user_id, a FROM temp.neo4j_changes WHERE kind = 'entity' AND rowid <= ?) c
LEFT JOIN entities n ON n.id = c.a AND n.user_id = c.user_id
"""
_CHANGED_EDGES = """
SELECT c.user_id, c.a, c.b, c.type, c.predicate, e.weight, e.confidence, e.created_at,
       e.last_activated, e.activations, e.src IS NOT NULL
FROM (SELECT DISTINCT user_id, a, b, type, predicate FROM temp.neo4j_changes
      WHERE kind = 'edge' AND rowid <= ?) c
LEFT JOIN edges e ON e.user_id = c.user_id AND e.src = c.a AND e.dst = c.b AND e.type = c.type
  AND e.predicate = c.predicate
"""


class _Changes:
    """One user's rows to upsert and keys to delete, gathered for one flush or re-sync."""

    def __init__(self) -> None:
        self.memories: list[dict[str, Any]] = []
        self.entities: list[dict[str, Any]] = []
        self.gone_nodes: list[str] = []
        self.edges: dict[str, list[dict[str, Any]]] = {}
        self.gone_edges: dict[str, list[dict[str, Any]]] = {}

    def statements(self, store_id: str, user_id: str, stamp: str) -> list[Statement]:
        """Nodes before the edges that need them; edge deletions before node deletions."""
        out = [
            statement(cypher.MERGE_MEMORIES, rows=rows, stamp=stamp, store=store_id, user_id=user_id)
            for rows in _batches(self.memories)
        ]
        out += [
            statement(cypher.MERGE_ENTITIES, rows=rows, stamp=stamp, store=store_id, user_id=user_id)
            for rows in _batches(self.entities)
        ]
        for edge_type, edges in self.edges.items():
            out += [
                statement(
                    cypher.MERGE_EDGES[edge_type], rows=rows, stamp=stamp, store=store_id, user_id=user_id
                )
                for rows in _batches(edges)
            ]
        for edge_type, edges in self.gone_edges.items():
            out += [
                statement(cypher.DELETE_EDGES[edge_type], rows=rows, store=store_id, user_id=user_id)
                for rows in _batches(edges)
            ]
        out += [
            statement(cypher.DELETE_NODES, ids=ids, store=store_id, user_id=user_id)
            for ids in _batches(self.gone_nodes)
        ]
        return out


def _batches(rows: Sequence[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(rows), _BATCH):
        yield list(rows[start : start + _BATCH])


def _memory_row(r: Sequence[Any]) -> dict[str, Any]:
    return {
        "id": r[1],
        "agent_id": r[2] or "",
        "session_id": r[3] or "",
        "type": r[4],
        "modality": r[5],
        "tier": r[6],
        "status": r[7],
        "importance": r[8],
        "created_at": r[9],
        "occurred_at": r[10],
        "content": r[11],
    }


def _edge_row(r: Sequence[Any]) -> dict[str, Any]:
    return {
        "src": r[1],
        "dst": r[2],
        "predicate": r[4],
        "weight": r[5],
        "confidence": r[6],
        "created_at": r[7],
        "last_activated": r[8],
        "activations": r[9],
    }


class Neo4jGraph:
    """Keeps Neo4j's nodes and relationships in step with the SQLite ledger, and reads them back."""

    def __init__(self, connection: Neo4jConnection, store: RowStore, store_id: str) -> None:
        self._conn = connection
        self._ledger = store
        self._store = store_id
        self._flushing = threading.Lock()
        with store.read() as conn:
            for sql in _TRIGGERS:
                conn.execute(sql)

    # -- SQLite -> Neo4j ---------------------------------------------------------------------
    def flush(self) -> None:
        """Send every change noted since the last flush to Neo4j, in one transaction."""
        with self._flushing:
            with self._ledger.read() as conn:
                last = conn.execute("SELECT max(rowid) FROM temp.neo4j_changes").fetchone()[0]
                if last is None:
                    return
                memories = conn.execute(_CHANGED_MEMORIES, (last,)).fetchall()
                entities = conn.execute(_CHANGED_ENTITIES, (last,)).fetchall()
                edges = conn.execute(_CHANGED_EDGES, (last,)).fetchall()
            by_user: dict[str, _Changes] = {}
            for r in memories:
                changes = by_user.setdefault(r[0], _Changes())
                if r[4] is None:
                    changes.gone_nodes.append(r[1])
                else:
                    changes.memories.append(_memory_row(r))
            for r in entities:
                changes = by_user.setdefault(r[0], _Changes())
                if r[2] is None:
                    changes.gone_nodes.append(r[1])
                else:
                    changes.entities.append({"id": r[1], "name": r[2], "canonical": r[3], "type": r[4]})
            for r in edges:
                changes = by_user.setdefault(r[0], _Changes())
                target = changes.edges if r[10] else changes.gone_edges
                target.setdefault(r[3], []).append(_edge_row(r))
            stamp = _stamp()
            self._conn.write(
                [
                    query
                    for user_id, changes in by_user.items()
                    for query in changes.statements(self._store, user_id, stamp)
                ]
            )
            with self._ledger.read() as conn:
                conn.execute("DELETE FROM temp.neo4j_changes WHERE rowid <= ?", (last,))

    def reconcile(self, index: Neo4jIndex, *, everyone: bool = False) -> list[str]:
        """Re-sync every user whose fingerprint in Neo4j differs from the ledger's (every user with
        ``everyone``); returns them."""
        self.flush()
        ledger = self._ledger_fingerprints()
        users = sorted(ledger)
        if everyone:
            for user_id in users:
                self.resync(user_id, index)
            return users
        served: dict[str, tuple[float, ...]] = {}
        for start in range(0, len(users), _BATCH):
            chunk = users[start : start + _BATCH]
            nodes = self._conn.read(*statement(cypher.NODE_FINGERPRINTS, store=self._store, user_ids=chunk))
            edges = {
                r["user_id"]: r
                for r in self._conn.read(
                    *statement(cypher.EDGE_FINGERPRINTS, store=self._store, user_ids=chunk)
                )
            }
            for r in nodes:
                e = edges[r["user_id"]]
                served[r["user_id"]] = (
                    r["memories"],
                    r["active"],
                    r["importance"],
                    r["indexed"],
                    r["entities"],
                    e["edges"],
                    e["weight"],
                )
        stale = [u for u in users if not _same(ledger[u], served.get(u))]
        for user_id in stale:
            self.resync(user_id, index)
        return stale

    def _ledger_fingerprints(self) -> dict[str, tuple[float, ...]]:
        with self._ledger.read() as conn:
            memories = {
                r[0]: r[1:]
                for r in conn.execute(
                    "SELECT user_id, count(*), total(status = 'active'), total(importance), "
                    "total(status = 'active' AND embedding IS NOT NULL) FROM memories GROUP BY user_id"
                )
            }
            entities = dict(conn.execute("SELECT user_id, count(*) FROM entities GROUP BY user_id"))
            edges = {
                r[0]: r[1:]
                for r in conn.execute("SELECT user_id, count(*), total(weight) FROM edges GROUP BY user_id")
            }
        users = set(memories) | set(entities) | set(edges)
        return {
            u: (*memories.get(u, (0, 0, 0.0, 0)), entities.get(u, 0), *edges.get(u, (0, 0.0))) for u in users
        }

    def resync(self, user_id: str, index: Neo4jIndex) -> None:
        """Write one user's whole graph and vectors from the ledger; sweep what the ledger lacks."""
        stamp = _stamp()
        changes = _Changes()
        with self._ledger.read() as conn:
            changes.memories = [
                _memory_row((user_id, *r))
                for r in conn.execute(
                    "SELECT id, agent_id, session_id, type, modality, tier, status, importance, created_at, "
                    "COALESCE(event_time, created_at), content FROM memories WHERE user_id = ?",
                    (user_id,),
                )
            ]
            changes.entities = [
                {"id": r[0], "name": r[1], "canonical": r[2], "type": r[3]}
                for r in conn.execute(
                    "SELECT id, name, canonical, type FROM entities WHERE user_id = ?", (user_id,)
                )
            ]
            for r in conn.execute(
                "SELECT src, dst, type, predicate, weight, confidence, created_at, last_activated, "
                "activations FROM edges WHERE user_id = ?",
                (user_id,),
            ):
                changes.edges.setdefault(r[2], []).append(_edge_row((user_id, *r)))
        self._conn.write(changes.statements(self._store, user_id, stamp))
        while self._conn.write_count(
            *statement(cypher.SWEEP_EDGES, store=self._store, user_id=user_id, stamp=stamp, batch=_SWEEP)
        ):
            pass
        while self._conn.write_count(
            *statement(cypher.SWEEP_NODES, store=self._store, user_id=user_id, stamp=stamp, batch=_SWEEP)
        ):
            pass
        index.drop(user_id)
        for ids, metas, vectors in self._ledger.iter_embeddings(user_id):
            index.add(user_id, ids, vectors, metas)

    # -- Neo4j -> in-process -------------------------------------------------------------------
    def iter_edges(self, user_id: str, batch: int = 20_000) -> Iterator[list[EdgeRow]]:
        """Stream every edge of a user from Neo4j (for loading the in-memory graph)."""
        self.flush()
        rows: list[EdgeRow] = []
        for r in self._conn.stream(*statement(cypher.SCOPE_EDGES, store=self._store, user_id=user_id)):
            rows.append(
                EdgeRow(
                    r["src"],
                    r["dst"],
                    r["type"],
                    r["weight"],
                    r["confidence"],
                    r["predicate"] or "",
                    r["created_at"],
                    r["last_activated"],
                    int(r["activations"] or 0),
                )
            )
            if len(rows) >= batch:
                yield rows
                rows = []
        if rows:
            yield rows

    def spread(
        self, user_id: str, seeds: Mapping[str, float], *, damping: float = 0.5, limit: int = 100
    ) -> dict[str, float]:
        """Spreading activation computed inside Neo4j (paths of up to three hops), best first."""
        self.flush()
        records = self._conn.read(
            *statement(
                cypher.SPREAD,
                seeds=[{"id": node, "score": float(score)} for node, score in seeds.items()],
                store=self._store,
                user_id=user_id,
                damping=damping,
                limit=limit,
            )
        )
        return {r["id"]: float(r["activation"]) for r in records}


class MirroringWriteLock(MarkedWriteLock):
    """The engine's write lock, flushing the graph mirror as the outermost successful hold ends."""

    def __init__(self, store: RowStore, *, enabled: bool, mirror: Neo4jGraph) -> None:
        super().__init__(store, enabled=enabled)
        self._mirror = mirror

    def release(self, failed: bool = False) -> None:
        """Flush (still holding the lock, so the notes are this hold's), then give the lock back."""
        try:
            if self._depth == 1 and not failed:
                self._mirror.flush()
        finally:
            super().release(failed)


def _stamp() -> str:
    """A fresh mark for the nodes and relationships one flush or re-sync writes."""
    return f"{time.time():.6f}-{uuid.uuid4().hex[:8]}"


def _same(ledger: tuple[float, ...], served: tuple[float, ...] | None) -> bool:
    """Counts equal and sums equal up to float rounding."""
    return (
        served is not None
        and len(served) == len(ledger)
        and all(
            math.isclose(float(a), float(b or 0), rel_tol=1e-9, abs_tol=1e-6)
            for a, b in zip(ledger, served, strict=True)
        )
    )
