"""The verification pass after an erase: search every layer by id, by content and by entity name,
and the raw bytes of every file under the store, for anything of the erased memories."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ripplemem.engine import Engine
from ripplemem.keyword_index import query_terms
from ripplemem.privacy_scrub import text_needles
from ripplemem.privacy_targets import EraseTargets
from ripplemem.stores.memory_rows import fts_query, scope_token

# Near-duplicate threshold of the dense check: an index entry this close to an erased vector is it.
NEAR_DUPLICATE = 0.999
USER_TABLES = ("memories", "entities", "edges", "history", "readings", "kb_grants", "modality_vectors")


@dataclass
class Verification:
    """Residues found per layer (0 everywhere = verified) and how many probes each layer got."""

    residues: dict[str, int] = field(default_factory=dict)
    probes: dict[str, int] = field(default_factory=dict)
    files_scanned: int = 0
    texts_held_elsewhere: int = 0

    @property
    def passed(self) -> bool:
        """True when no layer holds anything of the erased memories."""
        return not any(self.residues.values())

    def found(self, layer: str, residues: int, probes: int) -> None:
        """Record one layer's result."""
        self.residues[layer] = self.residues.get(layer, 0) + residues
        self.probes[layer] = self.probes.get(layer, 0) + probes

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values."""
        return {"passed": self.passed, "residues": dict(self.residues), "probes": dict(self.probes),
                "files_scanned": self.files_scanned, "texts_held_elsewhere": self.texts_held_elsewhere}


def verify_erased(engine: Engine, targets: EraseTargets) -> Verification:
    """Look for the erased memories in every layer; the result counts residues, never shows them."""
    result = Verification()
    ids = targets.memory_ids
    user_id = targets.user_id
    with engine.store.read() as conn:
        by_id = sum(conn.execute("SELECT COUNT(*) FROM memories WHERE id = ?", (i,)).fetchone()[0]
                    for i in ids)
        result.found("memories_by_id", by_id, len(ids))
        by_text = sum(conn.execute("SELECT COUNT(*) FROM memories WHERE user_id = ? AND content = ?",
                                   (user_id, t)).fetchone()[0] for t in targets.contents)
        result.found("memories_by_content", by_text, len(targets.contents))
        fts = sum(conn.execute("SELECT COUNT(*) FROM memories_fts WHERE rowid = ? AND rowid NOT IN "
                               "(SELECT rowid FROM memories)", (r,)).fetchone()[0] for r in targets.rowids)
        result.found("keyword_index_by_row", fts, len(targets.rowids))
        edges = sum(conn.execute("SELECT COUNT(*) FROM edges WHERE src = ? OR dst = ?", (i, i)).fetchone()[0]
                    for i in ids)
        result.found("edges", edges, len(ids))
        history = sum(conn.execute("SELECT COUNT(*) FROM history WHERE memory_id = ?", (i,)).fetchone()[0]
                      for i in ids)
        history += sum(conn.execute("SELECT COUNT(*) FROM history WHERE user_id = ? AND instr(detail, ?) > 0",
                                    (user_id, n)).fetchone()[0]
                       for t in targets.contents for n in text_needles(t))
        result.found("history", history, len(ids) + len(targets.contents))
        readings = sum(conn.execute("SELECT COUNT(*) FROM readings WHERE id = ?", (r,)).fetchone()[0]
                       for r in targets.reading_ids)
        result.found("readings", readings, len(targets.reading_ids))
        gone = [(i, n) for i, n in zip(targets.entity_ids, targets.entity_names, strict=True)
                if conn.execute("SELECT 1 FROM entities WHERE id = ?", (i,)).fetchone() is None]
        by_name = sum(conn.execute("SELECT COUNT(*) FROM entities WHERE user_id = ? AND name = ?",
                                   (user_id, n)).fetchone()[0] for _, n in gone)
        result.found("entities_by_name", by_name, len(gone))
        if targets.mode == "user":
            left = sum(conn.execute(f"SELECT COUNT(*) FROM {table} WHERE user_id = ?",
                                    (user_id,)).fetchone()[0] for table in USER_TABLES)
            result.found("user_rows", left, len(USER_TABLES))
    result.found("keyword_index_by_content", _fts_residues(engine, targets), len(targets.contents))
    result.found("keyword_cache", _cache_residues(engine, targets), len(targets.contents))
    result.found("graph_cache", sum(node in engine.graph(user_id) for node in ids), len(ids))
    result.found("vectors", _dense_residues(engine, targets), len(targets.vectors))
    result.found("modality_vectors", _modality_residues(engine, targets),
                 sum(len(v) for v in targets.modality_vectors.values()))
    result.found("archive", _archive_residues(engine, targets), len(targets.cold) or len(ids))
    result.found("working_memory", _working_residues(engine, targets), len(targets.contents))
    _scan_files(engine, targets, [n for _, n in gone], result)
    return result


def _fts_residues(engine: Engine, targets: EraseTargets) -> int:
    """FTS rows of the user matching all keywords of an erased text that no memory row backs."""
    found = 0
    with engine.store.read() as conn:
        for text in targets.contents:
            match = fts_query(text)
            if match is None:
                continue
            rows = conn.execute(
                "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid NOT IN "
                "(SELECT rowid FROM memories)",
                (f'scope:"{scope_token(targets.user_id)}" AND tokens:({match.replace(" OR ", " AND ")})',))
            found += len(rows.fetchall())
    return found


def _cache_residues(engine: Engine, targets: EraseTargets) -> int:
    """Erased ids the in-memory BM25 index still holds, or returns for an erased text."""
    index = engine.keyword_index(targets.user_id)
    erased = set(targets.memory_ids)
    held = sum(memory_id in index for memory_id in erased)
    for text in targets.contents:
        held += sum(1 for memory_id, _ in index.search(query_terms(text), 20) if memory_id in erased)
    return held


def _dense_residues(engine: Engine, targets: EraseTargets) -> int:
    """Index entries that are an erased memory: by id among the nearest, or a near-duplicate vector."""
    erased = set(targets.memory_ids)
    found = 0
    for vector in targets.vectors.values():
        for memory_id, similarity in engine.index.query(targets.user_id, vector, 5):
            if memory_id in erased or (similarity >= NEAR_DUPLICATE and engine.store.get(
                    memory_id, targets.user_id) is None):
                found += 1
    return found


def _modality_residues(engine: Engine, targets: EraseTargets) -> int:
    """Modality-index entries that are an erased memory: by id among the nearest to each erased
    image or sound vector, in that modality's own index, or the vector itself (near-duplicate)."""
    erased = set(targets.memory_ids)
    found = 0
    for modality, vectors in targets.modality_vectors.items():
        for vector in vectors.values():
            for memory_id, similarity in engine.media.query(modality, targets.user_id, vector, 5):
                if memory_id in erased or (similarity >= NEAR_DUPLICATE and engine.store.get(
                        memory_id, targets.user_id) is None):
                    found += 1
    return found


def _archive_residues(engine: Engine, targets: EraseTargets) -> int:
    erased = set(targets.memory_ids)
    return sum(len(erased.intersection(engine.archive.read(targets.user_id, segment)[0]))
               for segment in engine.archive.segments(targets.user_id))


def _working_residues(engine: Engine, targets: EraseTargets) -> int:
    working = engine.working(targets.user_id)
    return sum(1 for session in working.sessions() for item in working.session(session).items()
               if any(text in item.text for text in targets.contents))


def _scan_files(engine: Engine, targets: EraseTargets, entity_names: Iterable[str],
                result: Verification) -> None:
    """Search the raw bytes of every file under the store for erased text (UTF-8 and UTF-16) that no
    remaining row of anyone holds (another user may have said the same words: that is theirs)."""
    if engine.path is None:
        return
    texts = [t for t in dict.fromkeys([*targets.contents, *entity_names]) if len(t.strip()) >= 4]
    kept = [t for t in texts if not _held_elsewhere(engine, t)]
    result.texts_held_elsewhere = len(texts) - len(kept)
    needles = [n.encode(codec) for t in kept for n in text_needles(t) for codec in ("utf-8", "utf-16-le")]
    found = 0
    for name in _files(engine.path):
        result.files_scanned += 1
        try:
            with open(name, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        found += sum(1 for needle in dict.fromkeys(needles) if needle in data)
    result.found("raw_files", found, len(kept))


def _held_elsewhere(engine: Engine, text: str) -> bool:
    """Whether a remaining memory (any scope) or entity still holds this text: not a residue."""
    with engine.store.read() as conn:
        row = conn.execute("SELECT 1 FROM memories WHERE instr(content, ?) > 0 UNION ALL "
                           "SELECT 1 FROM entities WHERE instr(name, ?) > 0 OR instr(aliases, ?) > 0 LIMIT 1",
                           (text, text, text)).fetchone()
    return row is not None


def _files(root: str) -> list[str]:
    found: list[str] = []
    for folder, _, names in os.walk(root):
        found.extend(os.path.join(folder, name) for name in names)
    return sorted(found)
