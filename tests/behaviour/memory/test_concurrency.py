"""Threads, processes and async tasks writing and reading one store at once: every write is stored
exactly once, nothing is lost, and each writer sees what the others wrote."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ripplemem import HashingEmbedder, RippleMem, StoreOptions
from ripplemem.embedding.embedders import Embedder
from ripplemem.store.recovery.reconcile import check_path
from ripplemem.store.sqlite.rows import DB_FILENAME

FRUITS = ["quince", "lychee", "damson", "medlar", "persimmon", "kumquat", "loquat", "pawpaw"]
CITIES = ["Tromso", "Valparaiso", "Hobart", "Ushuaia", "Nuuk", "Timbuktu", "Kochi", "Tbilisi"]


def note(writer: int, item: int) -> str:
    """A distinct memory text (numbers keep any two from being merged as duplicates)."""
    return (
        f"Writer {writer} note {item}: packed {writer * 1000 + item} crates of "
        f"{FRUITS[item % len(FRUITS)]} for the {CITIES[writer % len(CITIES)]} depot"
    )


def stored_rows(path: Path) -> list[tuple[str, str, str]]:
    """(id, user, content) of every row in the store's SQLite file."""
    with sqlite3.connect(path / DB_FILENAME) as conn:
        return conn.execute("SELECT id, user_id, content FROM memories").fetchall()


def test_threads_writing_and_reading_one_store_lose_and_duplicate_nothing(
    tmp_path: Path, embedder: Embedder
) -> None:
    threads, per_thread = 6, 12
    returned: dict[str, str] = {}
    errors: list[BaseException] = []
    guard = threading.Lock()
    with RippleMem(
        tmp_path / "store", user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:

        def work(writer: int) -> None:
            handle = mem if writer % 2 else mem.scope("bob")
            try:
                for item in range(0, per_thread, 3):
                    single = handle.add(note(writer, item))
                    batch = handle.add_many([note(writer, item + 1), note(writer, item + 2)])
                    with guard:
                        returned.update((m.id, m.content) for m in [single, *batch])
                    assert handle.get(single.id).content == note(writer, item)
                    handle.recall(f"crates for the {CITIES[writer % len(CITIES)]} depot", k=3)
                    handle.list(limit=5)
            except BaseException as exc:  # collected: a thread's failure must fail the test
                errors.append(exc)

        workers = [threading.Thread(target=work, args=(w,)) for w in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=300)
        assert not errors, errors
        stats = mem.stats(), mem.scope("bob").stats()
    rows = stored_rows(tmp_path / "store")
    expected = {note(w, i) for w in range(threads) for i in range(per_thread)}
    assert len(returned) == threads * per_thread
    assert sorted(content for _, _, content in rows) == sorted(expected)
    assert {i: c for i, _, c in rows} == returned
    assert [s["total"] for s in stats] == [s["vectors"] for s in stats] == [36, 36]
    assert check_path(tmp_path / "store", repair=False).consistent


# Each process writes its notes in batches, announces it is done, waits for the others, then recalls
# one note of every other process by dense search: it must see their writes, not a stale index.
PROCESS = r"""
import json, os, sys, time
from ripplemem import HashingEmbedder, RippleMem, StoreOptions
sys.path.insert(0, sys.argv[5])
from test_concurrency import note
path, index, writer, writers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
mem = RippleMem(path, user_id="alice", embedder=HashingEmbedder(), store=StoreOptions(vector_index=index))
while not os.path.exists(os.path.join(path, "go")):
    time.sleep(0.01)
stored = []
for start in range(0, 20, 5):
    stored += [m.id for m in mem.add_many([note(writer, i) for i in range(start, start + 5)])]
    mem.recall(note((writer + 1) % writers, start), k=3)
open(os.path.join(path, f"done-{writer}"), "w").close()
while not all(os.path.exists(os.path.join(path, f"done-{w}")) for w in range(writers)):
    time.sleep(0.01)
seen = {w: mem.recall(note(w, 7), k=1, mode="dense", record_access=False).hits[0].memory.content
        for w in range(writers)}
print(json.dumps({"ids": stored, "seen": seen}))
"""


@pytest.mark.parametrize("index", ["chroma", "numpy"])
def test_processes_writing_one_store_at_once_lose_nothing_and_see_each_other(
    tmp_path: Path, index: str
) -> None:
    path, writers = tmp_path / "store", 2
    with RippleMem(
        path, user_id="alice", embedder=HashingEmbedder(), store=StoreOptions(vector_index=index)
    ) as mem:
        mem.add("The store exists before the writers start")
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                PROCESS,
                str(path),
                index,
                str(w),
                str(writers),
                str(Path(__file__).parent),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(writers)
    ]
    (path / "go").touch()
    results = []
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    rows = stored_rows(path)
    expected = {note(w, i) for w in range(writers) for i in range(20)}
    assert len(rows) == 1 + writers * 20
    assert sorted(c for _, _, c in rows if c in expected) == sorted(expected)
    assert {i for r in results for i in r["ids"]} == {i for i, _, c in rows if c in expected}
    for result in results:
        assert result["seen"] == {str(w): note(w, 7) for w in range(writers)}
    report = check_path(path, repair=False)
    assert report.consistent
    if index == "chroma":
        assert report.vectors == len(rows)


def test_async_api_under_300_concurrent_tasks(tmp_path: Path) -> None:
    async def run(mem: RippleMem) -> tuple[list[object], list[object]]:
        writes = [mem.aadd(note(task % 10, task)) for task in range(150)]
        reads = [mem.arecall(f"crates of {FRUITS[task % len(FRUITS)]}", k=5) for task in range(150)]
        everything = await asyncio.gather(*writes, *reads, return_exceptions=True)
        return everything[:150], everything[150:]

    with RippleMem(
        tmp_path / "store",
        user_id="alice",
        embedder=HashingEmbedder(),
        store=StoreOptions(vector_index="chroma"),
    ) as mem:
        written, recalled = asyncio.run(run(mem))
        assert not [r for r in [*written, *recalled] if isinstance(r, BaseException)]
        assert sorted(m.content for m in written) == sorted(note(t % 10, t) for t in range(150))
        assert len({m.id for m in written}) == 150
        # A recall sees only finished writes, and by the last ones most writes have finished.
        assert all(len(r.hits) <= 5 for r in recalled) and len(recalled[-1].hits) == 5
        stats = mem.stats()
        assert stats["total"] == stats["vectors"] == 150
    assert len(stored_rows(tmp_path / "store")) == 150
