"""PostgreSQL schema version 2: every user table's keys lead with user_id. A store made
at version 1 upgrades on its next open and still recalls, shows its history and searches its
vectors; a version-2 store's user tables turn into hash partitions with docs/scale.md's own
statements, and RippleMem adds, recalls, updates and erases on them, one user's erase leaving the
other's rows. PostgreSQL refuses those partitions on a version-1 schema."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from internals import engine_of, stored_rows
from media_encoders import COLOURS, ColourSpaceImageEncoder, write_ppm
from pg_schema_v1 import create_v1_tables
from pg_server import throwaway_schema

from ripplemem import HashingEmbedder, RippleMem, StoreOptions
from ripplemem.store.transfer import TABLES

ROOT = Path(__file__).resolve().parents[3]
# Every table whose rows belong to one user, with the pgvector table of the text space.
USER_TABLES = ("memories", "memories_fts", "entities", "edges", "history", "readings", "modality_vectors")
PARTITIONED = (*USER_TABLES, "vectors_text")


def options(uri: str, schema: str) -> StoreOptions:
    """The StoreOptions of a PostgreSQL store in one schema."""
    return StoreOptions(backend="postgres", uri=uri, schema=schema)


def connect(uri: str, schema: str) -> Any:
    """An autocommit psycopg connection whose search_path is the schema (created if missing)."""
    import psycopg
    from psycopg import sql

    conn = psycopg.connect(uri, autocommit=True)
    conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
    conn.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(schema)))
    return conn


@pytest.fixture
def v1_schema(pg_uri: str) -> Iterator[str]:
    """A second schema name no other test uses, dropped with everything in it afterwards."""
    yield from throwaway_schema(pg_uri, "test_v1")


def fill(uri: str, schema: str, tmp_path: Path) -> dict[str, str]:
    """Two users' memories in a store: an updated fact (history), a reading, an image; returns ids."""
    embedder = HashingEmbedder()
    with RippleMem(user_id="alice", embedder=embedder, store=options(uri, schema)) as mem:
        old = mem.add("Alice takes 10 mg of lisinopril every morning")
        new = mem.update(old.id, content="Alice takes 20 mg of lisinopril every morning")
        walk = mem.add("Alice walks the dog along the canal at seven")
        mem.sensors.record("heart_rate", 128, unit="bpm")
        kite = mem.media.add_image(
            write_ppm(tmp_path / "kite.ppm", COLOURS["red"]),
            "The red kite over the hill",
            encoder=ColourSpaceImageEncoder(),
        )
    with RippleMem(user_id="bob", embedder=embedder, store=options(uri, schema)) as bob:
        bees = bob.add("Bob keeps three hives of bees on the roof")
    return {"old": old.id, "new": new.id, "walk": walk.id, "kite": kite.id, "bees": bees.id}


def downgrade_copy(uri: str, source: str, target: str) -> None:
    """Make ``target`` a version-1 store holding ``source``'s rows: version 1's tables (its own
    DDL), the rows copied table by table (version 1 wrote the same, less the keyword rows' user_id,
    which it had no column for), its identity sequences past the copied keys."""
    with connect(uri, target) as conn:
        create_v1_tables(conn)
        for table in TABLES:  # the columns both versions hold (memories_fts: rowid, scope, tokens)
            columns = ", ".join(table.columns)
            conn.execute(
                f'INSERT INTO {table.name} ({columns}) SELECT {columns} FROM "{source}".{table.name}'
            )
        conn.execute(f'INSERT INTO archive_segments SELECT * FROM "{source}".archive_segments')
        for space in ("vectors_text", *vector_tables(conn, source)):
            conn.execute(f'CREATE TABLE {space} (LIKE "{source}".{space} INCLUDING ALL)')
            conn.execute(f'INSERT INTO {space} SELECT * FROM "{source}".{space}')
        for table, column in (("memories", "rowid"), ("history", "seq"), ("readings", "id")):
            conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                f"(SELECT MAX({column}) + 1 FROM {table}), false)"
            )
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")


def vector_tables(conn: Any, schema: str) -> list[str]:
    """The pgvector tables of the schema other than the text space's (one per media encoder)."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tablename LIKE 'vectors\\_%%' "
            "AND tablename != 'vectors_text'",
            (schema,),
        )
    ]


def keys(uri: str, schema: str) -> set[tuple[str, str]]:
    """Every index and constraint of the schema, as (name, definition) with the schema left out."""
    with connect(uri, schema) as conn:
        found = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s UNION ALL "
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE connamespace = %s::regnamespace",
            (schema, schema),
        ).fetchall()
    return {(name, definition.replace(f"{schema}.", "")) for name, definition in found}


def seen(mem: RippleMem, ids: dict[str, str]) -> dict[str, Any]:
    """What alice sees of her store: memories, history, recalls (not counted as uses), vectors."""
    return {
        "memories": sorted((m.id, m.content, m.status) for m in mem.list(limit=100)),
        "first": mem.get(ids["old"]),
        "history": [(e.event, e.memory_id) for e in mem.history(ids["new"])],
        "dense": [
            h.memory.id for h in mem.recall("lisinopril dose", k=2, mode="dense", record_access=False).hits
        ],
        "keyword": [
            h.memory.id for h in mem.recall("canal dog", k=1, mode="keyword", record_access=False).hits
        ],
        "vectors": mem.stats()["vectors"],
        "images": engine_of(mem).media.counts("alice"),
        "readings": [r.value for r in mem.sensors.readings("heart_rate")],
    }


def test_a_version_1_store_upgrades_on_open_and_keeps_every_memory(
    pg_uri: str, pg_schema: str, v1_schema: str, tmp_path: Path
) -> None:
    ids = fill(pg_uri, pg_schema, tmp_path)
    with RippleMem(user_id="alice", embedder=HashingEmbedder(), store=options(pg_uri, pg_schema)) as mem:
        before = seen(mem, ids)
    assert before["dense"][0] == ids["new"] and before["keyword"] == [ids["walk"]]
    downgrade_copy(pg_uri, pg_schema, v1_schema)
    assert ("ix_memories_id", "CREATE UNIQUE INDEX ix_memories_id ON memories USING btree (id)") in keys(
        pg_uri, v1_schema
    )

    with RippleMem(user_id="alice", embedder=HashingEmbedder(), store=options(pg_uri, v1_schema)) as mem:
        assert seen(mem, ids) == before
        assert stored_rows(mem, "SELECT value FROM meta WHERE key = 'schema_version'") == [("2",)]
        # The keyword rows got their user; new rows continue the copied keys.
        assert stored_rows(mem, "SELECT DISTINCT user_id FROM memories_fts ORDER BY user_id") == [
            ("alice",),
            ("bob",),
        ]
        fresh = mem.add("Alice renewed her passport in June")
        assert mem.recall("passport renewed", k=1, mode="keyword").hits[0].memory.id == fresh.id
    with RippleMem(user_id="bob", embedder=HashingEmbedder(), store=options(pg_uri, v1_schema)) as bob:
        assert [m.id for m in bob.list(limit=10)] == [ids["bees"]]
    # The upgraded schema has exactly the keys and indexes of one created at version 2.
    assert keys(pg_uri, v1_schema) == keys(pg_uri, pg_schema)


def scale_doc_partition_sql() -> str:
    """The hash-partition statements of docs/scale.md (step 2), as the page shows them."""
    page = (ROOT / "docs" / "scale.md").read_text(encoding="utf-8")
    step = page[page.index("2. **Hash partitions on one server**") : page.index("3. **Many servers")]
    block = re.search(r"```sql\n(.*?)```", step, re.DOTALL)
    assert block is not None, "docs/scale.md step 2 shows no sql block"
    return block.group(1)


def partitions(uri: str, schema: str) -> dict[str, int]:
    """{table: number of partitions} of the schema's partitioned tables."""
    with connect(uri, schema) as conn:
        rows = conn.execute(
            "SELECT p.relname, count(i.inhrelid) FROM pg_class p "
            "JOIN pg_namespace n ON n.oid = p.relnamespace JOIN pg_inherits i ON i.inhparent = p.oid "
            "WHERE n.nspname = %s AND p.relkind = 'p' "
            "GROUP BY p.relname",
            (schema,),
        ).fetchall()
    return dict(rows)


def test_the_user_tables_hash_partition_by_user_and_an_erase_keeps_the_other_user(
    pg_uri: str, pg_schema: str, tmp_path: Path
) -> None:
    ids = fill(pg_uri, pg_schema, tmp_path)
    with connect(pg_uri, pg_schema) as conn:
        conn.execute(scale_doc_partition_sql())
    assert partitions(pg_uri, pg_schema) == dict.fromkeys(PARTITIONED, 16)

    embedder = HashingEmbedder()
    with RippleMem(user_id="alice", embedder=embedder, store=options(pg_uri, pg_schema)) as mem:
        assert mem.recall("lisinopril dose", k=1).hits[0].memory.id == ids["new"]
        added = mem.add("Alice parks the red car on Elm Street")
        assert mem.recall("where is the car parked?", k=1).hits[0].memory.id == added.id
        moved = mem.update(added.id, content="Alice parks the red car on Oak Avenue now")
        assert mem.recall("Oak Avenue car", k=1, mode="keyword").hits[0].memory.id == moved.id
        assert "updated" in [e.event for e in mem.history(moved.id)]
        report = mem.erase(user_id="alice")
        assert report.verified, report.to_json()
        assert mem.list(limit=10) == []
        left = {
            t: stored_rows(mem, f"SELECT COUNT(*) FROM {t} WHERE user_id = 'alice'")[0][0]
            for t in PARTITIONED
        }
        assert left == dict.fromkeys(PARTITIONED, 0)
    with RippleMem(user_id="bob", embedder=embedder, store=options(pg_uri, pg_schema)) as bob:
        assert [m.id for m in bob.list(limit=10)] == [ids["bees"]]
        assert bob.recall("bees on the roof", k=1).hits[0].memory.id == ids["bees"]
        more = bob.add("Bob sold twelve jars of honey at the market")
        assert bob.recall("honey jars market", k=1, mode="keyword").hits[0].memory.id == more.id
        assert bob.stats()["vectors"] == 2
    assert partitions(pg_uri, pg_schema) == dict.fromkeys(PARTITIONED, 16)


def test_postgresql_refuses_the_partitions_on_a_version_1_schema(pg_uri: str, v1_schema: str) -> None:
    import psycopg

    with connect(pg_uri, v1_schema) as conn:
        create_v1_tables(conn)
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="must include all partitioning columns"):
            conn.execute(scale_doc_partition_sql())
