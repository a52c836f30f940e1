"""The memory lifecycle at scale: N memories of one user with spread-out ages, importance and access
counts go through `maintain()` (consolidate + forget + archive); prints a markdown table of the
time per step and what the store looks like before and after.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/lifecycle.py [--n 100000] [--embedder hashing]

Memories are written with the injectable clock over --days days (default 180), so their ages are
real; importance follows Beta(2, 2.5) (mean 0.44); 40% are never recalled and the others have a
geometric number of accesses, last one at a random time since they were written (written straight
to SQLite, as recalls would leave them). The baseline, measured in the same run on a copy of the
store taken before maintenance: the same deletes done naively, one `mem.delete` at a time, on a
sample (extrapolated to all of them). "other procs" is the CPU (in cores) other processes used
during the run (from /proc/stat); above ~0.2 the times are contended.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ripplemem import RippleMem  # noqa: E402
from ripplemem.lifecycle.reembed import disk_bytes  # noqa: E402

NAMES = [
    "Calvin",
    "Mei",
    "Lin",
    "Oskar",
    "Priya",
    "Tomás",
    "Aiko",
    "Femi",
    "Greta",
    "Hassan",
    "Ines",
    "Jonas",
    "Kavya",
    "Liam",
    "Marta",
    "Nadia",
    "Omar",
    "Paula",
    "Ravi",
    "Sofia",
]
PLACES = [
    "Berlin",
    "Hangzhou",
    "the Aquatic Centre",
    "Lisbon",
    "the office",
    "Kyoto",
    "the market",
    "West Lake",
    "the library",
    "Marrakesh",
    "the gym",
    "Oslo",
    "the bakery",
    "Toronto",
]
DOINGS = [
    "had lunch with",
    "went running with",
    "argued about the budget with",
    "watched a film with",
    "planned a trip with",
    "cooked dinner for",
    "helped move house",
    "played chess with",
    "studied Spanish with",
    "visited a museum with",
    "fixed the bike of",
    "called",
]
DETAILS = [
    "it rained all day",
    "we lost track of time",
    "the train was late",
    "it was cheaper than expected",
    "we promised to do it again",
    "I forgot my umbrella",
    "the food was excellent",
    "nobody was there",
    "we took lots of photos",
    "it took three hours",
]


class Clock:
    """The clock the store reads; the benchmark moves it."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def _cpu_snapshot() -> tuple[float, float, float]:
    """(wall time, whole-machine busy CPU seconds, this process's CPU seconds)."""
    with open("/proc/stat") as stat:
        fields = [float(x) for x in stat.readline().split()[1:]]
    busy = (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
    times = os.times()
    return time.perf_counter(), busy, times.user + times.system


def _contention(start: tuple[float, float, float]) -> float:
    """Cores other processes used on average since `start`."""
    wall, busy, own = (b - a for a, b in zip(start, _cpu_snapshot(), strict=True))
    return max(0.0, (busy - own) / wall) if wall > 0 else 0.0


def make_memories(n: int, days: float, rng: np.random.Generator) -> dict[str, Any]:
    """Texts and the lifecycle columns of n memories (ages in days, importance, accesses)."""
    texts = [
        f"{rng.choice(['On', 'Last'])} {rng.choice(['Monday', 'Friday', 'Sunday'])} I "
        f"{DOINGS[i % len(DOINGS)]} {NAMES[rng.integers(len(NAMES))]} "
        f"in {PLACES[rng.integers(len(PLACES))]}; "
        f"{DETAILS[rng.integers(len(DETAILS))]} (note {i})"
        for i in range(n)
    ]
    age = np.sort(rng.uniform(0, days, n))[::-1]  # oldest first
    accessed = rng.random(n) >= 0.4
    count = np.where(accessed, rng.geometric(0.25, n), 0)
    since = age * rng.random(n)  # last access: somewhere between creation and now
    return {
        "texts": texts,
        "age": age,
        "importance": np.round(rng.beta(2, 2.5, n), 3),
        "types": np.where(rng.random(n) < 0.15, "semantic", "episodic"),
        "access_count": count,
        "idle": np.where(accessed, since, age),
    }


def build_store(path: str, embedder: str, n: int, days: float, seed: int) -> tuple[RippleMem, Clock, float]:
    """Write the memories day by day on the clock; returns the handle, the clock and seconds taken."""
    rng = np.random.default_rng(seed)
    data = make_memories(n, days, rng)
    end = datetime(2025, 6, 1, tzinfo=timezone.utc)
    clock = Clock(end)
    mem = RippleMem(path, user_id="bench", embedder=embedder, clock=clock)
    started = time.perf_counter()
    day_of = np.floor(data["age"]).astype(int)
    for day in sorted(set(day_of.tolist()), reverse=True):
        rows = np.flatnonzero(day_of == day)
        clock.now = end - timedelta(days=float(data["age"][rows[0]]))
        mem.add_many(
            [
                {
                    "content": data["texts"][i],
                    "importance": float(data["importance"][i]),
                    "type": str(data["types"][i]),
                }
                for i in rows
            ],
            batch_size=1024,
        )
        if day % 20 == 0:
            seconds = time.perf_counter() - started
            print(f"# wrote {rows[-1] + 1:,}/{n:,} in {seconds:,.0f} s", file=sys.stderr)
    ids = [m.id for m in mem.list(limit=n, newest_first=False)]
    now = end.timestamp()
    with mem._engine.store.transaction() as conn:
        conn.executemany(
            "UPDATE memories SET access_count = ?, last_accessed = ? WHERE id = ?",
            [
                (int(c), now - float(idle) * 86400 if c else None, i)
                for i, c, idle in zip(ids, data["access_count"], data["idle"], strict=True)
            ],
        )
    clock.now = end
    return mem, clock, time.perf_counter() - started


def store_shape(mem: RippleMem) -> dict[str, Any]:
    """Counts per tier, vectors in the index, and bytes on disk (SQLite, vector index, archive)."""
    stats = mem.stats()
    path = mem.path or ""
    archive = disk_bytes(os.path.join(path, "archive"))
    sqlite = sum(
        os.path.getsize(os.path.join(path, name))
        for name in os.listdir(path)
        if name.startswith("ripplemem.db")
    )
    return {
        "total": stats["total"],
        **{t: stats["by_tier"].get(t, 0) for t in ("hot", "warm", "cold")},
        "vectors": stats["vectors"],
        "index": stats["vector_index"],
        "disk": stats["disk_bytes"],
        "sqlite": sqlite,
        "archive": archive,
    }


def naive_deletes(path: str, embedder: str, clock: Clock, ids: list[str], sample: int) -> tuple[float, int]:
    """Seconds per memory when deleting with one mem.delete per id, on a copy of the store."""
    chosen = ids[:sample]
    with RippleMem(path, user_id="bench", embedder=embedder, clock=clock) as mem:
        mem.stats()  # open the vector index outside the timing
        started = time.perf_counter()
        for memory_id in chosen:
            mem.delete(memory_id)
        return (time.perf_counter() - started) / max(len(chosen), 1), len(chosen)


def _mb(value: int) -> str:
    return f"{value / 1e6:,.1f} MB"


def main() -> None:
    """Build, copy, maintain, measure the baseline, print the tables."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=100_000, help="memories (default 100000)")
    parser.add_argument("--days", type=float, default=180.0, help="the span they are written over (180)")
    parser.add_argument(
        "--embedder",
        default="minilm",
        help="minilm (default; ~8 min per 100k on 2 cores), onnx, hashing (no model)",
    )
    parser.add_argument("--baseline-sample", type=int, default=500, help="naive deletes timed (500)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="ripplemem-lifecycle-")
    try:
        run(args, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run(args: argparse.Namespace, workdir: str) -> None:
    """The benchmark proper, in a scratch directory."""
    path, copy = os.path.join(workdir, "store"), os.path.join(workdir, "copy")
    start = _cpu_snapshot()
    mem, clock, build_seconds = build_store(path, args.embedder, args.n, args.days, args.seed)
    before = store_shape(mem)
    mem.close()
    shutil.copytree(path, copy)
    mem = RippleMem(path, user_id="bench", embedder=args.embedder, clock=clock)
    mem.stats()  # open the vector index outside the timing
    plan_started = time.perf_counter()
    mem.maintain(dry_run=True)
    plan_seconds = time.perf_counter() - plan_started
    started = time.perf_counter()
    report = mem.maintain()
    maintain_seconds = time.perf_counter() - started
    after = store_shape(mem)
    mem.close()
    deleted = report.forget.ids("delete") + report.archive.ids("delete")
    per_delete, sampled = naive_deletes(copy, args.embedder, clock, deleted, args.baseline_sample)
    other = _contention(start)
    model = args.embedder
    print(
        f"\nN={args.n:,} memories of one user written over {args.days:g} days, embedder={model}, "
        f"vector index={after['index']}, other procs {other:.2f} cores; "
        f"building the store took {build_seconds:,.0f} s\n"
    )
    print("| step | seconds | what it did |")
    print("|---|---:|---|")
    counts = report.consolidation.counts()
    print(
        f"| consolidate | {report.seconds['consolidate']:,.1f} | "
        f"{', '.join(f'{k} {v:,}' for k, v in counts.items()) or 'nothing'} |"
    )
    for step in (report.forget, report.archive):
        did = ", ".join(f"{k} {v:,}" for k, v in step.counts().items() if v)
        print(f"| {step.step} ({step.strategy}) | {step.seconds:,.1f} | {did} |")
    print(f"| maintain, total | {maintain_seconds:,.1f} | |")
    print(f"| maintain, dry run (plans only) | {plan_seconds:,.1f} | the same plans, nothing applied |")
    naive_total = per_delete * len(deleted)
    print(
        f"| baseline: the {len(deleted):,} deletes one `mem.delete` at a time | {naive_total:,.1f} | "
        f"extrapolated from {sampled:,} timed deletes ({per_delete * 1000:.1f} ms each) on a copy |"
    )
    print("\n| store | before | after |")
    print("|---|---:|---:|")
    for key, label in (
        ("total", "memories"),
        ("hot", "hot"),
        ("warm", "warm"),
        ("cold", "cold"),
        ("vectors", "vectors in the index"),
    ):
        print(f"| {label} | {before[key]:,} | {after[key]:,} |")
    for key, label in (
        ("disk", "disk, whole store"),
        ("sqlite", "SQLite file + WAL"),
        ("archive", "archive segments"),
    ):
        print(f"| {label} | {_mb(before[key])} | {_mb(after[key])} |")


if __name__ == "__main__":
    main()
