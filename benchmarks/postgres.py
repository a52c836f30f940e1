"""RippleMem on PostgreSQL beside a plain pgvector table and LangGraph's PostgresStore, on one server.

The texts are the speed benchmark's (speed_texts.py), embedded once with MiniLM into an on-disk cache
(one folder for every size: a size's texts are a prefix of a larger one's). Printed per size:
- ingest/s: store only (every system ingests the cached vectors), and RippleMem with the live model
  (add_many embedding as it writes), beside the model's raw rate;
- recall p50/p95 of one client with the same precomputed query vectors: RippleMem hybrid and
  ripple, one plain pgvector query (exact or HNSW, as PgVectorIndex chooses), LangGraph's search;
- where RippleMem's recall time goes, stage by stage (postgres_stages.py);
- queries/s of 1, 2 and 4 client processes.

    python benchmarks/postgres.py [--sizes 10000 100000] [--queries 200] [--clients 1,2,4] [--uri ...]

The script's folder, not the current one, leads sys.path: from a checkout other than the one the
venv's editable install points at, set PYTHONPATH=. so that checkout's ripplemem is measured.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from postgres_langgraph import LangGraphSearch, ingest_langgraph
from postgres_stages import breakdown
from speed_cache import CHUNK, EmbedCache, ReplayEmbedder
from speed_texts import make_queries, make_texts

from ripplemem import RippleMem, StoreOptions
from ripplemem.embedding.embedders import resolve_embedder
from ripplemem.store.postgres.vectors import EXACT_BELOW

USER = "bench"
WINDOW = 10.0  # seconds each throughput measurement counts queries
DEFAULT_CACHE = Path.home() / ".cache" / "ripplemem" / "bench-postgres"
SYSTEMS = ("plain", "langgraph", "hybrid", "ripple")
LABELS = {
    "plain": "plain pgvector",
    "langgraph": "LangGraph PostgresStore",
    "hybrid": "RippleMem hybrid",
    "ripple": "RippleMem ripple",
}


class KnownQueries:
    """Query vectors computed once, so recall times the search and not the model (for every system)."""

    def __init__(self, replay: Any, queries: Sequence[str], vectors: np.ndarray) -> None:
        self.model_id = replay.model_id
        self._replay = replay
        self._queries = dict(zip(queries, vectors, strict=True))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Document vectors from the replayed cache chunk (or the live model)."""
        return self._replay.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        """A query's precomputed vector."""
        return self._queries[text]


def _options(uri: str, schema: str) -> StoreOptions:
    return StoreOptions(backend="postgres", uri=uri, schema=schema)


def _timed(run: Callable[[Any], Any], items: Sequence[Any]) -> list[float]:
    times = []
    for item in items:
        started = time.perf_counter()
        run(item)
        times.append(time.perf_counter() - started)
    return times


def _p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q) * 1000)


def _vector_text(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


def open_ripplemem(uri: str, schema: str, live: Any, queries: Sequence[str], vectors: np.ndarray) -> Any:
    """A RippleMem handle on the schema whose queries are answered from `vectors`."""
    replay = ReplayEmbedder(live)
    mem = RippleMem(
        user_id=USER, embedder=KnownQueries(replay, queries, vectors), store=_options(uri, schema)
    )
    return mem, replay


def ingest_ripplemem(uri: str, schema: str, cache: EmbedCache, live: Any, queries: Any) -> tuple[float, int]:
    """Store-only ingest rate (texts/s) of RippleMem on PostgreSQL, from the cached vectors."""
    mem, replay = open_ripplemem(uri, schema, live, *queries)
    seconds, total = 0.0, 0
    for texts, vectors in cache.chunks():
        replay.load(texts, vectors)
        started = time.perf_counter()
        mem.add_many(list(texts), progress=False)
        seconds += time.perf_counter() - started
        total += len(texts)
    held = mem.stats()["vectors"]
    mem.close()
    return total / seconds, held


def ingest_live(uri: str, schema: str, texts: Sequence[str], live: Any) -> float:
    """Ingest rate (texts/s) of RippleMem embedding with the live model as it writes."""
    mem = RippleMem(user_id=USER, embedder=live, store=_options(uri, schema))
    started = time.perf_counter()
    mem.add_many(list(texts), progress=False)
    rate = len(texts) / (time.perf_counter() - started)
    mem.close()
    return rate


def ingest_plain(uri: str, table: str, cache: EmbedCache) -> float:
    """Ingest rate of the same vectors into a plain pgvector table (executemany of text vectors)."""
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute(
            f"CREATE TABLE {table} (user_id TEXT, id TEXT, embedding vector(384), PRIMARY KEY (user_id, id))"
        )
        seconds, total = 0.0, 0
        for texts, vectors in cache.chunks():
            rows = [(USER, str(total + i), _vector_text(v)) for i, v in enumerate(vectors)]
            started = time.perf_counter()
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(f"INSERT INTO {table} VALUES (%s, %s, %s::vector)", rows)
            seconds += time.perf_counter() - started
            total += len(texts)
        if total >= EXACT_BELOW:
            conn.execute(f"CREATE INDEX ON {table} USING hnsw (embedding vector_cosine_ops)")
        conn.execute(f"ANALYZE {table}")
    return total / seconds


def _plain_searcher(uri: str, table: str) -> Callable[[np.ndarray], Any]:
    import psycopg

    conn = psycopg.connect(uri, autocommit=True)
    conn.execute("SET hnsw.ef_search = 200")
    sql = (
        f"SELECT id, 1 - (embedding <=> %s::vector) FROM {table} WHERE user_id = %s "
        "ORDER BY embedding <=> %s::vector LIMIT 10"
    )

    def search(vector: np.ndarray) -> Any:
        text = _vector_text(vector)
        return conn.execute(sql, (text, USER, text)).fetchall()

    return search


def _asker(system: str, uri: str, schema: str, table: str, queries: list[str], vectors: np.ndarray) -> Any:
    """ask(i) answering the i-th query (cycling) on `system`, opened and warm."""
    if system == "plain":
        search = _plain_searcher(uri, table)
        return lambda i: search(vectors[i % len(vectors)])
    if system == "langgraph":
        find = LangGraphSearch(uri, dict(zip(queries, vectors, strict=True)))
        return lambda i: find(queries[i % len(queries)])
    mem, _ = open_ripplemem(uri, schema, resolve_embedder("all-MiniLM-L6-v2"), queries, vectors)
    return lambda i: mem.recall(queries[i % len(queries)], k=10, mode=system, record_access=False)


def _client(job: tuple[Any, ...], ready: Any, results: Any) -> None:
    """One client process: opens and warms up, waits at the barrier for the others, then asks as
    fast as it can for WINDOW seconds; puts how many it answered."""
    try:
        ask = _asker(*job)
        ask(0)
    except BaseException as exc:
        ready.abort()  # the others stop waiting; the parent hears why
        results.put(f"{type(exc).__name__}: {exc}")
        raise
    ready.wait()
    answered, until = 0, time.perf_counter() + WINDOW
    while time.perf_counter() < until:
        ask(answered)
        answered += 1
    results.put(answered)


def throughput(
    system: str, clients: int, uri: str, schema: str, table: str, queries: list[str], vectors: np.ndarray
) -> float:
    """Queries/s of `clients` processes, each asking as fast as it can for WINDOW seconds."""
    context = multiprocessing.get_context("spawn")
    ready, results = context.Barrier(clients), context.Queue()
    job = (system, uri, schema, table, queries, vectors)
    processes = [context.Process(target=_client, args=(job, ready, results)) for _ in range(clients)]
    for process in processes:
        process.start()
    counts = []
    for _ in processes:
        count = results.get(timeout=WINDOW + 600)
        if isinstance(count, str):
            for process in processes:
                process.terminate()
            raise RuntimeError(f"a {system} client failed: {count}")
        counts.append(count)
    for process in processes:
        process.join()
    return sum(counts) / WINDOW


class Phases:
    """Wall seconds of each part of a size's run, to tell how long a bigger size will take."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def timed(self, name: str, run: Callable[[], Any]) -> Any:
        """run(), its wall time recorded under `name`."""
        started = time.perf_counter()
        result = run()
        self.seconds[name] = time.perf_counter() - started
        return result

    def estimate(self, n: int, bigger: int, raw_rate: float, cached: int) -> float:
        """Seconds for `bigger`: ingests grow with the size, LangGraph's exact search with it too
        (it scans), the rest stays; plus embedding the texts not cached yet at the raw rate."""
        grows = ("ingest", "langgraph")
        scale = bigger / n
        total = sum(s * (scale if name.startswith(grows) else 1.0) for name, s in self.seconds.items())
        return total + max(0, bigger - cached) / max(raw_rate, 1.0)


def _print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def run_size(
    n: int, uri: str, args: Any, live: Any, queries: list[str], query_vectors: np.ndarray
) -> tuple[Phases, float]:
    """Every measurement of one size, printed as it finishes; its phases' times and the raw rate."""
    phases = Phases()
    texts = make_texts(n)
    # Chunk files are CHUNK texts each: sizes that are multiples share one folder, others have their own.
    folder = Path(args.embed_cache) / ("texts" if n % CHUNK == 0 else str(n))
    cache = EmbedCache(folder, texts)
    raw = phases.timed("embed cache", lambda: cache.build(live.embed_documents, lambda: lambda: 0.0))["per_s"]
    schema, table = f"bench_{n}", f"plain_{n}"
    known = dict(zip(queries, query_vectors, strict=True))
    rates: dict[str, float] = {}
    rates["hybrid"], held = phases.timed(
        "ingest ripplemem", lambda: ingest_ripplemem(uri, schema, cache, live, (queries, query_vectors))
    )
    rates["ripple"] = rates["hybrid"]
    live_rate = (
        phases.timed("ingest live", lambda: ingest_live(uri, f"bench_live_{n}", texts, live))
        if args.live_ingest
        else None
    )
    rates["plain"] = phases.timed("ingest plain", lambda: ingest_plain(uri, table, cache))
    rates["langgraph"] = phases.timed(
        "ingest langgraph", lambda: ingest_langgraph(uri, cache.chunks(), time.perf_counter, known)
    )
    print(f"\n{n:,} memories (RippleMem holds {held:,} vectors); MiniLM raw rate {raw:,.0f} texts/s\n")
    if live_rate is not None:
        print(
            f"RippleMem ingest with the model embedding: {live_rate:,.0f} texts/s "
            f"({live_rate / raw:.2f}x the raw rate)\n"
        )

    def latency() -> dict[str, list[float]]:
        plain_search = _plain_searcher(uri, table)
        find = LangGraphSearch(uri, known)
        mem, _ = open_ripplemem(uri, schema, live, queries, query_vectors)
        times = {"plain": _timed(plain_search, list(query_vectors))}
        find(queries[0])
        times["langgraph"] = _timed(find, queries)
        find.close()
        for mode in ("hybrid", "ripple"):
            recall = functools.partial(mem.recall, k=10, mode=mode, record_access=False)
            recall(queries[0])
            times[mode] = _timed(recall, queries)
        mem.close()
        return times

    times = phases.timed("langgraph and latency", latency)
    plain_p50 = _p(times["plain"], 50)
    _print_table(
        ("system", "ingest/s (store only)", "recall p50 / p95 ms", "p50 vs plain"),
        [
            (
                LABELS[s],
                f"{rates[s]:,.0f}",
                f"{_p(times[s], 50):.2f} / {_p(times[s], 95):.2f}",
                "" if s == "plain" else f"{_p(times[s], 50) / plain_p50:.1f}x",
            )
            for s in SYSTEMS
        ],
    )

    def stages() -> None:
        mem, _ = open_ripplemem(uri, schema, live, queries, query_vectors)
        for mode in ("hybrid", "ripple"):
            parts = breakdown(functools.partial(mem.recall, k=10, mode=mode, record_access=False), queries)
            print(f"\nWhere RippleMem {mode}'s recall time goes (mean over {len(queries)} queries):\n")
            _print_table(
                ("stage", "ms per recall", "share"),
                [(stage, f"{ms:.2f}", f"{share:.0%}") for stage, ms, share in parts],
            )
        mem.close()

    phases.timed("stages", stages)
    clients = [int(c) for c in args.clients.split(",")]

    def load() -> None:
        rows = []
        for system in SYSTEMS:
            rates = [throughput(system, c, uri, schema, table, queries, query_vectors) for c in clients]
            rows.append((LABELS[system], *(f"{r:,.0f}" for r in rates)))
        print()
        _print_table(("system", *(f"{c} client(s) q/s" for c in clients)), rows)

    phases.timed("clients", load)
    return phases, raw


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["10000"], help="e.g. --sizes 10000 100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--clients", default="1,2,4")
    parser.add_argument("--uri", help="a PostgreSQL server with pgvector (default: a throwaway pgserver)")
    parser.add_argument("--embed-cache", default=str(DEFAULT_CACHE))
    parser.add_argument(
        "--no-live-ingest",
        dest="live_ingest",
        action="store_false",
        help="skip RippleMem's ingest with the live model (a second full ingest)",
    )
    parser.add_argument("--estimate", type=int, default=100_000, help="print how long this size will take")
    args = parser.parse_args(argv)
    sizes = [int(s) for part in args.sizes for s in part.split(",") if s]
    server = None
    uri = args.uri
    if uri is None:
        import pgserver

        server = pgserver.get_server(tempfile.mkdtemp(prefix="ripplemem-bench-pg-"), cleanup_mode="stop")
        uri = server.get_uri()
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    live = resolve_embedder("all-MiniLM-L6-v2")
    queries = make_queries(args.queries)
    query_vectors = np.stack([live.embed_query(q) for q in queries])
    try:
        for position, n in enumerate(sizes):
            started = time.perf_counter()
            phases, raw = run_size(n, uri, args, live, queries, query_vectors)
            print(f"\n{n:,} took {time.perf_counter() - started:,.0f} s")
            for bigger in sorted({*sizes[position + 1 :], args.estimate} - {n}):
                if bigger > n:
                    minutes = phases.estimate(n, bigger, raw, n) / 60
                    print(f"{bigger:,} will take about {minutes:,.0f} min (estimated from {n:,})")
    finally:
        if server is not None:
            server.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
