"""PgVectorIndex on a real PostgreSQL + pgvector server (tests/pg_server.py), checked against the
exact numpy index: the same ids and cosines, below and above the HNSW threshold, users kept apart,
concurrent writers, and a lost connection as a user meets it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from pg_server import require_psycopg

require_psycopg()

import psycopg  # noqa: E402
import psycopg_pool  # noqa: E402

from ripplemem.errors import InvalidInputError, StoreError  # noqa: E402
from ripplemem.store.postgres.vectors import PgVectorIndex  # noqa: E402
from ripplemem.store.vectors.base import NumpyIndex, VectorFilter, VectorIndex  # noqa: E402

DIM = 16
TYPES = ("episodic", "semantic", "procedural")


def unit_rows(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def metadata(i: int) -> dict[str, Any]:
    return {"agent_id": f"agent{i % 2}", "session_id": f"s{i % 3}", "type": TYPES[i % 3], "when": float(i)}


def fill(indexes: list[VectorIndex], user: str, vectors: np.ndarray, prefix: str = "m") -> list[str]:
    ids = [f"{prefix}{i}" for i in range(len(vectors))]
    metas = [metadata(i) for i in range(len(vectors))]
    for index in indexes:
        index.add(user, ids, vectors, metas)
    return ids


def assert_same(found: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    assert [memory_id for memory_id, _ in found] == [memory_id for memory_id, _ in expected]
    np.testing.assert_allclose([s for _, s in found], [s for _, s in expected], atol=1e-5)


def make_pool(conninfo: str, **kwargs: Any) -> Any:
    kwargs = {"check": psycopg_pool.ConnectionPool.check_connection, "max_size": 4, **kwargs}
    return psycopg_pool.ConnectionPool(conninfo, min_size=1, timeout=5, open=True, **kwargs)


@pytest.fixture
def pool(pg_uri: str) -> Iterator[Any]:
    with make_pool(pg_uri) as opened:
        yield opened


def index_scans(pg_uri: str, schema: str) -> int:
    """How often the HNSW index of the text table has been scanned, by backends that have exited
    (a backend reports its statistics when it exits, an idle one up to 10 s later)."""
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        for _ in range(50):
            conn.execute("SELECT pg_stat_clear_snapshot()")
            busy = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                "AND pid <> pg_backend_pid()"
            ).fetchone()
            if busy == (0,):
                break
            time.sleep(0.05)
        row = conn.execute(
            "SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes "
            "WHERE schemaname = %s AND indexrelname = 'vectors_text_hnsw'",
            (schema,),
        ).fetchone()
        return int(row[0])


def test_below_the_threshold_results_are_the_exact_ones(pool: Any, pg_schema: str) -> None:
    rng = np.random.default_rng(1)
    pg, ref = PgVectorIndex(pool, pg_schema, DIM), NumpyIndex()
    fill([pg, ref], "alice", unit_rows(rng, 300))
    for q in unit_rows(rng, 5):
        assert_same(pg.query("alice", q, 10), ref.query("alice", q, 10))
    queries = unit_rows(rng, 3)
    for found, expected in zip(
        pg.query_many("alice", queries, 7), ref.query_many("alice", queries, 7), strict=True
    ):
        assert_same(found, expected)
    assert pg.count("alice") == 300 and pg.ids("alice") == ref.ids("alice")
    assert_same(pg.query("alice", queries[0], 1000), ref.query("alice", queries[0], 1000))


def test_filters_match_the_numpy_index(pool: Any, pg_schema: str) -> None:
    rng = np.random.default_rng(2)
    pg, ref = PgVectorIndex(pool, pg_schema, DIM), NumpyIndex()
    fill([pg, ref], "alice", unit_rows(rng, 120))
    q = unit_rows(rng, 1)[0]
    for flt in (
        VectorFilter(agent_id="agent1"),
        VectorFilter(session_id="s2", types=("semantic", "procedural")),
        VectorFilter(since=30.0, until=60.0),
        VectorFilter(agent_id="agent0", types=("episodic",), since=10.0),
        VectorFilter(agent_id="nobody"),
    ):
        assert_same(pg.query("alice", q, 8, flt), ref.query("alice", q, 8, flt))


def test_above_the_threshold_the_hnsw_index_answers_with_the_same_results(
    pg_uri: str, pg_schema: str
) -> None:
    rng = np.random.default_rng(3)
    ref = NumpyIndex()
    queries = unit_rows(rng, 4)

    def queried(user: str) -> int:
        with make_pool(pg_uri) as pool:
            pg = PgVectorIndex(pool, pg_schema, DIM, exact_below=100, ef_search=400)
            if pg.is_empty():
                fill([pg, ref], "big", unit_rows(rng, 300))
                fill([pg, ref], "small", unit_rows(rng, 50))
            for q in queries:
                assert_same(pg.query(user, q, 10), ref.query(user, q, 10))
        return index_scans(pg_uri, pg_schema)

    assert queried("small") == 0  # a small user's rows are scanned
    assert queried("big") == len(queries)  # a big user's through the index


def test_a_big_user_whose_rows_the_index_crowds_out_still_gets_k_exact_hits(
    pool: Any, pg_schema: str
) -> None:
    # pgvector 0.6 applies WHERE after the HNSW scan: with ef_search 20 among mostly another user's
    # rows (or a narrow filter), the scan keeps fewer than k of this user's, and the exact scan answers.
    rng = np.random.default_rng(4)
    pg = PgVectorIndex(pool, pg_schema, DIM, exact_below=50, ef_search=20)
    ref = NumpyIndex()
    fill([pg, ref], "crowd", unit_rows(rng, 1500))
    fill([pg, ref], "bob", unit_rows(rng, 80))
    for q in unit_rows(rng, 4):
        assert_same(pg.query("bob", q, 10), ref.query("bob", q, 10))
        rare = VectorFilter(types=("semantic",), since=40.0)
        assert_same(pg.query("crowd", q, 10, rare), ref.query("crowd", q, 10, rare))


def test_the_hnsw_index_is_built_for_the_first_big_user_and_dropped_before_a_refill(
    pool: Any, pg_schema: str, pg_uri: str
) -> None:
    rng = np.random.default_rng(11)
    pg = PgVectorIndex(pool, pg_schema, DIM, exact_below=100)

    def indexed() -> bool:
        with psycopg.connect(pg_uri) as conn:
            name = f"{pg_schema}.vectors_text_hnsw"
            return conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone() == (True,)

    fill([pg], "alice", unit_rows(rng, 150))
    pg.query("alice", unit_rows(rng, 1)[0], 5, VectorFilter(agent_id="agent0"))
    assert indexed()
    pg.drop_all()
    assert not indexed()  # the refill inserts rows without growing a graph
    fill([pg], "alice", unit_rows(rng, 150))
    assert len(pg.query_many("alice", unit_rows(rng, 2), 5)[1]) == 5 and indexed()


@pytest.mark.parametrize("other", ["%", "x' OR '1'='1", "alice\\", ""])
def test_users_see_only_their_own_vectors(pool: Any, pg_schema: str, other: str) -> None:
    rng = np.random.default_rng(5)
    pg = PgVectorIndex(pool, pg_schema, DIM)
    alice = fill([pg], "alice", unit_rows(rng, 20), prefix="a")
    theirs = fill([pg], other, unit_rows(rng, 5), prefix="o")
    q = unit_rows(rng, 1)[0]
    assert {memory_id for memory_id, _ in pg.query(other, q, 100)} == set(theirs)
    assert pg.ids(other) == set(theirs) and pg.count(other) == 5
    pg.delete(other, alice)  # another user's ids: nothing of alice's goes
    pg.drop(other)
    assert pg.count(other) == 0 and pg.ids("alice") == set(alice)
    assert pg.foreign(["alice"]) == {}


def test_add_replaces_and_delete_ignores_unknown_ids(pool: Any, pg_schema: str) -> None:
    pg = PgVectorIndex(pool, pg_schema, DIM)
    first, second = np.eye(DIM, dtype=np.float32)[:2]
    pg.add("alice", ["m1"], first[None], [{"type": "episodic", "when": 1.0}])
    pg.add("alice", ["m1"], second[None], [{"type": "semantic", "when": 5.0}])
    assert pg.count("alice") == 1
    [(memory_id, score)] = pg.query("alice", second, 5)
    assert memory_id == "m1" and score == pytest.approx(1.0, abs=1e-6)
    assert pg.query("alice", second, 5, VectorFilter(types=("episodic",))) == []
    assert [m for m, _ in pg.query("alice", second, 5, VectorFilter(types=("semantic",), since=5.0))] == [
        "m1"
    ]
    pg.delete("alice", ["m1", "never-added"])
    assert pg.count("alice") == 0 and pg.query("alice", second, 5) == []


def test_drop_all_foreign_and_an_untouched_store(pool: Any, pg_schema: str) -> None:
    rng = np.random.default_rng(6)
    pg = PgVectorIndex(pool, pg_schema, DIM)
    assert pg.is_empty() and pg.count("alice") == 0 and pg.query("alice", unit_rows(rng, 1)[0], 3) == []
    assert pg.ids("alice") == set() and pg.foreign([]) == {} and pg.damage() == []
    pg.delete("alice", ["m1"])  # no table yet: nothing to do
    fill([pg], "alice", unit_rows(rng, 4))
    fill([pg], "gone", unit_rows(rng, 3))
    assert not pg.is_empty()
    assert pg.foreign(["alice"]) == {"gone": 3}
    pg.drop_foreign("gone")
    assert pg.foreign(["alice"]) == {} and pg.count("alice") == 4
    with pg.exclusive():
        pg.drop_all()
    assert pg.is_empty() and pg.count("alice") == 0


def test_another_space_has_its_own_table_and_dimension(pool: Any, pg_schema: str) -> None:
    rng = np.random.default_rng(7)
    text = PgVectorIndex(pool, pg_schema, DIM)
    image = text.open_space("image")
    fill([text], "alice", unit_rows(rng, 5))
    image.add("alice", ["m1"], unit_rows(rng, 1, dim=8), [{}])
    assert text.count("alice") == 5 and image.count("alice") == 1
    assert image.ids("alice") == {"m1"}
    with pytest.raises(InvalidInputError, match="8 dimensions; got 16"):
        image.add("alice", ["m2"], unit_rows(rng, 1), [{}])
    image.drop_all()  # a rebuild (re-embedding) may bring another model's dimension
    assert text.count("alice") == 5 and image.count("alice") == 0
    image.add("alice", ["m2"], unit_rows(rng, 1, dim=16), [{}])
    assert image.ids("alice") == {"m2"}
    with pytest.raises(StoreError, match="holds vectors of 16 dimensions, but this index was opened for 8"):
        PgVectorIndex(pool, pg_schema, 8).add("alice", ["x"], unit_rows(rng, 1, dim=8), [{}])
    with pytest.raises(StoreError, match="holds vectors of 16 dimensions, but this index was opened for 8"):
        PgVectorIndex(pool, pg_schema, 8, space="image").add("alice", ["x"], unit_rows(rng, 1, dim=8), [{}])
    with pytest.raises(InvalidInputError, match="space name"):
        text.open_space("Image; DROP TABLE x")


def write_at_once(indexes: list[PgVectorIndex], vectors: np.ndarray) -> list[BaseException]:
    """Each index upserts 300 of the vectors (50 at a time, the second from offset 100) in its own
    thread, both starting together; the errors raised."""
    start, errors = threading.Barrier(len(indexes)), []

    def write(index: PgVectorIndex, offset: int) -> None:
        try:
            start.wait()
            for batch in range(offset, offset + 300, 50):
                rows = list(range(batch, batch + 50))
                index.add("alice", [f"m{i}" for i in rows], vectors[rows], [metadata(i) for i in rows])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(ix, 100 * n)) for n, ix in enumerate(indexes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_two_indexes_over_one_schema_write_at_once(pg_uri: str, pg_schema: str) -> None:
    # Two pools (two processes' worth of connections) create the same tables and upsert
    # overlapping ids at the same moment, in several fresh spaces so the creation race repeats.
    vectors = unit_rows(np.random.default_rng(8), 400)
    with make_pool(pg_uri) as one, make_pool(pg_uri) as two:
        for space in ("text", "image", "audio", "sensor"):
            indexes = [PgVectorIndex(p, pg_schema, DIM, space=space) for p in (one, two)]
            assert write_at_once(indexes, vectors) == []
            assert indexes[0].count("alice") == 400 and indexes[1].ids("alice") == {
                f"m{i}" for i in range(400)
            }


def terminate_backends(pg_uri: str) -> None:
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
            "AND datname = current_database() AND backend_type = 'client backend'"
        )


def test_after_the_server_drops_every_connection_the_next_call_reconnects(
    pool: Any, pg_schema: str, pg_uri: str
) -> None:
    rng = np.random.default_rng(9)
    pg = PgVectorIndex(pool, pg_schema, DIM)
    fill([pg], "alice", unit_rows(rng, 10))
    terminate_backends(pg_uri)
    assert pg.count("alice") == 10  # the pool's check replaced the dead connection
    fill([pg], "alice", unit_rows(rng, 12))
    assert pg.count("alice") == 12


def test_a_call_on_a_lost_connection_is_a_store_error_without_the_password(
    pg_uri: str, pg_schema: str
) -> None:
    rng = np.random.default_rng(10)
    # The local server trusts its socket, so any password connects; it must never be shown.
    conninfo = psycopg.conninfo.make_conninfo(pg_uri, password="s3cret-pw")
    with make_pool(conninfo, check=None, max_size=1) as unchecked:
        pg = PgVectorIndex(unchecked, pg_schema, DIM)
        fill([pg], "alice", unit_rows(rng, 10))
        terminate_backends(pg_uri)
        with pytest.raises(StoreError, match="cannot be reached") as caught:
            pg.query("alice", unit_rows(rng, 1)[0], 5)
        assert "s3cret-pw" not in str(caught.value) and "database postgres" in str(caught.value)
        assert len(pg.query("alice", unit_rows(rng, 1)[0], 5)) == 5  # the pool replaced the connection


def test_no_server_is_a_store_error_naming_where(pg_schema: str, tmp_path: Any) -> None:
    conninfo = f"host={tmp_path} dbname=ripplemem user=me password=s3cret-pw connect_timeout=1"
    with psycopg_pool.ConnectionPool(conninfo, min_size=1, timeout=1, open=True) as down:
        pg = PgVectorIndex(down, pg_schema, DIM)
        with pytest.raises(StoreError, match=f"PostgreSQL at {tmp_path}, database ripplemem") as caught:
            pg.count("alice")
        assert "s3cret-pw" not in str(caught.value)
