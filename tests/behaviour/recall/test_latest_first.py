"""A question about the present ("now", "currently", 现在) ranks the latest state of a changing fact
first, among memories that already match the question strongly, and never lifts a fresh memory
that does not match."""

from __future__ import annotations

from datetime import datetime, timedelta

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.interfaces.cli.demo import QUERIES, conversation_items, load_conversation
from ripplemem.language.answer_types import asks_present

JUNE = datetime(2024, 6, 20)


def _store(embedder: Embedder, memories: list[tuple[str, datetime]]) -> RippleMem:
    mem = RippleMem(path=None, user_id="alice", embedder=embedder, clock=lambda: JUNE)
    for content, when in memories:
        mem.add(content, type="episodic", event_time=when)
    return mem


def test_the_demo_book_question_answers_with_the_book_read_now(embedder: Embedder) -> None:
    conversation = load_conversation()
    today = datetime.fromisoformat(conversation["sessions"][-1]["date"]) + timedelta(days=1)
    mem = RippleMem(path=None, user_id="demo", embedder=embedder, clock=lambda: today)
    mem.add_many(conversation_items(conversation), progress=False)
    book = QUERIES[0]
    assert book.text == "What book am I reading now?"
    hits = mem.recall(book.text, k=book.k, record_access=False).hits
    assert 'I have started "Klara and the Sun"' in hits[0].memory.content
    assert "preferred as the latest" in hits[0].why
    finished = next(i for i, hit in enumerate(hits) if "The Remains of the Day" in hit.memory.content)
    assert finished > 0


OLD_PHONE, NEW_PHONE = "我用的手机是华为Mate 40。", "换了新手机，是一部iPhone 15。"


def test_a_chinese_question_about_now_prefers_the_newer_phone(embedder: Embedder) -> None:
    mem = _store(
        embedder,
        [
            (OLD_PHONE, datetime(2024, 1, 10)),
            ("周末去超市买了水果和牛奶。", datetime(2024, 3, 1)),
            (NEW_PHONE, datetime(2024, 6, 2)),
            ("昨天晚上看了一部电影，很好看。", datetime(2024, 5, 1)),
        ],
    )
    hits = mem.recall("我现在用什么手机？", k=3, record_access=False).hits
    assert [hit.memory.content for hit in hits[:2]] == [NEW_PHONE, OLD_PHONE]
    # Without "现在" the better match keeps its place.
    assert mem.recall("我用什么手机？", k=1, record_access=False).hits[0].memory.content == OLD_PHONE


def test_a_fresh_unrelated_memory_does_not_outrank_the_one_match(embedder: Embedder) -> None:
    mem = _store(
        embedder,
        [
            ("I work as a nurse at the city hospital, mostly night shifts.", datetime(2023, 2, 1)),
            ("I bought a new umbrella because it rained all week.", datetime(2024, 6, 19)),
            ("My neighbour's dog barked the whole night.", datetime(2024, 6, 18)),
        ],
    )
    hits = mem.recall("Where do I work now?", k=3, record_access=False).hits
    assert "nurse" in hits[0].memory.content
    assert all("latest" not in hit.why for hit in hits)


def test_what_counts_as_a_question_about_now() -> None:
    assert asks_present("What book am I reading now?")
    assert asks_present("Which team is she currently on?")
    assert asks_present("我最近在忙什么？")
    assert not asks_present("What book did I read in March?")
    assert not asks_present("What was my previous status before the current one?")
    assert not asks_present("我以前住在哪里，现在呢？")
