"""The shared resources behind every RippleMem handle: store, vector index, embedder, clock."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np

from ripplemem.config import Settings
from ripplemem.core.choices import VectorIndexName, literal_values
from ripplemem.core.clock import utc_now
from ripplemem.core.types import Memory
from ripplemem.core.validation import checked_clock
from ripplemem.embedding.auto import AUTO, AutoEmbedder, is_auto, model_for
from ripplemem.embedding.embedders import CheckedEmbedder, resolve_embedder
from ripplemem.embedding.framework import EmbedderSpec, as_embedder
from ripplemem.engine.calibration import (
    META_KEY,
    MINILM_SCALE,
    CosineScale,
    decode,
    encode,
    measure_scale,
    on_model_scales,
)
from ripplemem.engine.graph_rows import as_rows, weighted_edges
from ripplemem.engine.unit_of_work import UnitOfWork
from ripplemem.errors import EmbeddingModelMismatchError, InvalidInputError, StoreError
from ripplemem.index.bm25 import KeywordIndex, index_terms, stem
from ripplemem.index.scope_graph import ScopeGraph
from ripplemem.rules.lifecycle.working import WorkingItem, WorkingMemories
from ripplemem.store.cold_segments import archive_of
from ripplemem.store.neo4j.backend import Neo4jBackend, check_backend_kept
from ripplemem.store.neo4j.connection import Neo4jOptions
from ripplemem.store.postgres.options import PostgresOptions
from ripplemem.store.postgres.rows import PostgresStore
from ripplemem.store.recovery.check_report import CheckReport
from ripplemem.store.recovery.reconcile import (
    reconcile_on_open,
    sync_index,
)
from ripplemem.store.rows import RowStore
from ripplemem.store.sqlite.rows import SQLiteStore
from ripplemem.store.tables.graph import EdgeRow, entity_vectors, iter_edge_rows
from ripplemem.store.vectors.base import NumpyIndex, VectorIndex
from ripplemem.store.vectors.chroma import ISOLATIONS, ChromaIndex
from ripplemem.store.vectors.chroma_server import ChromaServer, store_namespace
from ripplemem.store.vectors.modality_index import ModalityIndexes
from ripplemem.store.write_lock import MarkedWriteLock, pending_markers

VECTOR_INDEXES = literal_values(VectorIndexName)
Clock = Callable[[], datetime]
# What happens to a working item that expires or is evicted: (engine, user_id, item, reason). The
# facade passes lifecycle.consolidate.consolidate_dropped, which writes it to long-term memory when due.
WorkingDrop = Callable[["Engine", str, WorkingItem, str], None]


def prepare_directory(path: str) -> str:
    """The absolute path of a store directory, created if new (StoreError naming why it cannot be)."""
    path = os.path.abspath(os.path.expanduser(path))
    if os.path.exists(path) and not os.path.isdir(path):
        raise StoreError(f"path {path!r} is a file; RippleMem needs a directory for its store")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the store directory {path!r}: {exc.strerror}; "
            "choose a writable path or path=None for an in-memory store"
        ) from exc
    if not os.access(path, os.W_OK | os.X_OK):
        raise StoreError(
            f"the store directory {path!r} is not writable; "
            "choose a writable path or path=None for an in-memory store"
        )
    return path


NUMPY_FILTER = (
    "isolation='filter' (one shared Chroma collection) needs the Chroma index; the numpy "
    "index always keeps each user's vectors apart"
)


def uses_numpy(kind: str, path: str | None) -> bool:
    """Whether a local vector index of this kind at this path is the numpy one."""
    chroma_missing = importlib.util.find_spec("chromadb") is None
    return kind == "numpy" or (kind == "auto" and (path is None or chroma_missing))


def open_vector_index(
    kind: str,
    path: str | None,
    isolation: str | None = None,
    server: tuple[Any, RowStore] | None = None,
    verify: str = "files",
) -> VectorIndex:
    """Open the named vector index; 'auto' is Chroma on disk (numpy if chromadb is missing)
    and numpy in memory. ``isolation`` ("collection" | "filter" | None: as stored) is Chroma's.
    ``server`` (a Chroma HttpClient and the store whose id names its collections) puts the
    vectors on a Chroma server. ``verify``: how deeply a local Chroma index's files are checked
    before Chroma loads them (see ChromaIndex)."""
    if kind not in VECTOR_INDEXES:
        raise InvalidInputError(f"vector_index must be one of {', '.join(VECTOR_INDEXES)}; got {kind!r}")
    if server is not None:
        client, store = server
        return ChromaIndex(
            client=client, namespace=store_namespace(store), isolation=isolation, temporary=store.path is None
        )
    if uses_numpy(kind, path):
        if isolation == "filter":
            raise InvalidInputError(NUMPY_FILTER)
        return NumpyIndex()
    return ChromaIndex(path, isolation=isolation, verify=verify)


def rebuild_index(index: VectorIndex, store: RowStore) -> int:
    """Fill an index from the vectors SQLite keeps, replacing what it held; returns the count."""
    index.drop_all()  # also vectors of users erased while the index was not in use
    total = 0
    for ids, metas, vectors in store.iter_embeddings():
        by_user: dict[str, list[int]] = {}
        for row, meta in enumerate(metas):
            by_user.setdefault(meta["user_id"], []).append(row)
        for user_id, rows in by_user.items():
            index.add(user_id, [ids[r] for r in rows], vectors[rows], [metas[r] for r in rows])
        total += len(ids)
    return total


class Engine:
    """Owns the store and index of one path; every handle on that path shares one Engine."""

    def __init__(
        self,
        path: str | None,
        embedder: EmbedderSpec,
        vector_index: str,
        settings: Settings,
        clock: Clock | None,
        isolation: str | None = None,
        chroma: ChromaServer | None = None,
        neo4j: Neo4jOptions | None = None,
        on_working_drop: WorkingDrop | None = None,
        postgres: PostgresOptions | None = None,
    ) -> None:
        if chroma is not None and vector_index == "numpy":
            raise InvalidInputError(
                f"chroma_url={chroma.url!r} needs vector_index='chroma' (or 'auto'); "
                "vector_index='numpy' keeps vectors in this process"
            )
        self.chroma = chroma
        self._on_working_drop = on_working_drop
        # Connected first: an unreachable server fails the constructor and leaves no new store behind.
        self._chroma_client = None if chroma is None else chroma.connect()
        self._neo4j = None if neo4j is None else Neo4jBackend(neo4j)
        self.path = None if path is None else prepare_directory(path)
        self.settings = settings
        self.clock: Clock = utc_now if clock is None else checked_clock(clock)
        # embedder="auto" (the default) takes the model recorded with the store, or chooses one at
        # the first write (settle_embedder).
        self._auto = AutoEmbedder(self._recorded_model) if is_auto(embedder) else None
        # An embedder without a model name is named by its class only where nothing is reopened.
        framework = as_embedder(embedder, in_memory=self.path is None and postgres is None)
        self.embedder = CheckedEmbedder(self._auto or resolve_embedder(framework))
        self.store: RowStore = (
            SQLiteStore(self.path)
            if postgres is None
            else PostgresStore(postgres.uri, schema=postgres.schema, pool_size=postgres.pool_size)
        )
        self.embedder.dimension = self.store.embedding_dimension()
        # The cold tier's vectors (compressed segments beside the SQLite file, or in memory).
        self.archive = archive_of(self.store)
        # Reentrant; on disk it also marks index writes in flight, for reconcile_on_open.
        self.write_lock = MarkedWriteLock(
            self.store, enabled=self.path is not None and vector_index != "numpy"
        )
        self.last_check: CheckReport | None = None
        self._index_stale = False  # kept in memory, and another process wrote since
        if vector_index not in VECTOR_INDEXES:
            self.store.close()
            raise InvalidInputError(
                f"vector_index must be one of {', '.join(VECTOR_INDEXES)}; got {vector_index!r}"
            )
        if isolation not in (None, *ISOLATIONS):
            self.store.close()
            raise InvalidInputError(
                f"isolation must be one of {', '.join(ISOLATIONS)} (or None: as "
                f"the store holds); got {isolation!r}"
            )
        if isolation == "filter" and chroma is None and neo4j is None and uses_numpy(vector_index, self.path):
            self.store.close()
            raise InvalidInputError(NUMPY_FILTER)
        self._vector_index_kind = vector_index
        self._isolation = isolation
        self._index: VectorIndex | None = None
        self._keyword_indexes: dict[str, KeywordIndex] = {}
        self._graphs: dict[str, ScopeGraph] = {}
        self._model_settings: Settings | None = None
        self._cosine_scale: CosineScale | None = None
        self._working: dict[str, WorkingMemories] = {}
        self._entity_vectors: dict[str, tuple[list[str], np.ndarray | None]] = {}
        # Image and audio vectors, each modality in its encoder's own space and index.
        self.media = ModalityIndexes(self)
        # Working items already written to long-term memory (by observe's immediate path).
        self.consolidated_working_ids: set[str] = set()
        try:
            self._check_embedding_model()
            self._check_server_kept(vector_index)
            check_backend_kept(self.store, self._neo4j, vector_index)
            if self._neo4j is not None:
                self._open_neo4j(vector_index != "numpy")
        except BaseException:
            self.close()
            raise

    @property
    def index(self) -> VectorIndex:
        """The vector index, opened (and synced with SQLite) on first use: listing needs none."""
        if self._index is None:
            with self.write_lock:
                if self._index is None:
                    server = None if self._chroma_client is None else (self._chroma_client, self.store)
                    # After a crash (a marker left) the graph files are checked link by link.
                    verify = "graph" if pending_markers(self.path) else "files"
                    index = self.store.open_vector_index() or open_vector_index(
                        self._vector_index_kind, self.path, self._isolation, server, verify
                    )
                    self._sync_index(index)
                    # Broken files found on a later reload are refilled from SQLite.
                    index.on_damage = functools.partial(self._sync_index, index)
                    self._index = index
        elif self._index_stale:
            # Another process wrote: bring this process's in-RAM vectors in line with SQLite.
            with self.write_lock:
                if self._index_stale:
                    sync_index(self._index, self.store)
                    self._index_stale = False
        return self._index

    def keyword_index(self, user_id: str) -> KeywordIndex:
        """The in-memory BM25 index of one user, loaded from SQLite on first use."""
        self._drop_caches_if_changed_elsewhere()
        index = self._keyword_indexes.get(user_id)
        if index is None:
            with self.write_lock:
                index = self._keyword_indexes.get(user_id)
                if index is None:
                    index = KeywordIndex()
                    for batch in self.store.iter_keyword_tokens(user_id):
                        index.add(
                            (memory_id, [stem(t) for t in tokens.split()]) for memory_id, tokens in batch
                        )
                    self._keyword_indexes[user_id] = index
        return index

    def working(self, user_id: str) -> WorkingMemories:
        """The in-process working memories (one per session) of one user."""
        with self.write_lock:
            working = self._working.get(user_id)
            if working is None:
                drop = self._on_working_drop
                working = self._working[user_id] = WorkingMemories(
                    settings=self.settings.lifecycle,
                    clock=self.clock,
                    on_drop=None if drop is None else functools.partial(drop, self, user_id),
                )
            return working

    def entity_vectors(self, user_id: str) -> tuple[list[str], np.ndarray | None]:
        """(ids, name vectors) of a user's entities, loaded from SQLite on first use."""
        with self.write_lock:
            if user_id not in self._entity_vectors:
                self._entity_vectors[user_id] = entity_vectors(self.store, user_id)
            return self._entity_vectors[user_id]

    def _entities_embedded(self, user_id: str, ids: list[str], vectors: np.ndarray) -> None:
        # New entity name vectors join the cache (if it is loaded).
        with self.write_lock:
            if user_id in self._entity_vectors:
                known_ids, known = self._entity_vectors[user_id]
                merged = vectors if known is None else np.concatenate([known, vectors])
                self._entity_vectors[user_id] = ([*known_ids, *ids], merged)

    def graph(self, user_id: str) -> ScopeGraph:
        """The in-memory graph of one user (CSR adjacency), loaded from SQLite on first use."""
        self._drop_caches_if_changed_elsewhere()
        graph = self._graphs.get(user_id)
        if graph is None:
            with self.write_lock:
                graph = self._graphs.get(user_id)
                if graph is None:
                    now = self.now()
                    batches = (
                        iter_edge_rows(self.store, user_id)
                        if self._neo4j is None
                        else (as_rows(batch) for batch in self._neo4j.iter_edges(user_id))
                    )
                    graph = ScopeGraph.from_edges(
                        edge for rows in batches for edge in weighted_edges(rows, self.settings.graph, now)
                    )
                    self._graphs[user_id] = graph
        return graph

    @contextlib.contextmanager
    def unit_of_work(self, user_id: str) -> Iterator[UnitOfWork]:
        """Hold the write lock for one write of a user's data; the caches follow what it committed
        when it ends (ripplemem.engine.unit_of_work)."""
        with self.write_lock:
            work = UnitOfWork(self, user_id)
            try:
                yield work
            except BaseException:
                work.abandon()
                raise
            work.finish()

    def _memories_added(self, user_id: str, memories: list[Memory], edges: Sequence[EdgeRow] = ()) -> None:
        # The in-memory indexes follow a write of new memories (under the write lock).
        index = self._keyword_indexes.get(user_id)
        if index is not None:
            index.add((m.id, index_terms(m.content)) for m in memories if m.status == "active")
        graph = self._graphs.get(user_id)
        if graph is not None and edges:
            now = self.now()
            graph.add_edges(weighted_edges(as_rows(edges), self.settings.graph, now))

    def _edges_reinforced(self, user_id: str, pairs: Sequence[tuple[str, str]], step: float) -> None:
        # A reinforcement, mirrored in the in-memory graph (the cap is applied in SQLite only).
        graph = self._graphs.get(user_id)
        if graph is not None:
            graph.add_edges((a, b, step) for a, b in pairs)

    def _drop_user_caches(self, user_id: str, *, working: bool = False) -> None:
        # A user's in-memory indexes go (reloaded from SQLite on next use), and, if asked, their
        # working memories (not consolidated): erasure leaves nothing in process memory.
        with self.write_lock:
            self._keyword_indexes.pop(user_id, None)
            self._graphs.pop(user_id, None)
            self._entity_vectors.pop(user_id, None)
            if working:
                self._working.pop(user_id, None)

    def _memories_removed(self, user_id: str, node_ids: list[str]) -> None:
        # The in-memory and modality indexes follow memories (or entities) leaving the active set.
        index = self._keyword_indexes.get(user_id)
        if index is not None:
            index.remove(node_ids)
        graph = self._graphs.get(user_id)
        if graph is not None:
            graph.remove_nodes(node_ids)
        self.media.remove(user_id, node_ids)

    def _drop_caches_if_changed_elsewhere(self) -> None:
        # Another process (or connection) changed the store's content: in-memory indexes may be
        # stale, so they are dropped and reloaded lazily. A recall elsewhere does not count.
        if self.store.changed_elsewhere():
            with self.write_lock:
                self._keyword_indexes.clear()
                self._graphs.clear()
                self._entity_vectors.clear()
                self._index_stale = self._index is not None and not self._index.persistent
                self.media.mark_stale()

    def model_settings(self) -> Settings:
        """The settings with every cosine threshold (SIMILAR and ALIAS edges, duplicates,
        conflicts, clusters) mapped from MiniLM's scale onto the embedder's own, measured once
        and recorded with the store (ripplemem.engine.calibration)."""
        if self._model_settings is None:
            if self.embedder.model_id == AUTO:
                return self.settings  # no model chosen yet (nothing written): thresholds as written
            self._model_settings = on_model_scales(self.settings, self.cosine_scale())
        return self._model_settings

    def cosine_scale(self) -> CosineScale:
        """Where the embedder puts unrelated texts and paraphrases on the cosine axis: as recorded
        with the store, else measured once and recorded (ripplemem.engine.calibration)."""
        if self._cosine_scale is None:
            model_id = self.embedder.model_id
            if model_id == AUTO:
                return MINILM_SCALE  # no model chosen yet (nothing written): thresholds as written
            scale = decode(self.store.get_meta(META_KEY), model_id)
            if scale is None:
                scale = measure_scale(self.embedder)
                self.store.set_meta(META_KEY, encode(scale, model_id))
            self._cosine_scale = scale
        return self._cosine_scale

    def _recorded_model(self) -> str | None:
        return self.store.get_meta("embedding_model")

    def settle_embedder(self, texts: Sequence[str]) -> None:
        """Before a store opened with embedder="auto" keeps its first vectors: record the model its
        first texts choose (embedding.auto.model_for); a model another process recorded first wins."""
        if self._auto is None or self._auto.settled() is not None:
            return
        self.store.set_meta_once("embedding_model", model_for(texts))

    def _check_embedding_model(self) -> None:
        if self._auto is not None:
            self._auto.settled()  # an existing store's recorded model, built (nothing embedded)
            return
        recorded = self.store.get_meta("embedding_model")
        wanted = self.embedder.model_id
        if recorded is None:
            self.store.set_meta("embedding_model", wanted)
        elif recorded != wanted:
            raise EmbeddingModelMismatchError(
                f"the store at {self.path!r} was built with embedding model {recorded!r}, but this "
                f"RippleMem uses {wanted!r}; vectors of two models cannot be compared. Open it with "
                f"embedder={recorded!r}, or re-embed it once: "
                f"RippleMem.reembed({self.path!r}, embedder=...) or "
                f"`ripplemem reembed --path {self.path} --embedder NAME`"
            )

    def _check_server_kept(self, vector_index: str) -> None:
        # A default open of a store whose vectors live on a server would silently build a second,
        # local index (and, say, erase only from that one): it must name the server or choose.
        recorded = self.store.get_meta("vector_index") or ""
        if self.chroma is None and vector_index == "auto" and recorded.startswith("chroma-server"):
            raise StoreError(
                f"the store at {self.path!r} keeps its vectors on a Chroma server (last opened at "
                f"{self.store.get_meta('chroma_url')}); pass chroma_url=... (--chroma-url), or "
                "vector_index='chroma' to rebuild them into a local index"
            )

    def _sync_index(self, index: VectorIndex) -> None:
        # An index kept in memory starts empty, and an index of another kind may have been used
        # last time: either way the index is rebuilt from the vectors SQLite keeps.
        recorded = self.store.get_meta("vector_index")
        # A new or wiped server holds none of this store's vectors: they come back from SQLite.
        lost = index.remote and bool(self.store.user_ids()) and index.is_empty()
        if not index.persistent or recorded != index.name or lost:
            rebuild_index(index, self.store)
            self.store.set_meta("vector_index", index.name)
        if self.chroma is not None and self.store.get_meta("chroma_url") != self.chroma.url:
            self.store.set_meta("chroma_url", self.chroma.url)  # named by errors of `ripplemem check`
        if index.persistent:
            # A writer killed between SQLite and the index left a marker: check and repair.
            self.last_check = reconcile_on_open(
                self.store, index, extra=lambda report, repair: self.media.check(report, repair, index)
            )

    def now(self) -> float:
        """The clock's time as epoch seconds."""
        value = self.clock()
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.timestamp()

    def _open_neo4j(self, lock_enabled: bool) -> None:
        # Neo4j serves the vectors and graph: its write lock flushes graph changes as a write ends.
        assert self._neo4j is not None
        self.write_lock = self._neo4j.attach(self.store, self.embedder, enabled=lock_enabled)
        with self.write_lock:
            self.last_check = self._neo4j.open(self.store)
            self._index = self._neo4j.index

    def close(self) -> None:
        """Close the indexes (those opened) and the store."""
        if self._neo4j is not None:
            self._neo4j.close()
        if self._index is not None:
            self._index.close()
        self.media.close()
        if self._chroma_client is not None:
            self._chroma_client.close()
            self._chroma_client = None
        self.store.close()
