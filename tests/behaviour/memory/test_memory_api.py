"""The public API on a real store: add, recall, get, update, delete, list, stats, context."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from ripplemem import Memory, MemoryNotFoundError, MemoryType, Recall, RippleMem

FACTS = [
    ("I started reading The Three-Body Problem", "episodic"),
    ("My sister Anna lives in Berlin and works as a nurse", "semantic"),
    ("I drink green tea every morning, never coffee", "semantic"),
    ("We booked flights to Lisbon for the summer holiday", "episodic"),
    ("The dentist appointment is on Friday at 3pm", "episodic"),
    ("我喜欢早上喝绿茶", "semantic"),
    ("下个月我要去杭州出差", "episodic"),
]


@pytest.fixture
def filled(mem: RippleMem) -> RippleMem:
    mem.add_many([{"content": text, "type": kind} for text, kind in FACTS])
    return mem


def test_add_returns_stored_memory_with_all_fields(mem: RippleMem) -> None:
    when = datetime(2024, 3, 1, 9, 30)
    m = mem.add(
        "I started reading The Three-Body Problem",
        type="episodic",
        session_id="s1",
        event_time=when,
        importance=0.6,
        metadata={"turn": "D1:3"},
    )
    assert isinstance(m, Memory) and m.id
    stored = mem.get(m.id)
    assert stored is not None
    assert stored.content == "I started reading The Three-Body Problem"
    assert stored.type == "episodic" and stored.session_id == "s1"
    assert stored.importance == pytest.approx(0.6)
    assert stored.metadata == {"turn": "D1:3"}
    assert stored.event_time == when.replace(tzinfo=timezone.utc)
    assert stored.user_id == "alice"


def test_recall_finds_the_answer_first(filled: RippleMem) -> None:
    cases = {
        "which sci-fi book am I reading?": "Three-Body",
        "what do I drink in the morning?": "green tea",
        "where does my sister live?": "Berlin",
        "when is the dentist?": "dentist",
        "绿茶": "绿茶",
        "杭州出差是什么时候": "杭州",
    }
    for query, expected in cases.items():
        result = filled.recall(query, k=3)
        assert isinstance(result, Recall)
        assert expected in result.hits[0].memory.content, (query, [h.memory.content for h in result])


def test_hits_are_ranked_and_explained(filled: RippleMem) -> None:
    result = filled.recall("my sister in Berlin", k=5)
    scores = [hit.score for hit in result.hits]
    assert scores == sorted(scores, reverse=True)
    assert len(result.hits) == 5
    top = result.hits[0]
    assert {"relevance", "dense", "keyword", "recency", "importance"} <= set(top.components)
    assert "keyword" in top.why


def test_recall_modes_differ_in_what_they_use(filled: RippleMem) -> None:
    keyword = filled.recall("Lisbon", k=3, mode="keyword")
    assert [h.memory.content for h in keyword.hits] == ["We booked flights to Lisbon for the summer holiday"]
    dense = filled.recall("a trip to Portugal", k=1, mode="dense")
    assert "Lisbon" in dense.hits[0].memory.content


def test_recall_filters_by_type_time_importance_metadata_and_session(mem: RippleMem) -> None:
    mem.add(
        "I ran 5 km in the park",
        type="episodic",
        event_time=datetime(2024, 1, 5),
        session_id="a",
        importance=0.2,
        metadata={"topic": "sport"},
    )
    mem.add(
        "I ran 10 km by the river",
        type="episodic",
        event_time=datetime(2024, 6, 5),
        session_id="b",
        importance=0.9,
        metadata={"topic": "sport"},
    )
    mem.add("Running is good for the heart", type="semantic", metadata={"topic": "health"})
    contents = lambda r: {h.memory.content for h in r.hits}  # noqa: E731
    assert contents(mem.recall("running", types="semantic")) == {"Running is good for the heart"}
    assert contents(mem.recall("running", types=[MemoryType.EPISODIC], since="2024-03-01")) == {
        "I ran 10 km by the river"
    }
    assert contents(mem.recall("running", until=datetime(2024, 3, 1))) == {"I ran 5 km in the park"}
    assert contents(mem.recall("running", min_importance=0.8)) == {"I ran 10 km by the river"}
    assert contents(mem.recall("running", metadata={"topic": "health"})) == {"Running is good for the heart"}
    assert contents(mem.recall("running", session_id="a")) == {"I ran 5 km in the park"}


def test_recall_counts_as_access(filled: RippleMem) -> None:
    top = filled.recall("green tea", k=1).hits[0].memory
    before = filled.get(top.id)
    assert before is not None and before.access_count == 1 and before.last_accessed is not None
    filled.recall("green tea", k=1)
    after = filled.get(top.id)
    assert after is not None and after.access_count == 2


def test_importance_and_recency_shape_episodic_scores(mem: RippleMem) -> None:
    now = datetime.now(timezone.utc)
    old = mem.add("I visited the museum of modern art", event_time=now - timedelta(days=400))
    new = mem.add("I visited the museum of natural history", event_time=now - timedelta(hours=2))
    hits = {h.memory.id: h for h in mem.recall("visited a museum", k=2).hits}
    assert hits[new.id].components["recency"] > 0.9
    assert hits[old.id].components["recency"] == pytest.approx(0.1)
    low = mem.add("Call the plumber about the leaking sink", importance=0.1)
    high = mem.add("Call the plumber about the leaking sink today", importance=1.0)
    hits = {h.memory.id: h for h in mem.recall("call the plumber", k=2).hits}
    assert hits[high.id].score > hits[low.id].score


def test_context_has_dates_and_respects_budget(mem: RippleMem) -> None:
    mem.add("I adopted a cat named Luna", event_time=datetime(2024, 3, 15, 10, 0))
    for i in range(30):
        mem.add(f"Luna the cat knocked over vase number {i} in the living room")
    result = mem.recall("my cat Luna", k=30)
    text = result.context(token_budget=60)
    assert text.startswith("Relevant memories:")
    assert 1 < len(text.splitlines()) < 31
    full = result.context(token_budget=5000)
    assert "2024-03-15" in full and "I adopted a cat named Luna" in full
    with pytest.raises(ValueError, match="token_budget"):
        result.context(token_budget=0)


def test_update_changes_content_and_what_recall_finds(mem: RippleMem) -> None:
    m = mem.add("My favourite colour is blue")
    updated = mem.update(
        m.id, content="My favourite colour is green", importance=0.9, metadata={"source": "chat"}
    )
    assert updated.content == "My favourite colour is green" and updated.importance == 0.9
    assert mem.get(m.id).metadata == {"source": "chat"}  # type: ignore[union-attr]
    assert mem.recall("green", k=1, mode="keyword").hits[0].memory.id == m.id
    assert mem.recall("blue", mode="keyword").hits == []
    assert mem.recall("favourite colour green", k=1, mode="dense").hits[0].memory.id == m.id


def test_update_type_moves_memory_between_type_filters(mem: RippleMem) -> None:
    m = mem.add("Paris is the capital of France", type="episodic")
    mem.update(m.id, type="semantic")
    assert [h.memory.id for h in mem.recall("capital of France", types="semantic").hits] == [m.id]
    assert mem.recall("capital of France", types="episodic").hits == []


def test_delete_removes_from_every_path(mem: RippleMem) -> None:
    m = mem.add("The wifi password is hunter2")
    assert mem.delete(m.id) is True
    assert mem.get(m.id) is None
    for mode in ("hybrid", "dense", "keyword"):
        assert all(h.memory.id != m.id for h in mem.recall("wifi password", mode=mode).hits)
    assert mem.delete(m.id) is False
    with pytest.raises(MemoryNotFoundError):
        mem.update(m.id, content="x")


def test_list_orders_and_filters(mem: RippleMem) -> None:
    for day in (3, 1, 2):
        mem.add(f"day {day} entry", event_time=datetime(2024, 5, day), session_id=f"s{day}")
    mem.add("a rule", type="semantic", event_time=datetime(2024, 5, 10))
    assert [m.content for m in mem.list(type="episodic")] == ["day 3 entry", "day 2 entry", "day 1 entry"]
    assert [m.content for m in mem.list(type="episodic", newest_first=False, limit=2)] == [
        "day 1 entry",
        "day 2 entry",
    ]
    assert [m.content for m in mem.list(since="2024-05-02", until="2024-05-04")] == [
        "day 3 entry",
        "day 2 entry",
    ]
    assert [m.content for m in mem.list(session_id="s1")] == ["day 1 entry"]
    assert [m.content for m in mem.list(limit=1, offset=1)] == ["day 3 entry"]


def test_stats_count_what_is_stored(filled: RippleMem) -> None:
    stats = filled.stats()
    assert stats["total"] == len(FACTS)
    assert stats["by_type"] == {"episodic": 4, "semantic": 3}
    assert stats["vectors"] == len(FACTS)
    assert stats["embedding_model"] == "all-MiniLM-L6-v2"
    assert stats["disk_bytes"] > 0


def test_add_many_is_one_batch_with_progress(mem: RippleMem) -> None:
    seen: list[tuple[int, int]] = []
    items = [
        {"content": f"note {i} about gardening", "session_id": "g", "metadata": {"i": i}} for i in range(25)
    ] + ["a plain string item"]
    stored = mem.add_many(items, batch_size=10, progress=lambda done, total: seen.append((done, total)))
    assert len(stored) == 26 and len({m.id for m in stored}) == 26
    assert seen == [(10, 26), (20, 26), (26, 26)]
    assert mem.stats()["total"] == 26
    assert mem.get(stored[5].id).metadata == {"i": 5}  # type: ignore[union-attr]


def test_in_memory_store_writes_nothing_to_disk(memory_only: RippleMem, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    memory_only.add("ephemeral thought about the sea")
    assert memory_only.recall("the sea", k=1).hits[0].memory.content == "ephemeral thought about the sea"
    assert memory_only.path is None and memory_only.stats()["disk_bytes"] == 0
    assert list(tmp_path.iterdir()) == []


def test_list_filters_by_metadata(mem: RippleMem) -> None:
    mem.add("Namespace note one", metadata={"namespace": "prefs", "key": "tea"})
    mem.add("Namespace note two", metadata={"namespace": "prefs", "key": "coffee"})
    mem.add("Other note", metadata={"namespace": "todo"})
    assert {m.content for m in mem.list(metadata={"namespace": "prefs"})} == {
        "Namespace note one",
        "Namespace note two",
    }
    tea = mem.list(metadata={"namespace": "prefs", "key": "tea"})
    assert [m.content for m in tea] == ["Namespace note one"]
