"""Turn a batch of new memories into graph rows: entities, and MENTIONS, RELATES, NEXT, SIMILAR and
ALIAS edges (docs/design-notes.md#graph). Runs inside the batch's write transaction, without an LLM
by default.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ripplemem.config import GraphSettings
from ripplemem.core.relations import Relation
from ripplemem.core.types import Memory
from ripplemem.language.entities import ExtractedEntity, canonical_name, extract_entities, has_cjk
from ripplemem.store.connection import Connection
from ripplemem.store.tables.graph import (
    EdgeRow,
    EntityRow,
    entities_containing_word,
    entity_id,
    existing_entity_ids,
    known_cjk_entities,
    last_memory_in_session,
)

# One-word names shorter than this never get ALIAS edges by word ("Al" would meet too much).
_MIN_ALIAS_WORD = 3
# Entity kinds whose names are compared by embedding for ALIAS edges (dates and amounts are not).
ALIAS_KINDS = frozenset({"person", "place", "organisation", "title", "product", "event", "name", "thing"})


@dataclass
class GraphInput:
    """What the caller knows about one new memory beyond its text."""

    relations: list[Relation] = field(default_factory=list)
    entities: list[ExtractedEntity] = field(default_factory=list)


@dataclass
class GraphRows:
    """The entities and edges a batch adds."""

    entities: list[EntityRow] = field(default_factory=list)
    edges: list[EdgeRow] = field(default_factory=list)
    # Entities this batch creates (the rest existed already).
    new_entities: list[EntityRow] = field(default_factory=list)


class _Batch:
    """Collects rows for one batch, deduplicating entities and edges."""

    def __init__(self, user_id: str, now: float) -> None:
        self.user_id, self.now = user_id, now
        self.entities: dict[str, EntityRow] = {}
        self.edges: dict[tuple[str, str, str, str], EdgeRow] = {}

    def entity(self, name: str, kind: str) -> str | None:
        canonical = canonical_name(name)
        if not canonical:
            return None
        node = entity_id(self.user_id, canonical)
        self.entities.setdefault(node, EntityRow(node, name.strip(), canonical, kind))
        return node

    def edge(
        self, src: str, dst: str, kind: str, weight: float = 1.0, confidence: float = 1.0, predicate: str = ""
    ) -> None:
        if src == dst:
            return
        key = (src, dst, kind, predicate)
        if key not in self.edges or self.edges[key].weight < weight:
            self.edges[key] = EdgeRow(src, dst, kind, weight, confidence, predicate, self.now)


def build_graph_rows(
    conn: Connection,
    memories: Sequence[Memory],
    vectors: np.ndarray,
    neighbours: Sequence[Sequence[tuple[str, float]]],
    inputs: Sequence[GraphInput],
    settings: GraphSettings,
    now: float,
) -> GraphRows:
    """Entities and edges for new memories of one user.

    `neighbours[i]` are (memory id, cosine) of already stored memories nearest to memory i; the
    batch's own memories are compared with each other here.
    """
    if not memories:
        return GraphRows()
    batch = _Batch(memories[0].user_id, now)
    for memory, extra in zip(memories, inputs, strict=True):
        _mentions(batch, memory, extra)
    _known_cjk_mentions(conn, batch, memories)
    _next_edges(conn, batch, memories)
    _similar_edges(batch, memories, vectors, neighbours, settings)
    new_ids = set(batch.entities) - existing_entity_ids(conn, batch.user_id, list(batch.entities))
    _alias_edges(conn, batch, new_ids, settings)
    return GraphRows(
        list(batch.entities.values()),
        list(batch.edges.values()),
        [batch.entities[node] for node in batch.entities if node in new_ids],
    )


def _mentions(batch: _Batch, memory: Memory, extra: GraphInput) -> None:
    for entity in [*extract_entities(memory.content), *extra.entities]:
        node = batch.entity(entity.name, entity.type)
        if node is not None:
            batch.edge(memory.id, node, "MENTIONS")
    for relation in extra.relations:
        subject = batch.entity(relation.subject, "thing")
        obj = batch.entity(relation.object, "thing")
        if subject is None or obj is None:
            continue
        batch.edge(memory.id, subject, "MENTIONS")
        batch.edge(memory.id, obj, "MENTIONS")
        batch.edge(subject, obj, "RELATES", confidence=relation.confidence, predicate=relation.predicate)


def _known_cjk_mentions(conn: Connection, batch: _Batch, memories: Sequence[Memory]) -> None:
    """Chinese names are often written without quotes and tagged as common nouns (三体 after
    《三体》): a CJK memory that contains an entity name the user already has mentions it."""
    chinese = [m for m in memories if has_cjk(m.content)]
    if not chinese:
        return
    names = [(canonical, node) for canonical, node in known_cjk_entities(conn, batch.user_id)]
    names += [(e.canonical, e.id) for e in batch.entities.values() if has_cjk(e.canonical)]
    for memory in chinese:
        for canonical, node in names:
            if len(canonical) >= 2 and canonical in memory.content:
                batch.edge(memory.id, node, "MENTIONS")


def _next_edges(conn: Connection, batch: _Batch, memories: Sequence[Memory]) -> None:
    batch_ids = [m.id for m in memories]
    previous: dict[str, str | None] = {}
    for memory in memories:
        session = memory.session_id
        if session is None:
            continue
        if session not in previous:
            previous[session] = last_memory_in_session(conn, batch.user_id, session, batch_ids)
        before = previous[session]
        if before is not None:
            batch.edge(before, memory.id, "NEXT")
        previous[session] = memory.id


def _similar_edges(
    batch: _Batch,
    memories: Sequence[Memory],
    vectors: np.ndarray,
    neighbours: Sequence[Sequence[tuple[str, float]]],
    settings: GraphSettings,
) -> None:
    if settings.similar_k <= 0:
        return
    vectors = np.asarray(vectors, dtype=np.float32)
    n, k = len(memories), settings.similar_k
    # Each item is compared with the batch's earlier items only (the strict lower triangle); one
    # partition for the whole batch finds each row's k nearest (the candidates are sorted below).
    within = np.where(np.tri(n, k=-1, dtype=bool), vectors @ vectors.T, -np.inf)
    nearest = np.argpartition(-within, k - 1, axis=1)[:, :k] if n > k else np.tile(np.arange(n), (n, 1))
    for i, memory in enumerate(memories):
        candidates = [(other, cos) for other, cos in neighbours[i] if other != memory.id]
        candidates += [(memories[j].id, float(within[i, j])) for j in nearest[i] if j < i]
        candidates = [c for c in candidates if c[1] >= settings.similar_threshold]
        candidates.sort(key=lambda c: -c[1])
        for other, cos in candidates[: settings.similar_k]:
            batch.edge(other, memory.id, "SIMILAR", weight=float(cos))


def _alias_edges(conn: Connection, batch: _Batch, new_ids: set[str], settings: GraphSettings) -> None:
    """ALIAS by normalisation: 'frank' meets 'frank ocean' (new entities only, either direction)."""
    for node in new_ids:
        entity = batch.entities[node]
        words = entity.canonical.split()
        if len(words) == 1 and len(words[0]) >= _MIN_ALIAS_WORD:
            for longer in entities_containing_word(conn, batch.user_id, words[0]):
                batch.edge(node, longer.id, "ALIAS", weight=settings.alias_weight)
            for other in batch.entities.values():
                if other.id != node and words[0] in other.canonical.split():
                    batch.edge(node, other.id, "ALIAS", weight=settings.alias_weight)
        elif len(words) > 1:
            for word in words:
                if len(word) >= _MIN_ALIAS_WORD:
                    short = entity_id(batch.user_id, word)
                    if short in batch.entities or existing_entity_ids(conn, batch.user_id, [short]):
                        batch.edge(short, node, "ALIAS", weight=settings.alias_weight)


def edge_strengths(rows: Sequence[Sequence[Any]], settings: GraphSettings, now: float) -> np.ndarray:
    """How much each edge carries when activation spreads: weight × confidence × its type's weight,
    decayed by the time since it was last activated (or created), never below the decay floor.

    `rows` are edges as sequences in EdgeRow's field order (src, dst, type, weight, confidence,
    predicate, created_at, last_activated, ...): a whole batch is computed at once.
    """
    n = len(rows)
    type_weights = settings.edge_type_weights
    factor = np.fromiter((r[3] * r[4] * type_weights.get(r[2], 1.0) for r in rows), np.float64, n)
    since = np.fromiter((r[6] if r[7] is None else r[7] for r in rows), np.float64, n)
    age_days = np.maximum(0.0, now - since) / 86_400.0
    decay = np.maximum(settings.decay_floor, 0.5 ** (age_days / settings.decay_half_life_days))
    return factor * decay


def weighted_edges(
    rows: Sequence[Sequence[Any]], settings: GraphSettings, now: float
) -> Iterator[tuple[str, str, float]]:
    """(src, dst, strength) of each edge row, for the in-memory graph."""
    strengths = edge_strengths(rows, settings, now).tolist()
    return zip([r[0] for r in rows], [r[1] for r in rows], strengths, strict=True)


def as_rows(edges: Sequence[EdgeRow]) -> list[tuple[Any, ...]]:
    """Edges as tuples in EdgeRow's field order (what ``edge_strengths`` reads)."""
    return [
        (
            e.src,
            e.dst,
            e.type,
            e.weight,
            e.confidence,
            e.predicate,
            e.created_at,
            e.last_activated,
            e.activations,
        )
        for e in edges
    ]


def alias_by_embedding(
    new: Sequence[EntityRow],
    vectors: np.ndarray,
    known_ids: Sequence[str],
    known: np.ndarray | None,
    settings: GraphSettings,
    now: float,
) -> list[EdgeRow]:
    """ALIAS edges from new entities to known or other new entities whose names embed alike
    ("NYC" / "New York City", "Liu Cixin" / "Cixin Liu"), confidence = cosine."""
    edges: list[EdgeRow] = []
    threshold = settings.alias_similarity
    within = vectors @ vectors.T
    known_sims = known @ vectors.T if known is not None and len(known) else None
    for i, entity in enumerate(new):
        pool = [(new[int(j)].id, float(within[j, i])) for j in np.flatnonzero(within[:i, i] >= threshold)]
        if known_sims is not None:
            close = np.flatnonzero(known_sims[:, i] >= threshold)
            pool += [(known_ids[int(j)], float(known_sims[j, i])) for j in close]
        edges += [
            EdgeRow(other, entity.id, "ALIAS", settings.alias_weight, min(1.0, cosine), "", now)
            for other, cosine in pool
            if other != entity.id
        ]
    return edges
