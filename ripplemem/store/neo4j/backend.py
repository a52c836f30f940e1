"""The Neo4j side of a store: one connection, the vector index and the graph mirror, opened together.

The SQLite file at the store's path stays the ledger (rows, history, tiers, working memory,
knowledge-base grants), as mem0 keeps its history in SQLite beside a graph store; Neo4j holds and
serves the vectors and the graph.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ripplemem.embedding.base import Embedder
from ripplemem.errors import StoreError
from ripplemem.store.neo4j.connection import Neo4jConnection, Neo4jOptions
from ripplemem.store.neo4j.graph import MirroringWriteLock, Neo4jGraph
from ripplemem.store.neo4j.index import Neo4jIndex
from ripplemem.store.recovery.check_report import CheckReport
from ripplemem.store.recovery.reconcile import reconcile_on_open
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.graph import EdgeRow
from ripplemem.store.vectors.chroma_server import store_namespace


def embedding_dimensions(embedder: Embedder) -> int:
    """The length of the embedder's vectors (asked of the model when it does not say)."""
    known = getattr(embedder, "dimension", None)
    return int(known) if known else len(embedder.embed_query("dimensions"))


def check_backend_kept(store: RowStore, backend: Neo4jBackend | None, vector_index: str) -> None:
    """Refuse a default open of a store served by Neo4j: it would build a second, local index
    (and, say, erase only from that one)."""
    if backend is None and vector_index == "auto" and store.get_meta("vector_index") == "neo4j":
        raise StoreError(
            f"the store at {store.path!r} is served by Neo4j; open it with backend='neo4j', "
            "uri=..., auth=..., or pass vector_index='chroma' to rebuild a local index"
        )


class Neo4jBackend:
    """Connects on construction (an unreachable server fails fast); attach() binds it to a store."""

    def __init__(self, options: Neo4jOptions) -> None:
        self.connection = Neo4jConnection(options)
        self._index: Neo4jIndex | None = None
        self._graph: Neo4jGraph | None = None

    def attach(self, store: RowStore, embedder: Embedder, *, enabled: bool) -> MirroringWriteLock:
        """Create the schema, start noting the store's graph changes; returns the engine's write lock."""
        # The store's id scopes every node, so stores sharing one database stay apart.
        store_id = store_namespace(store)
        dimensions = embedding_dimensions(embedder)
        try:
            self._index = Neo4jIndex(self.connection, store_id, dimensions)
        except StoreError:
            raise
        except Exception as exc:  # the driver's: no such database, no permission, a server too old
            options = self.connection.options
            raise StoreError(
                f"cannot create RippleMem's constraints and indexes in Neo4j at {options.uri} "
                f"(database {options.database or 'default'}): {exc}; RippleMem needs Neo4j 5.18 or "
                "newer and a user allowed to create indexes"
            ) from exc
        self._graph = Neo4jGraph(self.connection, store, store_id)
        return MirroringWriteLock(store, enabled=enabled, mirror=self._graph)

    @property
    def index(self) -> Neo4jIndex:
        """The vector index (after attach)."""
        assert self._index is not None, "attach() first"
        return self._index

    @property
    def graph(self) -> Neo4jGraph:
        """The graph mirror (after attach)."""
        assert self._graph is not None, "attach() first"
        return self._graph

    def open(self, store: RowStore) -> CheckReport | None:
        """Bring Neo4j in step with the ledger (call under the write lock): repair a write cut
        short, then re-sync every user whose fingerprint differs, or every user when the store was
        last served by another index (first use, or re-embedded since: same counts, new vectors)."""
        report = reconcile_on_open(store, self.index)
        elsewhere = store.get_meta("vector_index") != self.index.name
        self.graph.reconcile(self.index, everyone=elsewhere)
        if elsewhere:
            store.set_meta("vector_index", self.index.name)
        return report

    def iter_edges(self, user_id: str) -> Iterator[list[EdgeRow]]:
        """A user's edges as Neo4j serves them (for the in-process graph)."""
        return self.graph.iter_edges(user_id)

    def close(self) -> None:
        """Flush what is still noted, then close the driver."""
        # A flush that fails here loses only notes: the next open re-syncs from the ledger.
        with contextlib.suppress(Exception):
            if self._graph is not None:
                self._graph.flush()
        self.connection.close()
