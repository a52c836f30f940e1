"""Store-wide maintenance on a PostgreSQL store: `reembed` moves it to another model (another
dimension too), `check` finds and repairs rows and pgvector tables that disagree; both from Python
and from the command line."""

from __future__ import annotations

import json

import pytest
from cli_runner import cli
from internals import stored_rows

from ripplemem import Embedder, HashingEmbedder, RippleMem, StoreOptions
from ripplemem.errors import InvalidInputError, StoreError

NOTES = [
    "Mei's violin lesson moved to Thursday evening",
    "Mei drinks Longjing green tea every morning",
    "Mei's passport expires in June 2027",
]


def options(uri: str, schema: str) -> StoreOptions:
    """The StoreOptions of a PostgreSQL store in one schema."""
    return StoreOptions(backend="postgres", uri=uri, schema=schema)


def test_reembed_moves_a_postgres_store_to_a_model_of_another_dimension(
    pg_uri: str, pg_schema: str, embedder: Embedder
) -> None:
    with RippleMem(user_id="mei", embedder=HashingEmbedder(256), store=options(pg_uri, pg_schema)) as mem:
        mem.add_many(NOTES)
        mem.scope("lin").add("Lin plays the cello")

    assert RippleMem.reembed(None, embedder, store=options(pg_uri, pg_schema)) == 4

    with RippleMem(user_id="mei", embedder=embedder, store=options(pg_uri, pg_schema)) as mem:
        assert mem.stats()["embedding_model"] == embedder.model_id
        # A paraphrase only the new model's meaning finds (hashing shares no word with it).
        hit = mem.recall("what does she have for a hot drink at breakfast", k=1, mode="dense").hits[0]
        assert hit.memory.content == NOTES[1]
        assert [h.memory.content for h in mem.scope("lin").recall("cello", k=5).hits] == [
            "Lin plays the cello"
        ]
        (dimension,) = stored_rows(mem, "SELECT public.vector_dims(embedding) FROM vectors_text LIMIT 1")[0]
    assert dimension == embedder.dimension
    with pytest.raises(StoreError, match="hashing-v1-256"):
        RippleMem(user_id="mei", embedder=HashingEmbedder(256), store=options(pg_uri, pg_schema))


def test_check_finds_and_repairs_a_postgres_store(pg_uri: str, pg_schema: str) -> None:
    with RippleMem(user_id="mei", embedder=HashingEmbedder(), store=options(pg_uri, pg_schema)) as mem:
        ids = [m.id for m in mem.add_many(NOTES)]
        # What a writer killed between the rows and pgvector leaves: a row without its vector.
        stored_rows(mem, "DELETE FROM vectors_text WHERE id = ? RETURNING id", (ids[0],))

    found = RippleMem.check(store=options(pg_uri, pg_schema), repair=False)
    assert (found.memories, found.missing_vectors, found.consistent) == (3, 1, False)
    assert not found.repaired
    repaired = RippleMem.check(store=options(pg_uri, pg_schema))
    assert repaired.repaired and repaired.missing_vectors == 1
    assert RippleMem.check(store=options(pg_uri, pg_schema)).consistent
    with RippleMem(user_id="mei", embedder=HashingEmbedder(), store=options(pg_uri, pg_schema)) as mem:
        assert mem.recall("violin lesson Thursday", k=1, mode="dense").hits[0].memory.id == ids[0]


def test_maintenance_calls_name_a_missing_or_wrong_store(pg_uri: str, pg_schema: str) -> None:
    with pytest.raises(StoreError, match=rf"no RippleMem store at .*\(schema {pg_schema}\) to check"):
        RippleMem.check(store=options(pg_uri, pg_schema))
    with pytest.raises(InvalidInputError, match="name the store"):
        RippleMem.check()
    with pytest.raises(InvalidInputError, match="drop path"):
        RippleMem.reembed("./memdb", "hashing", store=options(pg_uri, pg_schema))
    with pytest.raises(InvalidInputError, match="drop chroma_url"):
        RippleMem.check(store=options(pg_uri, pg_schema), chroma_url="http://localhost:8000")
    with pytest.raises(InvalidInputError, match="for a store folder pass its path"):
        RippleMem.check(store=StoreOptions(vector_index="numpy"))


def test_reembed_and_check_from_the_command_line(
    pg_uri: str, pg_schema: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ["--store", pg_uri, "--schema", pg_schema]
    status, _, err = cli(capsys, "add", NOTES[0], *store, "--user", "mei", "--embedder", "hashing")
    assert status == 0, err
    status, out, err = cli(capsys, "reembed", *store, "--embedder", "hashing-v1-512", "--json")
    assert status == 0, err
    assert json.loads(out)["reembedded"] == 1
    status, out, err = cli(capsys, "check", *store, "--json")
    assert status == 0, err
    report = json.loads(out)
    assert (report["memories"], report["vectors"], report["missing_vectors"]) == (1, 1, 0)
    status, out, _ = cli(capsys, "recall", "violin", *store, "--user", "mei")
    assert status == 0 and NOTES[0] in out
