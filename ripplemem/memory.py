"""RippleMem: the facade users call. A handle is a scope (user, agent, session) on an engine."""

from __future__ import annotations

import builtins
import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ripplemem.api.aio import CoreAsyncMethods
from ripplemem.api.analysis import AnalysisMethods
from ripplemem.api.bulk_import import ImportReport, ImportTarget, import_file
from ripplemem.api.documents import DocumentMethods
from ripplemem.api.graph import GraphMethods
from ripplemem.api.history import HistoryMethods, superseded_history, with_superseded
from ripplemem.api.lifecycle import LifecycleMethods
from ripplemem.api.perceptual import PerceptualMethods
from ripplemem.api.privacy import PrivacyMethods
from ripplemem.api.working import WorkingMethods
from ripplemem.config import Settings, check_settings
from ripplemem.core.relations import coerce_relations
from ripplemem.core.validation import (
    check_content,
    check_datetime,
    check_identifier,
    check_importance,
    check_k,
    check_metadata,
    check_mode,
    check_offset,
    check_text,
    check_type,
    check_types,
)
from ripplemem.embedding.framework import EmbedderSpec, TargetEmbedder
from ripplemem.engine.engine import Clock, Engine
from ripplemem.engine.graph_rows import GraphInput
from ripplemem.engine.items import build_memory
from ripplemem.engine.knowledge_bases import check_kb_names
from ripplemem.engine.writes import delete_memories, update_memory, write_batch
from ripplemem.errors import ClosedError, InvalidTypeError, MemoryNotFoundError, StoreError
from ripplemem.lifecycle.consolidate import consolidate_dropped
from ripplemem.lifecycle.reembed import ProgressCallback, disk_bytes, progress_reporter, reembed_store
from ripplemem.llm.answer import Answer, ContextItem, answer_question
from ripplemem.llm.extraction import LLMExtractor
from ripplemem.privacy.erase import EraseReport
from ripplemem.retrieval.cross_modal import with_cross_modal
from ripplemem.retrieval.expansion import check_expand
from ripplemem.retrieval.hybrid import RECALL_MODES
from ripplemem.retrieval.kb_recall import record_recall_access, search_readable
from ripplemem.retrieval.pipeline import (
    QueryEmbeddings,
    SearchSpec,
    check_time_phrases,
    expand_query,
    expanded_search,
    search_in_time,
    search_scope,
    time_window,
)
from ripplemem.retrieval.relevance import check_score_threshold, with_relevance
from ripplemem.retrieval.route_rules import check_route
from ripplemem.retrieval.routing import order_by_route, plan_route
from ripplemem.store.info import recorded_embedder
from ripplemem.store.memory_rows import MemoryFilter, to_epoch
from ripplemem.store.neo4j.connection import neo4j_options
from ripplemem.store.reconcile import CheckReport, check_path
from ripplemem.store.vectors.chroma_server import server_option
from ripplemem.types import Memory, Recall, Scope

if TYPE_CHECKING:
    from ripplemem.language.timeparse import TimeRange


class RippleMem(CoreAsyncMethods, WorkingMethods, LifecycleMethods, HistoryMethods, DocumentMethods,
                PerceptualMethods, GraphMethods, AnalysisMethods, PrivacyMethods):
    """Tiered, associative long-term memory for one user (optionally one agent and session).

    ``RippleMem(path="./memdb", user_id="alice")`` opens (or creates) an embedded store: SQLite
    for rows and keywords, Chroma for vectors, local embeddings. ``embedder="auto"`` (the default; None
    too) gives a new store MiniLM, or multilingual-e5 when its first writes are mostly Chinese,
    Japanese, Korean or another non-Latin script, and reopens a store with the model it was built
    with; name a model ("minilm", "multilingual", ...) to force one. ``path=None`` keeps
    everything in memory. ``scope()`` gives handles for other users on the same store.
    ``isolation="collection"`` (a new store's default) keeps one Chroma collection per user;
    "filter" keeps one shared collection filtered by user on every call; None: as the store holds.
    ``chroma_url="http://host:8000"`` keeps the vectors on a Chroma server instead (rows stay in
    SQLite at ``path``); ``chroma_headers`` go with every request, e.g. an Authorization token.
    ``backend="neo4j", uri="neo4j://host:7687", auth=("neo4j", "pw")`` serves vectors and the
    graph from Neo4j (``database``: the server's default if None); SQLite at ``path`` stays the ledger.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        embedder: EmbedderSpec = "auto",
        vector_index: str = "auto",
        settings: Settings | None = None,
        clock: Clock | None = None,
        llm: Any = None,
        isolation: str | None = None,
        chroma_url: str | None = None,
        chroma_headers: Mapping[str, str] | None = None,
        backend: str = "embedded",
        uri: str | None = None,
        auth: tuple[str, str] | None = None,
        database: str | None = None,
        _engine: Engine | None = None,
    ) -> None:
        self.scope_info = Scope(
            user_id=check_identifier("user_id", user_id, required=True),  # type: ignore[arg-type]
            agent_id=check_identifier("agent_id", agent_id, required=False),
            session_id=check_identifier("session_id", session_id, required=False),
        )
        self._engine = _engine or Engine(
            None if path is None else os.fspath(path), embedder, vector_index,
            check_settings(settings), clock, isolation,
            server_option(chroma_url, chroma_headers),
            neo4j_options(backend, uri, auth, database, path=path, vector_index=vector_index,
                          chroma_url=chroma_url),
            on_working_drop=consolidate_dropped,
        )
        self.llm = llm
        self._extractor: LLMExtractor | None = None
        if llm is not None:
            self._extractor = LLMExtractor(llm)

    # -- handles -----------------------------------------------------------------------------
    @property
    def _engine(self) -> Engine:
        """The store behind this handle; after close() every use raises ClosedError."""
        if self._shared_engine.store.closed:
            raise ClosedError("this RippleMem handle is closed (close() was called on it or on a handle "
                              "sharing its store); open the store again with RippleMem(path, ...)")
        return self._shared_engine

    @_engine.setter
    def _engine(self, engine: Engine) -> None:
        self._shared_engine = engine

    @property
    def path(self) -> str | None:
        """The store directory, or None for an in-memory store (still known after close())."""
        return self._shared_engine.path

    @property
    def settings(self) -> Settings:
        """The retrieval and storage settings of the store."""
        return self._shared_engine.settings

    def scope(self, user_id: str | None = None, *, agent_id: str | None = None,
              session_id: str | None = None) -> RippleMem:
        """Another handle on the same store for another user, agent or session (the agent is
        kept unless given)."""
        return RippleMem(user_id=self.user_id if user_id is None else user_id,
                         agent_id=agent_id or self.scope_info.agent_id,
                         session_id=session_id, llm=self.llm, _engine=self._engine)

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

    # -- writes ------------------------------------------------------------------------------
    def add(self, content: str, type: str = "episodic", *, session_id: str | None = None,
            event_time: datetime | str | None = None, importance: float | None = None,
            metadata: Mapping[str, Any] | None = None, source: str | None = None,
            modality: str = "text", relations: Iterable[Any] | None = None) -> Memory:
        """Store one memory and return it (with its id).

        ``relations`` are facts the memory states, as (subject, predicate, object) tuples or dicts;
        they become entities and RELATES edges of the graph.
        """
        return self.add_many([{
            "content": content, "type": type, "session_id": session_id, "event_time": event_time,
            "importance": importance, "metadata": metadata, "source": source, "modality": modality,
            "relations": relations,
        }])[0]

    def add_many(self, items: Iterable[Mapping[str, Any] | str], *, type: str = "episodic",
                 batch_size: int = 1024, progress: bool | ProgressCallback = False) -> list[Memory]:
        """Store many memories, embedded in batches; all are validated before any is written.

        Items are dicts with ``content`` and optionally the keyword arguments of ``add``, or plain
        strings. ``progress=True`` shows a progress bar; a callable gets (done, total).
        """
        check_k(batch_size, "batch_size")
        now = self._engine.clock()
        entries: builtins.list[Mapping[str, Any]] = [{"content": item} if isinstance(item, str) else item
                                                    for item in items]
        memories = [build_memory(item, position, type, now, self.scope_info, self.settings)
                    for position, item in enumerate(entries)]
        inputs = [GraphInput(relations=coerce_relations(item.get("relations") or [])) for item in entries]
        report = progress_reporter(progress, len(memories))
        stored: list[Memory] = []
        for start in range(0, len(memories), batch_size):
            batch = memories[start:start + batch_size]
            batch_inputs = inputs[start:start + batch_size]
            if self._extractor is not None:
                self._extract_into(batch, batch_inputs)
            stored.extend(write_batch(self._engine, self.user_id, batch, batch_inputs, llm=self.llm))
            report(min(start + batch_size, len(memories)))
        return stored

    def import_file(self, file: str | os.PathLike[str], *, format: str = "auto", batch_size: int = 1024,
                    progress: bool | ProgressCallback = False) -> ImportReport:
        """Import a JSONL or text file, one memory a line, a batch per commit; run it again after an
        interruption and it resumes after the last committed batch (see docs/scale.md)."""
        extract = self._extract_into if self._extractor is not None else None
        target = ImportTarget(self._engine, self.scope_info, self.llm, extract)
        return import_file(target, file, format=format, batch_size=batch_size, progress=progress)

    def _extract_into(self, memories: list[Memory], inputs: list[GraphInput]) -> None:
        assert self._extractor is not None
        for result, target in zip(self._extractor.extract_many([m.content for m in memories]), inputs,
                                  strict=True):
            target.entities.extend(result.entities)
            target.relations.extend(result.relations)

    def update(self, memory_id: str, *, content: str | None = None, importance: float | None = None,
               metadata: Mapping[str, Any] | None = None, type: str | None = None,
               event_time: datetime | str | None = None) -> Memory:
        """Change a memory; new content is re-embedded and re-indexed. Returns the new version."""
        current = self._require(memory_id)
        fields: dict[str, Any] = {}
        if content is not None:
            fields["content"] = check_content(content, self.settings.max_content_chars)
        if importance is not None:
            fields["importance"] = check_importance(importance)
        if metadata is not None:
            fields["metadata"] = check_metadata(metadata)
        if type is not None:
            fields["type"] = check_type(type)
        if event_time is not None:
            fields["event_time"] = to_epoch(check_datetime("event_time", event_time))
        if not fields:
            return current
        return update_memory(self._engine, current, fields)

    def delete(self, memory_id: str) -> bool:
        """Delete a memory of this user; True if it existed."""
        _check_memory_id(memory_id)
        return bool(delete_memories(self._engine, self.user_id, [memory_id]))

    # -- reads -------------------------------------------------------------------------------
    def get(self, memory_id: str) -> Memory | None:
        """The memory with this id if it belongs to this user, else None."""
        _check_memory_id(memory_id)
        return self._engine.store.get(memory_id, self.user_id)

    def _require(self, memory_id: str) -> Memory:
        memory = self.get(memory_id)
        if memory is None:
            raise MemoryNotFoundError(f"no memory {memory_id!r} for user {self.user_id!r}")
        return memory

    def recall(self, query: str, k: int = 10, *, mode: str = "ripple",
               types: str | Iterable[str] | None = None, since: datetime | str | None = None,
               until: datetime | str | None = None, min_importance: float | None = None,
               metadata: Mapping[str, Any] | None = None, session_id: str | None = None,
               record_access: bool = True, route: str | None = None, expand: str | None = None,
               now: datetime | str | None = None, time_phrases: str = "boost", llm: Any = None,
               knowledge_bases: str | Iterable[str] | None = None, history: bool = False,
               score_threshold: float | None = None) -> Recall:
        """The k memories that best answer the query, scored by each type's profile.

        ``mode="ripple"`` (default) spreads activation from the first-stage matches and the
        entities the query names over the memory graph; "hybrid", "dense" and "keyword" skip the
        graph. Filters narrow what may be recalled: memory types, a time range on when it
        happened, a minimum importance, metadata equality and one session.

        A time phrase in the query ("yesterday", "last week", "two months ago", "上周", "三个月前")
        is resolved against ``now`` (default: the clock; it is also the "now" of recency
        scoring): ``time_phrases="boost"`` lifts memories from that time, "filter" keeps only
        them, "off" ignores the phrase. ``Recall.time`` says what was understood.
        ``expand="mqe" | "hyde" | "both"`` has the handle's chat model (``RippleMem(llm=...)``)
        rewrite the query or draft an answer passage (or ``llm``, a LangChain chat model, for this
        call); every text is searched and the candidates fused by rank (``Recall.expansion``
        lists them).

        By default recall searches everything the user can read: their own memories and the
        knowledge bases granted to them (``mem.ingest``), merged by score; a chunk's
        ``metadata["knowledge_base"]`` names its base. ``knowledge_bases=[...]`` narrows the bases.
        ``route="auto"`` decides between the user's own memories and the documents (knowledge bases and
        the user's document memories) by the query and how much each holds
        (docs/design-notes.md#routing; ``Recall.route`` says why); "memory", "documents" or "both"
        choose directly.

        Only current values are recalled: a memory a later statement superseded ("my dose is now
        40 mg") stays out, unless ``history=True``, which lists each hit's earlier versions right
        after it, newest first, each saying what superseded it and when.

        Recall counts as an access and reinforces the graph edges that led to a hit, unless
        ``record_access=False`` (a read-only look, e.g. for evaluation).

        Each hit's ``relevance`` says how well it matches the query, in [0, 1], comparable across
        queries (``score`` ranks the hits of this one); ``score_threshold=0.5`` drops hits below it.
        """
        check_content(query, self.settings.max_content_chars, field="query")
        threshold = check_score_threshold(score_threshold)
        llm = llm if llm is not None else self.llm
        expand_mode = check_expand(expand, llm, how="pass llm=... to recall() or to RippleMem(...)")
        time_mode = check_time_phrases(time_phrases)
        reference = check_datetime("now", now) or self._engine.clock()
        plan = plan_route(self._engine, self.user_id, query, check_route(route),
                          check_kb_names(knowledge_bases))
        if plan.decision is not None and types is None:
            types = plan.types
        flt = self._filter(
            types=check_types(types), since=to_epoch(check_datetime("since", since)),
            until=to_epoch(check_datetime("until", until)),
            min_importance=None if min_importance is None else check_importance(min_importance),
            metadata=tuple(check_metadata(metadata).items()),
            session_id=check_identifier("session_id", session_id, required=False),
        )
        spec = SearchSpec(k=check_k(k), mode=check_mode(mode, RECALL_MODES), flt=flt,
                          now=to_epoch(reference),  # type: ignore[arg-type]
                          queries=QueryEmbeddings(self._engine.embedder))
        result = self._search(query, spec, plan.knowledge_bases,
                              time_window(query, reference, time_mode), time_mode, expand_mode, llm)
        result.hits = [hit for hit in with_relevance(self._engine, query, result.hits, spec)
                       if threshold is None or hit.relevance >= threshold]
        if record_access:
            record_recall_access(self._engine, self.user_id, result, spec.now)
            self._wake_recalled(result, spec.now)
        if plan.decision is not None:
            order_by_route(result, plan.decision)
            result.route = plan.decision
        if history:
            earlier = superseded_history(self._engine, self.user_id, result.hits)
            result.hits = with_relevance(self._engine, query, with_superseded(result.hits, earlier), spec)
        return result

    def _search(self, query: str, spec: SearchSpec, knowledge_bases: tuple[str, ...],
                window: TimeRange | None, time_mode: str, expand_mode: str | None, llm: Any) -> Recall:
        """Recall's search: the user's scope and knowledge bases, cross-modal hits, the query's time
        window, and the expanded queries fused by rank when asked."""
        engine = self._engine

        def search_all(text: str, scoped: SearchSpec) -> Recall:
            found = search_readable(engine, self.user_id, knowledge_bases, text, scoped,
                                    lambda t, s: search_scope(engine, self.user_id, t, s))
            return with_cross_modal(engine, self.user_id, text, scoped, found)

        def search(text: str, pool: int) -> Recall:
            return search_in_time(search_all, text, replace(spec, k=pool), window, time_mode,
                                  self.settings.time_boost)

        if expand_mode is None:
            result = search(query, spec.k)
        else:
            queries, described = expand_query(llm, query, expand_mode)
            result = expanded_search(search, queries, spec.k)
            result.expansion = described
        if window is not None:
            result.time = {"phrase": window.phrase, "start": window.start, "end": window.end,
                           "how": time_mode}
        return result

    def ask(self, question: str, *, llm: Any = None, k: int = 8, **recall_options: Any) -> Answer:
        """Recall for the question and have a chat model answer from those memories only, citing
        them (``Answer.citations`` are memory ids). Uses ``llm`` or the handle's ``RippleMem(llm=...)``;
        without either, a clear error."""
        recalled = self.recall(question, k, **recall_options)
        return answer_question(llm if llm is not None else self.llm, question,
                               [ContextItem.from_hit(hit) for hit in recalled.hits], now=self._engine.clock())

    def list(self, type: str | Iterable[str] | None = None, *, since: datetime | str | None = None,
             until: datetime | str | None = None, session_id: str | None = None,
             metadata: Mapping[str, Any] | None = None, limit: int = 100, offset: int = 0,
             newest_first: bool = True) -> builtins.list[Memory]:
        """This user's memories, newest first, optionally of some types, a time range, a session
        or with some metadata values (equality on each given key)."""
        check_offset(offset)
        flt = self._filter(types=check_types(type), since=to_epoch(check_datetime("since", since)),
                           until=to_epoch(check_datetime("until", until)),
                           session_id=check_identifier("session_id", session_id, required=False),
                           metadata=tuple(check_metadata(metadata).items()))
        return self._engine.store.list(flt, check_k(limit, "limit"), offset, newest_first)

    def stats(self) -> dict[str, Any]:
        """Counts by type, tier and status, the time span, and what the store is built with."""
        engine = self._engine
        counts = engine.store.counts(self.user_id)
        return {
            "user_id": self.user_id,
            "total": sum(counts["by_type"].values()),
            **counts,
            "vectors": engine.index.count(self.user_id),
            "embedding_model": engine.embedder.model_id,
            "vector_index": engine.index.name,
            "path": engine.path,
            "disk_bytes": disk_bytes(engine.path),
        }

    def _filter(self, **narrowing: Any) -> MemoryFilter:
        base = MemoryFilter(user_id=self.user_id, agent_id=self.scope_info.agent_id)
        return replace(base, **{k: v for k, v in narrowing.items() if v is not None and v != ()})

    # -- maintenance -------------------------------------------------------------------------
    @staticmethod
    def reembed(path: str | os.PathLike[str], embedder: TargetEmbedder, *,
                vector_index: str = "auto", batch_size: int = 256,
                progress: bool | ProgressCallback = False) -> int:
        """Re-embed every memory of a store with another model and rebuild its vector index.

        Returns how many memories were re-embedded. Afterwards open the store with the new embedder.
        """
        return reembed_store(path, embedder, vector_index=vector_index, batch_size=batch_size,
                             progress=progress)

    @staticmethod
    def check(path: str | os.PathLike[str], *, repair: bool = True, chroma_url: str | None = None,
              chroma_headers: Mapping[str, str] | None = None) -> CheckReport:
        """Check that a store's SQLite rows, keyword index, graph and vector index agree, and that
        the vector index's files are sound (checked without loading them, then one query per
        collection in a child process), and repair what does not (vectors re-added from SQLite's
        copies, a broken collection rebuilt, strays, dangling edges and orphan entities removed)
        unless ``repair=False``. Open handles repair on their own after a
        crash; this is the explicit, reported version. Returns what was found and fixed. A store
        whose vectors are on a Chroma server needs its ``chroma_url``."""
        return check_path(path, repair=repair, server=server_option(chroma_url, chroma_headers))

    @classmethod
    def erase_user(cls, path: str | os.PathLike[str], user_id: str, *, dry_run: bool = False,
                   embedder: EmbedderSpec = None, chroma_url: str | None = None,
                   chroma_headers: Mapping[str, str] | None = None) -> EraseReport:
        """Erase every trace of one user from the store at ``path`` (administrators, "forget me"
        requests handled outside the user's own session); returns the audit report. A store whose
        vectors are on a Chroma server needs its ``chroma_url`` (and headers)."""
        folder = os.fspath(path)
        model = embedder or recorded_embedder(folder)
        if model is None:
            raise StoreError(f"no RippleMem store at {folder!r} to erase from")
        with cls(folder, user_id=user_id, embedder=model, chroma_url=chroma_url,
                 chroma_headers=chroma_headers) as handle:
            return handle.erase(user_id=user_id, dry_run=dry_run)


def _check_memory_id(memory_id: Any) -> None:
    if not isinstance(memory_id, str) or not memory_id:
        raise InvalidTypeError(f"memory_id must be a non-empty string, got {memory_id!r}")
    check_text("memory_id", memory_id)
