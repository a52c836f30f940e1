"""Latest first: a question about the present ("What book am I reading now?", 我现在住在哪？) ranks
the latest state of a changing fact above its earlier ones (docs/recall.md#questions-about-now).

Only candidates that already match the query strongly take part (relevance within
``Settings.latest_margin`` of the best), and only among each other: memories at least
``Settings.latest_same_topic`` alike (cosine) are taken to be about one thing, and within such a
group the scores the group earned are handed out again, the highest to the latest. A fresh memory
that does not match the query, or matches something else, never moves.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ripplemem.config import Settings
from ripplemem.language.answer_types import asks_present
from ripplemem.retrieval.candidates import CandidatePool
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.memories import MemoryFilter

# At most this many strong candidates are compared (their vectors read): a recall's top few.
_MAX_COMPARED = 12

# score_pool's last say over the pool's scores before the top k are taken:
# (scores, when) -> (scores, {candidate position: note for its why}).
Preference = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, dict[int, str]]]


def latest_preference(
    query: str,
    found: CandidatePool,
    relevance: np.ndarray,
    flt: MemoryFilter,
    store: RowStore,
    settings: Settings,
) -> Preference | None:
    """The latest-first step for score_pool when the query asks about the present, else None."""
    if not asks_present(query) or len(found) < 2:
        return None

    def prefer(scores: np.ndarray, when: np.ndarray) -> tuple[np.ndarray, dict[int, str]]:
        strong = _strong(scores, relevance, settings.latest_margin)
        groups = _alike_groups(found, strong, flt, store, settings.latest_same_topic)
        return _latest_on_top(scores, when, groups)

    return prefer


def _strong(scores: np.ndarray, relevance: np.ndarray, margin: float) -> list[int]:
    """The best-scored candidates whose relevance is within the margin of the best relevance."""
    floor = float(relevance.max()) - margin
    ranked = [int(i) for i in np.argsort(-scores, kind="stable") if relevance[i] >= floor]
    return ranked[:_MAX_COMPARED]


def _alike_groups(
    found: CandidatePool, positions: list[int], flt: MemoryFilter, store: RowStore, same_topic: float
) -> list[list[int]]:
    """The positions in groups of two or more whose vectors are linked by cosine >= same_topic."""
    if len(positions) < 2:
        return []
    rows, vectors = store.fetch_rows([found.rows[i]["id"] for i in positions], flt, with_embeddings=True)
    if vectors is None or len(rows) < 2:
        return []
    at = {row["id"]: i for i, row in enumerate(rows)}
    kept = [p for p in positions if found.rows[p]["id"] in at]
    matrix = vectors[[at[found.rows[p]["id"]] for p in kept]]
    alike = matrix @ matrix.T >= same_topic
    group_of = list(range(len(kept)))  # union-find over the few strong candidates

    def root(i: int) -> int:
        while group_of[i] != i:
            i = group_of[i]
        return i

    for i in range(len(kept)):
        for j in range(i + 1, len(kept)):
            if alike[i, j]:
                group_of[root(j)] = root(i)
    groups: dict[int, list[int]] = {}
    for i, position in enumerate(kept):
        groups.setdefault(root(i), []).append(position)
    return [group for group in groups.values() if len(group) > 1]


def _latest_on_top(
    scores: np.ndarray, when: np.ndarray, groups: list[list[int]]
) -> tuple[np.ndarray, dict[int, str]]:
    """Each group's scores, highest first, given to its members latest first."""
    scores = scores.copy()
    notes: dict[int, str] = {}
    for group in groups:
        slots = sorted((float(scores[i]) for i in group), reverse=True)
        by_time = sorted(group, key=lambda i: (-when[i], -scores[i]))
        for position, score in zip(by_time, slots, strict=True):
            if score > scores[position]:
                notes[position] = f"preferred as the latest of {len(group)} alike matches (asks about now)"
            scores[position] = score
    return scores, notes
