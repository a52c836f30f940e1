"""Recency tilts the order among memories the query matches; a fresh memory the query barely
matches gets no lift from being fresh, so it cannot push a real match out of the top k."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from ripplemem import RippleMem, Settings
from ripplemem.embedding.embedders import Embedder

NOW = datetime(2025, 6, 1, 12, 0)
ABOUT_ANNA = [
    ("My sister Anna moved to Berlin for her new job", 120),
    ("Anna says the rent in Berlin is twice what she paid in Leeds", 90),
    ("Anna is learning German at an evening class", 60),
]
TODAY = [
    "I had pasta with mushrooms for lunch",
    "The printer on the second floor is jammed again",
    "I need to renew my car insurance before Friday",
    "We watched a documentary about octopuses",
    "The gym is closed for repairs this week",
    "I bought new running shoes",
    "My laptop battery died in the meeting",
    "The bus was twenty minutes late this morning",
]
QUESTION = "How is my sister getting on in Berlin?"


def _store(embedder: Embedder, settings: Settings | None = None) -> RippleMem:
    mem = RippleMem(path=None, user_id="alice", embedder=embedder, settings=settings, clock=lambda: NOW)
    for content, days in ABOUT_ANNA:
        mem.add(content, event_time=NOW - timedelta(days=days))
    for hours, content in enumerate(TODAY, 1):
        mem.add(content, event_time=NOW - timedelta(hours=hours))
    return mem


@pytest.mark.parametrize("mode", ["hybrid", "ripple"])
def test_fresh_unrelated_memories_do_not_outrank_older_matches(embedder: Embedder, mode: str) -> None:
    with _store(embedder) as mem:
        hits = mem.recall(QUESTION, k=3, mode=mode, record_access=False).hits
    assert sorted(hit.memory.content for hit in hits) == sorted(content for content, _ in ABOUT_ANNA)


def test_without_the_gate_todays_noise_takes_the_third_place(embedder: Embedder) -> None:
    with _store(embedder, Settings(recency_full_relevance=0.0)) as mem:
        hits = mem.recall(QUESTION, k=3, mode="hybrid", record_access=False).hits
    assert hits[2].memory.content in TODAY


def test_between_two_strong_matches_the_fresh_one_still_comes_first(embedder: Embedder) -> None:
    with RippleMem(path=None, user_id="alice", embedder=embedder, clock=lambda: NOW) as mem:
        for hours, content in enumerate(TODAY, 2):
            mem.add(content, event_time=NOW - timedelta(hours=hours))
        old = mem.add("I went to a Coldplay concert with Anna", event_time=NOW - timedelta(days=60))
        new = mem.add("I went to a Coldplay concert with Tom", event_time=NOW - timedelta(hours=1))
        hits = mem.recall("who did I see Coldplay with", k=2, mode="hybrid", record_access=False).hits
    assert [hit.memory.id for hit in hits] == [new.id, old.id]
    assert hits[1].components["relevance"] > hits[0].components["relevance"]
