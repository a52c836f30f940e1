"""The life of one memory, end to end on a real store and a controlled clock: observed in a chat,
consolidated into long-term memory, aged until it goes cold, recalled back through the graph,
then left alone until it is forgotten; every step shows in its history."""

from __future__ import annotations

from pathlib import Path

from manual_clock import ManualClock

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder


def test_observe_consolidate_age_archive_recall_back_forget(tmp_path: Path, embedder: Embedder) -> None:
    clock = ManualClock()
    mem = RippleMem(tmp_path / "store", user_id="alice", embedder=embedder, clock=clock)
    fact = "Oskar repairs vintage Vespa scooters in his garage in Lisbon"
    for _ in range(3):  # mentioned three times in one chat: consolidation makes it long-term
        mem.observe("user", fact, session_id="chat-1")
    assert [m.content for m in mem.list()] == []  # still only in working memory
    report = mem.consolidate("chat-1")
    stored = [m for m in mem.list() if m.content == fact]
    assert len(stored) == 1 and stored[0].type == "semantic"
    assert report.counts().get("stored") == 1
    memory = stored[0]

    # Something else the user keeps coming back to shares the entity "Oskar".
    clock.advance(1)
    other = mem.add("Oskar is coming to dinner on Saturday", importance=0.9)

    # A month and a half without a look: hot -> warm -> cold; its vector leaves the index.
    clock.advance(45)
    mem.lifecycle.archive()
    cold = mem.get(memory.id)
    assert cold is not None and cold.tier == "cold"
    assert memory.id not in {h.memory.id for h in mem.recall(fact, mode="dense", record_access=False).hits}
    assert memory.id in {m.id for m in mem.list()}  # still listed and counted
    assert mem.stats()["by_tier"]["cold"] >= 1

    # A question about Oskar reaches it through the graph and brings it back to hot.
    recalled = mem.recall("what do I know about Oskar?", k=5)
    assert memory.id in {h.memory.id for h in recalled.hits}
    assert other.id in {h.memory.id for h in recalled.hits}
    assert mem.get(memory.id).tier == "hot"  # type: ignore[union-attr]
    dense = mem.recall(fact, mode="dense", record_access=False)
    assert dense.hits[0].memory.id == memory.id

    # Then never again: a year of silence and a dropping importance end in forgetting.
    mem.update(memory.id, importance=0.1)
    clock.advance(365)
    report = mem.forget()
    assert memory.id in report.ids("delete")
    assert mem.get(memory.id) is None

    mem.close()
    # Gone for good, also for the next process that opens the store.
    with RippleMem(tmp_path / "store", user_id="alice", embedder=embedder, clock=clock) as reopened:
        assert reopened.get(memory.id) is None
        assert reopened.get(other.id) is not None


def test_the_history_follows_each_step(tmp_path: Path, embedder: Embedder) -> None:
    clock = ManualClock()
    with RippleMem(tmp_path / "store", user_id="alice", embedder=embedder, clock=clock) as mem:
        memory = mem.add("Oskar repairs vintage Vespa scooters in Lisbon", importance=0.6)
        mem.add("Oskar is coming to dinner on Saturday", importance=0.9)
        clock.advance(45)
        mem.lifecycle.archive()  # 0.6 < 0.7 and idle: hot -> warm -> cold; the 0.9 one stays hot
        mem.recall("what do I know about Oskar?", k=5)
        events = [event.event for event in mem.history(memory.id)]
        assert events == ["added", "archived", "woken"]
        causes = [event.cause for event in mem.history(memory.id)]
        assert causes[2].startswith("recall reached it")
