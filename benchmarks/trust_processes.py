"""Trust across processes: writes lost while other processes erase, delete, maintain and import on
the same store, and SIGKILLs in the middle of each of those operations.

Used by benchmarks/trust.py; every process opens the store itself (a CLI run, a worker, an app).
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import random
import signal
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from ripplemem import HashingEmbedder, RippleMem, StoreOptions
from ripplemem.store.recovery.reconcile import check_path
from ripplemem.store.sqlite.rows import DB_FILENAME
from ripplemem.store.write_lock import PENDING_DIRNAME

FORKS = multiprocessing.get_context("forkserver")
ACTIVITIES = ("erase", "delete", "maintain", "import")


def open_store(path: Path, user: str) -> RippleMem:
    """A handle on the shared Chroma store (hashing embedder: the runs are about storage)."""
    return RippleMem(
        path, user_id=user, embedder=HashingEmbedder(), store=StoreOptions(vector_index="chroma")
    )


def carol_note(item: int) -> str:
    """A distinct memory text of the counted writer."""
    return f"Carol ledger line {item}: parcel {item * 7919} left the north depot"


def _alice_step(mem: RippleMem, activity: str, step: int, folder: Path) -> None:
    """One round of the other process's work on the shared store."""
    if activity == "import":
        file = folder / f"import-{os.getpid()}-{step}.jsonl"
        lines = [json.dumps({"content": f"Imported line {step}-{i} about harbour cranes"}) for i in range(8)]
        file.write_text("\n".join(lines) + "\n", encoding="utf-8")
        mem.import_file(file)
        return
    added = mem.add_many(
        [f"Alice round {step} item {i}: my locker code is {step * 31 + i}" for i in range(4)]
    )
    if activity == "erase":
        mem.erase(added[0].id)
        mem.erase(matching=f"Alice round {step} item 1")
    elif activity == "delete":
        for memory in added[:2]:
            mem.delete(memory.id)
    elif activity == "maintain":
        for turn in range(3):
            mem.observe(
                "user", f"Round {step} turn {turn}: please remember the boiler service", session_id="s"
            )
        mem.maintain()


def _busy_process(path: Path, activity: str, stop_file: Path) -> None:
    with open_store(path, "alice") as mem:
        (path.parent / "busy-ready").touch()
        step = 0
        while not stop_file.exists():
            _alice_step(mem, activity, step, path.parent)
            step += 1


def _open_close_process(path: Path, stop_file: Path) -> None:
    """A short-lived handle again and again, like `ripplemem stats` from a shell. While the busy
    process holds the store open, SQLite must keep the write-ahead log: a log gone after this
    handle closed means the busy process had lost its locks (and its next writes can be lost)."""
    while not (path.parent / "busy-ready").exists():
        time.sleep(0.05)
    removed = 0
    while not stop_file.exists():
        with open_store(path, "bob") as mem:
            mem.stats()
        # Counted only if the busy process had not yet been told to stop (it then closes, as last).
        removed += not (path / f"{DB_FILENAME}-wal").exists() and not stop_file.exists()
    (path.parent / "wal-removed").write_text(str(removed))


def _counted_writer(path: Path, count: int, result_file: Path) -> None:
    """Commit `count` notes four at a time, every batch from its own short-lived handle (a CLI add)."""
    for start in range(0, count, 4):
        with open_store(path, "carol") as mem:
            mem.add_many([carol_note(i) for i in range(start, min(start + 4, count))])
        result_file.write_text(str(min(start + 4, count)))


class LostWrites(NamedTuple):
    """What happened to one counted writer's commits while other processes worked on the store."""

    committed: int
    lost: int
    log_removed: int  # times the write-ahead log vanished while the busy process held the store
    processes_failed: int  # processes that died with an error (a malformed database, say)
    integrity_ok: bool


def lost_writes_row(activity: str, count: int = 200) -> LostWrites:
    """The counted writer's fate while another process runs `activity` on the same store and a
    third opens and closes it again and again."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store"
        open_store(path, "carol").close()
        stop, result = Path(folder) / "stop", Path(folder) / "committed"
        others = [
            FORKS.Process(target=_busy_process, args=(path, activity, stop)),
            FORKS.Process(target=_open_close_process, args=(path, stop)),
        ]
        writer = FORKS.Process(target=_counted_writer, args=(path, count, result))
        for process in [*others, writer]:
            process.start()
        writer.join()
        stop.touch()
        for process in others:
            process.join()
        committed = int(result.read_text()) if result.exists() else 0
        stored, healthy = _carol_rows(path)
        lost = sum(1 for item in range(committed) if carol_note(item) not in stored)
        removed = Path(folder) / "wal-removed"
        failed = sum(process.exitcode != 0 for process in [*others, writer])
        log_removed = int(removed.read_text()) if removed.exists() else 0
        return LostWrites(committed, lost, log_removed, failed, healthy)


def _carol_rows(path: Path) -> tuple[set[str], bool]:
    """The counted writer's stored texts, and whether SQLite finds the file intact."""
    try:
        with sqlite3.connect(path / DB_FILENAME) as conn:
            healthy = conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            rows = conn.execute("SELECT content FROM memories WHERE user_id = 'carol'")
            return {row[0] for row in rows}, healthy
    except sqlite3.DatabaseError:
        return set(), False


def _kill_target(path: Path, operation: str, seed: int) -> None:
    """Run `operation` on the store in a loop until killed."""
    rng = random.Random(seed)
    with open_store(path, rng.choice(["alice", "bob"])) as mem:
        (path.parent / f"running-{seed}").touch()
        step = 0
        while True:
            step += 1
            if operation == "add_many":
                mem.add_many(
                    [f"Run {seed} batch {step} item {i}: {rng.random()}" for i in range(rng.randint(2, 40))]
                )
            elif operation == "import_file":
                _alice_step(mem, "import", seed * 1000 + step, path.parent)
            elif operation == "erase":
                _alice_step(mem, "erase", seed * 1000 + step, path.parent)
            else:
                _alice_step(mem, "maintain", seed * 1000 + step, path.parent)


class KillTrials(NamedTuple):
    """SIGKILLs during one operation, and the store after each."""

    kills: int
    mid_write: int  # kills that left an interrupted-write marker
    index_broken: int  # kills after which the vector index failed its health check (rebuilt on open)
    usable: int  # a fresh process then opened the store, wrote and recalled what it wrote
    consistent: int  # `ripplemem check --no-repair` then found ledger and index in agreement
    died_early: int  # the operation failed by itself before the kill came


def kill_trials(
    per_operation: int, index_health: Callable[[Path], bool], seed: int = 11
) -> dict[str, KillTrials]:
    """Per operation, `per_operation` SIGKILLs at random moments while it runs in a loop; one store
    per operation takes every kill in turn."""
    rng = random.Random(seed)
    results: dict[str, KillTrials] = {}
    for operation in ("add_many", "import_file", "erase", "maintain"):
        counts = [0] * 5
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "store"
            for kill in range(per_operation):
                child = FORKS.Process(target=_kill_target, args=(path, operation, kill))
                child.start()
                while not (Path(folder) / f"running-{kill}").exists() and child.is_alive():
                    time.sleep(0.02)
                time.sleep(rng.uniform(0.05, 1.5))
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
                child.join()
                marker = path / PENDING_DIRNAME
                outcome = (
                    marker.is_dir() and bool(os.listdir(marker)),
                    not index_health(path),
                    _usable_after_reopen(path, kill),
                    check_path(path, repair=False).consistent,
                    child.exitcode != -signal.SIGKILL,
                )
                counts = [total + bool(now) for total, now in zip(counts, outcome, strict=True)]
        results[operation] = KillTrials(per_operation, *counts)
    return results


def _usable_after_reopen(path: Path, kill: int) -> bool:
    """A fresh process can open the store, write a batch and recall it (a crash here counts as not)."""
    child = FORKS.Process(target=_reopen_and_use, args=(path, kill))
    child.start()
    child.join()
    return child.exitcode == 0


def _reopen_and_use(path: Path, kill: int) -> None:
    text = f"After kill {kill} the courier brought a blue umbrella"
    with open_store(path, "zoe") as mem:
        mem.stats()
        mem.add_many([text, f"After kill {kill} a second line"])
        hits = mem.recall(f"kill {kill} blue umbrella courier", k=3, mode="hybrid").hits
        if not hits or hits[0].memory.content != text:
            raise SystemExit(1)
