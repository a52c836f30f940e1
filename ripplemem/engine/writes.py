"""Write paths behind the facade: a batch, an update or a delete reaches SQLite (rows, keywords,
graph), the vector index and the in-memory indexes together, or not at all."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ripplemem.config import GRAPH_SUPPORTED
from ripplemem.core.clock import from_epoch
from ripplemem.core.types import Memory, Recall
from ripplemem.engine.engine import Engine
from ripplemem.engine.graph_rows import ALIAS_KINDS, GraphInput, alias_by_embedding, build_graph_rows
from ripplemem.engine.revising import apply_revisions, merge_within_batch
from ripplemem.engine.unit_of_work import UnitOfWork
from ripplemem.engine.write_plans import WritePlan, forget_cached_texts, plan_writes
from ripplemem.errors import EmbedderOutputError
from ripplemem.rules.lifecycle.conflict_judge import LLMConflictJudge
from ripplemem.store.connection import Connection
from ripplemem.store.disk_errors import storage_failure
from ripplemem.store.queries.lifecycle import archive_locations
from ripplemem.store.tables.graph import (
    EntityRow,
    delete_orphan_entities,
    insert_edges,
    insert_entities,
    mentioned_entities,
    reinforce_edges,
    set_entity_vectors,
)
from ripplemem.store.tables.history import HistoryEvent, record_history
from ripplemem.store.tables.memories import MemoryFilter, index_metadata, row_to_memory, to_epoch

logger = logging.getLogger("ripplemem.engine.writes")


def index_meta(memory: Memory) -> dict[str, Any]:
    """The filter columns a vector index keeps beside a memory's vector."""
    when = memory.event_time or memory.created_at
    return index_metadata(memory.user_id, memory.agent_id, memory.session_id, memory.type, to_epoch(when))


def embed_batch(engine: Engine, memories: Sequence[Memory]) -> np.ndarray:
    """The document vectors of new memories (on a store opened with embedder="auto", the first
    batch chooses the model first)."""
    engine.settle_embedder([m.content for m in memories])
    return np.asarray(engine.embedder.embed_documents([m.content for m in memories]), dtype=np.float32)


def write_batch(
    engine: Engine,
    user_id: str,
    memories: list[Memory],
    inputs: Sequence[GraphInput],
    *,
    llm: Any = None,
    cause: str = "add",
    on_commit: Callable[[Connection], None] | None = None,
    vectors: np.ndarray | None = None,
) -> list[Memory]:
    """Embed and store new memories of one user with their graph rows; returns, per item, the memory
    now holding it.

    Unless switched off in LifecycleSettings, each item is first compared with the user's nearest
    stored memories and the batch's earlier items (ripplemem.engine.write_plans): a duplicate merges into
    the memory it repeats (which is returned in its place), an update supersedes the old value, a
    contradiction links both; ``llm`` (a chat model) judges the pairs the rules leave open.
    ``on_commit`` runs inside the batch's transaction (a bulk import records its progress there,
    so the batch and the record commit together or not at all). ``vectors`` are the memories'
    embed_batch() when the caller has them already (add_many embeds the next batch meanwhile).
    """
    if vectors is None:
        vectors = embed_batch(engine, memories)
    settings = engine.model_settings()
    judge = (
        LLMConflictJudge(llm, settings=settings.lifecycle)
        if llm is not None and settings.lifecycle.detect_conflicts
        else None
    )
    with engine.unit_of_work(user_id) as work:
        neighbours = _neighbours(engine, user_id, vectors)
        plan = plan_writes(engine.store, user_id, memories, vectors, neighbours, settings.lifecycle, judge)
        merge_within_batch(plan, memories)
        fresh = [memories[i] for i in plan.fresh]
        active_rows = [i for i in plan.fresh if memories[i].status == "active"]
        active = [memories[i] for i in active_rows]
        now = engine.now()
        try:
            with work.transaction() as conn:
                engine.store.insert_rows(conn, fresh, vectors[plan.fresh])
                rows = build_graph_rows(
                    conn,
                    fresh,
                    vectors[plan.fresh],
                    [neighbours[i] for i in plan.fresh],
                    [inputs[i] for i in plan.fresh],
                    settings.graph,
                    now,
                )
                insert_entities(conn, user_id, memories[0].agent_id, rows.entities, now)
                insert_edges(conn, user_id, rows.edges)
                revised = apply_revisions(conn, user_id, plan, memories, now, cause)
                ids, upserted, metas = _index_rows(
                    engine, user_id, active, vectors[active_rows], revised.merged
                )
                # Written before the commit: if the index fails, SQLite rolls back and neither changed.
                work.index.add(user_id, ids, upserted, metas)
                if on_commit is not None:
                    on_commit(conn)
        except BaseException:
            try:
                work.index.delete(user_id, [m.id for m in active])
            except Exception as cleanup:
                # The batch's pending marker stays, so the next open removes these vectors; the
                # caller hears the first failure, which says what went wrong.
                if storage_failure(cleanup, engine.path) is None:
                    raise
            raise
        work.index.delete(user_id, revised.superseded)
        work.added(active, [*rows.edges, *revised.edges])
        work.removed([*revised.superseded, *(m.id for m in fresh if m.status != "active")])
        _link_aliases(engine, work, [e for e in rows.new_entities if e.type in ALIAS_KINDS])
        return _results(engine, user_id, plan, memories)


def _neighbours(engine: Engine, user_id: str, vectors: np.ndarray) -> list[list[tuple[str, float]]]:
    """The stored memories nearest to each new one: for SIMILAR edges and the duplicate check."""
    graph, lifecycle = engine.settings.graph, engine.settings.lifecycle
    k = graph.similar_k + 1 if graph.similar_k > 0 else 0
    if lifecycle.merge_duplicates or lifecycle.detect_conflicts:
        k = max(k, lifecycle.conflict_neighbours)
    return engine.index.query_many(user_id, vectors, k) if k > 0 else [[] for _ in range(len(vectors))]


def _index_rows(
    engine: Engine, user_id: str, active: list[Memory], vectors: np.ndarray, merged: list[str]
) -> tuple[list[str], np.ndarray, list[dict[str, Any]]]:
    """Vectors to upsert: the new active memories, and merged ones (their time may have moved)."""
    ids = [m.id for m in active]
    stacked = list(vectors)
    metas = [index_meta(m) for m in active]
    # One read for all merged memories; a cold one (no vector here, archived) stays out of the index.
    rows, merged_vectors = engine.store.fetch_rows(
        merged, MemoryFilter(user_id=user_id), with_embeddings=True
    )
    for position, row in enumerate(rows):
        if row["embedding"] is not None and merged_vectors is not None:
            memory = row_to_memory(row)
            ids.append(memory.id)
            stacked.append(merged_vectors[position])
            metas.append(index_meta(memory))
    return ids, np.asarray(stacked, dtype=np.float32).reshape(len(ids), vectors.shape[1]), metas


def _results(engine: Engine, user_id: str, plan: WritePlan, memories: list[Memory]) -> list[Memory]:
    """Per item: itself when stored, else the memory it merged into (read back when stored before)."""
    results = list(memories)
    by_id = {m.id: m for m in memories}
    for merge in plan.merges:
        target = by_id.get(merge.target) or engine.store.get(merge.target, user_id)
        assert target is not None
        results[merge.position] = target
    return results


def _link_aliases(engine: Engine, work: UnitOfWork, new: list[EntityRow]) -> None:
    """ALIAS edges between new entities and known ones whose names embed alike (derived data,
    written after the batch: if this fails the memories are stored all the same)."""
    if not new:
        return
    try:
        vectors = np.asarray(engine.embedder.embed_documents([e.name for e in new]), dtype=np.float32)
    except EmbedderOutputError as exc:
        # The memories are stored whole; only these optional links are missing.
        logger.warning("no ALIAS edges for %d new entities: %s", len(new), exc)
        return
    known_ids, known = engine.entity_vectors(work.user_id)
    now = engine.now()
    edges = alias_by_embedding(new, vectors, known_ids, known, engine.model_settings().graph, now)
    with work.transaction() as conn:
        set_entity_vectors(conn, work.user_id, [(e.id, v) for e, v in zip(new, vectors, strict=True)])
        insert_edges(conn, work.user_id, edges)
    work.entities_embedded([e.id for e in new], vectors)
    work.added([], edges)


def delete_memories(
    engine: Engine, user_id: str, memory_ids: Sequence[str], history: Sequence[HistoryEvent] = ()
) -> list[str]:
    """Delete memories of one user everywhere (cold ones from their archive segments too), and
    entities no memory mentions any more; `history` events are logged in the same transaction."""
    with engine.unit_of_work(user_id) as work:
        with work.transaction() as conn:
            entities = mentioned_entities(conn, user_id, memory_ids)
            archived = archive_locations(conn, user_id, memory_ids)
            deleted = engine.store.delete_rows(conn, memory_ids, user_id)
            orphans = delete_orphan_entities(conn, user_id, entities) if deleted else []
            gone = set(deleted)
            record_history(conn, user_id, [event for event in history if event.memory_id in gone])
        if deleted:
            forget_cached_texts()
            work.index.delete(user_id, deleted)
            work.archive.remove(user_id, archived)
            work.removed([*deleted, *orphans])
    return deleted


def update_memory(
    engine: Engine, current: Memory, fields: dict[str, Any], *, event: str = "updated", cause: str = "update"
) -> Memory:
    """Write validated field changes to a memory; new content is re-embedded and re-indexed. The
    change log gets `event` with each field's old and new value."""
    user_id = current.user_id
    vector = engine.embedder.embed_query(fields["content"]) if "content" in fields else None
    reindex = bool({"content", "type", "event_time"} & fields.keys())
    with engine.unit_of_work(user_id) as work:
        archived: dict[str, str] = {}
        if vector is not None:
            # New content of a cold memory: its new vector goes to the index, the archived one away.
            with work.read() as conn:
                archived = archive_locations(conn, user_id, [current.id])
        woken = {"tier": "hot", "archive_segment": None} if archived else {}
        old_vector = engine.store.embedding_of(current.id, user_id) if reindex else None
        try:
            with work.transaction() as conn:
                engine.store.update_rows(conn, current.id, user_id, {**fields, **woken}, vector)
                record_history(
                    conn,
                    user_id,
                    [
                        HistoryEvent(
                            current.id, event, engine.now(), cause, {"changes": _changes(current, fields)}
                        )
                    ],
                )
                updated = engine.store.get(current.id, user_id)
                assert updated is not None
                new_vector = vector if vector is not None else old_vector
                if reindex and new_vector is not None:  # (a cold memory keeps no vector in the index)
                    # Written before the commit: if the index fails, SQLite rolls back and neither changed.
                    work.index.add(user_id, [updated.id], new_vector[None, :], [index_meta(updated)])
        except BaseException:
            if reindex:
                _restore_vector(engine, current, old_vector if not archived else None)
            raise
        work.archive.remove(user_id, archived)
        if "content" in fields:
            forget_cached_texts()
        if reindex:
            work.added([updated])
    return updated


def _restore_vector(engine: Engine, memory: Memory, vector: np.ndarray | None) -> None:
    """Put a memory's index entry back as it was before a failed update (none for a cold one)."""
    try:
        if vector is None:
            engine.index.delete(memory.user_id, [memory.id])
        else:
            engine.index.add(memory.user_id, [memory.id], vector[None, :], [index_meta(memory)])
    except Exception as failure:
        # The write's pending marker stays and the next open checks the index; the caller hears
        # the first failure, which says what went wrong.
        if storage_failure(failure, engine.path) is None:
            raise


def retype_memories(engine: Engine, user_id: str, changes: Sequence[tuple[Memory, str, str]]) -> None:
    """Give many memories a new type at once (promotions): one transaction with their history
    events, then one vector-index write of the new filter metadata. Each change is
    (memory, new type, cause)."""
    if not changes:
        return
    now = engine.now()
    with engine.unit_of_work(user_id) as work:
        with work.transaction() as conn:
            for memory, new_type, _ in changes:
                engine.store.update_rows(conn, memory.id, user_id, {"type": new_type})
            record_history(
                conn,
                user_id,
                [
                    HistoryEvent(
                        memory.id,
                        "promoted",
                        now,
                        cause,
                        {"changes": {"type": {"old": memory.type, "new": new_type}}},
                    )
                    for memory, new_type, cause in changes
                ],
            )
        ids = [memory.id for memory, _, _ in changes]
        rows, vectors = engine.store.fetch_rows(ids, MemoryFilter(user_id=user_id), with_embeddings=True)
        # Cold memories have no vector in the index (their rows read back as zeros): leave them out.
        keep = [i for i, row in enumerate(rows) if row["tier"] != "cold" and row["embedding"] is not None]
        if keep and vectors is not None:
            memories = [row_to_memory(rows[i]) for i in keep]
            work.index.add(
                user_id, [m.id for m in memories], vectors[keep], [index_meta(m) for m in memories]
            )


def _changes(current: Memory, fields: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each changed field's old and new value, times as ISO strings."""
    changes = {}
    for name, value in fields.items():
        old = getattr(current, name)
        if name == "event_time":
            old, value = _iso(old), _iso(from_epoch(value))
        changes[name] = {"old": old, "new": value}
    return changes


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat()


def reinforce_paths(engine: Engine, user_id: str, result: Recall, now: float) -> None:
    """Strengthen the edges ripple recall walked to reach its hits, with a cap
    (docs/design-notes.md#graph):
    only paths to hits in the better half of the result that the graph lifted (support >=
    GRAPH_SUPPORTED), never paths into memories the graph did not help or that ranked low."""
    lifted = [
        hit
        for hit in result.hits[: max(1, (len(result.hits) + 1) // 2)]
        if hit.components.get("graph", 0.0) >= GRAPH_SUPPORTED
    ]
    steps = ((a, b) for hit in lifted for a, b in zip(hit.path, hit.path[1:], strict=False))
    pairs = list(dict.fromkeys(steps))
    if not pairs:
        return
    settings = engine.settings.graph
    with engine.unit_of_work(user_id) as work:
        reinforce_edges(work.store, user_id, pairs, now, settings.reinforce_step, settings.weight_cap)
        work.reinforced(pairs, settings.reinforce_step)
