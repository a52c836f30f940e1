"""Write paths behind the facade: a batch, an update or a delete reaches SQLite (rows, keywords,
graph), the vector index and the in-memory indexes together, or not at all."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ripplemem.engine import Engine
from ripplemem.graph_builder import ALIAS_KINDS, GraphInput, alias_by_embedding, build_graph_rows
from ripplemem.stores.graph_tables import (
    EntityRow,
    delete_orphan_entities,
    insert_edges,
    insert_entities,
    mentioned_entities,
    reinforce_edges,
    set_entity_vectors,
)
from ripplemem.stores.history_table import HistoryEvent, record_history
from ripplemem.stores.lifecycle_rows import archive_locations
from ripplemem.stores.sqlite import index_metadata, to_epoch
from ripplemem.types import Memory, Recall


def index_meta(memory: Memory) -> dict[str, Any]:
    """The filter columns a vector index keeps beside a memory's vector."""
    when = memory.event_time or memory.created_at
    return index_metadata(memory.user_id, memory.agent_id, memory.session_id, memory.type, to_epoch(when))


def write_batch(engine: Engine, user_id: str, memories: list[Memory],
                inputs: Sequence[GraphInput]) -> list[Memory]:
    """Embed and store new memories of one user with their graph rows; returns the stored memories."""
    vectors = engine.embedder.embed_documents([m.content for m in memories])
    settings = engine.settings.graph
    with engine.write_lock:
        neighbours = engine.index.query_many(user_id, vectors, settings.similar_k + 1) \
            if settings.similar_k > 0 else [[] for _ in memories]
        now = engine.now()
        with engine.store.transaction() as conn:
            engine.store.insert_rows(conn, memories, vectors)
            rows = build_graph_rows(conn, memories, vectors, neighbours, inputs, settings, now)
            insert_entities(conn, user_id, memories[0].agent_id, rows.entities, now)
            insert_edges(conn, user_id, rows.edges)
        try:
            engine.index.add(user_id, [m.id for m in memories], vectors, [index_meta(m) for m in memories])
        except BaseException:
            # Keep SQLite and the index in step: a batch is stored in both or in neither.
            delete_memories(engine, user_id, [m.id for m in memories])
            raise
        engine.memories_added(user_id, memories, rows.edges)
        _link_aliases(engine, user_id, [e for e in rows.new_entities if e.type in ALIAS_KINDS])
    return memories


def _link_aliases(engine: Engine, user_id: str, new: list[EntityRow]) -> None:
    """ALIAS edges between new entities and known ones whose names embed alike (derived data,
    written after the batch: if this fails the memories are stored all the same)."""
    if not new:
        return
    vectors = np.asarray(engine.embedder.embed_documents([e.name for e in new]), dtype=np.float32)
    known_ids, known = engine.entity_vectors(user_id)
    now = engine.now()
    edges = alias_by_embedding(new, vectors, known_ids, known, engine.settings.graph, now)
    with engine.store.transaction() as conn:
        set_entity_vectors(conn, user_id, [(e.id, v) for e, v in zip(new, vectors, strict=True)])
        insert_edges(conn, user_id, edges)
    engine.entities_embedded(user_id, [e.id for e in new], vectors)
    engine.memories_added(user_id, [], edges)


def delete_memories(engine: Engine, user_id: str, memory_ids: Sequence[str],
                    history: Sequence[HistoryEvent] = ()) -> list[str]:
    """Delete memories of one user everywhere (cold ones from their archive segments too), and
    entities no memory mentions any more; `history` events are logged in the same transaction."""
    with engine.write_lock:
        with engine.store.transaction() as conn:
            entities = mentioned_entities(conn, user_id, memory_ids)
            archived = archive_locations(conn, user_id, memory_ids)
            deleted = engine.store.delete_rows(conn, memory_ids, user_id)
            orphans = delete_orphan_entities(conn, user_id, entities) if deleted else []
            gone = set(deleted)
            record_history(conn, user_id, [event for event in history if event.memory_id in gone])
        if deleted:
            engine.index.delete(user_id, deleted)
            engine.archive.remove(user_id, archived)
            engine.memories_removed(user_id, [*deleted, *orphans])
    return deleted


def update_memory(engine: Engine, current: Memory, fields: dict[str, Any]) -> Memory:
    """Write validated field changes to a memory; new content is re-embedded and re-indexed."""
    user_id = current.user_id
    vector = engine.embedder.embed_query(fields["content"]) if "content" in fields else None
    with engine.write_lock:
        archived: dict[str, str] = {}
        if vector is not None:
            # New content of a cold memory: its new vector goes to the index, the archived one away.
            with engine.store.read() as conn:
                archived = archive_locations(conn, user_id, [current.id])
        woken = {"tier": "hot", "archive_segment": None} if archived else {}
        engine.store.update(current.id, user_id, {**fields, **woken}, vector)
        engine.archive.remove(user_id, archived)
        updated = engine.store.get(current.id, user_id)
        assert updated is not None
        if {"content", "type", "event_time"} & fields.keys():
            if vector is None:
                vector = engine.store.embedding_of(current.id, user_id)
            reindex_content(engine, user_id, updated, vector)
    return updated


def reindex_content(engine: Engine, user_id: str, memory: Memory, vector: np.ndarray | None) -> None:
    """After an update: refresh the memory's vector (content, type or time changed) and keywords."""
    if vector is not None:
        engine.index.add(user_id, [memory.id], vector[None, :], [index_meta(memory)])
    engine.memories_added(user_id, [memory])


def reinforce_paths(engine: Engine, user_id: str, result: Recall, now: float) -> None:
    """Strengthen the edges ripple recall walked to reach its hits (seed 004 §3.2), with a cap."""
    steps = ((a, b) for hit in result.hits for a, b in zip(hit.path, hit.path[1:], strict=False))
    pairs = list(dict.fromkeys(steps))
    if not pairs:
        return
    settings = engine.settings.graph
    with engine.write_lock:
        reinforce_edges(engine.store, user_id, pairs, now, settings.reinforce_step, settings.weight_cap)
        engine.edges_reinforced(user_id, pairs, settings.reinforce_step)
