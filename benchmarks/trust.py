"""Trust numbers: writes under concurrency and beside other processes' erase, delete, maintain and
import, SIGKILLs survived across four operations, hostile inputs handled, erase cost and what
another user waits meanwhile, and what the crash check costs when a store is opened.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/trust.py [--kills 40] [--open-memories 10000]
        [--erase-sizes 500,1000,2000,10000]

Prints markdown tables. The hashing embedder keeps the runs about storage, not the model.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

from trust_inputs import hostile_probe_row
from trust_privacy import cross_user_row, erase_row, erase_scaling_row
from trust_processes import ACTIVITIES, KillTrials, LostWrites, kill_trials, lost_writes_row

from ripplemem import HashingEmbedder, RippleMem, StoreOptions
from ripplemem.errors import RippleMemError
from ripplemem.store.recovery.reconcile import check_path
from ripplemem.store.sqlite.rows import DB_FILENAME
from ripplemem.store.vectors.chroma_health import index_damage
from ripplemem.store.write_lock import PENDING_DIRNAME

COMMAND = "HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/trust.py"
# Writers are forked from a clean server process that imported RippleMem and Chroma once: forking
# this process after it opened Chroma (which runs threads) would not be safe.
FORKS = multiprocessing.get_context("forkserver")
FORKS.set_forkserver_preload(["ripplemem.memory", "chromadb"])


def note(writer: int, item: int) -> str:
    """A distinct memory text."""
    return f"Writer {writer} note {item}: {writer * 100_000 + item} crates left the depot at dawn"


def _open(path: Path, user: str = "alice") -> RippleMem:
    return RippleMem(
        path, user_id=user, embedder=HashingEmbedder(), store=StoreOptions(vector_index="chroma")
    )


def _writer_process(path: Path, writer: int, count: int) -> None:
    with _open(path) as mem:
        for start in range(0, count, 5):
            mem.add_many([note(writer, i) for i in range(start, min(start + 5, count))])


def concurrency_row(threads: int, processes: int, per_writer: int) -> tuple[int, int, int, int]:
    """(attempted, stored exactly once, lost, duplicated) for threads and forked processes at once."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store"
        _open(path).close()
        children = [
            FORKS.Process(target=_writer_process, args=(path, 1000 + p, per_writer)) for p in range(processes)
        ]
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
        expected = {
            note(w, i) for w in [*range(threads), *range(1000, 1000 + processes)] for i in range(per_writer)
        }
        counts = {c: contents.count(c) for c in set(contents)}
        exactly_once = sum(1 for c in expected if counts.get(c) == 1)
        lost = sum(1 for c in expected if c not in counts)
        duplicated = sum(n - 1 for n in counts.values() if n > 1)
        return len(expected), exactly_once, lost, duplicated


def hostile_inputs() -> list[tuple[str, dict]]:
    """(label, add() keyword arguments) of inputs a careless or hostile caller might send."""
    nested: dict = {}
    cursor = nested
    for _ in range(100):
        cursor["x"] = {}
        cursor = cursor["x"]
    texts = [
        "x'; DROP TABLE memories; --",
        "x}) DETACH DELETE n //",
        "\u202eevil",
        "👩‍👩‍👧‍👦",
        "lone \ud800 surrogate",
        "",
        "   ",
        "a\x00b",
        "x" * 10_000_000,
        "שלום مرحبا",
        "\x1b[31m",
    ]
    cases = [(f"text {t[:12]!r}", {"content": t}) for t in texts]
    cases += [
        (f"importance {v!r}", {"content": "importance probe", "importance": v})
        for v in (math.nan, math.inf, -1, 2, "high", True, 0.25)
    ]
    cases += [
        (f"metadata {label}", {"content": "metadata probe", "metadata": value})
        for label, value in [
            ("set", {"a": {1}}),
            ("bytes", {"a": b"x"}),
            ("nan", {"a": math.nan}),
            ("nested", nested),
            ("huge", {"a": "x" * 2_000_000}),
            ("empty", {}),
            ("unicode", {"ключ": "值"}),
            ("list", [1]),
        ]
    ]
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
                ok = (
                    got is not None
                    and got.content == kwargs["content"]
                    and got.metadata == (kwargs.get("metadata") or {})
                )
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


def print_lost_writes(rows: dict[str, LostWrites]) -> None:
    """The table of a counted writer's commits while other processes work on the same store."""
    print(
        "\n| another process runs, on the same store (a third opens and closes it again and again) | "
        "writes committed by a counted process | lost | write-ahead log removed under a live handle | "
        "processes that failed | integrity_check |"
    )
    print("|---|---|---|---|---|---|")
    for activity, row in rows.items():
        print(
            f"| {activity} | {row.committed} | {row.lost} | {row.log_removed} | {row.processes_failed} | "
            f"{'ok' if row.integrity_ok else 'FAILED'} |"
        )


def print_kills(rows: dict[str, KillTrials]) -> None:
    """The table of SIGKILLs per operation and the store after each."""
    print(
        "\n| SIGKILL during | kills | mid-write | vector index broken (rebuilt on open) | usable after "
        "reopen (write + recall in a new process) | consistent after reopen | failed before the kill |"
    )
    print("|---|---|---|---|---|---|---|")
    for operation, row in rows.items():
        print(
            f"| {operation} | {row.kills} | {row.mid_write} | {row.index_broken} | {row.usable} | "
            f"{row.consistent} | {row.died_early} |"
        )


def print_erase_scaling(rows: list[tuple[int, float, float, float, bool]]) -> None:
    """The table of erase(user_id=) time by store size and the other user's longest write."""
    print(
        "\n| erase(user_id=) of a user with | seconds | seconds per 1k memories | longest add() of another "
        "user meanwhile | verified |"
    )
    print("|---|---|---|---|---|")
    for size, seconds, per_1k, longest, verified in rows:
        print(f"| {size:,} memories | {seconds:.2f} | {per_1k:.2f} | {longest:.3f} s | {verified} |")


def print_summary(
    concurrency: tuple[int, int, int, int],
    hostile: tuple[int, int, list[str]],
    probes: tuple[int, int, list[str]],
    cross_user: tuple[int, int],
) -> None:
    """The first table: concurrency, hostile inputs and cross-user probes."""
    attempted, once, lost, duplicated = concurrency
    print("| trust measure | tried | outcome |")
    print("|---|---|---|")
    print(
        f"| writes under concurrency (4 threads + 2 processes, one Chroma store) | {attempted} attempted | "
        f"{once} stored exactly once, {lost} lost, {duplicated} duplicated |"
    )
    for what, (tried, handled, failures) in (
        ("hostile inputs to add()", hostile),
        ("hostile-input probes across the public API", probes),
    ):
        print(
            f"| {what} | {tried} tried | {handled} handled (stored exactly or refused clearly, nothing "
            f"else changed){'; not: ' + ', '.join(failures) if failures else ''} |"
        )
    print(
        f"| cross-user probes (user B with A's ids and words: get, update, delete, history, erase, "
        f"neighbors, find_connections, recall in 4 modes, list, stats, communities) | "
        f"{cross_user[0]} probes | {cross_user[1]} leaks |"
    )


def print_removals(erased: dict[str, tuple[int, int, int, int, float]]) -> None:
    """The table of ways of removing a memory and what they leave."""
    print(
        "\n| removing a memory (Chroma store, 6 users) | requests | verifications passed | erased words "
        "left in the store's raw files | seconds |"
    )
    print("|---|---|---|---|---|")
    for how, (requests, passed, left, words, seconds) in erased.items():
        verified = "-" if how.startswith("delete") else str(passed)
        print(f"| {how} | {requests} | {verified} | {left} of {words} | {seconds:.2f} |")


def print_open_cost(memories: int, clean: float, marked: float, check: float) -> None:
    """The table of what the crash check costs when a store is opened."""
    print(f"\n| open + first recall, {memories} memories (Chroma) | seconds |")
    print("|---|---|")
    print(f"| clean open (check skipped) | {clean:.2f} |")
    print(f"| after an interrupted write (full check + repair) | {marked:.2f} |")
    print(f"| full check alone (`ripplemem check --no-repair`) | {check:.2f} |")


def main() -> None:
    """Run every measurement and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--kills",
        type=int,
        default=40,
        help="SIGKILLs in all, shared evenly by add_many, import_file, erase and maintain",
    )
    parser.add_argument("--open-memories", type=int, default=10_000)
    parser.add_argument(
        "--erase-sizes", default="500,1000,2000,10000", help="comma-separated user sizes for the erase timing"
    )
    args = parser.parse_args()
    concurrency = concurrency_row(threads=4, processes=2, per_writer=40)
    lost = {activity: lost_writes_row(activity) for activity in ACTIVITIES}
    kills = kill_trials(max(1, args.kills // 4), lambda path: not index_damage(path))
    hostile, probes = hostile_row(), hostile_probe_row()
    open_times = open_cost(args.open_memories)
    cross_user = cross_user_row()
    erased = erase_row()
    scaling = erase_scaling_row([int(size) for size in args.erase_sizes.split(",")])
    print(
        f"`{COMMAND} --kills {args.kills} --open-memories {args.open_memories} "
        f"--erase-sizes {args.erase_sizes}`\n"
    )
    print_summary(concurrency, hostile, probes, cross_user)
    print_removals(erased)
    print_erase_scaling(scaling)
    print_lost_writes(lost)
    print_kills(kills)
    print_open_cost(args.open_memories, *open_times)


if __name__ == "__main__":
    sys.exit(main())
