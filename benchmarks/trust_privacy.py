"""The erase and cross-user rows of benchmarks/trust.py: erase verifications vs residues found (with
plain delete() as the baseline), erase time by store size with the longest wait of another user's
write meanwhile, and cross-user probes vs leaks."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from ripplemem import HashingEmbedder, RippleMem, StoreOptions
from ripplemem.errors import RippleMemError


def secret(user: int, item: int) -> str:
    """A memory whose made-up word appears nowhere else."""
    return f"User {user} told us the Qx{user:03d}v{item:03d}zz code opens the north locker"


def _word(user: int, item: int) -> str:
    return f"Qx{user:03d}v{item:03d}zz"


def raw_residues(path: str, words: list[str]) -> int:
    """How many of the words some file under the store still holds in its raw bytes."""
    blobs = []
    for folder, _, names in os.walk(path):
        for name in names:
            with open(os.path.join(folder, name), "rb") as handle:
                blobs.append(handle.read())
    return sum(1 for word in words if any(word.encode() in blob for blob in blobs))


def _store(path: Path, users: int, per_user: int) -> RippleMem:
    mem = RippleMem(path, user_id="u0", embedder=HashingEmbedder(), store=StoreOptions(vector_index="chroma"))
    for user in range(users):
        mem.scope(f"u{user}").add_many([secret(user, i) for i in range(per_user)])
    return mem


def erase_row(users: int = 6, per_user: int = 20) -> dict[str, tuple[int, int, int, int, float]]:
    """Per way of removing: (requests, verifications passed, words left in raw files, words, seconds)."""
    results: dict[str, tuple[int, int, int, int, float]] = {}
    for how in ("delete() baseline", "erase(memory_id)", "erase(matching=)", "erase(user_id=)"):
        with tempfile.TemporaryDirectory() as folder, _store(Path(folder) / "s", users, per_user) as mem:
            requests, passed, words = 0, 0, []
            started = time.perf_counter()
            for user in range(1, users):
                handle = mem.scope(f"u{user}")
                memories = handle.list(limit=per_user)
                if how == "erase(user_id=)":
                    requests += 1
                    passed += handle.erase(user_id=f"u{user}").verified
                    words += [_word(user, i) for i in range(per_user)]
                    continue
                for memory in memories[:3]:
                    item = int(memory.content.split("v")[1][:3])
                    requests += 1
                    words.append(_word(user, item))
                    if how == "delete() baseline":
                        handle.delete(memory.id)
                    elif how == "erase(memory_id)":
                        passed += handle.erase(memory.id).verified
                    else:
                        passed += handle.erase(matching=_word(user, item)).verified
            seconds = time.perf_counter() - started
            results[how] = (requests, passed, raw_residues(mem.path or "", words), len(words), seconds)
    return results


ADD_PAUSE = 0.05  # seconds between the other user's adds during erase_scaling_row


def _note(item: int) -> str:
    """A distinct memory of the user being erased."""
    return f"Note {item}: crate {item * 7919} went to dock {item % 17} with code K{item:06d}q"


def erase_scaling_row(
    sizes: Sequence[int] = (500, 1000, 2000, 10_000),
) -> list[tuple[int, float, float, float, bool]]:
    """Per size: (memories erased, seconds, seconds per 1k memories, longest add() of another user
    meanwhile, verified) for erase(user_id=) of a user with that many memories, while a thread adds
    a memory of another user every ADD_PAUSE seconds (hashing embedder, embedded Chroma)."""
    rows = []
    for size in sizes:
        seconds, longest, verified = _erase_while_another_user_writes(size)
        rows.append((size, seconds, seconds * 1000 / size, longest, verified))
    return rows


def _keep_adding(other: RippleMem, adds: list[tuple[float, float]], stop: threading.Event) -> None:
    """Add a memory of another user every ADD_PAUSE seconds until stopped, noting when each add
    began and ended (a busier loop would measure the GIL it takes from the erase, not the lock)."""
    while not stop.wait(ADD_PAUSE):
        began = time.perf_counter()
        other.add(f"Other note {len(adds)} about the weather")
        adds.append((began, time.perf_counter()))


def _erase_while_another_user_writes(size: int) -> tuple[float, float, bool]:
    """(seconds of the erase, longest add of the other user overlapping it, verified)."""
    with (
        tempfile.TemporaryDirectory() as folder,
        RippleMem(
            Path(folder) / "s",
            user_id="big",
            embedder=HashingEmbedder(),
            store=StoreOptions(vector_index="chroma"),
        ) as mem,
    ):
        for start in range(0, size, 1000):
            mem.add_many([_note(i) for i in range(start, min(size, start + 1000))])
        other = mem.scope("other")
        other.add("The other user's first note")
        adds: list[tuple[float, float]] = []
        stop = threading.Event()
        writer = threading.Thread(target=_keep_adding, args=(other, adds, stop))
        writer.start()
        try:
            while not adds:
                time.sleep(0.01)
            began = time.perf_counter()
            report = mem.erase(user_id="big")
            ended = time.perf_counter()
        finally:
            stop.set()
            writer.join()
        longest = max(done - start for start, done in adds if done >= began and start <= ended)
        return ended - began, longest, report.verified


def cross_user_row(per_user: int = 10) -> tuple[int, int]:
    """(probes, leaks): user B calls every id- and name-taking method with user A's ids and words."""
    with tempfile.TemporaryDirectory() as folder, _store(Path(folder) / "s", 2, per_user) as mem:
        alice, bob = mem.scope("u0"), mem.scope("u1")
        ids = [m.id for m in alice.list(limit=per_user)]
        forbidden = [*ids, *(_word(0, i) for i in range(per_user))]
        probes = leaks = 0
        calls = []
        for memory_id in ids:
            calls += [
                lambda i=memory_id: bob.get(i),
                lambda i=memory_id: bob.delete(i),
                lambda i=memory_id: bob.update(i, content="x"),
                lambda i=memory_id: bob.history(i),
                lambda i=memory_id: bob.erase(i),
                lambda i=memory_id: bob.graph.neighbors(i),
                lambda i=memory_id: bob.graph.find_connections(i, "north locker"),
            ]
        for word in (_word(0, item) for item in range(per_user)):
            for mode in ("ripple", "hybrid", "dense", "keyword"):
                calls.append(lambda w=word, m=mode: bob.recall(f"{w} code locker", mode=m).hits)
            calls.append(lambda w=word: bob.erase(matching=w, dry_run=True).memory_ids)
        calls += [lambda: bob.list(limit=1000), bob.stats, lambda: bob.graph.communities(min_memories=1)]
        for call in calls:
            probes += 1
            try:
                seen = repr(call())
            except RippleMemError:
                continue
            leaks += any(word in seen for word in forbidden)
        return probes, leaks
