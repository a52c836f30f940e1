"""Where pgvector's HNSW index starts to beat an exact scan of one user's vectors.

For each size, one user's N unit vectors of dimension 384 (clustered like text embeddings: 500
random centres plus noise) go into a table shaped like PgVectorIndex's, and 100 queries (other
points of the same clusters) are timed from the client, round trip included:
  exact   WHERE user_id = $1 ORDER BY (embedding <=> q) + 0 LIMIT k (the HNSW index cannot serve it)
  hnsw    the same ORDER BY embedding <=> q through the HNSW index (m=16, ef_construction=64), at the
          smallest hnsw.ef_search whose recall@k against exact is >= 0.98
It prints p50 (ms) of both, the ef_search used and its recall, the index's build time, and what
inserting 500 vectors in one transaction costs per vector without the index and with it.

    python benchmarks/pgvector_exact_vs_hnsw.py [--sizes 2000 10000 50000] [--k 10] [--uri URI]

Without --uri (or RIPPLEMEM_TEST_PG) a throwaway pgserver is started in a temporary directory.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import psycopg

from ripplemem.store.postgres.vectors import vector_cursor

DIMENSION = 384
QUERIES = 100
ADDED = 500  # vectors inserted row by row, without and then with the HNSW index
EF_SEARCH = (40, 80, 160, 320, 640)
TARGET_RECALL = 0.98


@contextmanager
def server(uri: str | None) -> Iterator[str]:
    """The URI given, else that of a throwaway pgserver stopped at the end."""
    if uri:
        yield uri
        return
    import pgserver

    with tempfile.TemporaryDirectory() as folder:
        db = pgserver.get_server(folder, cleanup_mode="stop")
        try:
            yield db.get_uri()
        finally:
            db.cleanup()


def clustered(rng: np.random.Generator, centres: np.ndarray, n: int) -> np.ndarray:
    """n unit vectors, each a random centre plus noise."""
    picks = centres[rng.integers(0, len(centres), n)]
    points = picks + 0.6 * rng.standard_normal((n, DIMENSION)).astype(np.float32) / np.sqrt(DIMENSION)
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def timed(
    conn: psycopg.Connection, query: str, vectors: np.ndarray, k: int, ef: int | None
) -> tuple[float, list[list[str]]]:
    """p50 milliseconds of the query over every vector, and the ids each returned."""
    times, found = [], []
    with vector_cursor(conn) as cur:
        for vector in vectors:
            start = time.perf_counter()
            with conn.transaction():
                if ef is not None:
                    cur.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef),))
                rows = cur.execute(query, {"u": "bench", "q": vector, "k": k}).fetchall()
            times.append(1000 * (time.perf_counter() - start))
            found.append([row[0] for row in rows])
    return statistics.median(times), found


def add_ms(conn: psycopg.Connection, vectors: np.ndarray, tag: str) -> float:
    """Milliseconds per vector to insert `vectors` in one transaction, as PgVectorIndex.add does."""
    start = time.perf_counter()
    with conn.transaction(), vector_cursor(conn) as cur:
        cur.executemany(
            "INSERT INTO bench_vectors (user_id, id, embedding) VALUES ('bench', %s, %b::vector)",
            [(f"{tag}{number}", vector) for number, vector in enumerate(vectors)],
        )
    return 1000 * (time.perf_counter() - start) / len(vectors)


def measure(conn: psycopg.Connection, n: int, k: int, rng: np.random.Generator) -> dict[str, float]:
    """Fill a table with n vectors of one user, then time exact and HNSW search."""
    centres = rng.standard_normal((500, DIMENSION)).astype(np.float32) / np.sqrt(DIMENSION)
    data, queries = clustered(rng, centres, n), clustered(rng, centres, QUERIES)
    conn.execute("DROP TABLE IF EXISTS bench_vectors")
    conn.execute(
        f"CREATE TABLE bench_vectors (user_id TEXT NOT NULL, id TEXT NOT NULL, "
        f"embedding vector({DIMENSION}) NOT NULL, PRIMARY KEY (user_id, id))"
    )
    with (
        vector_cursor(conn) as cur,
        cur.copy("COPY bench_vectors (user_id, id, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy,
    ):
        for number, vector in enumerate(data[ADDED:]):
            copy.write_row(("bench", f"m{number}", vector))
    plain_add = add_ms(conn, data[:ADDED], "added")
    conn.execute("ANALYZE bench_vectors")
    select = "SELECT id FROM bench_vectors WHERE user_id = %(u)s ORDER BY "
    exact_sql = select + "(embedding <=> %(q)s::vector) + 0 LIMIT %(k)s"
    hnsw_sql = select + "embedding <=> %(q)s::vector LIMIT %(k)s"
    timed(conn, exact_sql, queries[:10], k, None)  # warm the cache
    exact_ms, truth = timed(conn, exact_sql, queries, k, None)
    start = time.perf_counter()
    conn.execute("SET maintenance_work_mem = '512MB'")
    conn.execute("CREATE INDEX ON bench_vectors USING hnsw (embedding vector_cosine_ops)")
    build = time.perf_counter() - start
    plan = conn.execute(
        "EXPLAIN " + hnsw_sql.replace("%(q)s", f"'[{','.join(['0'] * (DIMENSION - 1))},1]'"),
        {"u": "bench", "k": k},
    ).fetchall()
    if not any("hnsw" in str(row[0]) or "bench_vectors_embedding_idx" in str(row[0]) for row in plan):
        sys.exit(f"the HNSW index is not used: {plan}")
    for ef in EF_SEARCH:
        if ef < k:
            continue
        hnsw_ms, found = timed(conn, hnsw_sql, queries, k, ef)
        recall = float(np.mean([len(set(a) & set(b)) / k for a, b in zip(found, truth, strict=True)]))
        if recall >= TARGET_RECALL:
            break
    hnsw_add = add_ms(conn, clustered(rng, centres, ADDED), "late")
    return {
        "exact": exact_ms,
        "hnsw": hnsw_ms,
        "ef": ef,
        "recall": recall,
        "build": build,
        "plain_add": plain_add,
        "hnsw_add": hnsw_add,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 50000])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--uri", default=os.environ.get("RIPPLEMEM_TEST_PG"))
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    with server(args.uri) as uri, psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        print(
            f"pgvector {version[0] if version else '?'}, dimension {DIMENSION}, k={args.k}, {QUERIES} queries"
        )
        print(
            f"{'vectors':>8} {'exact p50 ms':>13} {'hnsw p50 ms':>12} {'ef_search':>10} "
            f"{'recall':>7} {'build s':>8} {'add ms/vector':>14} {'with hnsw':>10}"
        )
        for n in args.sizes:
            row = measure(conn, n, args.k, rng)
            print(
                f"{n:>8} {row['exact']:>13.2f} {row['hnsw']:>12.2f} {row['ef']:>10.0f} "
                f"{row['recall']:>7.3f} {row['build']:>8.1f} {row['plain_add']:>14.2f} "
                f"{row['hnsw_add']:>10.2f}",
                flush=True,
            )
        conn.execute("DROP TABLE IF EXISTS bench_vectors")


if __name__ == "__main__":
    main()
