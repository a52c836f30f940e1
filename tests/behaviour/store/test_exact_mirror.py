"""A small Chroma collection is searched exactly in memory (store/vectors/exact_mirror): its answers
are always what the collection holds, whoever wrote it and however a write ended."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from chromadb.api.models.Collection import Collection

from ripplemem.store.vectors import exact_mirror
from ripplemem.store.vectors.base import VectorFilter
from ripplemem.store.vectors.chroma import ChromaIndex

DIM = 16


def unit_rows(n: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def metas(n: int) -> list[dict[str, object]]:
    """Every other vector semantic, times 0..n-1, and an agent on every third."""
    return [
        {
            "type": "semantic" if i % 2 else "episodic",
            "when": float(i),
            **({"agent_id": "a"} if i % 3 == 0 else {}),
        }
        for i in range(n)
    ]


def warm(index: ChromaIndex, user_id: str) -> None:
    """Query as often as it takes for the index to read the collection into its mirror."""
    for _ in range(exact_mirror.QUERIES_BEFORE_MIRROR):
        index.query(user_id, unit_rows(1, 99)[0], 1)


def exact(vectors: np.ndarray, ids: list[str], query: np.ndarray, k: int) -> list[str]:
    order = np.argsort(-(vectors @ query), kind="stable")[:k]
    return [ids[i] for i in order]


def test_a_small_collection_answers_the_exact_neighbours_and_filters_as_chroma_does(tmp_path: Path) -> None:
    vectors, ids = unit_rows(400, 1), [f"m{i}" for i in range(400)]
    index = ChromaIndex(str(tmp_path))
    try:
        index.add("u", ids, vectors, metas(400))
        warm(index, "u")
        queries = unit_rows(20, 2)
        assert [[i for i, _ in index.query("u", q, 10)] for q in queries] == [
            exact(vectors, ids, q, 10) for q in queries
        ]
        flt = VectorFilter(agent_id="a", types=("episodic",), since=100.0, until=300.0)
        found = [i for i, _ in index.query("u", queries[0], 400, flt)]
        wanted = {f"m{i}" for i in range(100, 300) if i % 2 == 0 and i % 3 == 0}
        assert set(found) == wanted
        index.delete("u", ids[:200])
        assert not {i for q in queries for i, _ in index.query("u", q, 50)} & set(ids[:200])
    finally:
        index.close()


def test_a_write_through_another_handle_is_seen_by_the_next_query(tmp_path: Path) -> None:
    """Two handles on one store stand for two processes: each one's mirror follows the other's writes."""
    vectors, ids = unit_rows(100, 3), [f"m{i}" for i in range(100)]
    first, second = ChromaIndex(str(tmp_path)), ChromaIndex(str(tmp_path))
    try:
        first.add("u", ids, vectors, metas(100))
        probe = unit_rows(1, 4)[0]
        warm(first, "u")
        second.add("u", ["new"], probe[None, :], [{"type": "episodic", "when": 0.0}])
        assert first.query("u", probe, 1)[0][0] == "new"
        second.delete("u", ["new"])
        assert "new" not in {i for i, _ in first.query("u", probe, 100)}
    finally:
        first.close()
        second.close()


def test_a_collection_grown_past_the_mirror_limit_still_answers_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(exact_mirror, "EXACT_MAX_VECTORS", 50)
    vectors, ids = unit_rows(120, 5), [f"m{i}" for i in range(120)]
    index = ChromaIndex(str(tmp_path))
    try:
        index.add("u", ids[:40], vectors[:40], metas(40))
        warm(index, "u")  # mirrored, 40 vectors
        assert index.query("u", vectors[3], 1)[0][0] == "m3"
        index.add("u", ids[40:], vectors[40:], metas(80))  # 120: past the limit
        assert [index.query("u", v, 1)[0][0] for v in vectors] == ids
        assert [row[0][0] for row in index.query_many("u", vectors, 3)] == ids
    finally:
        index.close()


def test_a_write_that_fails_part_way_leaves_the_mirror_as_chroma_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chroma takes a large write in parts; when a later part fails, the parts it took are found."""
    monkeypatch.setattr("ripplemem.store.vectors.chroma_calls.MAX_BATCH", 100)
    vectors, ids = unit_rows(250, 6), [f"m{i}" for i in range(250)]
    index = ChromaIndex(str(tmp_path))
    try:
        index.add("u", ["seed"], unit_rows(1, 7), metas(1))
        warm(index, "u")
        calls = {"n": 0}
        upsert = Collection.upsert

        def failing_upsert(self: Collection, **kwargs: Any) -> None:
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError("disk full")
            upsert(self, **kwargs)

        monkeypatch.setattr(Collection, "upsert", failing_upsert)
        with pytest.raises(OSError):
            index.add("u", ids, vectors, metas(250))
        assert index.query("u", vectors[5], 1)[0][0] == "m5"  # in Chroma since the first part
        assert index.query("u", vectors[150], 1)[0][0] != "m150"
    finally:
        index.close()
