"""Which topics of the documents a user studies from their learning touched ("document coverage vs
learning coverage"). A topic is a section of a document (its heading under the
title); it is covered when one of the user's learning memories embeds close to one of its chunks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ripplemem.core.types import Memory
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.memories import MemoryFilter

# ours: MiniLM cosine between a question or note and a chunk of the section it is about is
# typically 0.45-0.75; unrelated sections stay under 0.3.
COVERAGE_SIMILARITY = 0.45
_ALL = 1_000_000


@dataclass
class Topic:
    """One section of one document, its sub-sections, and how close the user's learning came."""

    name: str
    source: str
    subtopics: list[str] = field(default_factory=list)
    chunks: list[str] = field(default_factory=list)
    best_similarity: float = 0.0
    touched_by: int = 0

    @property
    def covered(self) -> bool:
        """Whether any learning memory came close enough to one of its chunks."""
        return self.touched_by > 0


def document_topics(store: RowStore, scope_id: str) -> list[Topic]:
    """The topics of every document stored under a scope (a knowledge base or the user's own
    document memories), in the order their first chunk was stored."""
    chunks = store.list(MemoryFilter(user_id=scope_id, types=("document",)), _ALL, 0, False)
    by_source: dict[str, list[Memory]] = {}
    for chunk in chunks:
        meta = chunk.metadata
        source = str(meta.get("source") or chunk.source or meta.get("file_name") or "document")
        by_source.setdefault(source, []).append(chunk)
    topics: list[Topic] = []
    for source, members in by_source.items():
        paths = [list(m.metadata.get("heading_path") or []) for m in members]
        titles = {p[0] for p in paths if p}
        level = 1 if len(titles) == 1 and any(len(p) > 1 for p in paths) else 0
        found: dict[str, Topic] = {}
        for chunk, path in zip(members, paths, strict=True):
            name = path[level] if len(path) > level else (path[-1] if path else _title(chunk, source))
            topic = found.setdefault(name, Topic(name, source))
            topic.chunks.append(chunk.id)
            if len(path) > level + 1 and path[level + 1] not in topic.subtopics:
                topic.subtopics.append(path[level + 1])
        topics.extend(found.values())
    return topics


def _title(chunk: Memory, source: str) -> str:
    return str(chunk.metadata.get("title") or chunk.metadata.get("file_name") or source)


def measure_coverage(
    store: RowStore,
    scope_id: str,
    topics: list[Topic],
    learning: np.ndarray | None,
    threshold: float = COVERAGE_SIMILARITY,
) -> None:
    """Fill each topic's best similarity and how many learning memories reached it."""
    if learning is None or not len(learning) or not topics:
        return
    vectors: dict[str, np.ndarray] = {}
    for ids, _, matrix in store.iter_embeddings(scope_id):
        vectors.update(zip(ids, matrix, strict=True))
    for topic in topics:
        rows = [vectors[c] for c in topic.chunks if c in vectors]
        if not rows:
            continue
        similarity = learning @ np.stack(rows).T  # learning memories x chunks (unit vectors)
        best = similarity.max(axis=1)
        topic.best_similarity = float(best.max())
        topic.touched_by = int((best >= threshold).sum())


def memory_vectors(store: RowStore, user_id: str, ids: set[str]) -> np.ndarray | None:
    """The stored vectors of some of a user's memories (None when none has one)."""
    rows = [
        vector
        for batch_ids, _, matrix in store.iter_embeddings(user_id)
        for memory_id, vector in zip(batch_ids, matrix, strict=True)
        if memory_id in ids
    ]
    return np.stack(rows) if rows else None
