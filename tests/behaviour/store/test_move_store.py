"""Moving a store: ``ripplemem.migrate`` / ``ripplemem migrate SRC DST`` copies an embedded
store into PostgreSQL and back, every row as it was (ids, row keys, times, history, edges, tiers,
knowledge bases, readings, vectors, the cold archive); each side then recalls the same memories and
a cold memory can still be woken."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from cli_runner import cli
from internals import engine_of, stored_rows
from manual_clock import ManualClock
from media_encoders import COLOURS, ColourSpaceImageEncoder, write_ppm

import ripplemem
from ripplemem import InvalidInputError, RippleMem, StoreError, StoreOptions
from ripplemem.embedding.embedders import Embedder
from ripplemem.store.transfer import TABLES, copied_meta_key

QUERIES = ("what dose of lisinopril do I take?", "which sports car was bought in March?", "heart rate")


def pg(uri: str, schema: str) -> StoreOptions:
    """The StoreOptions of a PostgreSQL store in one schema."""
    return StoreOptions(backend="postgres", uri=uri, schema=schema)


def build_store(path: Path, embedder: Embedder, clock: ManualClock, tmp_path: Path) -> dict[str, str]:
    """A store holding every kind of row; returns the ids the checks name."""
    with RippleMem(path, user_id="alice", embedder=embedder, clock=clock) as mem:
        walk = mem.add(
            "I walk the dog every evening",
            session_id="s1",
            metadata={"mood": "calm", "tags": ["dog", "evening"]},
            event_time="2024-12-30T18:00:00+00:00",
        )
        mem.add("Paris is the capital of France", type="semantic", importance=0.8)
        old_dose = mem.add("I take 10 mg of lisinopril")
        clock.advance(1)
        new_dose = mem.add("my lisinopril dose is now 20 mg")
        mem.update(walk.id, content="I walk the dog every evening along the canal")
        bought = mem.add("Calvin bought a Ferrari 488 in March", importance=0.9)
        mem.add("Marco repainted the Ferrari 488 of Calvin in red", importance=0.5)
        mem.add("Marco polished the Ferrari 488 of Calvin", importance=0.5)
        mem.add("Alice works with Bob", relations=[("Alice", "knows", "Bob")])
        docs = tmp_path / "handbook"
        docs.mkdir()
        (docs / "leave.md").write_text(
            "# Leave\n\nEvery employee has 25 days of paid leave a year.\n\n"
            "## Sick days\n\nSick days need a note from a doctor after three days.\n",
            encoding="utf-8",
        )
        mem.ingest(docs, "handbook")
        mem.kb.grant("handbook", "bob")
        mem.sensors.record("heart_rate", 72, unit="bpm", at=clock.now)
        mem.sensors.record("heart_rate", 128, unit="bpm", at=clock.now + timedelta(minutes=5))
        image = write_ppm(tmp_path / "IMG_0001.ppm", COLOURS["red"])
        mem.media.add_image(
            image, "The red kite over the hill", encoder=ColourSpaceImageEncoder(), importance=0.9
        )
        clock.advance(35)
        engine_of(mem).store.touch([bought.id], "alice", engine_of(mem).now())
        mem.lifecycle.archive()
        cold = [m.id for m in mem.list(limit=100) if m.tier == "cold"]
    with RippleMem(path, user_id="bob", embedder=embedder, clock=clock) as bob:
        bob.add("Bob keeps bees on the roof")
    return {"old_dose": old_dose.id, "new_dose": new_dose.id, "walk": walk.id, "cold": ",".join(cold)}


def every_row(mem: RippleMem) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table a move copies, sorted (meta: the keys that travel), and the segments."""
    rows: dict[str, list[tuple[Any, ...]]] = {}
    for table in TABLES:
        found = stored_rows(mem, f"SELECT {', '.join(table.columns)} FROM {table.name}")
        found = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in found]
        if table.name == "meta":
            found = [row for row in found if copied_meta_key(str(row[0]))]
        rows[table.name] = sorted(found, key=repr)
    archive = engine_of(mem).archive
    rows["segments"] = sorted(
        (name, archive.shelf.get(name)) for user in ("alice", "bob") for name in archive.segments(user)
    )
    return rows


def seen_by_a_user(mem: RippleMem, ids: dict[str, str]) -> dict[str, Any]:
    """What the public API shows of the store: memories, history, recalls, counts, knowledge bases."""
    memories = sorted(mem.list(limit=1000), key=lambda m: m.id)
    return {
        "memories": memories,
        "superseded": mem.get(ids["old_dose"]),
        "history": {m.id: mem.history(m.id) for m in memories},
        "recall": {q: [h.memory.id for h in mem.recall(q, 3, record_access=False).hits] for q in QUERIES},
        "stats": {
            k: v for k, v in mem.stats().items() if k not in ("disk_bytes", "path", "store", "vector_index")
        },
        "kbs": [(kb.name, kb.chunks) for kb in mem.kb.list()],
        "readings": mem.sensors.readings("heart_rate"),
        "images": engine_of(mem).media.counts("alice"),
    }


@pytest.fixture
def clock() -> ManualClock:
    """Time starts on 2025-01-01 and moves only when a test says so."""
    return ManualClock()


@pytest.fixture
def source(tmp_path: Path, embedder: Embedder, clock: ManualClock) -> Iterator[tuple[Path, dict[str, str]]]:
    """An embedded store with every kind of row, and the ids of its notable memories."""
    path = tmp_path / "embedded"
    yield path, build_store(path, embedder, clock, tmp_path)


def test_a_store_moves_to_postgresql_and_back_with_every_row(
    source: tuple[Path, dict[str, str]],
    pg_uri: str,
    pg_schema: str,
    tmp_path: Path,
    embedder: Embedder,
    clock: ManualClock,
) -> None:
    path, ids = source
    cold = ids["cold"].split(",")
    assert len(cold) >= 2  # every memory idle for 35 days and not important, the Ferraris too
    with RippleMem(path, user_id="alice", embedder=embedder, clock=clock) as before:
        rows, seen = every_row(before), seen_by_a_user(before, ids)
    assert seen["superseded"].status == "superseded" and seen["images"] == {"image": 1}
    assert len(rows["segments"]) == 1 and len(rows["kb_grants"]) == 2 and len(rows["readings"]) == 2

    report = ripplemem.migrate(path, pg_uri, schema=pg_schema)
    assert report.counts == {**{t: len(r) for t, r in rows.items() if t != "segments"}, "archive segments": 1}
    with RippleMem(user_id="alice", embedder=embedder, clock=clock, store=pg(pg_uri, pg_schema)) as moved:
        assert every_row(moved) == rows
        assert seen_by_a_user(moved, ids) == seen
        # pgvector starts empty (the copy leaves the index label behind): the first open fills it.
        assert engine_of(moved).index.name == "pgvector"
        assert moved.stats()["vectors"] == sum(1 for m in moved.list(limit=1000) if m.tier != "cold")
        # New rows continue after the copied keys, and a cold memory comes back from its segment.
        added = moved.add("I renewed my passport in January")
        assert moved.recall("passport renewed", 1).hits[0].memory.id == added.id
        moved._wake_recalled(moved.recall("Marco repainted the Ferrari red", 5), engine_of(moved).now())
        assert moved.stats()["by_tier"]["cold"] < seen["stats"]["by_tier"]["cold"]
        on_server = every_row(moved), seen_by_a_user(moved, ids)

    back = tmp_path / "back"
    report = ripplemem.migrate(pg_uri, back, schema=pg_schema)
    assert report.counts["memories"] == len(rows["memories"]) + 1
    with RippleMem(back, user_id="alice", embedder=embedder, clock=clock) as returned:
        assert (every_row(returned), seen_by_a_user(returned, ids)) == on_server
        assert engine_of(returned).index.name == "chroma"  # rebuilt from the copied rows on first open
        still_cold = next(m for m in returned.list(limit=100) if m.tier == "cold")
        returned._wake_recalled(returned.recall(still_cold.content, 5), engine_of(returned).now())
        assert returned.get(still_cold.id).tier == "hot"
        assert returned.recall(still_cold.content, 1, mode="dense").hits[0].memory.id == still_cold.id


def test_a_target_that_holds_memories_is_refused_unless_replaced(
    source: tuple[Path, dict[str, str]], tmp_path: Path, embedder: Embedder
) -> None:
    path, _ = source
    other = tmp_path / "other"
    with RippleMem(other, user_id="carol", embedder=embedder) as carol:
        kept = carol.add("Carol's note that must not vanish by accident")
    with pytest.raises(InvalidInputError, match=r"not empty \(1 memories.*replace=True"):
        ripplemem.migrate(path, other)
    with RippleMem(other, user_id="carol", embedder=embedder) as carol:
        assert carol.get(kept.id) is not None
    assert ripplemem.migrate(path, other, replace=True).replaced
    with RippleMem(path, user_id="alice", embedder=embedder) as alice:
        rows, vectors = every_row(alice), alice.stats()["vectors"]
    with RippleMem(other, user_id="alice", embedder=embedder) as alice:
        # Carol's vector index was rebuilt from the copied rows: Alice's vectors, none of Carol's.
        assert every_row(alice) == rows and alice.stats()["vectors"] == vectors
    with RippleMem(other, user_id="carol", embedder=embedder) as carol:
        assert carol.stats()["vectors"] == 0 and carol.recall("Carol's note", 3).hits == []
    with pytest.raises(InvalidInputError, match="the same store"):
        ripplemem.migrate(path, path)
    with pytest.raises(StoreError, match="no RippleMem store at"):
        ripplemem.migrate(tmp_path / "typo", tmp_path / "elsewhere")
    RippleMem(tmp_path / "empty", user_id="dave", embedder=embedder).close()
    with pytest.raises(InvalidInputError, match="holds nothing to move"):
        ripplemem.migrate(tmp_path / "empty", tmp_path / "elsewhere")


def test_the_cli_moves_a_store_and_never_prints_the_password(
    source: tuple[Path, dict[str, str]],
    pg_uri: str,
    pg_schema: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, _ = source
    status, out, err = cli(capsys, "migrate", str(path), pg_uri, "--schema", pg_schema, "--progress")
    assert status == 0, err
    assert "row/s" in err  # the bar, on stderr
    counts = dict(line.split() for line in out.splitlines()[1:-1] if not line.startswith("  archive"))
    assert int(counts["memories"]) == 14 and int(counts["history"]) > 14 and int(counts["readings"]) == 2
    assert f"schema {pg_schema}" in out and "archive segments" in out
    status, out, _ = cli(capsys, "migrate", str(path), pg_uri, "--schema", pg_schema, "--json")
    assert status == 2 and "not empty" in json.loads(out)["error"]["message"]
    secret = "s3cret-pass"
    status, out, err = cli(capsys, "migrate", str(path), f"postgresql://ripple:{secret}@127.0.0.1:1/memories")
    assert status == 2 and secret not in out + err and "127.0.0.1:1" in out + err
