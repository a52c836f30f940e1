"""Scale: build N memories for ONE user through the bulk import, then recall; RAM and disk per memory.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/scale.py --n 100000
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/scale.py --n 1000000 --keep /data/scale

The default embedder, hashing-v1-384, needs no model and has MiniLM's 384 dimensions, so the
vector index's RAM and disk are MiniLM's; ``--embedder minilm`` measures the real model (its
ingest / raw-embedding ratio is the issue's >= 0.8x target; hashing embeds so fast that the ratio
only shows the store's own cost).

Each phase runs in its own process, so each RSS is its own: the raw embedding throughput of the
embedder on the same texts (the ingest target is >= 0.8x of it), the import (`ripplemem import`'s
code path, batch by batch, resumable), and recall in a fresh process that reopens the store (p50 /
p95 of hybrid and ripple, RSS while recalling, and the bytes of each in-process structure: the BM25
keyword index, the graph's CSR, the entity-vector cache). RSS per memory is counted above what the
same process holds after recalling from a 50-memory store (libraries, model, Chroma's client), and
split by loading one part after the other: the vector index (one dense query), then the keyword
index, then the graph. Disk is split into the SQLite file (rows, FTS5, stored embeddings, graph)
and Chroma (HNSW and its metadata). "other procs" is the CPU other
processes used meanwhile (cores); above ~0.3 on 2 cores the timings are contended.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

from ripplemem.store.sqlite.rows import DB_FILENAME

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

PEOPLE = [
    "Alice",
    "Bob",
    "Carmen",
    "Deepak",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Kemal",
    "Lena",
    "Marco",
    "Nadia",
    "Omar",
    "Priya",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Victor",
    "Wen",
    "Yusuf",
    "Zoe",
    "my sister",
    "my boss",
    "the landlord",
    "our coach",
]
THINGS = [
    "green tea",
    "a used bike",
    "the quarterly report",
    "a birthday cake",
    "running shoes",
    "a flight to Berlin",
    "the piano lessons",
    "a new laptop",
    "sourdough bread",
    "the garden shed",
    "a jazz concert ticket",
    "the dentist appointment",
    "the car insurance",
    "a hiking map",
    "the wedding photos",
    "a cat named Miso",
    "the tax return",
    "a yoga mat",
    "espresso beans",
    "a rented cabin",
    "a mechanical keyboard",
    "the team offsite",
    "winter tyres",
    "a Spanish course",
]
PLACES = [
    "in Lisbon",
    "at the office",
    "near the lake",
    "at home",
    "in the old town",
    "at the gym",
    "in Kyoto",
    "at the farmers market",
    "on the train",
    "in the park",
    "at the airport",
    "at the library",
    "in Barcelona",
    "at the clinic",
    "by the river",
    "in the mountains",
]
TEMPLATES = [
    "{p} said they bought {t} {w} on day {d}.",
    "I talked with {p} about {t} {w}; ticket #{d}.",
    "Remember that {p} prefers {t} and usually goes {w} (note {d}).",
    "{p} forgot {t} {w} (order {d}).",
    "{p} recommended {t}; I should check it out {w} before day {d}.",
    "We argued with {p} about {t} on day {d}.",
    "{p} called to say {t} is ready {w}, reference {d}.",
    "{p} lost {t} {w} on day {d} and is still upset.",
]
QUESTIONS = [
    "What did {p} buy {w}?",
    "Who recommended {t}?",
    "What does {p} prefer?",
    "Where is {t} ready?",
    "Which thing did {p} lose {w}?",
    "What did I talk about with {p}?",
]


def make_texts(n: int, seed: int = 5) -> list[str]:
    """n short memories, each with its own number (few merge as duplicates); the numbers grow the
    vocabulary as a real store's names and dates do."""
    rng = random.Random(seed)
    return [
        rng.choice(TEMPLATES).format(p=rng.choice(PEOPLE), t=rng.choice(THINGS), w=rng.choice(PLACES), d=i)
        for i in range(n)
    ]


def make_queries(n: int, seed: int = 9) -> list[str]:
    """n questions in the memories' vocabulary."""
    rng = random.Random(seed)
    return [
        rng.choice(QUESTIONS).format(p=rng.choice(PEOPLE), t=rng.choice(THINGS), w=rng.choice(PLACES))
        for _ in range(n)
    ]


# -- measuring -----------------------------------------------------------------------------------
def rss_mb(field: str = "VmRSS") -> float:
    """This process's resident (VmRSS) or peak resident (VmHWM) memory in MB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_snapshot() -> tuple[float, float, float]:
    """(wall, whole-machine busy CPU seconds, own CPU seconds)."""
    with open("/proc/stat") as stat:
        fields = [float(x) for x in stat.readline().split()[1:]]
    busy = (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
    times = os.times()
    return time.perf_counter(), busy, times.user + times.system


def other_cores(start: tuple[float, float, float]) -> float:
    """Cores other processes used on average since `start`."""
    wall, busy, own = (b - a for a, b in zip(start, cpu_snapshot(), strict=True))
    return max(0.0, (busy - own) / wall) if wall > 0 else 0.0


def deep_bytes(value: Any, seen: set[int] | None = None) -> int:
    """Bytes held by a structure of dicts, lists, tuples, strings, numpy and stdlib arrays."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return sys.getsizeof(value) + (value.nbytes if value.base is None else 0)
    size = sys.getsizeof(value)
    if isinstance(value, dict):
        size += sum(deep_bytes(k, seen) + deep_bytes(v, seen) for k, v in value.items())
    elif isinstance(value, list | tuple | set | frozenset):
        size += sum(deep_bytes(item, seen) for item in value)
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        size += sum(deep_bytes(v, seen) for k, v in vars(value).items() if not k.endswith("_lock"))
    elif hasattr(value, "data") and hasattr(value, "indices"):  # a scipy sparse matrix
        size += sum(a.nbytes for a in (value.data, value.indices, value.indptr))
    return size


def folder_bytes(path: str) -> int:
    """Bytes of every file under a folder."""
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


# -- phases (each in its own process) ------------------------------------------------------------
def _open(store: str, embedder_name: str) -> Any:
    from ripplemem import RippleMem

    embedder = None if embedder_name == "minilm" else embedder_name
    return RippleMem(store, user_id="scale-user", embedder=embedder)


def phase_embed(embedder_name: str, n: int) -> dict[str, Any]:
    """Raw embedding throughput of the embedder alone, batches of 1024, on the first n texts."""
    from ripplemem.embedding.embedders import resolve_embedder

    embedder = resolve_embedder(None if embedder_name == "minilm" else embedder_name)
    texts = make_texts(n)
    embedder.embed_documents(["warm up"])
    start = time.perf_counter()
    for s in range(0, n, 1024):
        embedder.embed_documents(texts[s : s + 1024])
    return {"embed_per_s": n / (time.perf_counter() - start), "model": embedder.model_id}


def phase_ingest(embedder_name: str, store: str, source: str) -> dict[str, Any]:
    """Import the file into a new store; ingest rate, peak RSS."""
    mem = _open(store, embedder_name)
    mem.stats()  # opens the vector index (Chroma's import) before the clock starts, as the baseline does
    snap = cpu_snapshot()
    report = mem.import_file(source, batch_size=1024, progress=sys.stderr.isatty())
    mem.close()
    return {
        "ingest_per_s": report.lines / report.seconds,
        "seconds": report.seconds,
        "stored": report.stored,
        "merged": report.merged,
        "ingest_peak_rss_mb": rss_mb("VmHWM"),
        "ingest_other_cores": other_cores(snap),
    }


def phase_recall(embedder_name: str, store: str, n_queries: int) -> dict[str, Any]:
    """Reopen the store in a fresh process; first-recall load time, p50/p95 per mode, RSS, structures."""
    queries = make_queries(n_queries)
    with tempfile.TemporaryDirectory() as tiny:
        small = _open(tiny, embedder_name)
        small.add_many(make_texts(50))
        for mode in ("hybrid", "ripple"):
            small.recall(queries[0], k=10, mode=mode)
        small.close()
    out: dict[str, Any] = {"rss_before_open_mb": rss_mb()}
    mem = _open(store, embedder_name)
    engine = mem._engine
    # Load one part after the other, to see what each adds to RSS.
    for name, load in (
        ("vectors", lambda: mem.recall(queries[0], k=10, mode="dense", record_access=False)),
        ("keywords", lambda: engine.keyword_index("scale-user")),
        ("graph", lambda: engine.graph("scale-user")),
    ):
        start = time.perf_counter()
        load()
        out[f"load_{name}_s"] = time.perf_counter() - start
        out[f"rss_{name}_mb"] = rss_mb()
    snap = cpu_snapshot()
    for mode in ("hybrid", "ripple"):
        latencies = []
        for query in queries:
            t0 = time.perf_counter()
            hits = mem.recall(query, k=10, mode=mode).hits
            latencies.append(1000 * (time.perf_counter() - t0))
            assert len(hits) == 10
        out[f"{mode}_p50_ms"] = statistics.median(latencies)
        out[f"{mode}_p95_ms"] = sorted(latencies)[int(0.95 * (len(latencies) - 1))]
    out["recall_other_cores"] = other_cores(snap)
    out["keyword_index_mb"] = deep_bytes(engine.keyword_index("scale-user")) / 2**20
    out["graph_mb"] = deep_bytes(engine.graph("scale-user")) / 2**20
    out["entity_vectors_mb"] = deep_bytes(engine.entity_vectors("scale-user")) / 2**20
    out["graph_nodes"] = engine.graph("scale-user").size
    out["recall_rss_mb"] = rss_mb()
    out["recall_peak_rss_mb"] = rss_mb("VmHWM")
    stats = mem.stats()
    out["total"], out["vectors"] = stats["total"], stats["vectors"]
    out["rows"] = sum(stats["by_status"].values())
    mem.close()
    return out


def spawn(phase: str, *args: str) -> dict[str, Any]:
    """Run one phase in a fresh interpreter; its last stdout line is the JSON result."""
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--phase", phase, *args],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise SystemExit(f"phase {phase} failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(n: int, embedder: str, r: dict[str, Any], disk: dict[str, int]) -> None:
    """Print the tables: speed against targets, RAM and disk per memory, extrapolated to 1M."""
    rows = r["rows"]  # stored memories (lines that repeated a memory merged into it)
    per = 1_000_000 / rows
    print(
        f"N={n:,} lines for one user ({rows:,} memories stored), embedder={r['model']}, "
        f"{os.cpu_count()} cores; per-memory figures are per stored memory\n"
    )
    print("| measure | value | target at 1M |")
    print("|---|---:|---|")
    ratio = r["ingest_per_s"] / r["embed_per_s"]
    print(
        f"| ingest (bulk import) | {r['ingest_per_s']:,.0f} mem/s ({r['seconds']:.0f} s; "
        f"{r['merged']} merged) | |"
    )
    print(f"| raw embedding of the same texts | {r['embed_per_s']:,.0f} mem/s | |")
    print(f"| ingest / raw embedding | {ratio:.2f}x | >= 0.8x |")
    print(
        f"| after open, loading: vector index / BM25 / graph | {r['load_vectors_s']:.1f} / "
        f"{r['load_keywords_s']:.1f} / {r['load_graph_s']:.1f} s | |"
    )
    for mode in ("hybrid", "ripple"):
        print(
            f"| recall p50 / p95, {mode} | {r[f'{mode}_p50_ms']:.1f} / {r[f'{mode}_p95_ms']:.1f} ms "
            "| p50 <= 50 ms |"
        )
    print(
        f"| RSS while recalling | {r['recall_rss_mb']:,.0f} MB (peak {r['recall_peak_rss_mb']:,.0f}) "
        "| <= 4 GB |"
    )
    print(f"| peak RSS while importing | {r['ingest_peak_rss_mb']:,.0f} MB | |")
    print(
        f"| other processes (cores): import / recall | {r['ingest_other_cores']:.2f} / "
        f"{r['recall_other_cores']:.2f} | |"
    )
    base = r["rss_before_open_mb"]
    parts = [
        ("open + vector index (Chroma HNSW), RSS step", r["rss_vectors_mb"] - base),
        ("BM25 keyword index, RSS step", r["rss_keywords_mb"] - r["rss_vectors_mb"]),
        ("graph (CSR + ids), RSS step", r["rss_graph_mb"] - r["rss_keywords_mb"]),
        ("recalling (entity vectors, caches, allocator)", r["recall_rss_mb"] - r["rss_graph_mb"]),
    ]
    print(f"\n| RAM while recalling | MB at {rows:,} | bytes / memory | MB at 1M (linear) |")
    print("|---|---:|---:|---:|")
    print(f"| process after a recall from a 50-memory store | {base:,.0f} | - | {base:,.0f} |")
    for name, mb in parts:
        print(f"| {name} | {mb:,.1f} | {mb * 2**20 / rows:,.0f} | {mb * per:,.0f} |")
    for name, key in (
        ("BM25 keyword index, counted", "keyword_index_mb"),
        ("graph, counted", "graph_mb"),
        ("entity-vector cache, counted", "entity_vectors_mb"),
    ):
        print(f"| ({name}) | {r[key]:,.1f} | {r[key] * 2**20 / rows:,.0f} | {r[key] * per:,.0f} |")
    total_1m = base + sum(mb for _, mb in parts) * per
    print(f"| total RSS | {r['recall_rss_mb']:,.0f} | - | {total_1m:,.0f} |")
    print(f"\n| disk | MB at {rows:,} | bytes / memory | GB at 1M (linear) |")
    print("|---|---:|---:|---:|")
    for name, size in disk.items():
        print(f"| {name} | {size / 2**20:,.1f} | {size / rows:,.0f} | {size * per / 2**30:,.2f} |")
    # A line restating a fact with a new value supersedes the earlier memory: that one stays as
    # history (counted in `rows`) but leaves the vector index and the active count.
    print(
        f"\ngraph nodes (memories + entities): {r['graph_nodes']:,}; memories stored {rows:,}, "
        f"of which active {r['total']:,} and superseded by a later line {rows - r['total']:,}; "
        f"vectors {r['vectors']:,} (active memories only)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=100_000, help="memories (default 100000)")
    parser.add_argument(
        "--embedder",
        default="hashing-v1-384",
        help="hashing-v1-384 (default: no model, MiniLM's dimension), minilm, ...",
    )
    parser.add_argument("--queries", type=int, default=200, help="timed recalls per mode (default 200)")
    parser.add_argument(
        "--embed-sample", type=int, default=20_000, help="texts for the raw embedding rate (default 20000)"
    )
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="build the store in DIR and keep it: run again to "
        "resume an interrupted import, or to measure recall again on the built store",
    )
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.phase:
        handlers = {
            "embed": lambda: phase_embed(rest[0], int(rest[1])),
            "ingest": lambda: phase_ingest(rest[0], rest[1], rest[2]),
            "recall": lambda: phase_recall(rest[0], rest[1], int(rest[2])),
        }
        print(json.dumps(handlers[args.phase]()))
        return
    folder = args.keep or tempfile.mkdtemp(prefix="rm-scale-")
    os.makedirs(folder, exist_ok=True)
    try:
        source, store = os.path.join(folder, "memories.jsonl"), os.path.join(folder, "store")
        if not os.path.exists(source):
            with open(source, "w", encoding="utf-8") as out:
                out.writelines(json.dumps(text) + "\n" for text in make_texts(args.n))
        result = spawn("embed", args.embedder, str(min(args.n, args.embed_sample)))
        # A kept folder remembers its finished import: run again, only recall is measured anew.
        done = os.path.join(folder, "ingest.json")
        if not os.path.exists(done):
            with open(done + ".tmp", "w", encoding="utf-8") as out:
                json.dump(spawn("ingest", args.embedder, store, source), out)
            os.replace(done + ".tmp", done)
        with open(done, encoding="utf-8") as saved:
            result |= json.load(saved)
        result |= spawn("recall", args.embedder, store, str(args.queries))
        disk = {
            "SQLite (rows, FTS5, embeddings, graph, WAL)": sum(
                os.path.getsize(os.path.join(store, f))
                for f in os.listdir(store)
                if f.startswith(DB_FILENAME)
            ),
            "Chroma (HNSW + metadata)": folder_bytes(os.path.join(store, "chroma")),
            "whole store": folder_bytes(store),
        }
        report(args.n, args.embedder, result, disk)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
