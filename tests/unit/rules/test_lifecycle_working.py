"""Working memory: capacity, TTL, priority eviction, mention counts, context budget, threads, sessions."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from ripplemem.core.text import estimate_tokens
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.rules.lifecycle import (
    ConsolidationContext,
    LifecycleSettings,
    WorkingMemories,
    WorkingMemory,
    decide_consolidation,
)

START = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


class FakeClock:
    """A clock tests move by hand."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def drops() -> list[tuple[str, str]]:
    return []


@pytest.fixture
def wm(clock: FakeClock, drops: list[tuple[str, str]]) -> WorkingMemory:
    return WorkingMemory("s1", clock=clock, on_drop=lambda item, why: drops.append((item.text, why)))


def test_observe_returns_the_stored_item(wm: WorkingMemory, clock: FakeClock) -> None:
    item = wm.observe("user", "  I went running in Hyde Park this morning.  ", metadata={"turn": "D1:3"})
    assert item.text == "I went running in Hyde Park this morning."
    assert (item.role, item.session_id, item.created_at, item.last_seen) == ("user", "s1", START, START)
    assert item.importance == 0.5 and item.mention_count == 1 and not item.remember
    assert "hyde park" in item.entities
    assert item.metadata == {"turn": "D1:3"}
    assert wm.items() == [item] and wm.get(item.id) == item and len(wm) == 1


def test_default_capacity_is_fifty_and_the_lowest_priority_goes(
    wm: WorkingMemory, clock: FakeClock, drops: list[tuple[str, str]]
) -> None:
    wm.observe("user", "turn 0 is trivia", importance=0.5)
    unimportant = wm.observe("user", "turn 1 is small talk", importance=0.1)
    for index in range(2, 50):
        clock.advance(seconds=10)
        wm.observe("user", f"turn {index} says something", importance=0.5)
    assert len(wm) == 50 and drops == []
    wm.observe("user", "turn 50 overflows")
    texts = [item.text for item in wm.items()]
    assert len(texts) == 50 and unimportant.text not in texts
    assert drops == [("turn 1 is small talk", "evicted")]


def test_eviction_spares_remembered_items_then_drops_the_oldest_of_a_tie(clock: FakeClock) -> None:
    wm = WorkingMemory(clock=clock, settings=LifecycleSettings(working_capacity=3))
    kept = wm.observe("user", "my locker code is 4711", importance=0.0, remember=True)
    clock.advance(minutes=1)
    older = wm.observe("user", "first filler")
    clock.advance(minutes=1)
    wm.observe("user", "second filler")
    clock.advance(minutes=1)
    wm.observe("user", "third filler")
    texts = [item.text for item in wm.items()]
    assert kept.text in texts and older.text not in texts


def test_priority_follows_the_documented_formula(wm: WorkingMemory, clock: FakeClock) -> None:
    item = wm.observe("user", "I adopted a cat", importance=0.6)
    # importance 0.6, recency 1, 1 of 3 mentions.
    assert wm.priority(item) == pytest.approx(0.5 * 0.6 + 0.3 * 1.0 + 0.2 * (1 / 3))
    clock.advance(minutes=30)  # halfway to TTL expiry
    assert wm.priority(item) == pytest.approx(0.5 * 0.6 + 0.3 * 0.5 + 0.2 * (1 / 3))
    assert wm.priority(replace(item, remember=True)) == pytest.approx(wm.priority(item) + 1.0)


def test_items_expire_sixty_minutes_after_their_last_mention(
    wm: WorkingMemory, clock: FakeClock, drops: list[tuple[str, str]]
) -> None:
    first = wm.observe("user", "my flight lands at six")
    clock.advance(minutes=30)
    second = wm.observe("user", "the hotel is near the station")
    clock.advance(minutes=29, seconds=59)
    assert [item.id for item in wm.items()] == [first.id, second.id]
    clock.advance(seconds=1)  # first: 60 min since its last mention
    assert wm.expire() == [first]
    assert drops == [("my flight lands at six", "expired")]
    assert [item.id for item in wm.items()] == [second.id]


def test_a_mention_restarts_the_ttl_so_items_can_outlive_an_hour(wm: WorkingMemory, clock: FakeClock) -> None:
    item = wm.observe("user", "My sister Lin lives in Berlin.")
    clock.advance(minutes=50)
    wm.observe("user", "Lin is visiting next month.")
    clock.advance(minutes=50)
    (current,) = [i for i in wm.items() if i.id == item.id]
    assert current.mention_count == 2 and current.last_seen == START + timedelta(minutes=50)
    decision = decide_consolidation(current, ConsolidationContext(now=clock.now))
    assert any("100 min" in reason for reason in decision.reasons)


def test_reads_purge_expired_items_and_report_them(
    wm: WorkingMemory, clock: FakeClock, drops: list[tuple[str, str]]
) -> None:
    wm.observe("user", "something said long ago")
    clock.advance(hours=2)
    assert wm.items() == [] and wm.context() == ""
    assert drops == [("something said long ago", "expired")]
    assert wm.expire() == []


@pytest.mark.parametrize(
    ("first", "again"),
    [
        ("I run 5 km every morning.", "i run 5 km every morning"),
        ("I run 5 km every morning.", "  I  run 5 km, every morning!! "),
        ("我住在北京。", "我住在 北京"),
        ("ＡＢＣ ｃｏｒｐ hired me", "abc corp hired me"),  # full-width letters (NFKC)
    ],
)
def test_the_same_fact_again_counts_a_mention_instead_of_adding_an_item(
    wm: WorkingMemory, clock: FakeClock, first: str, again: str
) -> None:
    original = wm.observe("user", first, importance=0.4)
    clock.advance(minutes=5)
    repeated = wm.observe("assistant", again, importance=0.7, metadata={"turn": 2})
    assert repeated.id == original.id and repeated.text == first.strip()
    assert repeated.mention_count == 2 and repeated.last_seen == START + timedelta(minutes=5)
    assert repeated.importance == 0.7 and repeated.metadata == {"turn": 2}
    assert len(wm) == 1


@pytest.mark.parametrize(
    ("first", "later"),
    [
        ("My sister Lin moved to Berlin last autumn.", "Lin sent me photos of her flat."),
        ("I'm reading The Three-Body Problem.", "The Three-Body Problem has a great ending."),
        ("我在读《三体》", "《三体》的结局太震撼了"),
        ('I bought the book "Project Hail Mary".', 'Finished "Project Hail Mary" last night.'),
    ],
)
def test_an_entity_mentioned_again_counts_for_the_items_that_name_it(
    wm: WorkingMemory, clock: FakeClock, first: str, later: str
) -> None:
    original = wm.observe("user", first)
    clock.advance(minutes=1)
    newer = wm.observe("user", later)
    assert newer.id != original.id and newer.mention_count == 1
    (current, _) = wm.items()
    assert current.mention_count == 2 and current.last_seen == newer.created_at


@pytest.mark.parametrize(
    ("first", "later"),
    [
        ("I ran 5 km today.", "The shop is 5 km away."),  # quantities recur by chance
        ("My appointment is on 2024-03-01.", "The invoice is dated 2024-03-01."),
        ("I had pasta for lunch.", "The weather is nice."),
    ],
)
def test_dates_quantities_and_unrelated_turns_do_not_count(wm: WorkingMemory, first: str, later: str) -> None:
    wm.observe("user", first)
    wm.observe("user", later)
    assert [item.mention_count for item in wm.items()] == [1, 1]


def test_three_mentions_make_an_item_semantic(wm: WorkingMemory, clock: FakeClock) -> None:
    wm.observe("user", "Tom is my running coach.")
    wm.observe("user", "Tom says I should rest on Sundays.")
    wm.observe("user", "Tom will be at the race too.")
    first = wm.items()[0]
    assert first.mention_count == 3
    decision = decide_consolidation(first, ConsolidationContext(now=clock.now))
    assert (decision.action, decision.target) == ("consolidate", "semantic")


def test_decide_reviews_every_live_item_at_the_clocks_now(wm: WorkingMemory, clock: FakeClock) -> None:
    wm.observe("user", "Remember that my passport expires in May.")
    wm.observe("user", "Lin is flying in from Berlin.")
    wm.observe("user", "nothing much happened")
    clock.advance(minutes=30)
    wm.observe("user", "Lin lands at six.")  # a mention keeps the Berlin item alive past an hour
    clock.advance(minutes=31)
    decisions = {item.text: decision for item, decision in wm.decide(known_entities={"berlin"})}
    assert set(decisions) == {"Lin is flying in from Berlin.", "Lin lands at six."}  # the others expired
    assert (
        decisions["Lin is flying in from Berlin."].action,
        decisions["Lin is flying in from Berlin."].target,
    ) == ("consolidate", "episodic")  # known + > 1 h
    assert decisions["Lin lands at six."].action == "keep"


@pytest.mark.parametrize(
    "text", ["Please remember that my passport expires in May.", "记住，我的车停在B2层。"]
)
def test_remember_cues_mark_items(wm: WorkingMemory, text: str) -> None:
    assert wm.observe("user", text).remember
    assert wm.observe("user", "plain chat", remember=True).remember
    assert not wm.observe("user", "do you remember my name?").remember


def test_context_takes_the_highest_priority_items_within_budget_in_conversation_order(
    wm: WorkingMemory, clock: FakeClock
) -> None:
    low = wm.observe("user", "small talk about the weather being grey again today", importance=0.1)
    clock.advance(minutes=1)
    high = wm.observe("user", "I am allergic to penicillin", importance=0.9)
    clock.advance(minutes=1)
    mid = wm.observe("assistant", "Noted, I will keep that in mind", importance=0.5)
    full = wm.context(1000)
    assert full.splitlines() == ["Current conversation:", low.line(), high.line(), mid.line()]
    assert high.line() == "- [09:01, user] I am allergic to penicillin"
    budget = sum(estimate_tokens(text) for text in ("Current conversation:", high.line(), mid.line()))
    tight = wm.context(budget)
    assert tight.splitlines() == ["Current conversation:", high.line(), mid.line()]
    assert estimate_tokens(tight) <= budget + 2  # joins add newlines only
    assert [item.id for item in wm.select(budget)] == [high.id, mid.id]
    assert wm.context(3) == ""
    assert wm.context(1000, header="") == "\n".join([low.line(), high.line(), mid.line()])


def test_context_skips_an_item_too_long_for_what_is_left(wm: WorkingMemory) -> None:
    long = wm.observe("user", "word " * 200, importance=0.9)
    short = wm.observe("user", "short one", importance=0.5)
    assert wm.select(50) == [short]
    assert long not in wm.select(50)


@pytest.mark.parametrize("budget", [0, -5, 2.5, True, "100"])
def test_context_rejects_a_bad_budget(wm: WorkingMemory, budget: object) -> None:
    with pytest.raises(InvalidInputError, match="token_budget"):
        wm.context(budget)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("role", "text", "importance", "error"),
    [
        ("user", "", None, InvalidInputError),
        ("user", "?!  …", None, InvalidInputError),
        ("", "hello", None, InvalidInputError),
        ("user", 42, None, InvalidTypeError),
        ("user", "hello", 1.5, InvalidInputError),
        ("user", "hello", True, InvalidInputError),
    ],
)
def test_observe_rejects_bad_input(
    wm: WorkingMemory, role: str, text: object, importance: object, error: type[Exception]
) -> None:
    with pytest.raises(error):
        wm.observe(role, text, importance=importance)  # type: ignore[arg-type]
    assert wm.items() == []


def test_a_naive_clock_is_read_as_utc() -> None:
    wm = WorkingMemory(clock=lambda: datetime(2025, 3, 1, 9, 0))
    assert wm.observe("user", "hello there").created_at == START


def test_remove_and_clear(wm: WorkingMemory) -> None:
    a = wm.observe("user", "first thing")
    b = wm.observe("user", "second thing")
    assert wm.remove(a.id) == a and wm.remove(a.id) is None
    assert wm.clear() == [b] and wm.items() == []


def test_items_are_snapshots(wm: WorkingMemory) -> None:
    item = wm.observe("user", "Anna called", metadata={"k": 1})
    with pytest.raises(AttributeError):
        item.mention_count = 9  # type: ignore[misc]
    with pytest.raises(TypeError):
        item.metadata["k"] = 2  # type: ignore[index]
    wm.observe("user", "Anna again")
    assert item.mention_count == 1 and wm.items()[0].mention_count == 2


def test_concurrent_observers_keep_capacity_and_count_every_mention(clock: FakeClock) -> None:
    wm = WorkingMemory(clock=clock)
    errors: list[BaseException] = []

    def talk(worker: int) -> None:
        try:
            for index in range(60):
                wm.observe("user", f"worker {worker} note {index}")
                wm.observe("user", "the shared refrain")
                wm.context(200)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=talk, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    items = wm.items()
    assert len(items) == 50
    (refrain,) = [item for item in items if item.text == "the shared refrain"]
    assert refrain.mention_count == 480  # the refrain's priority keeps it in


def test_sessions_are_separate_and_empty_ones_are_dropped_on_expiry(clock: FakeClock) -> None:
    dropped: list[tuple[str | None, str]] = []
    pool = WorkingMemories(clock=clock, on_drop=lambda item, why: dropped.append((item.session_id, why)))
    pool.observe("a", "user", "session a talks about Paris")
    pool.observe("b", "user", "session b talks about Rome")
    assert [i.text for i in pool.session("a").items()] == ["session a talks about Paris"]
    assert pool.sessions() == ["a", "b"]
    clock.advance(minutes=40)
    pool.observe("b", "user", "session b goes on")
    clock.advance(minutes=30)
    expired = pool.expire()
    assert [item.text for item in expired["a"]] == ["session a talks about Paris"]
    assert [item.text for item in expired["b"]] == ["session b talks about Rome"]
    assert pool.sessions() == ["b"] and dropped == [("a", "expired"), ("b", "expired")]
    stale = pool.session("b")
    assert pool.drop("b")[0].text == "session b goes on" and pool.sessions() == []
    assert stale.items() == []


def test_pool_observe_survives_a_session_dropped_meanwhile(clock: FakeClock) -> None:
    pool = WorkingMemories(clock=clock)
    held = pool.session("s")
    pool.expire()  # "s" is empty: dropped and retired
    with pytest.raises(Exception, match="dropped"):
        held.observe("user", "into a retired memory")
    item = pool.observe("s", "user", "hello again")
    assert pool.session("s").items() == [item]
