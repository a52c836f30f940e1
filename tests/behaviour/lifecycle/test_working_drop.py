"""Working items that leave by expiry or eviction are consolidated on the way out when the
consolidation decision says they should be, instead of being dropped silently."""

from __future__ import annotations

from datetime import timedelta

from manual_clock import ManualClock

from ripplemem import RippleMem
from ripplemem.config import Settings
from ripplemem.embedding.embedders import Embedder
from ripplemem.rules.lifecycle.settings import LifecycleSettings


def test_an_expired_item_about_known_things_is_kept_and_idle_chat_is_not(embedder: Embedder) -> None:
    clock = ManualClock()
    with RippleMem(path=None, user_id="alice", embedder=embedder, clock=clock) as mem:
        mem.add("Lena is my sister and lives in Kyoto")
        said = clock.now
        mem.observe("user", "Lena wants to visit Kyoto in April", session_id="s1")
        mem.observe("user", "hmm okay", session_id="s1")
        clock.now += timedelta(minutes=61)
        assert mem.working("s1").items() == []  # both expired on this read
        (kept,) = [m for m in mem.list() if m.content == "Lena wants to visit Kyoto in April"]
        assert kept.type == "episodic" and kept.when == said and kept.metadata["role"] == "user"
        assert not [m for m in mem.list() if m.content == "hmm okay"]
        (added,) = mem.history(kept.id)
        assert added.cause.startswith("working memory item expired") and "related to known" in added.cause
        mem.consolidate()
        assert len([m for m in mem.list() if m.content == kept.content]) == 1  # not written twice


def test_an_evicted_item_the_user_kept_mentioning_becomes_semantic(embedder: Embedder) -> None:
    clock = ManualClock()
    settings = Settings(lifecycle=LifecycleSettings(working_capacity=2))
    with RippleMem(path=None, user_id="alice", embedder=embedder, clock=clock, settings=settings) as mem:
        for _ in range(3):
            mem.observe("assistant", "Noted: you swim at the Aquatic Centre on Tuesdays", session_id="s1")
        mem.observe("user", "I also like the sauna there, honestly", session_id="s1", importance=0.9)
        mem.observe("user", "and the cafe has good coffee", session_id="s1", importance=0.9)
        kept = mem.list()
        assert [(m.content, m.type) for m in kept] == [
            ("Noted: you swim at the Aquatic Centre on Tuesdays", "semantic")
        ]
        assert "evicted" in mem.history(kept[0].id)[0].cause
