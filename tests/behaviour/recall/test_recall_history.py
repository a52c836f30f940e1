"""recall(history=True) lists each current value's earlier versions right after it."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=timezone.utc)


def test_history_lists_earlier_values_after_the_current_one(tmp_path: Path, embedder: Embedder) -> None:
    clock = {"now": NOW}
    with RippleMem(
        path=tmp_path / "doses", user_id="alice", embedder=embedder, clock=lambda: clock["now"]
    ) as mem:
        ten = mem.add("I take 10 mg of lisinopril")
        clock["now"] = datetime(2024, 7, 15, tzinfo=timezone.utc)
        twenty = mem.add("my lisinopril dose is now 20 mg")
        clock["now"] = datetime(2024, 8, 15, tzinfo=timezone.utc)
        forty = mem.add("my lisinopril dose is now 40 mg")
        query = "what dose of lisinopril do I take?"
        current = mem.recall(query, k=3, record_access=False)
        assert [hit.memory.id for hit in current.hits] == [forty.id]
        with_history = mem.recall(query, k=3, record_access=False, history=True)
        assert [hit.memory.id for hit in with_history.hits] == [forty.id, twenty.id, ten.id]
        assert "superseded by" in with_history.hits[1].why
