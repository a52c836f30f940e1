"""Spreading activation on a Neo4j-served store: pull the scope into the in-process CSR, or spread
in Cypher (a bounded variable-length expansion with weight products), beside the embedded store.

    NEO4J_URI=neo4j://localhost:7687 NEO4J_USER=neo4j NEO4J_PASSWORD=password \\
        .venv/bin/python benchmarks/neo4j_spread.py [--n 2000] [--queries 50]

Without $NEO4J_URI it says so and exits: no Neo4j server could run where this was written, so these
numbers are unmeasured there. The same --n generated memories (people x places x things, seeded,
so entities are shared and the graph has hubs) go into an embedded store (SQLite + numpy) and a
Neo4j-served one. Reported per system: time to load the scope's graph, and p50/p95 of one spread
from a random memory (in-process: ScopeGraph.spread on the loaded CSR; Cypher:
ripplemem.store.neo4j.cypher.SPREAD over paths of up to three hops), with how many nodes each reached.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from ripplemem import RippleMem, StoreOptions  # noqa: E402
from ripplemem.embedding.embedders import resolve_embedder  # noqa: E402
from ripplemem.index.scope_graph import ScopeGraph  # noqa: E402

PEOPLE = ["Alice", "Bob", "Carol", "Dmitri", "Eve", "Farah", "Goran", "Hana", "Ivan", "Jun"]
PLACES = ["Paris", "Lisbon", "Kyoto", "Nairobi", "Lima", "Oslo", "Hanoi", "Quebec"]
THINGS = ["the Cello", "the Garden", "the Marathon", "the Novel", "the Startup", "the Wedding"]


def texts(n: int, seed: int = 7) -> list[str]:
    """n short memories that share people, places and things (so the graph is connected)."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(PEOPLE)} talked with {rng.choice(PEOPLE)} in {rng.choice(PLACES)} "
        f"about {rng.choice(THINGS)} (note {i})."
        for i in range(n)
    ]


def timed(run: Callable[[], object], repeat: int) -> tuple[list[float], object]:
    """Milliseconds of each run, and the last run's result."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        times.append(1000 * (time.perf_counter() - started))
    return times, result


def p(values: list[float], q: float) -> float:
    """The q-quantile of values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(handle: RippleMem, seeds: list[str], cypher: bool) -> tuple[float, list[float], float]:
    """(load ms, spread ms per seed, mean nodes reached) for one store."""
    engine = handle._engine
    with engine.unit_of_work(handle.user_id) as work:
        work.forget_caches()
    load, graph = timed(lambda: engine.graph(handle.user_id), 1)
    assert isinstance(graph, ScopeGraph)
    backend = engine._neo4j
    if cypher:
        assert backend is not None

    def spread(seed: str) -> dict[str, float]:
        if cypher:
            return backend.graph.spread(handle.user_id, {seed: 1.0}, limit=1000)  # type: ignore[union-attr]
        return graph.spread({seed: 1.0})

    spread_ms, reached = [], []
    for seed in seeds:
        ms, found = timed(lambda s=seed: spread(s), 1)  # type: ignore[misc]
        spread_ms += ms
        reached.append(len(found))  # type: ignore[arg-type]
    return load[0], spread_ms, statistics.mean(reached)


def main() -> None:
    """Build both stores, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        print(
            "NEO4J_URI is not set: nothing measured. Start a server (docker run -p 7687:7687 "
            "-e NEO4J_AUTH=neo4j/password neo4j:5) and set NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD."
        )
        return
    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", "password"))
    embedder = resolve_embedder(None)
    memories = texts(args.n)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        stores = {
            "embedded (SQLite -> CSR)": RippleMem(
                os.path.join(folder, "embedded"),
                user_id="bench",
                embedder=embedder,
                store=StoreOptions(vector_index="numpy"),
            ),
            "neo4j (pull -> CSR)": RippleMem(
                os.path.join(folder, "neo4j"),
                user_id="bench",
                embedder=embedder,
                store=StoreOptions(
                    backend="neo4j", uri=uri, auth=auth, database=os.environ.get("NEO4J_DATABASE")
                ),
            ),
        }
        ids: dict[str, list[str]] = {}
        for name, handle in stores.items():
            ids[name] = [m.id for m in handle.add_many(memories)]
        rng = random.Random(11)
        picks = [rng.randrange(args.n) for _ in range(args.queries)]
        for name, handle in stores.items():
            seeds = [ids[name][i] for i in picks]
            load, spread_ms, reached = measure(handle, seeds, cypher=False)
            rows.append((name, load, p(spread_ms, 0.5), p(spread_ms, 0.95), reached))
        neo4j = stores["neo4j (pull -> CSR)"]
        seeds = [ids["neo4j (pull -> CSR)"][i] for i in picks]
        _, spread_ms, reached = measure(neo4j, seeds, cypher=True)
        rows.append(("neo4j (Cypher SPREAD)", 0.0, p(spread_ms, 0.5), p(spread_ms, 0.95), reached))
        for handle in stores.values():
            handle.close()
    print(f"\nSpreading activation, {args.n} memories, {args.queries} single-seed spreads")
    print(f"{'system':<28}{'load ms':>10}{'p50 ms':>10}{'p95 ms':>10}{'reached':>10}")
    for name, load, p50, p95, reached in rows:
        print(f"{name:<28}{load:>10.1f}{p50:>10.2f}{p95:>10.2f}{reached:>10.0f}")


if __name__ == "__main__":
    main()
