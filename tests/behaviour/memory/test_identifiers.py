"""User and session ids that look like paths, SQL or Cypher are stored as data, never interpolated;
ids that are not clean text are refused before anything is created."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ripplemem import RippleMem, StoreOptions
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError
from ripplemem.store.sqlite.rows import DB_FILENAME

HOSTILE_IDS = [
    "../../etc/passwd",
    "x'; DROP TABLE memories; --",
    "x}) DETACH DELETE n //",
    "alice OR 1=1",
    "%",
    "C:\\Windows\\System32",
    "ユーザー🙂",
    "rm_" + "0" * 40,
]


@pytest.mark.parametrize("index", ["chroma", "numpy"])
def test_hostile_ids_are_data_and_every_user_sees_only_their_own(
    tmp_path: Path, embedder: Embedder, index: str
) -> None:
    path = tmp_path / "store"
    with RippleMem(path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index=index)) as alice:
        alice.add("Alice keeps her spare key under the blue flowerpot")
        for number, user in enumerate(HOSTILE_IDS):
            alice.scope(user, session_id=user).add(f"Secret number {number} belongs to {user!r}")
        for number, user in enumerate(HOSTILE_IDS):
            handle = alice.scope(user)
            assert [m.content for m in handle.list()] == [f"Secret number {number} belongs to {user!r}"]
            assert handle.list()[0].session_id == user
            hits = handle.recall("spare key flowerpot secret number", k=5).hits
            assert [h.memory.user_id for h in hits] == [user]
        assert [m.content for m in alice.list()] == ["Alice keeps her spare key under the blue flowerpot"]
        assert all("Secret" not in h.memory.content for h in alice.recall("secret number", k=10).hits)
    # Nothing was written outside the store directory, and the tables are all still there.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]
    with sqlite3.connect(path / DB_FILENAME) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"memories", "entities", "edges", "meta"} <= tables
        users = conn.execute("SELECT COUNT(DISTINCT user_id) FROM memories").fetchone()[0]
        assert users == 1 + len(HOSTILE_IDS)


@pytest.mark.parametrize(
    "bad, problem",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("x" * 129, "limit is 128"),
        ("a\nb", "control"),
        ("a\x00b", "control"),
        ("a\x85b", "control"),
        ("a\ud800b", "surrogate"),
        ("ali\u202ece", "bidirectional"),
        ("\u2066alice\u2069", "bidirectional"),
    ],
)
def test_unclean_ids_are_refused_before_anything_is_created(
    tmp_path: Path, embedder: Embedder, bad: str, problem: str
) -> None:
    with pytest.raises(InvalidInputError, match=problem):
        RippleMem(tmp_path / "store", user_id=bad, embedder=embedder)
    assert not (tmp_path / "store").exists()
    with RippleMem(
        tmp_path / "store", user_id="alice", embedder=embedder, store=StoreOptions(vector_index="numpy")
    ) as mem:
        with pytest.raises(InvalidInputError, match=problem):
            mem.add("A note for a bad session", session_id=bad)
        if bad:  # scope("") means "this handle's user", like scope(None)
            with pytest.raises(InvalidInputError, match=problem):
                mem.scope(bad)
        assert mem.stats()["total"] == 0
