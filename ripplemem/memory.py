"""RippleMem: the facade users call. A handle is a scope (user, agent, session) on an engine; the
common calls are its methods, the rest sit in namespaces (docs/api.md)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cached_property
from typing import Any

from ripplemem.api.analysis import Analysis
from ripplemem.api.deprecation import Moved
from ripplemem.api.documents import DocumentMethods, KnowledgeBases
from ripplemem.api.graph import Graph
from ripplemem.api.history import HistoryMethods
from ripplemem.api.lifecycle import Lifecycle, LifecycleMethods
from ripplemem.api.options import StoreOptions, maintained_location, open_engine, store_options
from ripplemem.api.perceptual import Media, Sensors
from ripplemem.api.privacy import PrivacyMethods
from ripplemem.api.recall import RecallMethods
from ripplemem.config import Settings
from ripplemem.core.choices import VectorIndexName
from ripplemem.core.types import Scope
from ripplemem.core.validation import check_identifier
from ripplemem.embedding.framework import EmbedderSpec, TargetEmbedder
from ripplemem.engine.engine import Clock, Engine
from ripplemem.errors import InvalidInputError, StoreError
from ripplemem.lifecycle.consolidate import consolidate_dropped
from ripplemem.lifecycle.reembed import ProgressCallback, reembed_store
from ripplemem.llm.extraction import LLMExtractor
from ripplemem.privacy.erase import EraseReport
from ripplemem.store.info import recorded_embedder
from ripplemem.store.recovery.check_report import CheckReport
from ripplemem.store.recovery.reconcile import check_path
from ripplemem.store.vectors.chroma_server import server_option


class RippleMem(RecallMethods, LifecycleMethods, HistoryMethods, DocumentMethods, PrivacyMethods):
    """Tiered, associative long-term memory for one user (optionally one agent and session).

    ``RippleMem(path="./memdb", user_id="alice")`` opens (or creates) an embedded store: SQLite
    for rows and keywords, Chroma for vectors, local embeddings. ``embedder="auto"`` (the default; None
    too) gives a new store MiniLM, or multilingual-e5 when its first writes are mostly Chinese,
    Japanese, Korean or another non-Latin script, and reopens a store with the model it was built
    with; name a model ("minilm", "multilingual", ...) to force one. ``path=None`` keeps
    everything in memory. ``scope()`` gives handles for other users on the same store.
    ``store=StoreOptions(...)`` says where vectors and the graph live: the vector index, per-user
    Chroma collections or one filtered collection, a Chroma server, or Neo4j (docs/backends.md).

    The common calls are methods (add, recall, get, update, delete, list, observe, ask, ingest,
    maintain, erase, ...); the rest sit in namespaces: ``mem.graph``, ``mem.kb``, ``mem.sensors``,
    ``mem.media``, ``mem.lifecycle``, ``mem.analysis`` (docs/api.md).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        embedder: EmbedderSpec = "auto",
        settings: Settings | None = None,
        clock: Clock | None = None,
        llm: Any = None,
        store: StoreOptions | None = None,
        _engine: Engine | None = None,
        **deprecated: Any,
    ) -> None:
        self.scope_info = Scope(
            user_id=check_identifier("user_id", user_id, required=True),
            agent_id=check_identifier("agent_id", agent_id, required=False),
            session_id=check_identifier("session_id", session_id, required=False),
        )
        options = store_options(store, deprecated)
        self._shared_engine = _engine or open_engine(
            path, embedder, settings, clock, options, on_working_drop=consolidate_dropped
        )
        self.llm = llm
        self._extractor: LLMExtractor | None = None
        if llm is not None:
            self._extractor = LLMExtractor(llm)

    # -- namespaces --------------------------------------------------------------------------
    @cached_property
    def graph(self) -> Graph:
        """Graph questions: ``neighbors``, ``find_connections``, ``communities``."""
        return Graph(self)

    @cached_property
    def kb(self) -> KnowledgeBases:
        """Knowledge bases: ``list``, ``chunks``, ``grant``, ``revoke``, ``forget_source``, ``delete``."""
        return KnowledgeBases(self)

    @cached_property
    def sensors(self) -> Sensors:
        """Sensor streams: ``record``, ``record_many``, ``readings``, ``latest``, ``average``,
        ``metric_range``, ``metrics``, ``delete``."""
        return Sensors(self)

    @cached_property
    def media(self) -> Media:
        """Images and audio: ``add_image``, ``add_audio``, ``use_encoder``."""
        return Media(self)

    @cached_property
    def lifecycle(self) -> Lifecycle:
        """The tier migrations on their own: ``archive``, ``aarchive`` (maintain() runs them)."""
        return Lifecycle(self)

    @cached_property
    def analysis(self) -> Analysis:
        """Analyses: ``graph_quality``, ``learning_report``."""
        return Analysis(self)

    # -- deprecated flat names (one release): each warns and calls its new spelling -----------
    neighbors = Moved("graph")
    find_connections = Moved("graph")
    communities = Moved("graph")
    knowledge_bases = Moved("kb", "list")
    chunks = Moved("kb")
    grant = Moved("kb")
    revoke = Moved("kb")
    forget_source = Moved("kb")
    delete_knowledge_base = Moved("kb", "delete")
    record = Moved("sensors")
    record_many = Moved("sensors")
    readings = Moved("sensors")
    latest = Moved("sensors")
    average = Moved("sensors")
    metric_range = Moved("sensors")
    metrics = Moved("sensors")
    delete_readings = Moved("sensors", "delete")
    add_image = Moved("media")
    add_audio = Moved("media")
    use_encoder = Moved("media")
    archive = Moved("lifecycle")
    aarchive = Moved("lifecycle")
    graph_quality = Moved("analysis")
    learning_report = Moved("analysis")

    # -- handles -----------------------------------------------------------------------------
    def scope(
        self, user_id: str | None = None, *, agent_id: str | None = None, session_id: str | None = None
    ) -> RippleMem:
        """Another handle on the same store for another user, agent or session (the agent is
        kept unless given)."""
        return RippleMem(
            user_id=self.user_id if user_id is None else user_id,
            agent_id=agent_id or self.scope_info.agent_id,
            session_id=session_id,
            llm=self.llm,
            _engine=self._engine,
        )

    def close(self) -> None:
        """Close the store (every handle sharing it); closing it again does nothing."""
        if not self._shared_engine.store.closed:
            self._shared_engine.close()

    def __enter__(self) -> RippleMem:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RippleMem(path={self.path!r}, user_id={self.user_id!r})"

    # -- maintenance -------------------------------------------------------------------------
    @staticmethod
    def reembed(
        path: str | os.PathLike[str] | None,
        embedder: TargetEmbedder,
        *,
        vector_index: VectorIndexName = "auto",
        batch_size: int = 256,
        progress: bool | ProgressCallback = False,
        store: StoreOptions | None = None,
    ) -> int:
        """Re-embed every memory of a store with another model and rebuild its vector index
        (``path=None, store=StoreOptions(backend="postgres", uri=...)``: a PostgreSQL store).

        Returns how many memories were re-embedded. Afterwards open the store with the new embedder.
        """
        location = maintained_location(path, store)
        if not isinstance(location, str) and vector_index != "auto":
            raise InvalidInputError("a PostgreSQL store keeps its vectors in pgvector: drop vector_index")
        return reembed_store(
            location, embedder, vector_index=vector_index, batch_size=batch_size, progress=progress
        )

    @staticmethod
    def check(
        path: str | os.PathLike[str] | None = None,
        *,
        repair: bool = True,
        chroma_url: str | None = None,
        chroma_headers: Mapping[str, str] | None = None,
        store: StoreOptions | None = None,
    ) -> CheckReport:
        """Check that a store's SQLite rows, keyword index, graph and vector index agree, and that
        the vector index's files are sound (checked without loading them, then one query per
        collection in a child process), and repair what does not (vectors re-added from SQLite's
        copies, a broken collection rebuilt, strays, dangling edges and orphan entities removed)
        unless ``repair=False``. Open handles repair on their own after a
        crash; this is the explicit, reported version. Returns what was found and fixed. A store
        whose vectors are on a Chroma server needs its ``chroma_url``; a PostgreSQL store is
        ``path=None, store=StoreOptions(backend="postgres", uri=...)``."""
        location = maintained_location(path, store)
        if not isinstance(location, str) and chroma_url is not None:
            raise InvalidInputError("a PostgreSQL store keeps its vectors in pgvector: drop chroma_url")
        return check_path(location, repair=repair, server=server_option(chroma_url, chroma_headers))

    @classmethod
    def erase_user(
        cls,
        path: str | os.PathLike[str],
        user_id: str,
        *,
        dry_run: bool = False,
        embedder: EmbedderSpec = None,
        chroma_url: str | None = None,
        chroma_headers: Mapping[str, str] | None = None,
    ) -> EraseReport:
        """Erase every trace of one user from the store at ``path`` (administrators, "forget me"
        requests handled outside the user's own session); returns the audit report. A store whose
        vectors are on a Chroma server needs its ``chroma_url`` (and headers)."""
        folder = os.fspath(path)
        model = embedder or recorded_embedder(folder)
        if model is None:
            raise StoreError(f"no RippleMem store at {folder!r} to erase from")
        with cls(
            folder,
            user_id=user_id,
            embedder=model,
            store=StoreOptions(chroma_url=chroma_url, chroma_headers=chroma_headers),
        ) as handle:
            return handle.erase(user_id=user_id, dry_run=dry_run)
