"""Ripple recall gives graph credit for links to other memories, not for a memory's own
activation bouncing back through an entity only it mentions."""

from __future__ import annotations

from datetime import datetime, timezone

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=timezone.utc)


def test_a_private_entity_does_not_lift_a_weak_match(embedder: Embedder) -> None:
    mem = RippleMem(path=None, user_id="alice", embedder=embedder, clock=lambda: NOW)
    mem.add_many(
        [
            "I ate a big bowl of pasta at home",
            "I ate tacos at the night market",
            "I ate an apple this morning",
            "Tom cooked salmon for the two of us",  # the only memory with an entity (Tom)
        ]
    )
    query = "what did I eat?"
    hybrid = mem.recall(query, k=4, mode="hybrid", record_access=False)
    ripple = mem.recall(query, k=4, record_access=False)
    salmon = next(hit for hit in ripple.hits if "salmon" in hit.memory.content)
    assert salmon.components["graph"] == 0.0
    assert [h.memory.id for h in ripple.hits] == [h.memory.id for h in hybrid.hits]


def test_a_shared_entity_still_carries_evidence(embedder: Embedder) -> None:
    mem = RippleMem(path=None, user_id="alice", embedder=embedder, clock=lambda: NOW)
    mem.add_many(
        [
            "Calvin bought a Ferrari 488 last spring",
            "The Ferrari 488 needs new brake pads",
            "I like green tea",
        ]
    )
    query = "what car did Calvin buy?"
    ripple = {h.memory.content: h for h in mem.recall(query, k=3, record_access=False).hits}
    hybrid = {h.memory.content: h for h in mem.recall(query, k=3, mode="hybrid", record_access=False).hits}
    brakes, tea = "The Ferrari 488 needs new brake pads", "I like green tea"
    # The brake pads share the Ferrari 488 with the match and gain on it; the tea shares nothing.
    assert ripple[brakes].components["graph"] > 0.0
    assert ripple[brakes].components["relevance"] > hybrid[brakes].components["relevance"]
    assert ripple[tea].components["graph"] == 0.0
    assert ripple[tea].components["relevance"] == hybrid[tea].components["relevance"]
