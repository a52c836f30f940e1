"""erase beside other writers: no process loses a committed write while another process erases (the
verification must never close a descriptor of a live SQLite file), and another user's writes go on
while a large erase runs (the verification holds no write lock)."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from multiprocessing.synchronize import Event
from pathlib import Path

from ripplemem import HashingEmbedder, RippleMem, StoreOptions
from ripplemem.store.sqlite.rows import DB_FILENAME

# Fresh interpreters (no fork of a process that runs Chroma's threads), as benchmarks/trust.py does.
PROCESSES = multiprocessing.get_context("spawn")
CAROL_WRITES = 120
PATIENCE = 300.0  # seconds a process may take before the test gives up on it


def open_store(path: str, user: str) -> RippleMem:
    """A handle on the shared Chroma store (hashing embedder: this is about storage)."""
    return RippleMem(
        path, user_id=user, embedder=HashingEmbedder(), store=StoreOptions(vector_index="chroma")
    )


def carol_note(item: int) -> str:
    """One of Carol's distinct memories."""
    return f"Carol ledger line {item}: parcel {item * 7919} left the north depot"


def erase_and_write(path: str, erased: Event, stop: Event) -> None:
    """Process A: add a few memories, erase one, again and again."""
    with open_store(path, "alice") as mem:
        step = 0
        while not stop.is_set():
            added = mem.add_many(
                [f"Alice round {step} item {i}: my locker code is {step * 31 + i}" for i in range(3)]
            )
            mem.erase(added[0].id)
            erased.set()
            step += 1


def open_and_close(path: str, cycled: Event, stop: Event) -> None:
    """Process B: a CLI-like reader that opens the store, reads and closes it, over and over."""
    while not stop.is_set():
        with open_store(path, "bob") as mem:
            mem.list(limit=1)
        cycled.set()


def write_notes(path: str, count: int) -> None:
    """Process C: the counted writer."""
    with open_store(path, "carol") as mem:
        for item in range(count):
            mem.add(carol_note(item))


def test_no_committed_write_of_another_process_is_lost_while_one_erases(tmp_path: Path) -> None:
    path = str(tmp_path / "store")
    open_store(path, "alice").close()
    stop, erased, cycled = PROCESSES.Event(), PROCESSES.Event(), PROCESSES.Event()
    busy = [
        PROCESSES.Process(target=erase_and_write, args=(path, erased, stop)),
        PROCESSES.Process(target=open_and_close, args=(path, cycled, stop)),
    ]
    for process in busy:
        process.start()
    try:
        # Carol starts once A has erased and B has closed the store after that: the moment a
        # verification that dropped A's locks would let B delete the WAL under A.
        assert erased.wait(PATIENCE)
        cycled.clear()
        assert cycled.wait(PATIENCE)
        writer = PROCESSES.Process(target=write_notes, args=(path, CAROL_WRITES))
        writer.start()
        writer.join(PATIENCE)
    finally:
        stop.set()
        for process in busy:
            process.join(PATIENCE)
    assert writer.exitcode == 0 and [p.exitcode for p in busy] == [0, 0]
    with sqlite3.connect(Path(path) / DB_FILENAME) as conn:
        stored = [r[0] for r in conn.execute("SELECT content FROM memories WHERE user_id = 'carol'")]
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    assert integrity == "ok"
    assert sorted(stored) == sorted(carol_note(i) for i in range(CAROL_WRITES))
    with open_store(path, "carol") as mem:
        assert len(mem.list(limit=2 * CAROL_WRITES)) == CAROL_WRITES


def test_another_users_writes_go_on_while_a_large_erase_runs(tmp_path: Path) -> None:
    mem = open_store(str(tmp_path / "store"), "alice")
    for start in range(0, 2000, 500):
        mem.add_many(
            [f"Alice note {i}: the crate {i * 13} went to dock {i % 7}" for i in range(start, start + 500)]
        )
    bob = mem.scope("bob")
    bob.add("Bob's first note warms up his collection")
    erasing, stop = threading.Event(), threading.Event()
    during: list[str] = []

    def write() -> None:
        item = 0
        while not stop.is_set():
            added = bob.add(f"Bob note {item} about the weather")
            if erasing.is_set():
                during.append(added.id)
            item += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while not bob.list(limit=2)[1:]:
            pass  # Bob's loop is running
        erasing.set()
        report = mem.erase(user_id="alice")
        erasing.clear()
        finished_during_erase = len(during)
    finally:
        stop.set()
        writer.join()
    assert report.verified
    # One add may have been under way when the erase began (and one finishing as it returned);
    # more finished while it ran.
    assert finished_during_erase >= 3
    assert {m.id for m in bob.list(limit=10_000)} >= set(during)
    mem.close()
