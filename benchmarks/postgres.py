"""RippleMem on PostgreSQL beside a plain pgvector table queried directly, on one server, in one run.

The texts are the speed benchmark's (speed_texts.py), embedded once with MiniLM into an on-disk cache;
every system ingests those same vectors. Printed per size: store-only ingest/s (and the embedder's raw
rate), recall p50/p95 of one client (RippleMem hybrid and ripple; plain pgvector: one exact or HNSW
query, as PgVectorIndex chooses, with the same query vectors), and the queries/s of 1, 2 and 4 client
processes. LangGraph's PostgresStore is not measured yet.

    python benchmarks/postgres.py [--sizes 10000] [--queries 200] [--clients 1,2,4] [--uri postgresql://...]
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from speed_cache import EmbedCache, ReplayEmbedder
from speed_texts import make_queries, make_texts

from ripplemem import RippleMem, StoreOptions
from ripplemem.embedding.embedders import resolve_embedder
from ripplemem.store.postgres.vectors import EXACT_BELOW

USER = "bench"
WINDOW = 10.0  # seconds each throughput measurement counts queries
DEFAULT_CACHE = Path.home() / ".cache" / "ripplemem" / "bench-postgres"


class KnownQueries:
    """Query vectors computed once, so recall times the search and not the model (for every system)."""

    def __init__(self, replay: ReplayEmbedder, queries: Sequence[str], vectors: np.ndarray) -> None:
        self.model_id = replay.model_id
        self._replay = replay
        self._queries = dict(zip(queries, vectors, strict=True))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Document vectors from the replayed cache chunk."""
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


def _recall(mem: RippleMem, mode: str, query: str) -> Any:
    return mem.recall(query, k=10, mode=mode, record_access=False)


def _p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q) * 1000)


def ingest_ripplemem(uri: str, schema: str, cache: EmbedCache, live: Any, queries: Any) -> tuple[float, int]:
    """Store-only ingest rate (texts/s) of RippleMem on PostgreSQL, from the cached vectors."""
    replay = ReplayEmbedder(live)
    mem = RippleMem(user_id=USER, embedder=KnownQueries(replay, *queries), store=_options(uri, schema))
    seconds = 0.0
    total = 0
    for texts, vectors in cache.chunks():
        replay.load(texts, vectors)
        started = time.perf_counter()
        mem.add_many(list(texts), progress=False)
        seconds += time.perf_counter() - started
        total += len(texts)
    held = mem.stats()["vectors"]
    mem.close()
    return total / seconds, held


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
            rows = [
                (USER, str(total + i), "[" + ",".join(f"{x:.7g}" for x in v) + "]")
                for i, v in enumerate(vectors)
            ]
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
        text = "[" + ",".join(f"{x:.7g}" for x in vector) + "]"
        return conn.execute(sql, (text, USER, text)).fetchall()

    return search


def _client(args: tuple[str, str, str, str, list[str], list[np.ndarray], float]) -> int:
    """One client process: opens and warms up, waits for the window to open, then asks as fast as it
    can until it closes (WINDOW seconds); returns how many it answered."""
    system, uri, schema, table, queries, vectors, start = args
    if system == "plain":
        search = _plain_searcher(uri, table)
        ask: Callable[[int], Any] = lambda i: search(vectors[i % len(vectors)])  # noqa: E731
    else:
        live = resolve_embedder("all-MiniLM-L6-v2")
        replay = ReplayEmbedder(live)
        mem = RippleMem(
            user_id=USER,
            embedder=KnownQueries(replay, queries, np.stack(vectors)),
            store=_options(uri, schema),
        )
        ask = lambda i: mem.recall(queries[i % len(queries)], k=10, mode=system, record_access=False)  # noqa: E731
        ask(0)
    while time.time() < start:
        time.sleep(0.01)
    answered = 0
    while time.time() < start + WINDOW:
        ask(answered)
        answered += 1
    return answered


def throughput(
    system: str, clients: int, uri: str, schema: str, table: str, queries: list[str], vectors: np.ndarray
) -> float:
    """Queries/s of `clients` processes, each asking as fast as it can for WINDOW seconds."""
    start = time.time() + 30  # every client opened and warm before the window opens
    jobs = [(system, uri, schema, table, queries, list(vectors), start) for _ in range(clients)]
    with multiprocessing.get_context("spawn").Pool(clients) as pool:
        counts = pool.map(_client, jobs)
    return sum(counts) / WINDOW


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--clients", default="1,2,4")
    parser.add_argument("--uri", help="a PostgreSQL server with pgvector (default: a throwaway pgserver)")
    parser.add_argument("--embed-cache", default=str(DEFAULT_CACHE))
    args = parser.parse_args(argv)
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
    clients = [int(c) for c in args.clients.split(",")]
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            texts = make_texts(n)
            cache = EmbedCache(Path(args.embed_cache) / str(n), texts)
            raw = cache.build(live.embed_documents, lambda: lambda: 0.0)["per_s"]
            schema, table = f"bench_{n}", f"plain_{n}"
            ripple_rate, held = ingest_ripplemem(uri, schema, cache, live, (queries, query_vectors))
            plain_rate = ingest_plain(uri, table, cache)
            search = _plain_searcher(uri, table)
            replay = ReplayEmbedder(live)
            mem = RippleMem(
                user_id=USER,
                embedder=KnownQueries(replay, queries, query_vectors),
                store=_options(uri, schema),
            )
            rows: list[tuple[str, str, str, str]] = []
            plain = _timed(search, list(query_vectors))
            rows.append(
                ("plain pgvector", f"{plain_rate:,.0f}", f"{_p(plain, 50):.2f} / {_p(plain, 95):.2f}", "")
            )
            for mode in ("hybrid", "ripple"):
                mem.recall(queries[0], k=10, mode=mode)
                times = _timed(functools.partial(_recall, mem, mode), queries)
                ratio = statistics.median(times) / statistics.median(plain)
                rows.append(
                    (
                        f"RippleMem {mode}",
                        f"{ripple_rate:,.0f}",
                        f"{_p(times, 50):.2f} / {_p(times, 95):.2f}",
                        f"{ratio:.1f}x",
                    )
                )
            mem.close()
            print(f"\n{n:,} memories (RippleMem holds {held:,} vectors); MiniLM raw rate {raw:,.0f}/s\n")
            print("| system | ingest/s (store only) | recall p50 / p95 ms | p50 vs plain |")
            print("|---|---:|---:|---:|")
            for row in rows:
                print("| " + " | ".join(row) + " |")
            print("\n| system | " + " | ".join(f"{c} client(s) q/s" for c in clients) + " |")
            print("|---|" + "---:|" * len(clients))
            for system in ("plain", "hybrid", "ripple"):
                rates = [throughput(system, c, uri, schema, table, queries, query_vectors) for c in clients]
                print(f"| {system} | " + " | ".join(f"{r:,.0f}" for r in rates) + " |")
    finally:
        if server is not None:
            server.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
