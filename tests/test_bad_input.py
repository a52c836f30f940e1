"""Bad input raises a clear error naming the field, and the store is left unchanged."""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path

import pytest

from ripplemem import InvalidInputError, InvalidTypeError, RippleMem, RippleMemError, StoreError


@pytest.fixture
def stored(mem: RippleMem) -> RippleMem:
    mem.add("the one memory that must survive")
    return mem


def _unchanged(mem: RippleMem) -> None:
    assert [m.content for m in mem.list()] == ["the one memory that must survive"]
    assert mem.stats()["vectors"] == 1


@pytest.mark.parametrize(
    ("kwargs", "error", "field"),
    [
        ({"content": ""}, InvalidInputError, "content"),
        ({"content": "   \n\t"}, InvalidInputError, "content"),
        ({"content": 42}, InvalidTypeError, "content"),
        ({"content": None}, InvalidTypeError, "content"),
        ({"content": "ok", "importance": 1.5}, InvalidInputError, "importance"),
        ({"content": "ok", "importance": -0.1}, InvalidInputError, "importance"),
        ({"content": "ok", "importance": math.nan}, InvalidInputError, "importance"),
        ({"content": "ok", "importance": "high"}, InvalidTypeError, "importance"),
        ({"content": "ok", "type": "longterm"}, InvalidInputError, "type"),
        ({"content": "ok", "event_time": "yesterday"}, InvalidInputError, "event_time"),
        ({"content": "ok", "metadata": {"x": object()}}, InvalidInputError, "metadata"),
        ({"content": "ok", "metadata": [1, 2]}, InvalidTypeError, "metadata"),
        ({"content": "ok", "session_id": ""}, InvalidInputError, "session_id"),
        ({"content": "ok", "session_id": "a\nb"}, InvalidInputError, "session_id"),
        ({"content": "ok", "modality": "smell"}, InvalidInputError, "modality"),
    ],
)
def test_bad_add_is_refused(stored: RippleMem, kwargs: dict, error: type, field: str) -> None:
    with pytest.raises(error, match=field):
        stored.add(**kwargs)
    _unchanged(stored)


def test_one_bad_item_rejects_the_whole_batch(stored: RippleMem) -> None:
    with pytest.raises(InvalidInputError, match="importance"):
        stored.add_many([{"content": "fine"}, {"content": "also fine"}, {"content": "bad", "importance": 7}])
    with pytest.raises(InvalidInputError, match="unknown fields"):
        stored.add_many([{"content": "fine", "colour": "red"}])
    _unchanged(stored)


@pytest.mark.parametrize(
    ("kwargs", "error", "field"),
    [
        ({"query": "tea", "k": 0}, InvalidInputError, "k"),
        ({"query": "tea", "k": -3}, InvalidInputError, "k"),
        ({"query": "tea", "k": 2.5}, InvalidTypeError, "k"),
        ({"query": ""}, InvalidInputError, "query"),
        ({"query": "tea", "mode": "magic"}, InvalidInputError, "mode"),
        ({"query": "tea", "types": ["episodic", "nope"]}, InvalidInputError, "type"),
        ({"query": "tea", "min_importance": 3}, InvalidInputError, "importance"),
    ],
)
def test_bad_recall_is_refused(stored: RippleMem, kwargs: dict, error: type, field: str) -> None:
    with pytest.raises(error, match=field):
        stored.recall(**kwargs)
    _unchanged(stored)


def test_bad_update_is_refused_and_keeps_the_memory(stored: RippleMem) -> None:
    memory_id = stored.list()[0].id
    with pytest.raises(InvalidInputError, match="importance"):
        stored.update(memory_id, content="changed", importance=2)
    with pytest.raises(InvalidInputError, match="content"):
        stored.update(memory_id, content="  ")
    _unchanged(stored)


def test_missing_or_bad_user_id(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        RippleMem(path=tmp_path)  # type: ignore[call-arg]
    for user in (None, "", "x" * 200, "bad\x00id"):
        with pytest.raises(RippleMemError, match="user_id"):
            RippleMem(path=tmp_path, user_id=user, embedder="hashing")  # type: ignore[arg-type]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere; checked via a file path instead")
def test_unwritable_path(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IREAD | stat.S_IEXEC)
    with pytest.raises(StoreError, match="not writable"):
        RippleMem(path=locked / "store", user_id="alice", embedder="hashing")


def test_path_that_is_a_file_or_under_a_file(tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreError, match="is a file"):
        RippleMem(path=blocker, user_id="alice", embedder="hashing")
    with pytest.raises(StoreError, match="cannot create the store directory"):
        RippleMem(path=blocker / "store", user_id="alice", embedder="hashing")
    assert blocker.read_text() == "not a directory"


def test_unknown_embedder_and_index_names(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="embedder"):
        RippleMem(path=tmp_path, user_id="alice", embedder="word2vec-9000")
    with pytest.raises(InvalidInputError, match="vector_index"):
        RippleMem(path=tmp_path / "s", user_id="alice", embedder="hashing", vector_index="faiss")
