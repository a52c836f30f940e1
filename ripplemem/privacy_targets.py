"""What an erase request covers: one memory and its versions, everything a text points to, or a
whole user. The targets hold the erased text and vectors in process memory only, for verification;
they never reach a report, a log or a file."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ripplemem.engine import Engine
from ripplemem.errors import MemoryNotFoundError
from ripplemem.memory_history import version_chain
from ripplemem.stores import kb_tables
from ripplemem.stores.memory_rows import fts_query, scope_token
from ripplemem.stores.modality_vectors import vectors_of

MODES = ("memory", "matching", "user")
# A match's entities lead to the other memories mentioning them, unless the entity is a hub
# (the user's own name, "today"): followed only when it is mentioned by at most this many memories.
ENTITY_FANOUT = 5


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


def select_memory(engine: Engine, user_id: str, memory_id: str) -> EraseTargets:
    """One memory of the user with its other versions (SUPERSEDES chain) and the summaries of it."""
    if engine.store.get(memory_id, user_id) is None:
        raise MemoryNotFoundError(f"no memory {memory_id!r} for user {user_id!r} to erase")
    return _targets(engine, "memory", user_id, _with_derived(engine, user_id, [memory_id]))


def select_matching(engine: Engine, user_id: str, text: str, min_similarity: float) -> EraseTargets:
    """Every memory of the user a text points to: dense cosine >= min_similarity over all of the
    user's vectors (cold ones from the archive), every keyword of the text (FTS), or a mention of an
    entity the text names; then the memories their specific entities point to (ENTITY_FANOUT), and
    all their versions and summaries. Knowledge-base chunks are never in it."""
    found: list[str] = []
    found += _dense_matches(engine, user_id, np.asarray(engine.embedder.embed_query(text), dtype=np.float32),
                            min_similarity)
    found += _keyword_matches(engine, user_id, text)
    found += _entity_matches(engine, user_id, text)
    found += _through_entities(engine, user_id, list(dict.fromkeys(found)))
    return _targets(engine, "matching", user_id, _with_derived(engine, user_id, list(dict.fromkeys(found))))


def select_user(engine: Engine, user_id: str) -> EraseTargets:
    """Everything of a user: every memory whatever its status, and their knowledge-base grants."""
    with engine.store.read() as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM memories WHERE user_id = ? ORDER BY rowid",
                                          (user_id,))]
        kbs = [r[0] for r in conn.execute("SELECT kb FROM kb_grants WHERE user_id = ?", (user_id,))]
        alone = [kb for kb in kbs if kb_tables.readers(conn, kb) == [user_id]]
    targets = _targets(engine, "user", user_id, ids)
    targets.kb_alone = alone
    targets.kb_shared = [kb for kb in kbs if kb not in alone]
    return targets


def _with_derived(engine: Engine, user_id: str, ids: Sequence[str]) -> list[str]:
    """The ids, every version linked to them, and the summaries made from any of them."""
    chained: list[str] = []
    for memory_id in ids:
        if memory_id not in chained:
            chained.extend(i for i in version_chain(engine, user_id, memory_id) if i not in chained)
    if not chained:
        return []
    with engine.store.read() as conn:
        summaries = [r[0] for r in conn.execute(
            f"SELECT DISTINCT src FROM edges WHERE user_id = ? AND type = 'SUMMARIZES' "
            f"AND dst IN ({','.join('?' * len(chained))})", [user_id, *chained])]
    return list(dict.fromkeys([*chained, *summaries]))


def _dense_matches(engine: Engine, user_id: str, query: np.ndarray, floor: float) -> list[str]:
    rows = _all_vectors(engine, user_id)
    if not rows:
        return []
    ids = list(rows)
    scores = np.stack([rows[i] for i in ids]) @ query
    return [ids[i] for i in np.argsort(-scores) if scores[i] >= floor]


def _all_vectors(engine: Engine, user_id: str, ids: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """Every vector of the user's memories (or of some of them): SQLite's copies, the archive's for cold."""
    sql = "SELECT id, embedding, archive_segment FROM memories WHERE user_id = ?"
    params: list[object] = [user_id]
    if ids is not None:
        sql += f" AND id IN ({','.join('?' * len(ids))})"
        params.extend(ids)
    with engine.store.read() as conn:
        rows = conn.execute(sql, params).fetchall()
    vectors = {r[0]: np.frombuffer(r[1], dtype=np.float32) for r in rows if r[1] is not None}
    archived = {r[0]: r[2] for r in rows if r[1] is None and r[2] is not None}
    vectors.update(engine.archive.vectors(user_id, archived))
    return vectors


def _keyword_matches(engine: Engine, user_id: str, text: str) -> list[str]:
    """Memories holding every keyword of the text (any status), through the FTS index."""
    match = fts_query(text)
    if match is None:
        return []
    every = match.replace(" OR ", " AND ")
    with engine.store.read() as conn:
        return [r[0] for r in conn.execute(
            "SELECT m.id FROM memories_fts f JOIN memories m ON m.rowid = f.rowid "
            "WHERE memories_fts MATCH ? AND m.user_id = ?",
            (f'scope:"{scope_token(user_id)}" AND tokens:({every})', user_id))]


def _entity_matches(engine: Engine, user_id: str, text: str) -> list[str]:
    """Memories mentioning an entity of the user whose name the text contains as whole words."""
    lowered = text.casefold()
    with engine.store.read() as conn:
        entities = conn.execute("SELECT id, name, canonical FROM entities WHERE user_id = ?",
                                (user_id,)).fetchall()
        named = [r[0] for r in entities if _names_in(lowered, (r[1], r[2]))]
        if not named:
            return []
        return [r[0] for r in conn.execute(
            f"SELECT DISTINCT src FROM edges WHERE user_id = ? AND type = 'MENTIONS' "
            f"AND dst IN ({','.join('?' * len(named))})", [user_id, *named])]


def _through_entities(engine: Engine, user_id: str, ids: Sequence[str]) -> list[str]:
    """Memories sharing a specific (non-hub) entity with one of the matched memories."""
    if not ids:
        return []
    with engine.store.read() as conn:
        return [r[0] for r in conn.execute(
            "SELECT DISTINCT e.src FROM edges e WHERE e.user_id = ? AND e.type = 'MENTIONS' AND e.dst IN ("
            "  SELECT m.dst FROM edges m WHERE m.user_id = ? AND m.type = 'MENTIONS' "
            f"  AND m.src IN ({','.join('?' * len(ids))})) "
            "AND (SELECT COUNT(*) FROM edges c WHERE c.user_id = e.user_id AND c.type = 'MENTIONS' "
            "     AND c.dst = e.dst) <= ?", [user_id, user_id, *ids, ENTITY_FANOUT])]


def _names_in(lowered: str, names: Iterable[str]) -> bool:
    for name in names:
        needle = name.casefold().strip()
        if needle and re.search(r"(?<!\w)" + re.escape(needle) + r"(?!\w)", lowered):
            return True
    return False


def _targets(engine: Engine, mode: str, user_id: str, ids: list[str]) -> EraseTargets:
    """Read what the selected memories hold: rows, text, vectors, archive places, entities, readings."""
    whole = mode == "user"
    if not ids and not whole:
        return EraseTargets(mode, user_id, [], [], [], {}, {}, [], [], [])
    # A whole user is selected by user_id alone (no id list: it may be longer than SQLite's limit).
    chosen = "" if whole else f" AND id IN ({','.join('?' * len(ids))})"
    params: list[object] = [user_id] if whole else [user_id, *ids]
    with engine.store.read() as conn:
        rows = conn.execute(f"SELECT rowid, id, content FROM memories WHERE user_id = ?{chosen}",
                            params).fetchall()
        cold = {r[0]: r[1] for r in conn.execute(
            f"SELECT id, archive_segment FROM memories WHERE user_id = ?{chosen} "
            "AND archive_segment IS NOT NULL", params)}
        entities = conn.execute(
            "SELECT id, name FROM entities n WHERE user_id = ?" + ("" if whole else
            " AND id IN (SELECT dst FROM edges WHERE user_id = n.user_id AND type = 'MENTIONS' AND src IN "
            f"({','.join('?' * len(ids))}))"), params).fetchall()
        readings = [r[0] for r in conn.execute(
            "SELECT id FROM readings WHERE user_id = ?" + chosen.replace(" id IN", " memory_id IN"), params)]
    memory_ids = [r[1] for r in rows]
    return EraseTargets(mode=mode, user_id=user_id, memory_ids=memory_ids, rowids=[r[0] for r in rows],
                        contents=list(dict.fromkeys(r[2] for r in rows)),
                        vectors=_all_vectors(engine, user_id, None if whole else memory_ids),
                        cold=cold, entity_ids=[r[0] for r in entities], entity_names=[r[1] for r in entities],
                        reading_ids=readings, modality_vectors=vectors_of(engine.store, user_id, memory_ids))
