"""Trust numbers: writes under concurrency, SIGKILLs survived, hostile inputs handled, and what
the crash check costs when a store is opened.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/trust.py [--kills 20] [--open-memories 10000]

Prints markdown tables. The hashing embedder keeps the runs about storage, not the model.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import random
import signal
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

from trust_privacy import cross_user_row, erase_row

from ripplemem import HashingEmbedder, RippleMem
from ripplemem.errors import RippleMemError
from ripplemem.reconcile import PENDING_DIRNAME, check_path
from ripplemem.stores.sqlite import DB_FILENAME

COMMAND = "HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/trust.py"
# Writers are forked from a clean server process that imported RippleMem and Chroma once: forking
# this process after it opened Chroma (which runs threads) would not be safe.
FORKS = multiprocessing.get_context("forkserver")
FORKS.set_forkserver_preload(["ripplemem.memory", "chromadb"])


def note(writer: int, item: int) -> str:
    """A distinct memory text."""
    return f"Writer {writer} note {item}: {writer * 100_000 + item} crates left the depot at dawn"


def _open(path: Path, user: str = "alice") -> RippleMem:
    return RippleMem(path, user_id=user, embedder=HashingEmbedder(), vector_index="chroma")


def _writer_process(path: Path, writer: int, count: int) -> None:
    with _open(path) as mem:
        for start in range(0, count, 5):
            mem.add_many([note(writer, i) for i in range(start, min(start + 5, count))])


def concurrency_row(threads: int, processes: int, per_writer: int) -> tuple[int, int, int, int]:
    """(attempted, stored exactly once, lost, duplicated) for threads and forked processes at once."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store"
        _open(path).close()
        children = [FORKS.Process(target=_writer_process, args=(path, 1000 + p, per_writer))
                    for p in range(processes)]
        for child in children:
            child.start()
        with _open(path) as mem:
            def work(writer: int) -> None:
                for item in range(per_writer):
                    mem.add(note(writer, item))
            workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
        for child in children:
            child.join()
        with sqlite3.connect(path / DB_FILENAME) as conn:
            contents = [r[0] for r in conn.execute("SELECT content FROM memories")]
        expected = {note(w, i) for w in [*range(threads), *range(1000, 1000 + processes)]
                    for i in range(per_writer)}
        counts = {c: contents.count(c) for c in set(contents)}
        exactly_once = sum(1 for c in expected if counts.get(c) == 1)
        lost = sum(1 for c in expected if c not in counts)
        duplicated = sum(n - 1 for n in counts.values() if n > 1)
        return len(expected), exactly_once, lost, duplicated


def _write_until_killed(path: Path, seed: int) -> None:
    rng = random.Random(seed)
    with _open(path, rng.choice(["alice", "bob"])) as mem:
        mine: list[str] = []
        batch = 0
        while True:
            batch += 1
            mine += [m.id for m in mem.add_many([f"Run {seed} batch {batch} item {i}: {rng.random()}"
                                                 for i in range(rng.randint(2, 12))])]
            if batch % 3 == 0:
                for memory_id in rng.sample(mine, 2):
                    mem.delete(memory_id)
                    mine.remove(memory_id)


def kills_row(kills: int, seed: int = 7) -> tuple[int, int, int]:
    """(kills injected, of which left a marker or damage, stores consistent after the next open)."""
    rng = random.Random(seed)
    interrupted = consistent = 0
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store"
        for kill in range(kills):
            child = FORKS.Process(target=_write_until_killed, args=(path, kill))
            child.start()
            time.sleep(rng.uniform(0.6, 1.2))
            os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
            child.join()
            marker = path / PENDING_DIRNAME
            interrupted += marker.is_dir() and bool(os.listdir(marker))
            with _open(path) as mem:
                mem.stats()
            consistent += check_path(path, repair=False).consistent
    return kills, interrupted, consistent


def hostile_inputs() -> list[tuple[str, dict]]:
    """(label, add() keyword arguments) of inputs a careless or hostile caller might send."""
    nested: dict = {}
    cursor = nested
    for _ in range(100):
        cursor["x"] = {}
        cursor = cursor["x"]
    texts = ["x'; DROP TABLE memories; --", "x}) DETACH DELETE n //", "\u202eevil", "👩‍👩‍👧‍👦",
             "lone \ud800 surrogate", "", "   ", "a\x00b", "x" * 10_000_000, "שלום مرحبا", "\x1b[31m"]
    cases = [(f"text {t[:12]!r}", {"content": t}) for t in texts]
    cases += [(f"importance {v!r}", {"content": "importance probe", "importance": v})
              for v in (math.nan, math.inf, -1, 2, "high", True, 0.25)]
    cases += [(f"metadata {label}", {"content": "metadata probe", "metadata": value}) for label, value in [
        ("set", {"a": {1}}), ("bytes", {"a": b"x"}), ("nan", {"a": math.nan}), ("nested", nested),
        ("huge", {"a": "x" * 2_000_000}), ("empty", {}), ("unicode", {"ключ": "值"}), ("list", [1])]]
    cases += [(f"content type {type(v).__name__}", {"content": v}) for v in (42, None, b"x", ["x"])]
    return cases


def hostile_row() -> tuple[int, int, list[str]]:
    """(inputs tried, handled: stored exactly or refused with a RippleMem error, what was not)."""
    cases = hostile_inputs()
    handled, failures = 0, []
    with RippleMem(user_id="alice", embedder=HashingEmbedder()) as mem:
        sentinel = mem.add("The sentinel memory must never change")
        for label, kwargs in cases:
            before = mem.stats()["total"]
            try:
                memory = mem.add(**kwargs)
            except RippleMemError:
                ok = mem.stats()["total"] == before
            except Exception as exc:  # an unexpected error type is a failure to handle the input
                ok, label = False, f"{label}: {type(exc).__name__}"
            else:
                got = mem.get(memory.id)
                ok = got is not None and got.content == kwargs["content"] and \
                    got.metadata == (kwargs.get("metadata") or {})
            ok = ok and mem.get(sentinel.id).content == sentinel.content
            handled += ok
            if not ok:
                failures.append(label)
    return len(cases), handled, failures


def open_cost(memories: int) -> tuple[float, float, float]:
    """Seconds to open a Chroma store of `memories` and run a first recall: clean, and with an
    interrupted-write marker (full check), and a full check alone."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store"
        with _open(path) as mem:
            mem.add_many([note(i % 50, i) for i in range(memories)], batch_size=1000)

        def timed_open() -> float:
            started = time.perf_counter()
            with _open(path) as mem:
                mem.recall("crates at dawn", k=5, mode="dense", record_access=False)
            return time.perf_counter() - started

        timed_open()  # warm the imports and the page cache
        clean = timed_open()
        (path / PENDING_DIRNAME).mkdir(exist_ok=True)
        (path / PENDING_DIRNAME / f"{os.uname().nodename}:999999999:bench").write_text("0")
        marked = timed_open()
        started = time.perf_counter()
        check_path(path, repair=False)
        return clean, marked, time.perf_counter() - started


def main() -> None:
    """Run every measurement and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--open-memories", type=int, default=10_000)
    args = parser.parse_args()
    attempted, once, lost, duplicated = concurrency_row(threads=4, processes=2, per_writer=40)
    kills, interrupted, consistent = kills_row(args.kills)
    tried, handled, failures = hostile_row()
    clean, marked, check = open_cost(args.open_memories)
    probes, leaks = cross_user_row()
    erased = erase_row()
    print(f"`{COMMAND} --kills {args.kills} --open-memories {args.open_memories}`\n")
    print("| trust measure | tried | outcome |")
    print("|---|---|---|")
    print(f"| writes under concurrency (4 threads + 2 processes, one Chroma store) | {attempted} attempted | "
          f"{once} stored exactly once, {lost} lost, {duplicated} duplicated |")
    print(f"| SIGKILL during add_many / delete | {kills} kills ({interrupted} mid-write) | "
          f"{consistent} stores consistent after the next open |")
    print(f"| hostile inputs to add() | {tried} tried | {handled} handled (stored exactly or refused "
          f"clearly, nothing else changed){'; not: ' + ', '.join(failures) if failures else ''} |")
    print(f"| cross-user probes (user B with A's ids and words: get, update, delete, history, erase, "
          f"neighbors, find_connections, recall in 4 modes, list, stats, communities) | {probes} probes | "
          f"{leaks} leaks |")
    print("\n| removing a memory (Chroma store, 6 users) | requests | verifications passed | erased words "
          "left in the store's raw files | seconds |")
    print("|---|---|---|---|---|")
    for how, (requests, passed, left, words, seconds) in erased.items():
        verified = "-" if how.startswith("delete") else str(passed)
        print(f"| {how} | {requests} | {verified} | {left} of {words} | {seconds:.2f} |")
    print(f"\n| open + first recall, {args.open_memories} memories (Chroma) | seconds |")
    print("|---|---|")
    print(f"| clean open (check skipped) | {clean:.2f} |")
    print(f"| after an interrupted write (full check + repair) | {marked:.2f} |")
    print(f"| full check alone (`ripplemem check --no-repair`) | {check:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
