"""The verification pass after an erase: search every layer by id, by content and by entity name,
and the raw bytes of every file under the store, for anything of the erased memories or of the
request text. Every probe is batched and every file read once, so the pass is linear in the size
of the store; it runs outside the write lock (other users' writes go on meanwhile)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ripplemem.engine.engine import Engine
from ripplemem.privacy.byte_search import Needles
from ripplemem.privacy.files import store_files
from ripplemem.privacy.scrub import text_needles
from ripplemem.privacy.targets import EraseTargets
from ripplemem.store.connection import Connection
from ripplemem.store.queries import erase as erase_rows
from ripplemem.store.rows import RowStore
from ripplemem.store.sqlite.side_connection import checkpoint_wal
from ripplemem.store.tables.graph import (
    count_edges_touching,
    count_entities_named,
    entity_texts,
    existing_entity_ids,
)
from ripplemem.store.tables.history import count_history, history_details
from ripplemem.store.tables.readings import count_readings

# Near-duplicate threshold of the dense check: an index entry this close to an erased vector is it.
NEAR_DUPLICATE = 0.999
# Shorter texts occur by chance in binary files (a 3-byte string about once in 16 MB).
MIN_RAW_CHARS = 4


@dataclass
class Verification:
    """Residues found per layer (0 everywhere = verified) and how many probes each layer got."""

    residues: dict[str, int] = field(default_factory=dict)
    probes: dict[str, int] = field(default_factory=dict)
    files_scanned: int = 0
    files_skipped: list[str] = field(default_factory=list)
    texts_held_elsewhere: int = 0
    not_verifiable: list[str] = field(default_factory=list)
    """What this backend keeps out of the verification's reach (a server's WAL, replicas, backups)."""

    @property
    def passed(self) -> bool:
        """True when no layer holds anything of the erased memories or of the request text."""
        return not any(self.residues.values())

    def found(self, layer: str, residues: int, probes: int) -> None:
        """Record one layer's result."""
        self.residues[layer] = self.residues.get(layer, 0) + residues
        self.probes[layer] = self.probes.get(layer, 0) + probes

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values."""
        return {
            "passed": self.passed,
            "residues": dict(self.residues),
            "probes": dict(self.probes),
            "files_scanned": self.files_scanned,
            "files_skipped": list(self.files_skipped),
            "texts_held_elsewhere": self.texts_held_elsewhere,
            "not_verifiable": list(self.not_verifiable),
        }


def verify_erased(engine: Engine, targets: EraseTargets, wal_truncated: bool = True) -> Verification:
    """Look for the erased memories in every layer; the result counts residues, never shows them.
    ``wal_truncated`` is the compaction's result: a WAL it could not empty is tried once more."""
    result = Verification()
    texts = Needles(n.encode("utf-8") for t in _texts(targets) for n in text_needles(t))
    with engine.store.read() as conn:
        gone = _row_residues(engine.store, conn, targets, result)
        details = (detail for _, detail in history_details(conn, targets.user_id))
        result.found("history", _holding(texts, details), len(targets.contents))
        if targets.request:
            request = Needles(n.encode("utf-8") for n in text_needles(targets.request))
            result.found("request_text", _request_residues(conn, targets.user_id, request), 1)
    result.found("keyword_cache", _cache_residues(engine, targets), len(targets.memory_ids))
    result.found(
        "graph_cache",
        sum(node in engine.graph(targets.user_id) for node in targets.memory_ids),
        len(targets.memory_ids),
    )
    result.found("vectors", _dense_residues(engine, targets), len(targets.vectors))
    result.found(
        "modality_vectors",
        _modality_residues(engine, targets),
        sum(len(v) for v in targets.modality_vectors.values()),
    )
    result.found("archive", _archive_residues(engine, targets), len(targets.cold) or len(targets.memory_ids))
    result.found("working_memory", _working_residues(engine, targets, texts), len(targets.contents))
    result.not_verifiable = list(engine.store.unverifiable)
    if engine.path is not None:
        result.found("sqlite_wal", 0 if wal_truncated or checkpoint_wal(engine.path) else 1, 1)
        _scan_files(engine, targets, gone, result)
    return result


def _texts(targets: EraseTargets) -> list[str]:
    """The erased texts, and the request text of a matching erase."""
    return list(dict.fromkeys([*targets.contents, *([targets.request] if targets.request else [])]))


def _row_residues(
    store: RowStore, conn: Connection, targets: EraseTargets, result: Verification
) -> list[str]:
    """The SQLite layers, probed in batches; returns the names of the erased memories' entities
    that no row holds any more (the raw scan looks for them)."""
    user_id, ids = targets.user_id, targets.memory_ids
    result.found("memories_by_id", erase_rows.count_memories_by_id(conn, user_id, ids), len(ids))
    result.found(
        "memories_by_content",
        erase_rows.count_memories_by_content(conn, user_id, targets.contents),
        len(targets.contents),
    )
    result.found(
        "keyword_index_by_row",
        erase_rows.count_unbacked_keyword_rows(conn, user_id, targets.rowids),
        len(targets.rowids),
    )
    # FTS rows of the user that no memory backs: what is left of an erased text's keywords.
    result.found("keyword_index_orphans", store.orphan_keyword_rows(conn, user_id), 1)
    result.found("edges", count_edges_touching(conn, user_id, ids), len(ids))
    result.found("history_by_id", count_history(conn, user_id, ids), len(ids))
    result.found("readings", count_readings(conn, user_id, targets.reading_ids), len(targets.reading_ids))
    kept = existing_entity_ids(conn, user_id, targets.entity_ids)
    gone = [n for i, n in zip(targets.entity_ids, targets.entity_names, strict=True) if i not in kept]
    result.found("entities_by_name", count_entities_named(conn, user_id, gone), len(gone))
    if targets.mode == "user":
        left = sum(erase_rows.count_user_rows(conn, table, user_id) for table in erase_rows.USER_TABLES)
        result.found("user_rows", left, len(erase_rows.USER_TABLES))
    return gone


def _holding(texts: Needles, values: Iterable[str]) -> int:
    """How many of the values (stored texts) hold any of the texts, in one pass."""
    return sum(1 for value in values if value and texts.scan_text(value))


def _request_residues(conn: Connection, user_id: str, request: Needles) -> int:
    """The user's memories (content or metadata) and entities that still hold the request text."""
    return _holding(request, erase_rows.memory_text_blobs(conn, user_id)) + _holding(
        request, entity_texts(conn, user_id)
    )


def _cache_residues(engine: Engine, targets: EraseTargets) -> int:
    """Erased ids the in-memory BM25 index still holds (a search can only return what it holds)."""
    index = engine.keyword_index(targets.user_id)
    return sum(memory_id in index for memory_id in set(targets.memory_ids))


def _dense_residues(engine: Engine, targets: EraseTargets) -> int:
    """Index entries that are an erased memory: by id among the nearest, or a near-duplicate vector.
    After a whole-user erase the user has no vector at all."""
    if targets.mode == "user":
        return engine.index.count(targets.user_id)
    erased = set(targets.memory_ids)
    vectors = list(targets.vectors.values())
    if not vectors:
        return 0
    nearest = [hit for hits in engine.index.query_many(targets.user_id, _stack(vectors), 5) for hit in hits]
    suspects = {
        memory_id
        for memory_id, similarity in nearest
        if memory_id not in erased and similarity >= NEAR_DUPLICATE
    }
    missing = {memory_id for memory_id in suspects if engine.store.get(memory_id, targets.user_id) is None}
    return sum(1 for memory_id, _ in nearest if memory_id in erased or memory_id in missing)


def _modality_residues(engine: Engine, targets: EraseTargets) -> int:
    """Modality-index entries that are an erased memory: by id among the nearest to each erased
    image or sound vector, in that modality's own index, or the vector itself (near-duplicate)."""
    erased = set(targets.memory_ids)
    found = 0
    for modality, vectors in targets.modality_vectors.items():
        for vector in vectors.values():
            for memory_id, similarity in engine.media.query(modality, targets.user_id, vector, 5):
                if memory_id in erased or (
                    similarity >= NEAR_DUPLICATE and engine.store.get(memory_id, targets.user_id) is None
                ):
                    found += 1
    return found


def _archive_residues(engine: Engine, targets: EraseTargets) -> int:
    erased = set(targets.memory_ids)
    return sum(
        len(erased.intersection(engine.archive.read(targets.user_id, segment)[0]))
        for segment in engine.archive.segments(targets.user_id)
    )


def _working_residues(engine: Engine, targets: EraseTargets, texts: Needles) -> int:
    working = engine.working(targets.user_id)
    return sum(
        1
        for session in working.sessions()
        for item in working.session(session).items()
        if texts.scan_text(item.text)
    )


def _scan_files(
    engine: Engine, targets: EraseTargets, entity_names: Sequence[str], result: Verification
) -> None:
    """Search the raw bytes of every file under the store, each read once, for the erased texts,
    the removed entity names and the request text (UTF-8, UTF-16, JSON-escaped); a text some
    remaining row of anyone holds is not a residue (another user may have said the same words)."""
    assert engine.path is not None
    texts = [t for t in dict.fromkeys([*_texts(targets), *entity_names]) if len(t.strip()) >= MIN_RAW_CHARS]
    owner = {n.encode(codec): t for t in texts for n in text_needles(t) for codec in ("utf-8", "utf-16-le")}
    needles = Needles(owner)
    found: set[str] = set()
    for relative, chunks in store_files(engine.path):
        if chunks is None:
            result.files_skipped.append(relative)
            continue
        try:
            found.update(owner[n] for n in needles.scan(chunks))
        except FileNotFoundError:
            continue  # removed meanwhile (an archive segment rewritten by another writer)
        result.files_scanned += 1
    held = {t for t in found if _held_elsewhere(engine, t)}
    result.texts_held_elsewhere = len(held)
    result.found("raw_files", len(found - held), len(texts))


def _held_elsewhere(engine: Engine, text: str) -> bool:
    """Whether a remaining memory (any scope, content or metadata) or entity still holds this text."""
    with engine.store.read() as conn:
        return any(erase_rows.text_held_anywhere(conn, form) for form in text_needles(text))


def _stack(vectors: list[np.ndarray]) -> np.ndarray:
    return np.stack([np.asarray(v, dtype=np.float32) for v in vectors])
