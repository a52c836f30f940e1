"""How ripple recall ranks: graph evidence supports direct matches and never replaces them, an
answer turn takes over its question's relevance, "when" questions prefer memories that name a
time, a query in a script the embedder cannot read leans on keywords, and reinforcement only
follows paths that lifted a hit."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from internals import engine_of

from ripplemem import RippleMem, Settings
from ripplemem.config import GRAPH_SUPPORTED, GraphSettings
from ripplemem.embedding.embedders import Embedder, resolve_embedder
from ripplemem.interfaces.cli.demo import QUERIES, conversation_items, load_conversation
from ripplemem.retrieval.script_reading import reads_cjk


def test_the_quickstart_question_finds_the_book_not_its_fresh_neighbour(embedder: Embedder) -> None:
    # The README's Quickstart data: the play is newer and follows the book in the session (NEXT),
    # but only the book matches the question.
    mem = RippleMem(path=None, user_id="alice", embedder=embedder)
    mem.add(
        "I started reading The Three-Body Problem",
        type="episodic",
        session_id="s1",
        event_time=datetime(2024, 3, 1, 9, 30),
        importance=0.6,
    )
    mem.observe("user", "Remember that my daughter's play is on Friday", session_id="s1")
    hits = mem.recall("which sci-fi book am I reading?", k=2).hits
    assert hits[0].memory.content == "I started reading The Three-Body Problem"
    assert hits[0].score > hits[1].score
    assert hits[0].why.startswith("matched by")


def test_the_demo_knee_question_puts_the_dated_answer_first(embedder: Embedder) -> None:
    conversation = load_conversation()
    today = datetime.fromisoformat(conversation["sessions"][-1]["date"]) + timedelta(days=1)
    mem = RippleMem(path=None, user_id="demo", embedder=embedder, clock=lambda: today)
    mem.add_many(conversation_items(conversation), progress=False)
    knee = next(q for q in QUERIES if "knee" in q.text)
    assert knee.since and knee.until
    hits = mem.recall(
        knee.text,
        k=knee.k,
        since=datetime.fromisoformat(knee.since),
        until=datetime.fromisoformat(knee.until),
        types=list(knee.types or ()),
    ).hits
    assert "April 15" in hits[0].memory.content
    assert all(not h.memory.content.endswith("When is the appointment?") for h in hits[:1])


def test_a_neighbour_reached_through_the_graph_stays_below_a_strong_match(memory_only: RippleMem) -> None:
    old = datetime(2023, 1, 5, 10, 0)
    memory_only.add_many(
        [
            {
                "content": "My passport number is stored in the blue folder in the study.",
                "session_id": "s1",
                "event_time": old,
            },
            {"content": "We should order pizza tonight.", "session_id": "s1"},
            {"content": "The plumber comes on Thursday.", "session_id": "s2"},
            {"content": "I renewed my gym membership.", "session_id": "s3"},
        ]
    )
    hits = memory_only.recall("where is my passport number kept?", k=4).hits
    assert "passport" in hits[0].memory.content


def test_an_answer_turn_takes_over_its_questions_relevance(memory_only: RippleMem) -> None:
    turns = [
        "user: I parked the car somewhere in the new mall garage.",
        "assistant: Which level did you park the car on?",
        "user: Level three, right next to the lifts.",
        "assistant: Noted, level three by the lifts.",
        "user: Also, the groceries are in the boot.",
    ]
    filler = [
        f"user: I tried a new recipe with {food} today."
        for food in ("lentils", "tofu", "salmon", "quinoa", "aubergine", "chickpeas")
    ]
    memory_only.add_many(
        [{"content": t, "session_id": "car"} for t in turns]
        + [{"content": t, "session_id": f"f{i}"} for i, t in enumerate(filler)]
    )
    ripple = [h.memory.content for h in memory_only.recall("what level did I park the car on?", k=3).hits]
    assert ripple.index("user: Level three, right next to the lifts.") < ripple.index(
        "assistant: Which level did you park the car on?"
    )


def test_when_questions_prefer_the_memory_that_names_a_time(memory_only: RippleMem) -> None:
    memory_only.add_many(
        [
            {"content": "I booked the dentist because my tooth hurts.", "session_id": "s1"},
            {"content": "The dentist appointment is on Monday at 9:15.", "session_id": "s2"},
            {"content": "The dentist was recommended by my colleague Sam.", "session_id": "s3"},
        ]
    )
    hits = memory_only.recall("when is my dentist appointment?", k=3).hits
    assert hits[0].memory.content == "The dentist appointment is on Monday at 9:15."


def test_a_when_question_lifts_dated_memories_without_moving_the_others(embedder: Embedder) -> None:
    items = [
        {"content": "The dentist said my tooth needs a filling.", "session_id": "s1"},
        {"content": "The dentist appointment is on Monday at 9:15.", "session_id": "s2"},
        {"content": "The dentist was recommended by my colleague Sam.", "session_id": "s3"},
    ]
    relevance = {}  # the same "when" question with the time-answer boost and without it
    for boost in (GraphSettings().time_answer_boost, 0.0):
        settings = Settings(graph=GraphSettings(time_answer_boost=boost))
        with RippleMem(path=None, user_id="alice", embedder=embedder, settings=settings) as mem:
            mem.add_many(items)
            hits = mem.recall("when is the dentist?", k=3).hits
            relevance[boost] = {h.memory.content: h.components["first_stage"] for h in hits}
    boosted, plain = relevance.values()
    dated = "The dentist appointment is on Monday at 9:15."
    assert boosted[dated] == pytest.approx(min(1.0, plain[dated] * (1 + GraphSettings().time_answer_boost)))
    assert boosted[dated] > plain[dated]
    for content in set(plain) - {dated}:  # the lift is the dated memory's own, not a rescaling
        assert boosted[content] == pytest.approx(plain[content])


def test_a_direct_match_the_graph_did_not_lift_says_only_how_it_matched(memory_only: RippleMem) -> None:
    memory_only.add_many(
        [{"content": f"user: note {i} about the garden shed", "session_id": "s1"} for i in range(6)]
    )
    hits = memory_only.recall("garden shed", k=6).hits
    plain = [hit for hit in hits if hit.components["graph"] < GRAPH_SUPPORTED]
    lifted = [hit for hit in hits if hit.components["graph"] >= GRAPH_SUPPORTED]
    assert plain and lifted  # six alike notes in one session: some are linked to each other, some not
    for hit in plain:
        assert hit.why.startswith("matched by") and "reached" not in hit.why and "linked" not in hit.why
    for hit in lifted:  # a hit the graph lifted shows the link that did it
        assert "linked: " in hit.why or "reached " in hit.why


def test_whether_an_embedder_reads_chinese_is_measured() -> None:
    assert reads_cjk(resolve_embedder("minilm")) < 0.5  # MiniLM maps Chinese to [UNK]
    assert reads_cjk(resolve_embedder("multilingual")) > 0.9
    assert reads_cjk(resolve_embedder("hashing")) < 0.5  # matches characters, not meaning


def test_a_chinese_query_leans_on_keywords_when_the_embedder_cannot_read_it(memory_only: RippleMem) -> None:
    memory_only.add_many(
        [
            "我对青霉素过敏，医生说以后要避开。",
            "明天下午去超市买菜。",
            "周末和朋友去西湖边散步。",
            "这个月的电费比上个月高。",
            "我喜欢看科幻小说。",
            "女儿的钢琴课改到周四了。",
        ]
    )
    for mode in ("hybrid", "ripple"):
        hits = memory_only.recall("青霉素", k=3, mode=mode, record_access=False).hits
        assert hits[0].memory.content.startswith("我对青霉素过敏"), mode
        # Dense similarity of MiniLM on Chinese is noise: it must not decide the rest of the order.
        assert hits[0].components["dense"] < 1.0


def test_graph_thresholds_follow_the_embedders_cosine_scale(tmp_path: Path) -> None:
    texts = [
        "I drink green tea every morning.",
        "The quarterly report is due on Friday.",
        "My sister lives in Berlin.",
        "Our flight to Tokyo was cancelled.",
        "He is allergic to peanuts.",
        "I finished a novel about an AI narrator.",
        "The plumber comes on Thursday.",
        "We adopted a grey cat called Miso.",
    ]
    mem = RippleMem(path=tmp_path / "e5", user_id="alice", embedder="multilingual")
    mem.add_many(texts)
    mem.close()
    with sqlite3.connect(tmp_path / "e5" / "ripplemem.db") as conn:
        similar = conn.execute("SELECT count(*) FROM edges WHERE type = 'SIMILAR'").fetchone()[0]
        scale = conn.execute("SELECT value FROM meta WHERE key = 'cosine_scale'").fetchone()[0]
    # multilingual-e5 puts unrelated sentences at 0.75-0.85: a fixed 0.75 linked them all.
    assert similar == 0
    assert '"model": "multilingual-e5-small-q4"' in scale
    reopened = RippleMem(path=tmp_path / "e5", user_id="alice", embedder="multilingual")
    settings = engine_of(reopened).model_settings()
    assert 0.88 < settings.graph.similar_threshold < 0.98
    assert settings.graph.alias_similarity > settings.graph.similar_threshold
    reopened.close()


def test_minilm_keeps_the_thresholds_as_written(memory_only: RippleMem) -> None:
    memory_only.add("I drink green tea every morning.")
    settings = engine_of(memory_only).model_settings()
    written = memory_only.settings
    assert settings.graph.similar_threshold == pytest.approx(written.graph.similar_threshold, abs=0.01)
    assert settings.lifecycle.duplicate_similarity == pytest.approx(
        memory_only.settings.lifecycle.duplicate_similarity, abs=0.01
    )


def test_without_graph_weight_or_cues_ripple_ranks_exactly_like_hybrid(embedder: Embedder) -> None:
    # Memories the graph reaches join ripple's pool late; they must not rescale the first stage's
    # relevance, so with the graph's weight at 0 the order is hybrid's, on a store full of edges.
    from dataclasses import replace

    from ripplemem import Settings

    plain = Settings()
    settings = replace(
        plain,
        graph=replace(
            plain.graph, ripple_weight=0.0, entity_weight=0.0, answer_handoff=False, time_answer_boost=0.0
        ),
    )
    mem = RippleMem(path=None, user_id="alice", embedder=embedder, settings=settings)
    conversation = load_conversation()
    mem.add_many(conversation_items(conversation), progress=False)
    topics = [
        "the garden",
        "my commute",
        "the new laptop",
        "a podcast",
        "dinner plans",
        "the gym",
        "the weather",
        "a birthday gift",
        "the car service",
        "a work deadline",
    ]
    mem.add_many(
        [
            {"content": f"user: a note on {topics[i % 10]}, number {i}", "session_id": f"n{i // 10}"}
            for i in range(200)
        ],
        progress=False,
    )
    for query in (
        "What book am I reading now?",
        "Where does my sister live?",
        "knee appointment",
        "plans for the Berlin trip in June",
        "green tea",
    ):
        ripple = mem.recall(query, k=8, record_access=False)
        hybrid = mem.recall(query, k=8, mode="hybrid", record_access=False)
        assert [h.memory.id for h in ripple.hits] == [h.memory.id for h in hybrid.hits], query
