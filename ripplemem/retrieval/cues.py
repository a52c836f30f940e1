"""Conversation cues ripple recall applies to first-stage relevance before the graph adds its
support: a short question turn hands its relevance to the turn that answers it (the question
says what was asked, its answer holds what is known), and a "when" query lifts memories that
name a time."""

from __future__ import annotations

import numpy as np

from ripplemem.config import GraphSettings
from ripplemem.language.answer_types import asks_when, is_question, names_time
from ripplemem.retrieval.candidates import CandidatePool
from ripplemem.retrieval.hybrid import Fusion
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.graph import next_in_session
from ripplemem.store.tables.memories import MemoryFilter


def with_rows(
    found: CandidatePool,
    relevance: np.ndarray,
    ids: list[str],
    flt: MemoryFilter,
    store: RowStore,
    query_vector: np.ndarray,
    fusion: Fusion,
) -> tuple[CandidatePool, np.ndarray]:
    """The pool with these memories added (those passing the filter; no keyword score), each
    with its exact cosine and its relevance on the first stage's scale."""
    rows, vectors = store.fetch_rows(ids, flt, with_embeddings=True)
    if not rows:
        return found, relevance
    # None when every memory is cold (no vector outside the archive): no dense similarity.
    cosines = (
        np.zeros(len(rows))
        if vectors is None
        else (vectors @ np.asarray(query_vector, dtype=np.float32)).astype(np.float64)
    )
    keyword = np.zeros(len(rows))
    pool = CandidatePool(
        rows=[*found.rows, *rows],
        dense=np.concatenate([found.dense, cosines]),
        keyword=np.concatenate([found.keyword, keyword]),
    )
    return pool, np.concatenate([relevance, fusion(cosines, keyword)])


def answers_inherit(
    found: CandidatePool,
    relevance: np.ndarray,
    flt: MemoryFilter,
    store: RowStore,
    query_vector: np.ndarray,
    fusion: Fusion,
    settings: GraphSettings,
) -> tuple[CandidatePool, np.ndarray]:
    """Each matching short question's answer (the next turn of its session, joining the pool if
    missing) gets at least the question's relevance; the question keeps 1 - question_discount."""
    if not settings.answer_handoff:
        return found, relevance
    asks = {
        row["id"]: i for i, row in enumerate(found.rows) if relevance[i] > 0 and is_question(row["content"])
    }
    if not asks:
        return found, relevance
    answers = next_in_session(store, flt.user_id, list(asks))
    present = {row["id"] for row in found.rows}
    missing = [answer for answer in dict.fromkeys(answers.values()) if answer not in present]
    if missing:
        found, relevance = with_rows(found, relevance, missing, flt, store, query_vector, fusion)
    position = {row["id"]: i for i, row in enumerate(found.rows)}
    given = relevance.copy()
    for ask, answer in answers.items():
        if answer in position:
            question = asks[ask]
            given[position[answer]] = max(given[position[answer]], relevance[question])
            given[question] = min(given[question], relevance[question] * (1.0 - settings.question_discount))
    return found, given


def time_answer_lift(
    query: str, found: CandidatePool, relevance: np.ndarray, settings: GraphSettings
) -> np.ndarray:
    """For a "when" query, conversation turns (memories with a session) that name a time get
    relevance × (1 + time_answer_boost), capped at 1; nobody else's relevance moves. Documents are
    left alone: a passage names dates whatever it is about."""
    if settings.time_answer_boost <= 0 or not asks_when(query):
        return relevance
    names = np.array(
        [row["session_id"] is not None and names_time(row["content"]) for row in found.rows], dtype=bool
    )
    return np.where(names, np.minimum(1.0, relevance * (1.0 + settings.time_answer_boost)), relevance)
