"""Bad input raises a clear error naming the field, and the store is left unchanged."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import stat
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ripplemem import (
    ClosedError,
    EmbedderOutputError,
    HashingEmbedder,
    InvalidInputError,
    InvalidTypeError,
    RippleMem,
    RippleMemError,
    Settings,
    StoreError,
    StoreOptions,
)
from ripplemem.store.write_lock import PENDING_DIRNAME


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
    ("call", "argument"),
    [
        (lambda mem: mem.add_many("hello"), "items"),
        (lambda mem: mem.add_many(b"hello"), "items"),
        (lambda mem: mem.add_many({"content": "one memory as a dict"}), "items"),
        (lambda mem: asyncio.run(mem.aadd_many("hello")), "items"),
        (lambda mem: mem.add("fine", relations="Calvin bought a Ferrari"), "relations"),
        (lambda mem: mem.sensors.record_many("heart_rate"), "readings"),
        (lambda mem: mem.sensors.record_many({"metric": "heart_rate", "value": 70}), "readings"),
    ],
    ids=[
        "add_many-str",
        "add_many-bytes",
        "add_many-dict",
        "aadd_many-str",
        "relations-str",
        "record_many-str",
        "record_many-dict",
    ],
)
def test_one_item_where_a_list_is_expected_is_refused(
    stored: RippleMem, call: Callable[[RippleMem], object], argument: str
) -> None:
    # add_many("hello") once stored five one-letter memories.
    with pytest.raises(
        InvalidTypeError, match=rf"^{argument} must be a list of .*wrap a single one in a list"
    ):
        call(stored)
    _unchanged(stored)
    assert stored.sensors.metrics() == {}


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


@contextmanager
def _tmpfs(mount: Path, options: str, unavailable: str) -> Iterator[None]:
    """A tmpfs mounted on `mount` with these options while the block runs (skips the test, saying
    why, where it cannot be mounted)."""
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"{unavailable}: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory nobody may write to: read-only mode bits, or for root (whom the bits do not stop)
    a read-only tmpfs mounted on it (skipped when it cannot be mounted), unmounted afterwards."""
    locked = tmp_path / "locked"
    locked.mkdir()
    if os.geteuid() != 0:
        locked.chmod(stat.S_IREAD | stat.S_IEXEC)
        yield locked
        locked.chmod(stat.S_IRWXU)
        return
    with _tmpfs(locked, "ro,size=1m", "root ignores mode bits and cannot mount a read-only tmpfs here"):
        yield locked


def test_unwritable_path(read_only_dir: Path) -> None:
    with pytest.raises(StoreError, match="is not writable; choose a writable path or path=None"):
        RippleMem(path=read_only_dir, user_id="alice", embedder="hashing")
    with pytest.raises(StoreError, match="cannot create the store directory .*choose a writable path"):
        RippleMem(path=read_only_dir / "store", user_id="alice", embedder="hashing")
    assert os.listdir(read_only_dir) == []


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
        RippleMem(
            path=tmp_path / "s", user_id="alice", embedder="hashing", store=StoreOptions(vector_index="faiss")
        )


def _untouched(mem: RippleMem) -> None:
    """_unchanged, and no write was left marked as interrupted (nothing half-written)."""
    _unchanged(mem)
    if mem.path is not None:
        markers = Path(mem.path) / PENDING_DIRNAME
        assert not markers.is_dir() or os.listdir(markers) == []


@pytest.mark.parametrize("batch_size", [-1, 0, "2", 1.5, True, 2**63])
def test_a_bad_batch_size_is_refused(stored: RippleMem, batch_size: object) -> None:
    with pytest.raises(RippleMemError, match="batch_size"):
        stored.add_many(["one new note", "another new note"], batch_size=batch_size)  # type: ignore[arg-type]
    _untouched(stored)


@pytest.mark.parametrize("batch_size", [0, -5, 2**63])
def test_reembed_refuses_a_bad_batch_size_and_keeps_the_store(tmp_path: Path, batch_size: int) -> None:
    with RippleMem(tmp_path / "store", user_id="alice", embedder="hashing") as mem:
        mem.add("the one memory that must survive")
    with pytest.raises(InvalidInputError, match="batch_size"):
        RippleMem.reembed(tmp_path / "store", "hashing-v1-512", batch_size=batch_size)
    with RippleMem(tmp_path / "store", user_id="alice", embedder="hashing") as mem:
        _untouched(mem)


SURROGATE = "lone \ud800 surrogate"
TEXT_FIELDS: dict[str, Callable[[RippleMem], object]] = {
    "source": lambda m: m.add("A note with a bad source", source=SURROGATE),
    "source NUL": lambda m: m.add("A note with a bad source", source="a\x00b"),
    "source of 1 MB": lambda m: m.add("A note with a huge source", source="s" * 1_000_000),
    "relation subject": lambda m: m.add("Ann likes tea", relations=[(SURROGATE, "likes", "tea")]),
    "relation predicate": lambda m: m.add("Ann likes tea", relations=[("Ann", SURROGATE, "tea")]),
    "relation object NUL": lambda m: m.add("Ann likes tea", relations=[("Ann", "likes", "t\x00ea")]),
    "batch relation": lambda m: m.add_many(
        [
            {
                "content": "Ann likes tea",
                "relations": [{"subject": "Ann", "predicate": "likes", "object": SURROGATE}],
            }
        ]
    ),
    "get": lambda m: m.get(SURROGATE),
    "delete": lambda m: m.delete(SURROGATE),
    "update": lambda m: m.update(SURROGATE, content="new text"),
    "history": lambda m: m.history(SURROGATE),
    "erase": lambda m: m.erase(SURROGATE),
    "neighbors": lambda m: m.graph.neighbors(SURROGATE),
    "find_connections": lambda m: m.graph.find_connections("Ann", SURROGATE),
    "reading source": lambda m: m.sensors.record("heart_rate", 72, source=SURROGATE),
    "reading source NUL": lambda m: m.sensors.record("heart_rate", 72, source="band\x00"),
    "reading unit": lambda m: m.sensors.record("weight", 72, unit=SURROGATE),
    "observe role": lambda m: m.observe(SURROGATE, "Remember that I like tea"),
}


@pytest.mark.parametrize("probe", TEXT_FIELDS.values(), ids=TEXT_FIELDS.keys())
def test_text_that_sqlite_cannot_store_is_refused_up_front(
    stored: RippleMem, probe: Callable[[RippleMem], object]
) -> None:
    with pytest.raises(InvalidInputError, match="surrogate|NUL|limit is"):
        probe(stored)
    _untouched(stored)
    assert stored.sensors.metrics() == {}


NUMBERS: dict[str, Callable[[RippleMem], object]] = {
    "importance 10**400": lambda m: m.add("An important note", importance=10**400),
    "metadata 2**64": lambda m: m.add("A counted note", metadata={"count": 2**64}),
    "nested metadata -2**70": lambda m: m.add("A counted note", metadata={"a": [{"b": -(2**70)}]}),
    "relation confidence 10**400": lambda m: m.add(
        "Ann likes tea", relations=[("Ann", "likes", "tea", 10**400)]
    ),
    "reading value 10**400": lambda m: m.sensors.record("heart_rate", 10**400),
    "update importance 10**400": lambda m: m.update(m.list()[0].id, importance=10**400),
    "list limit 2**63": lambda m: m.list(limit=2**63),
    "list offset 2**63": lambda m: m.list(offset=2**63),
    "recall k 2**63": lambda m: m.recall("note", k=2**63),
    "recall min_importance 10**400": lambda m: m.recall("note", min_importance=10**400),
    "list metadata 2**64": lambda m: m.list(metadata={"count": 2**64}),
    "readings limit 2**63": lambda m: m.sensors.readings("heart_rate", limit=2**63),
    "ingest max_file_bytes 10**400": lambda m: m.ingest(tempfile.mkdtemp(), max_file_bytes=10**400),
    "ingest ratio 10**400": lambda m: m.ingest(tempfile.mkdtemp(), max_compression_ratio=10**400),
}


@pytest.mark.parametrize("probe", NUMBERS.values(), ids=NUMBERS.keys())
def test_numbers_beyond_a_float_or_sqlite_integer_are_refused(
    stored: RippleMem, probe: Callable[[RippleMem], object]
) -> None:
    with pytest.raises(InvalidInputError, match="too large|2\\*\\*63"):
        probe(stored)
    _untouched(stored)
    assert stored.sensors.metrics() == {} and stored.kb.list() == []


def test_observe_applies_the_rules_of_add(stored: RippleMem) -> None:
    for text, problem in [
        ("Remember that my code is 12\x0034", "NUL"),
        ("word " * 2_100_000, "limit is"),
        ("Remember that " + SURROGATE, "surrogate"),
    ]:
        with pytest.raises(InvalidInputError, match=problem):
            stored.observe("user", text)
    with pytest.raises(InvalidInputError, match="metadata"):
        stored.observe("user", "Remember that I like tea", metadata={"k": SURROGATE})
    assert stored.working().items() == []
    _untouched(stored)


def test_a_closed_handle_says_so_from_every_method(tmp_path: Path) -> None:
    mem = RippleMem(tmp_path / "store", user_id="alice", embedder="hashing")
    kept = mem.add("Written before close")
    other = mem.scope("bob")
    mem.close()
    calls: list[Callable[[], object]] = [
        lambda: mem.add("after close"),
        lambda: mem.add_many(["after close"]),
        lambda: mem.list(),
        lambda: mem.recall("close"),
        lambda: mem.get(kept.id),
        lambda: mem.update(kept.id, importance=0.9),
        lambda: mem.delete(kept.id),
        lambda: mem.stats(),
        lambda: mem.observe("user", "Remember that I left"),
        lambda: mem.working().items(),
        lambda: mem.sensors.record("steps", 10),
        lambda: mem.history(kept.id),
        lambda: mem.graph.neighbors("close"),
        lambda: mem.erase(kept.id),
        lambda: other.list(),
    ]
    for call in calls:
        with pytest.raises(ClosedError, match="handle is closed"):
            call()
    mem.close()  # a second close does nothing
    assert "RippleMem(path=" in repr(mem)
    with RippleMem(tmp_path / "store", user_id="alice", embedder="hashing") as reopened:
        assert [m.content for m in reopened.list()] == ["Written before close"]


def test_settings_of_the_wrong_type_and_a_filtered_numpy_index_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidTypeError, match="settings must be a ripplemem.Settings"):
        RippleMem(tmp_path / "a", user_id="alice", embedder="hashing", settings={"max_content_chars": 5})  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="Settings.graph"):
        Settings(graph={"similar_k": 3})  # type: ignore[arg-type]
    for path in (tmp_path / "b", None):
        with pytest.raises(InvalidInputError, match="isolation='filter'"):
            RippleMem(
                path,
                user_id="alice",
                embedder="hashing",
                store=StoreOptions(vector_index="numpy", isolation="filter"),
            )
    assert not (tmp_path / "b" / "chroma").exists()


class FaultyEmbedder:
    """A custom embedder that goes wrong on texts containing "faulty" in one chosen way."""

    def __init__(self, fault: str) -> None:
        self.fault = fault
        self.model_id = f"faulty-{fault}"
        self.inner = HashingEmbedder(64)

    def embed_documents(self, texts: Sequence[str]) -> Any:
        vectors = self.inner.embed_documents(texts)
        if not any("faulty" in text for text in texts):
            return vectors
        if self.fault == "dimension":
            return vectors[:, :48]
        if self.fault == "rows":
            return vectors[:-1]
        vectors[-1, 3] = math.nan if self.fault == "nan" else math.inf
        return vectors

    def embed_query(self, text: str) -> Any:
        return self.embed_documents([text])[0]


@pytest.mark.parametrize("vector_index", ["chroma", "numpy"])
@pytest.mark.parametrize(
    ("fault", "problem"),
    [
        ("dimension", "dimension 48; this store's vectors have dimension 64"),
        ("rows", r"shape \(1, 64\) for 2 text"),
        ("nan", "NaN or infinite"),
        ("inf", "NaN or infinite"),
    ],
)
def test_a_faulty_embedder_is_named_before_anything_is_stored(
    tmp_path: Path, vector_index: str, fault: str, problem: str
) -> None:
    with RippleMem(
        tmp_path / "store",
        user_id="alice",
        embedder=FaultyEmbedder(fault),
        store=StoreOptions(vector_index=vector_index),
    ) as mem:
        mem.add("the one memory that must survive")
        with pytest.raises(EmbedderOutputError, match=f"faulty-{fault}.*{problem}"):
            mem.add_many(["a fine note", "a faulty note"])
        if fault != "rows":
            with pytest.raises(EmbedderOutputError, match=problem):
                mem.recall("faulty query")
            with pytest.raises(EmbedderOutputError, match=problem):
                mem.update(mem.list()[0].id, content="now faulty")
        _untouched(mem)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MB tmpfs (needs root to mount; skipped otherwise), unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    with _tmpfs(mount, "size=3m", "cannot mount a small tmpfs here"):
        yield mount


@pytest.mark.parametrize("vector_index", ["chroma", "numpy"])
def test_a_full_disk_is_a_store_error_and_keeps_every_committed_memory(
    tiny_disk: Path, vector_index: str
) -> None:
    path, ballast = tiny_disk / "store", tiny_disk / "ballast"
    ballast.write_bytes(b"\0" * 1_000_000)
    with RippleMem(
        path, user_id="alice", embedder="hashing", store=StoreOptions(vector_index=vector_index)
    ) as mem:
        stored = [mem.add("The sentinel memory must survive a full disk").id]
        with pytest.raises(StoreError, match="disk is full"):
            for batch in range(1000):
                notes = [f"Crate {batch}-{i} left the depot with {batch * i} parcels" for i in range(50)]
                stored += [m.id for m in mem.add_many(notes)]
        assert sorted(m.id for m in mem.list(limit=100_000)) == sorted(set(stored))
        with contextlib.suppress(StoreError):
            stored.append(mem.add("One more note squeezed in").id)
        with contextlib.suppress(StoreError):  # an update either happens whole or not at all
            mem.update(stored[0], content="The sentinel moved to a roomier disk")
        sentinel = mem.get(stored[0]).content
    ballast.unlink()  # the owner frees space: reopened, the store holds every committed memory, once
    with RippleMem(
        path, user_id="alice", embedder="hashing", store=StoreOptions(vector_index=vector_index)
    ) as mem:
        assert sorted(m.id for m in mem.list(limit=100_000)) == sorted(set(stored))
        assert mem.stats()["vectors"] == len(set(stored))
        assert mem.recall(sentinel, k=1, mode="dense").hits[0].memory.id == stored[0]
    assert RippleMem.check(path, repair=False).stray_vectors == 0
