"""recall() understands time phrases in the query ("yesterday", "上周"): it lifts or keeps only
what happened then, resolved against the clock or recall(now=...)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=timezone.utc)  # a Saturday


@pytest.fixture
def meals(tmp_path: Path, embedder: Embedder) -> Iterator[RippleMem]:
    """Alice's meals over two weeks, stored with when they happened."""
    handle = RippleMem(path=tmp_path / "store", user_id="alice", embedder=embedder, clock=lambda: NOW)
    handle.add_many(
        [
            {"content": "I ate a big bowl of pasta at home", "event_time": "2024-06-01T19:00:00+00:00"},
            {"content": "I ate tacos at the night market", "event_time": "2024-06-10T20:00:00+00:00"},
            {"content": "I ate an apple this morning", "event_time": "2024-06-15T08:00:00+00:00"},
            {"content": "Tom cooked salmon for the two of us", "event_time": "2024-06-14T19:30:00+00:00"},
            {"content": "我昨天中午吃了牛肉面", "event_time": "2024-06-14T12:15:00+00:00"},
            {"content": "上周三我吃了火锅", "event_time": "2024-06-05T19:00:00+00:00"},
        ]
    )
    yield handle
    handle.close()


def test_yesterday_lifts_what_happened_yesterday_above_better_worded_matches(meals: RippleMem) -> None:
    query = "what did I eat yesterday?"
    # Without the phrase, "I ate ..." memories word the answer better than yesterday's dinner.
    plain = meals.recall(query, k=3, mode="hybrid", time_phrases="off", record_access=False)
    assert plain.hits[0].memory.content == "I ate an apple this morning"
    result = meals.recall(query, k=3, mode="hybrid", record_access=False)
    assert result.hits[0].memory.content == "Tom cooked salmon for the two of us"
    assert result.time is not None and result.time["phrase"] == "yesterday"
    assert result.time["start"] == datetime(2024, 6, 14, tzinfo=timezone.utc)
    assert "happened 'yesterday'" in result.hits[0].why
    # Boosting keeps other times recallable: three hits come back, not only yesterday's.
    assert len(result.hits) == 3


def test_filter_keeps_only_memories_from_that_time(meals: RippleMem) -> None:
    result = meals.recall("what did I eat yesterday?", k=6, time_phrases="filter", record_access=False)
    assert {hit.memory.content for hit in result.hits} == {
        "Tom cooked salmon for the two of us",
        "我昨天中午吃了牛肉面",
    }
    assert result.time is not None and result.time["how"] == "filter"


def test_now_moves_the_reference_time(meals: RippleMem) -> None:
    result = meals.recall(
        "what did I eat yesterday?",
        k=5,
        time_phrases="filter",
        now="2024-06-02T09:00:00+00:00",
        record_access=False,
    )
    assert [hit.memory.content for hit in result.hits] == ["I ate a big bowl of pasta at home"]


def test_chinese_phrases_resolve_too(meals: RippleMem) -> None:
    last_week = meals.recall("上周我吃了什么？", k=5, time_phrases="filter", record_access=False)
    # 上周 = Monday 3 June .. Monday 10 June (exclusive).
    assert [hit.memory.content for hit in last_week.hits] == ["上周三我吃了火锅"]
    assert last_week.time is not None and last_week.time["phrase"] == "上周"


def test_off_ignores_the_phrase_and_an_explicit_range_still_narrows(meals: RippleMem) -> None:
    ignored = meals.recall("what did I eat yesterday?", k=6, time_phrases="off", record_access=False)
    assert ignored.time is None and len(ignored.hits) == 6
    # An explicit since/until intersects with the phrase: nothing of yesterday is before June 14.
    none = meals.recall(
        "what did I eat yesterday?",
        time_phrases="filter",
        until="2024-06-14T00:00:00+00:00",
        record_access=False,
    )
    assert none.hits == []


def test_a_query_without_a_time_phrase_is_unchanged(meals: RippleMem) -> None:
    result = meals.recall("salmon", k=2, record_access=False)
    assert result.time is None
    assert result.hits[0].memory.content == "Tom cooked salmon for the two of us"


def test_bad_options_are_named(meals: RippleMem) -> None:
    with pytest.raises(InvalidInputError, match="time_phrases"):
        meals.recall("what did I eat yesterday?", time_phrases="strict")
    with pytest.raises(InvalidInputError, match="now"):
        meals.recall("what did I eat yesterday?", now="not a date")


class CountingEmbedder:
    """The real embedder, counting the query texts it embeds."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.model_id, self.queries = inner, inner.model_id, []

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        return self.inner.embed_documents(texts)

    def embed_query(self, text):  # type: ignore[no-untyped-def]
        self.queries.append(text)
        return self.inner.embed_query(text)


def test_a_boosted_time_query_is_embedded_once(embedder: Embedder) -> None:
    counting = CountingEmbedder(embedder)
    with RippleMem(
        path=None,
        user_id="alice",
        embedder=counting,  # type: ignore[arg-type]
        clock=lambda: NOW,
    ) as mem:
        mem.add("Tom cooked salmon for the two of us", event_time="2024-06-14T19:30:00+00:00")
        counting.queries.clear()
        mem.recall("what did I eat yesterday?", record_access=False)  # searched inside and outside the window
        assert counting.queries == ["what did I eat ?"]
