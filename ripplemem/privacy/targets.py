"""What an erase request covers: one memory and its versions, everything a text points to, or a
whole user. The targets hold the erased text and vectors in process memory only, for verification;
they never reach a report, a log or a file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ripplemem.engine.engine import Engine
from ripplemem.errors import MemoryNotFoundError
from ripplemem.privacy.text_rules import (
    dense_matches,
    entity_matches,
    exact_matches,
    is_description,
    keyword_matches,
    through_entities,
)
from ripplemem.store.queries.erase import memory_places, memory_vectors, user_memory_ids
from ripplemem.store.queries.revisions import linked_pairs, summaries_of
from ripplemem.store.tables import knowledge_bases as kb_tables
from ripplemem.store.tables.graph import get_entities, mentioned_entities, user_entities
from ripplemem.store.tables.modality_vectors import vectors_of
from ripplemem.store.tables.readings import reading_ids

MODES = ("memory", "matching", "user")


@dataclass
class EraseTargets:
    """The rows one erase request removes, and (in memory only) the text and vectors they held."""

    mode: str
    user_id: str
    memory_ids: list[str]
    rowids: list[int]
    contents: list[str]
    vectors: dict[str, np.ndarray]
    cold: dict[str, str]
    entity_ids: list[str]
    entity_names: list[str]
    reading_ids: list[int]
    kb_alone: list[str] = field(default_factory=list)
    kb_shared: list[str] = field(default_factory=list)
    # Images' and sounds' own vectors, per modality (each in its encoder's space).
    modality_vectors: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    # Each memory's text (a dry run's preview), and the text of a matching request (verification).
    texts_by_id: dict[str, str] = field(default_factory=dict)
    request: str = ""


def select_memory(engine: Engine, user_id: str, memory_id: str) -> EraseTargets:
    """One memory of the user with its other versions (SUPERSEDES chain) and the summaries of it."""
    if engine.store.get(memory_id, user_id) is None:
        raise MemoryNotFoundError(f"no memory {memory_id!r} for user {user_id!r} to erase")
    return _targets(engine, "memory", user_id, _with_derived(engine, user_id, [memory_id]))


def select_matching(engine: Engine, user_id: str, text: str, min_similarity: float) -> EraseTargets:
    """Every memory of the user a text points to, evidence first: the text itself in a memory's
    content or metadata (any case), all its keywords (FTS), or an entity it names; dense similarity
    (dense_matches) only when nothing holds the text itself and the text is a description in words
    (is_description: an address or a number is matched literally only); then the memories their specific
    entities point to (ENTITY_FANOUT), and all their versions and summaries. Knowledge-base chunks
    are never in it."""
    exact = exact_matches(engine.store, user_id, text)
    found = [
        *exact,
        *keyword_matches(engine.store, user_id, text),
        *entity_matches(engine.store, user_id, text),
    ]
    if not exact and is_description(text):
        query = np.asarray(engine.embedder.embed_query(text), dtype=np.float32)
        found += dense_matches(_all_vectors(engine, user_id), query, min_similarity)
    found += through_entities(engine.store, user_id, list(dict.fromkeys(found)))
    chosen = _with_derived(engine, user_id, list(dict.fromkeys(found)))
    targets = _targets(engine, "matching", user_id, chosen)
    targets.request = text
    return targets


def select_user(engine: Engine, user_id: str) -> EraseTargets:
    """Everything of a user: every memory whatever its status, and their knowledge-base grants."""
    with engine.store.read() as conn:
        ids = user_memory_ids(conn, user_id)
        kbs = kb_tables.granted_kbs(engine.store, user_id)
        alone = [kb for kb in kbs if kb_tables.readers(conn, kb) == [user_id]]
    targets = _targets(engine, "user", user_id, ids)
    targets.kb_alone = alone
    targets.kb_shared = [kb for kb in kbs if kb not in alone]
    return targets


def _with_derived(engine: Engine, user_id: str, ids: Sequence[str]) -> list[str]:
    """The ids, every version linked to them (SUPERSEDES, either way), and the summaries of any."""
    chained = list(dict.fromkeys(ids))
    seen = set(chained)
    frontier = chained
    while frontier:
        pairs = linked_pairs(engine.store, user_id, frontier, "SUPERSEDES")
        frontier = list(dict.fromkeys(node for pair in pairs for node in pair if node not in seen))
        seen.update(frontier)
        chained.extend(frontier)
    if not chained:
        return []
    summaries = summaries_of(engine.store, user_id, chained)
    return list(dict.fromkeys([*chained, *summaries]))


def _all_vectors(engine: Engine, user_id: str, ids: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """Every vector of the user's memories (or of some of them): SQLite's copies, the archive's for cold."""
    with engine.store.read() as conn:
        rows = memory_vectors(conn, user_id, ids)
    vectors = {r[0]: np.frombuffer(r[1], dtype=np.float32) for r in rows if r[1] is not None}
    archived = {r[0]: r[2] for r in rows if r[1] is None and r[2] is not None}
    vectors.update(engine.archive.vectors(user_id, archived))
    return vectors


def _targets(engine: Engine, mode: str, user_id: str, ids: list[str]) -> EraseTargets:
    """Read what the selected memories hold: rows, text, vectors, archive places, entities, readings.
    A whole user is read by user_id alone; a selection by id lists in chunks."""
    whole = mode == "user"
    if not ids and not whole:
        return EraseTargets(mode, user_id, [], [], [], {}, {}, [], [], [])
    with engine.store.read() as conn:
        rows = memory_places(conn, user_id, None if whole else ids)
        if whole:
            entities = user_entities(conn, user_id)
        else:
            mentioned = list(dict.fromkeys(mentioned_entities(conn, user_id, ids)))
            entities = list(get_entities(engine.store, user_id, mentioned).values())
        readings = reading_ids(conn, user_id, None if whole else set(ids))
    memory_ids = [r[1] for r in rows]
    return EraseTargets(
        mode=mode,
        user_id=user_id,
        memory_ids=memory_ids,
        rowids=[r[0] for r in rows],
        texts_by_id={r[1]: r[2] for r in rows},
        contents=list(dict.fromkeys(r[2] for r in rows)),
        vectors=_all_vectors(engine, user_id, None if whole else memory_ids),
        cold={r[1]: r[3] for r in rows if r[3] is not None},
        entity_ids=[e.id for e in entities],
        entity_names=[e.name for e in entities],
        reading_ids=readings,
        modality_vectors=vectors_of(engine.store, user_id, memory_ids),
    )
