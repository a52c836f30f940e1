"""Loading a scope's graph: its edges stream from SQLite page by page, and one CSR build gives the
graph that edge-by-edge adds give."""

from __future__ import annotations

import random
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np
from internals import engine_of

from ripplemem import RippleMem
from ripplemem.config import GraphSettings
from ripplemem.embedding.embedders import Embedder
from ripplemem.engine.graph_rows import edge_strengths, weighted_edges
from ripplemem.index.scope_graph import ScopeGraph
from ripplemem.store.tables.graph import iter_edges


def some_edges(count: int, nodes: int, seed: int = 3) -> list[tuple[str, str, float]]:
    """Random weighted edges with repeats, self-loops and non-positive weights among them."""
    rng = random.Random(seed)
    edges = [
        (f"n{rng.randrange(nodes)}", f"n{rng.randrange(nodes)}", rng.choice([0.0, -1.0, 0.3, 1.0, 2.5]))
        for _ in range(count)
    ]
    return edges + edges[:50]  # the same pair again: weights add up


def test_a_graph_loaded_at_once_equals_one_built_edge_by_edge() -> None:
    edges = some_edges(30_000, 2_000)
    incremental = ScopeGraph()
    for start in range(0, len(edges), 7_000):
        incremental.add_edges(edges[start : start + 7_000])
    incremental.compact()
    loaded = ScopeGraph.from_edges(edges)

    assert sorted(loaded.nodes()) == sorted(incremental.nodes())
    for node in incremental.nodes():
        assert loaded.neighbors(node) == incremental.neighbors(node)
        assert abs(loaded.degree(node) - incremental.degree(node)) < 1e-9
    seeds = {"n1": 1.0, "n42": 0.5}
    spread_loaded, spread_incremental = loaded.spread(seeds), incremental.spread(seeds)
    assert spread_loaded.keys() == spread_incremental.keys()
    assert np.allclose([spread_loaded[k] for k in spread_incremental], list(spread_incremental.values()))


def test_a_loaded_graph_takes_later_writes_and_deletes() -> None:
    loaded = ScopeGraph.from_edges([("m1", "e1", 1.0), ("m2", "e1", 1.0)])
    loaded.add_edges([("m3", "e1", 0.5)])
    loaded.remove_nodes(["m2"])
    assert loaded.neighbors("e1") == {"m1": 1.0, "m3": 0.5}
    assert ScopeGraph.from_edges([]).nodes() == []


def test_edges_stream_page_by_page_each_exactly_once(tmp_path: Path, embedder: Embedder) -> None:
    mem = RippleMem(tmp_path / "db", user_id="alice", embedder=embedder)
    mem.add_many(
        [
            "Alice met Bob in Lisbon",
            "Bob and Carmen cooked in Lisbon",
            "Carmen visited Alice",
            "Alice, Bob and Carmen hiked near Porto",
        ]
    )
    # Two edges between the same ends that differ only by predicate: pages must not skip either.
    mem.add("Alice works with Bob", relations=[("Alice", "knows", "Bob"), ("Alice", "likes", "Bob")])
    mem.scope(user_id="bob").add("Bob met Alice in Lisbon")
    store = engine_of(mem).store
    with closing(sqlite3.connect(tmp_path / "db" / "ripplemem.db")) as conn:
        stored = conn.execute(
            "SELECT src, dst, type, predicate FROM edges WHERE user_id = ?", ("alice",)
        ).fetchall()
    batches = list(iter_edges(store, "alice", batch=3))
    streamed = [(e.src, e.dst, e.type, e.predicate) for batch in batches for e in batch]
    assert len(batches) > 3 and all(len(batch) <= 3 for batch in batches)
    assert sorted(streamed) == sorted(stored) and len(set(streamed)) == len(streamed)


def test_edge_strength_is_weight_confidence_type_weight_and_time_decay() -> None:
    settings = GraphSettings(
        edge_type_weights={"MENTIONS": 0.8, "SIMILAR": 0.6}, decay_half_life_days=90.0, decay_floor=0.2
    )
    now, day = 1_800_000_000.0, 86_400.0
    rows = [
        ("m1", "e1", "MENTIONS", 2.0, 0.5, "", now - 90 * day, None, 0),  # one half-life old
        ("m2", "m3", "SIMILAR", 1.0, 0.9, "", now - 900 * day, now - 180 * day, 3),  # activated 2 ago
        ("m4", "e2", "MENTIONS", 1.0, 1.0, "", now - 9_000 * day, None, 0),  # old: the floor
        ("m5", "m6", "CUSTOM", 1.0, 1.0, "", now + day, None, 0),  # unknown type, future
    ]
    expected = [2.0 * 0.5 * 0.8 * 0.5, 0.9 * 0.6 * 0.25, 0.8 * 0.2, 1.0]
    assert np.allclose(edge_strengths(rows, settings, now), expected)
    assert [(src, dst) for src, dst, _ in weighted_edges(rows, settings, now)] == [(r[0], r[1]) for r in rows]
