"""Neo4j as the vector index (a native cosine vector index on :Memory) and keyword index (full text)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from ripplemem.errors import StoreError
from ripplemem.store.neo4j import cypher
from ripplemem.store.neo4j.connection import Neo4jConnection, statement
from ripplemem.store.vectors.base import NumpyIndex, VectorFilter, VectorIndex

_BATCH = 500
# The vector index covers every store and user: ask for this many neighbours per wanted hit.
_OVERFETCH = 4
_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')


def lucene_query(terms: Sequence[str]) -> str | None:
    """A Lucene OR-query of plain terms, every operator character escaped; None if no terms."""
    escaped = [_LUCENE_SPECIAL.sub(r"\\\1", term) for term in dict.fromkeys(terms) if term.strip()]
    words = [word for word in escaped if word.upper() not in ("AND", "OR", "NOT")]
    return " OR ".join(words) or None


class Neo4jIndex:
    """Vectors on :Memory nodes in one Neo4j vector index; every statement is scoped to a user.
    Neo4j keeps its own files, so this index has no broken parts to report (``damage()``)."""

    name = "neo4j"
    persistent = True
    remote = True
    on_damage: Callable[[], None] | None = None

    def __init__(self, connection: Neo4jConnection, store_id: str, dimensions: int) -> None:
        self._conn = connection
        self._store = store_id
        # Constraints and indexes first (each in its own transaction): a MERGE on an unconstrained
        # key would scan every node.
        for query in (*cypher.SCHEMA, cypher.vector_index_statement(dimensions)):
            connection.write([statement(query)])
        found = connection.read(*statement(cypher.SCHEMA_VECTOR_DIMENSIONS))
        if found and int(found[0]["dimensions"]) != dimensions:
            raise StoreError(
                f"the Neo4j database at {connection.options.uri} has a vector index of "
                f"{found[0]['dimensions']} dimensions, but this store's embedder makes {dimensions}; "
                "use another database (database=...) for stores of another embedder"
            )
        connection.read(*statement(cypher.SCHEMA_AWAIT_INDEXES))

    def add(
        self, user_id: str, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]
    ) -> None:
        """Put vectors (and their filter columns) on the user's memory nodes, in UNWIND batches."""
        rows = [
            {
                "id": memory_id,
                "agent_id": meta.get("agent_id", ""),
                "session_id": meta.get("session_id", ""),
                "type": meta.get("type", ""),
                "occurred_at": float(meta.get("when", 0.0)),
                "embedding": np.asarray(vector, dtype=np.float32).tolist(),
            }
            for memory_id, vector, meta in zip(ids, vectors, metadatas, strict=True)
        ]
        self._conn.write(
            [
                statement(
                    cypher.SET_VECTORS, rows=rows[start : start + _BATCH], store=self._store, user_id=user_id
                )
                for start in range(0, len(rows), _BATCH)
            ]
        )

    def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """Take memories out of the vector index (their nodes stay for the graph)."""
        ids = list(ids)
        self._conn.write(
            [
                statement(
                    cypher.UNSET_VECTORS, ids=ids[start : start + _BATCH], store=self._store, user_id=user_id
                )
                for start in range(0, len(ids), _BATCH)
            ]
        )

    def query(
        self, user_id: str, vector: np.ndarray, k: int, flt: VectorFilter | None = None
    ) -> list[tuple[str, float]]:
        """The user's k nearest memories as (id, cosine similarity), best first."""
        if k <= 0:
            return []
        flt = flt or VectorFilter()
        values = np.asarray(vector, dtype=np.float32).tolist()
        types = None if not flt.types else list(flt.types)
        record = self._conn.read(
            *statement(
                cypher.QUERY_VECTORS,
                fetch=k * _OVERFETCH,
                vector=values,
                k=k,
                store=self._store,
                user_id=user_id,
                agent_id=flt.agent_id,
                session_id=flt.session_id,
                types=types,
                since=flt.since,
                until=flt.until,
            )
        )[0]
        hits = [(hit["id"], float(hit["score"])) for hit in record["hits"]]
        if len(hits) < k and int(record["seen"]) >= k * _OVERFETCH:
            # Other scopes crowded the approximate neighbours out: score this scope's vectors exactly.
            hits = [
                (r["id"], float(r["score"]))
                for r in self._conn.read(
                    *statement(
                        cypher.QUERY_VECTORS_EXACT,
                        vector=values,
                        k=k,
                        store=self._store,
                        user_id=user_id,
                        agent_id=flt.agent_id,
                        session_id=flt.session_id,
                        types=types,
                        since=flt.since,
                        until=flt.until,
                    )
                )
            ]
        # Neo4j's cosine score is (1 + cos) / 2; callers compare cosines.
        return [(memory_id, 2.0 * score - 1.0) for memory_id, score in hits]

    def query_many(self, user_id: str, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """The k nearest for each row of `vectors` (one query each)."""
        return [self.query(user_id, row, k) for row in vectors]

    def keyword_query(self, user_id: str, terms: Sequence[str], k: int) -> list[tuple[str, float]]:
        """The user's k best memories for these words by the full-text index (Lucene BM25)."""
        query = lucene_query(terms)
        if query is None or k <= 0:
            return []
        records = self._conn.read(
            *statement(
                cypher.QUERY_KEYWORDS,
                query=query,
                fetch=k * _OVERFETCH * 4,
                k=k,
                store=self._store,
                user_id=user_id,
            )
        )
        return [(r["id"], float(r["score"])) for r in records]

    def count(self, user_id: str) -> int:
        """How many vectors one user has."""
        records = self._conn.read(*statement(cypher.COUNT_VECTORS, store=self._store, user_id=user_id))
        return int(records[0]["vectors"])

    def ids(self, user_id: str) -> set[str]:
        """The ids of every vector one user has (for consistency checks)."""
        found = self._conn.stream(*statement(cypher.VECTOR_IDS, store=self._store, user_id=user_id))
        return {r["id"] for r in found}

    def drop(self, user_id: str) -> None:
        """Remove every vector of one user (the graph mirror removes their nodes with their rows)."""
        self._conn.write([statement(cypher.UNSET_ALL_VECTORS, store=self._store, user_id=user_id)])

    def is_empty(self) -> bool:
        """Whether no memory node of this store carries a vector."""
        return not self.foreign(())

    def drop_all(self) -> None:
        """Remove every vector of this store, user by user."""
        for user_id in self.foreign(()):
            self.drop(user_id)

    def foreign(self, user_ids: Sequence[str]) -> dict[str, int]:
        """{user: vector count} of the users outside `user_ids` whose memory nodes carry vectors."""
        records = self._conn.read(
            *statement(cypher.FOREIGN_VECTORS, store=self._store, user_ids=list(user_ids))
        )
        return {r["user_id"]: int(r["vectors"]) for r in records}

    def drop_foreign(self, part: str) -> None:
        """Remove every vector of one user foreign() reported."""
        self.drop(part)

    def damage(self) -> list[str]:
        """None: Neo4j looks after its own files."""
        return []

    def clear_damage(self) -> None:
        """Nothing to forget (see damage)."""

    def exclusive(self) -> AbstractContextManager[None]:
        """Nothing beyond the engine's write lock, under which a check runs: Neo4j serves every
        process from one copy, so none can go stale."""
        return contextlib.nullcontext()

    def open_space(self, space: str) -> VectorIndex:
        """A numpy index: Neo4j's one vector index has the text embedder's dimension."""
        return NumpyIndex()

    def close(self) -> None:
        """Nothing to release here: the engine closes the shared connection."""
