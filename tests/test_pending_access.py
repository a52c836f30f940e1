"""Recall accesses are held in RAM and written in batches: nothing a user reads may miss them."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from ripplemem import RippleMem
from ripplemem.embeddings import Embedder
from ripplemem.stores import pending_access

TEXTS = ["I drink green tea every morning", "My sister lives in Lisbon",
         "The dentist appointment is on Friday", "Bob lent me a hiking map"]


@pytest.fixture
def store(tmp_path: Path, embedder: Embedder) -> RippleMem:
    mem = RippleMem(tmp_path / "db", user_id="alice", embedder=embedder)
    mem.add_many(TEXTS)
    return mem


def _on_disk(path: Path, memory_id: str) -> int:
    """The access count another connection (another process, say) reads from the file right now."""
    with closing(sqlite3.connect(path / "ripplemem.db")) as conn:
        return int(conn.execute("SELECT access_count FROM memories WHERE id = ?", (memory_id,)).fetchone()[0])


def test_a_recall_is_held_in_ram_and_written_on_close(store: RippleMem, tmp_path: Path,
                                                      embedder: Embedder) -> None:
    top = store.recall("green tea", k=1, mode="hybrid").hits[0].memory
    assert _on_disk(tmp_path / "db", top.id) == 0, "the access should wait in RAM, not cost a write"
    store.close()
    reopened = RippleMem(tmp_path / "db", user_id="alice", embedder=embedder)
    found = reopened.get(top.id)
    assert found is not None and found.access_count == 1 and found.last_accessed is not None


def test_every_read_of_this_handle_sees_pending_accesses(store: RippleMem) -> None:
    top = store.recall("green tea", k=1, mode="hybrid").hits[0].memory
    assert store.get(top.id).access_count == 1  # type: ignore[union-attr]
    assert {m.id: m.access_count for m in store.list()}[top.id] == 1
    store.recall("green tea", k=1, mode="hybrid")
    assert store.get(top.id).access_count == 2  # type: ignore[union-attr]


def test_recall_scores_a_candidate_with_its_pending_accesses(store: RippleMem) -> None:
    first = store.recall("green tea", k=1, mode="hybrid").hits[0]
    assert first.components["access"] == 0.0
    again = store.recall("green tea", k=1, mode="hybrid", record_access=False).hits[0]
    assert again.memory.id == first.memory.id and again.components["access"] > 0.0


def test_a_failed_write_keeps_the_pending_accesses(store: RippleMem) -> None:
    top = store.recall("green tea", k=1, mode="hybrid").hits[0].memory
    with pytest.raises(RuntimeError), store._engine.store.transaction():
        raise RuntimeError("a write that fails after the accesses were written into it")
    assert store.get(top.id).access_count == 1  # type: ignore[union-attr]


def test_many_pending_accesses_are_written_without_waiting_for_a_read(
        store: RippleMem, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pending_access, "MAX_PENDING", 2)
    hits = store.recall("green tea", k=3, mode="hybrid").hits
    assert _on_disk(tmp_path / "db", hits[0].memory.id) == 1


def test_a_handle_never_closed_writes_its_accesses_at_exit(store: RippleMem, tmp_path: Path,
                                                           embedder: Embedder) -> None:
    store.close()
    script = ("import sys; from ripplemem import RippleMem; "
              "mem = RippleMem(sys.argv[1], user_id='alice'); "
              "print(mem.recall('green tea', k=1, mode='hybrid').hits[0].memory.id)")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "db")], capture_output=True,
                          text=True, timeout=120, check=True)
    assert _on_disk(tmp_path / "db", done.stdout.strip()) == 1
