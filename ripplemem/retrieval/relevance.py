"""Relevance a user can threshold: how well each recalled memory matches the query, in [0, 1],
comparable across queries and stores of the same embedder (``Hit.relevance``; ``Hit.score`` ranks).

Two readings, either enough on its own: the meaning (the hit's cosine on the embedder's measured
scale, 0 at its unrelated mean and 1 at its paraphrase mean, trusted as far as the embedder reads the
query's script) and the words (the share of the query's keyword weight, by idf, the memory holds:
1 when every query word is there).
relevance = 1 - (1 - meaning) * (1 - words). Computed for the returned hits only.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from numbers import Real

import numpy as np

from ripplemem.core.types import Hit
from ripplemem.engine.engine import Engine
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.index.bm25 import KeywordIndex, index_terms, query_terms
from ripplemem.retrieval.pipeline import SearchSpec
from ripplemem.retrieval.script_reading import dense_trust
from ripplemem.store.tables.memories import MemoryFilter


def check_score_threshold(value: object) -> float | None:
    """Validate recall(score_threshold=...): None, or a number in [0, 1]."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InvalidTypeError(f"score_threshold must be a number in [0, 1] or None, got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidInputError(f"score_threshold must be in [0, 1] (a Hit.relevance), got {value!r}")
    return float(value)


def with_relevance(engine: Engine, query: str, hits: Sequence[Hit], spec: SearchSpec) -> list[Hit]:
    """The hits with ``relevance`` filled; order and scores unchanged. A hit's cosine is its
    ``components["dense"]``, looked up from its stored vector when recall did not compute it
    (keyword mode, a cross-modal hit, an earlier version)."""
    if not hits:
        return []
    scale = engine.cosine_scale()
    trust = dense_trust(query, engine.embedder)
    cosines = _cosines(
        engine, hits, functools.partial(spec.queries.embed_query, query), spec.mode == "keyword"
    )
    terms = query_terms(query)
    words = _keyword_shares(engine, terms, hits)
    found = []
    for hit, cosine, share in zip(hits, cosines, words, strict=True):
        meaning = min(1.0, max(0.0, scale.level(cosine))) * trust
        found.append(replace(hit, relevance=round(1.0 - (1.0 - meaning) * (1.0 - share), 4)))
    return found


def _keyword_shares(engine: Engine, terms: Sequence[str], hits: Sequence[Hit]) -> list[float]:
    """keyword_share of every hit, each user's term weights computed once and term presence read
    from the keyword index (a hit it does not hold, such as a knowledge-base passage, is tokenised)."""
    shares = [0.0] * len(hits)
    by_user: dict[str, list[int]] = {}
    for i, hit in enumerate(hits):
        by_user.setdefault(hit.memory.user_id, []).append(i)
    for user_id, positions in by_user.items():
        index = engine.keyword_index(user_id)
        weights = _term_weights(terms, index)
        held = index.holding(list(weights), [hits[i].memory.id for i in positions])
        for i, present in zip(positions, held, strict=True):
            shares[i] = _held_share(
                weights, set(index_terms(hits[i].memory.content)) if present is None else present
            )
    return shares


def keyword_share(terms: Sequence[str], content: str, index: KeywordIndex) -> float:
    """The share of the query terms' idf weight that the content holds (a term no memory holds
    weighs the most); 0 when the query has no keyword terms or the content none of the known ones."""
    return _held_share(_term_weights(terms, index), set(index_terms(content)))


def _term_weights(terms: Sequence[str], index: KeywordIndex) -> dict[str, float]:
    """Each query term's idf weight in the index (a term no memory holds weighs the most)."""
    total = len(index)
    return {
        term: math.log(1.0 + (total - df + 0.5) / (df + 0.5))
        for term, df in index.document_frequencies(terms).items()
    }


def _held_share(weights: dict[str, float], present: set[str]) -> float:
    """The share of the terms' weight among the present terms; 0 when there is no weight."""
    whole = sum(weights.values())
    return sum(weight for term, weight in weights.items() if term in present) / whole if whole > 0.0 else 0.0


def _cosines(
    engine: Engine, hits: Sequence[Hit], query_vector: Callable[[], np.ndarray], keyword_mode: bool
) -> list[float]:
    """Each hit's cosine with the query: recall's own where it has one, else from the stored vector."""
    cosines = {
        hit.memory.id: hit.components["dense"]
        for hit in hits
        if not keyword_mode and "dense" in hit.components
    }
    missing = [hit for hit in hits if hit.memory.id not in cosines]
    if missing:
        vector = np.asarray(query_vector(), dtype=np.float32)
        for (user_id, status), ids in _grouped(missing).items():
            rows, vectors = engine.store.fetch_rows(
                ids, MemoryFilter(user_id=user_id, status=status), with_embeddings=True
            )
            if vectors is not None:
                cosines.update(
                    (row["id"], float(value)) for row, value in zip(rows, vectors @ vector, strict=True)
                )
    return [float(cosines.get(hit.memory.id, 0.0)) for hit in hits]


def _grouped(hits: Sequence[Hit]) -> dict[tuple[str, str], list[str]]:
    groups: dict[tuple[str, str], list[str]] = {}
    for hit in hits:
        groups.setdefault((hit.memory.user_id, hit.memory.status), []).append(hit.memory.id)
    return groups
