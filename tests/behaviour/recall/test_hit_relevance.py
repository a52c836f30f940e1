"""Hit.relevance: in [0, 1], comparable across queries and stores, and what score_threshold cuts on;
the ranking (order and scores) stays recall's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from internals import engine_of

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.index.bm25 import query_terms
from ripplemem.retrieval.relevance import keyword_share
from ripplemem.retrieval.script_reading import dense_trust

TEA = "I drink green tea every morning."
SISTER = "My sister lives in Berlin and works as an architect."
REPORT = "The quarterly report is due on Friday."
# Queries in other words than the memories they mean (no keyword shared).
PARAPHRASES = {"which beverage do I sip at dawn": TEA, "sibling who designs buildings in Germany": SISTER}
FILLER = [
    "The bike needs new brakes before the race.",
    "We planted tomatoes along the fence.",
    "The dentist moved the check-up to June.",
    "My laptop battery drains too fast.",
    "The neighbours adopted a grey cat.",
    "I am learning to play the cello.",
    "The car insurance renews in April.",
    "Our team switched to a four-day week.",
    "The library closes early on holidays.",
    "I lost my umbrella on the bus.",
    "The roof leaked during the storm.",
    "He collects vintage postcards.",
    "The museum opens a dinosaur exhibit.",
    "I ran a half marathon last spring.",
    "The printer on the second floor jams.",
    "We booked a cabin by the lake.",
    "The recipe needs two cups of flour.",
    "My passport expires next year.",
    "The plumber fixed the kitchen sink.",
    "She speaks Portuguese fluently.",
    "The garden hose has a crack.",
    "I prefer aisle seats on planes.",
    "The gym raised its monthly fee.",
    "Our dog is afraid of thunder.",
    "The bakery sells rye bread on Sundays.",
    "I repainted the hallway blue.",
    "The concert tickets sold out in minutes.",
]


def store(embedder: Embedder, path: Path, texts: list[str]) -> RippleMem:
    """A fresh on-disk store holding these texts as semantic memories."""
    handle = RippleMem(path=path, user_id="alice", embedder=embedder)
    handle.add_many([{"content": text, "type": "semantic"} for text in texts])
    return handle


@pytest.fixture
def small(embedder: Embedder, tmp_path: Path) -> Iterator[RippleMem]:
    """A store of 3 memories."""
    handle = store(embedder, tmp_path / "small", [TEA, SISTER, REPORT])
    yield handle
    handle.close()


@pytest.fixture
def large(embedder: Embedder, tmp_path: Path) -> Iterator[RippleMem]:
    """A store of 30 memories: the same 3 and 27 others."""
    handle = store(embedder, tmp_path / "large", [TEA, SISTER, REPORT, *FILLER])
    yield handle
    handle.close()


def relevance_of(handle: RippleMem, query: str, content: str) -> float:
    """The relevance recall gives the memory with this content for the query."""
    hits = handle.recall(query, k=30, record_access=False).hits
    return next(hit.relevance for hit in hits if hit.memory.content == content)


def test_relevance_is_in_unit_range_and_score_ranks(large: RippleMem) -> None:
    for query in [*PARAPHRASES, "quarterly report", "cello lessons", "a hot cup of chai", "我喜欢喝绿茶"]:
        hits = large.recall(query, k=30, record_access=False).hits
        assert hits and all(0.0 <= hit.relevance <= 1.0 for hit in hits)
        assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_a_paraphrase_beats_an_unrelated_memory_the_same_in_any_store(
    small: RippleMem, large: RippleMem
) -> None:
    for query, meant in PARAPHRASES.items():
        in_small, in_large = relevance_of(small, query, meant), relevance_of(large, query, meant)
        assert in_small == pytest.approx(in_large, abs=1e-3)
        assert in_small > 0.6
        for handle in (small, large):
            assert relevance_of(handle, query, REPORT) < 0.2


def test_every_query_word_present_is_full_relevance(small: RippleMem, large: RippleMem) -> None:
    for handle in (small, large):
        index = engine_of(handle).keyword_index("alice")
        assert keyword_share(query_terms("quarterly report"), REPORT, index) == 1.0
        assert keyword_share(query_terms("quarterly report"), TEA, index) == 0.0
        assert relevance_of(handle, "quarterly report", REPORT) == 1.0
    index = engine_of(small).keyword_index("alice")
    assert keyword_share(query_terms("unheard-of words"), REPORT, index) == 0.0  # none known


def test_keyword_mode_gives_the_same_relevance(large: RippleMem) -> None:
    for query in ("green tea in the morning", "sister in Berlin"):
        hybrid = {h.memory.id: h.relevance for h in large.recall(query, k=5, mode="hybrid").hits}
        keyword = large.recall(query, k=5, mode="keyword", record_access=False).hits
        assert keyword and all(
            hit.relevance == pytest.approx(hybrid[hit.memory.id], abs=1e-3)
            for hit in keyword
            if hit.memory.id in hybrid
        )


def test_a_chinese_query_on_minilm_is_judged_by_its_words(memory_only: RippleMem, embedder: Embedder) -> None:
    tea = memory_only.add("我喜欢早上喝绿茶", type="semantic")
    memory_only.add("我下个月去杭州出差", type="semantic")
    hits = memory_only.recall("喝绿茶", k=5, record_access=False).hits
    relevance = {hit.memory.id: hit.relevance for hit in hits}
    assert relevance[tea.id] == 1.0  # every bigram of the query is in the memory
    # MiniLM puts unrelated Chinese texts at a cosine its English scale calls a paraphrase; it
    # reads a third of the Chinese probe, so its cosine may claim at most that much.
    trust = dense_trust("喝绿茶", embedder)  # the embedder memory_only is built on
    assert trust < 0.5
    assert all(value <= trust for memory_id, value in relevance.items() if memory_id != tea.id)


def test_score_threshold_drops_weak_hits_and_keeps_the_order(large: RippleMem) -> None:
    for query in [*PARAPHRASES, "quarterly report", "a report about the garden hose"]:
        everything = large.recall(query, k=10, record_access=False).hits
        kept = large.recall(query, k=10, record_access=False, score_threshold=0.5).hits
        assert [(h.memory.id, h.score) for h in kept] == [
            (h.memory.id, h.score) for h in everything if h.relevance >= 0.5
        ]
        assert 0 < len(kept) < len(everything)
    for query, meant in PARAPHRASES.items():
        assert [h.memory.content for h in large.recall(query, score_threshold=0.5).hits] == [meant]


@pytest.mark.parametrize(
    ("threshold", "error", "message"),
    [
        (1.5, InvalidInputError, r"score_threshold must be in \[0, 1\]"),
        (-0.1, InvalidInputError, r"score_threshold must be in \[0, 1\]"),
        ("0.5", InvalidTypeError, "score_threshold must be a number"),
        (True, InvalidTypeError, "score_threshold must be a number"),
    ],
)
def test_bad_thresholds_are_refused(
    small: RippleMem, threshold: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        small.recall("tea", score_threshold=threshold)  # type: ignore[arg-type]


def test_the_async_twin_takes_the_threshold(small: RippleMem) -> None:
    import asyncio

    found = asyncio.run(small.arecall("which beverage do I sip at dawn", 5, score_threshold=0.5))
    assert [hit.memory.content for hit in found.hits] == [TEA]
