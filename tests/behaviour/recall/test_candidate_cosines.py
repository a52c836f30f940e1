"""A recall candidate's dense score is its cosine with the query, whichever search found it: the
vector index's for its own finds, the stored vector's for memories only BM25 found."""

from __future__ import annotations

import numpy as np
import pytest
from internals import engine_of

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder

PLACES = ["harbour", "station", "market", "bakery", "library", "stadium", "museum", "garden"]
PLACES += ["bridge", "school", "airport", "cinema", "castle", "hospital", "zoo"]
ACTS = ["met Ana at the", "lost a glove near the", "painted the", "cycled past the", "had lunch by the"]
ACTS += ["waited for Ana at the"]
SEASONS = ["in spring", "in summer", "in autumn", "in winter"]
# Shares two rare words with the query and nothing else: dense search ranks it 125th of 361.
RARE = "Grandpa's old zeppelin model has a cracked propeller."
QUERY = "propeller zeppelin: I met Ana at the harbour in spring"


def test_every_candidate_scores_its_cosine_with_the_query(mem: RippleMem, embedder: Embedder) -> None:
    # A day number each, so none merges into another as a duplicate.
    settings = [(act, place, season) for act in ACTS for place in PLACES for season in SEASONS]
    texts = [f"On day {day} I {act} {place} {season}." for day, (act, place, season) in enumerate(settings)]
    stored = mem.add_many([{"content": text} for text in [*texts, RARE]])
    rare = stored[-1]
    query = embedder.embed_query(QUERY)
    dense_pool = {i for i, _ in engine_of(mem).index.query("alice", query, 40)}
    assert rare.id not in dense_pool  # so only BM25 brings it in
    for mode in ("hybrid", "ripple"):
        hits = mem.recall(QUERY, 5, mode=mode, record_access=False).hits
        assert rare.id in {hit.memory.id for hit in hits}
        vectors = embedder.embed_documents([hit.memory.content for hit in hits])
        assert [hit.components["dense"] for hit in hits] == pytest.approx(
            list(np.asarray(vectors) @ query), abs=1e-5
        )
