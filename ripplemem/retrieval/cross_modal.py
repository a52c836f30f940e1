"""Cross-modal recall: the query embedded by a registered encoder's text side (CLIP's, CLAP's)
searches that modality's index, and those hits join the text recall's.

Cosines of two spaces (MiniLM text, CLIP image) are not on one scale, so they are never compared:
each modality's hits are ranked on their own (cosine at or above the encoder's ``min_similarity``,
then the perceptual type profile), and the lists are merged with the text list by reciprocal rank
fusion (the text list first, so it wins ties). A memory found both by its caption and by its
image adds up. Only when a modality list has hits does the fused score replace the text score."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ripplemem.core.types import Hit, Recall
from ripplemem.retrieval.candidates import CandidatePool
from ripplemem.retrieval.expansion import fuse_by_rank
from ripplemem.retrieval.hybrid import score_pool
from ripplemem.store.vectors.base import VectorFilter

if TYPE_CHECKING:
    from ripplemem.engine.engine import Engine
    from ripplemem.retrieval.pipeline import SearchSpec


def modality_hits(
    engine: Engine, user_id: str, modality: str, encoder: Any, query: str, spec: SearchSpec
) -> list[Hit]:
    """The best memories of one modality for a text query, through the encoder's text side."""
    vector = np.asarray(encoder.embed_text(query), dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(vector))
    if not np.isfinite(norm) or norm == 0.0:
        return []  # nothing of this query lies in the encoder's space
    settings = engine.settings
    pool = max(spec.k * settings.candidate_multiplier, settings.min_candidates)
    # Only the filters that never change on a memory go to the index; SQLite applies the rest.
    found = engine.media.query(
        modality,
        user_id,
        vector / norm,
        pool,
        VectorFilter(agent_id=spec.flt.agent_id, session_id=spec.flt.session_id),
    )
    floor = float(getattr(encoder, "min_similarity", 0.0))
    cosines = {memory_id: score for memory_id, score in found if score >= floor}
    if not cosines:
        return []
    rows, _ = engine.store.fetch_rows(list(cosines), spec.flt)
    similarity = np.array([cosines[row["id"]] for row in rows], dtype=np.float64)
    candidates = CandidatePool(rows=rows, dense=similarity, keyword=np.zeros(len(rows)))
    hits = score_pool(candidates, np.clip(similarity, 0.0, 1.0), spec.now, settings, spec.k)
    return [
        replace(
            hit,
            components={
                **{k: v for k, v in hit.components.items() if k != "dense"},
                "cross_modal": hit.components["dense"],
            },
            why=f"{modality} matched by {encoder.model_id}",
        )
        for hit in hits
    ]


def with_cross_modal(engine: Engine, user_id: str, query: str, spec: SearchSpec, found: Recall) -> Recall:
    """The text recall merged by rank with what each registered encoder's text side finds in its
    modality index (unchanged when no encoder has a text side or none of them finds anything)."""
    if spec.mode == "keyword":
        return found
    lists = [
        hits
        for modality, encoder in sorted(engine.media.encoders.items())
        if callable(getattr(encoder, "embed_text", None))
        and (hits := modality_hits(engine, user_id, modality, encoder, query, spec))
    ]
    if not lists:
        return found
    best: dict[str, Hit] = {}
    for hit in found.hits:
        best[hit.memory.id] = hit
    for hits in lists:
        for hit in hits:
            known = best.get(hit.memory.id)
            best[hit.memory.id] = (
                hit
                if known is None
                else replace(
                    known,
                    components={**known.components, "cross_modal": hit.components["cross_modal"]},
                    why=f"{known.why}; {hit.why}",
                )
            )
    fused = fuse_by_rank(
        [[hit.memory.id for hit in found.hits], *([hit.memory.id for hit in hits] for hits in lists)], spec.k
    )
    return replace(
        found,
        hits=[
            replace(
                best[memory_id], score=score, components={**best[memory_id].components, "rank_fusion": score}
            )
            for memory_id, score in fused
        ],
    )
