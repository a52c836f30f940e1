"""mem.erase: one memory, everything a text points to, or a whole user, through every layer; the
verification pass; the audit report; and the raw bytes of every file under the store afterwards."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from doc_fixtures import write_md
from manual_clock import ManualClock

from ripplemem import InvalidInputError, MemoryNotFoundError, RippleMem, StoreOptions, UserMismatchError
from ripplemem.embedding.embedders import Embedder

# Made-up words: nothing else in a store (or in Chroma's own files) can contain them by chance.
DIAGNOSIS = "Dr Quellwarden diagnosed me with Vornakian syndrome in March"
MEDICATION = "I take Zelpratrexol every morning for the Vornakian syndrome"
HOBBY = "I go bouldering at the Granitewerk gym on Thursdays"
BOB_SECRET = "Bob keeps his Krellsworth savings account PIN on a sticky note"
KB_FACT = "The Ostravelle travel policy reimburses train tickets in second class"
DISTINCTIVE = ("Vornakian", "Quellwarden", "Zelpratrexol")


@pytest.fixture
def clock() -> ManualClock:
    """Time moves only when a test says so (archiving needs idle days)."""
    return ManualClock()


@pytest.fixture(
    params=[("chroma", "collection"), ("chroma", "filter"), ("numpy", None), ("chroma-server", "collection")],
    ids=["chroma", "chroma-filter", "numpy", "chroma-server"],
)
def store(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    embedder: Embedder,
    clock: ManualClock,
    backend_named: Callable[[str], dict[str, Any]],
) -> Iterator[RippleMem]:
    """Alice's on-disk store on each backend (conftest.BACKENDS) and Chroma isolation."""
    backend, isolation = request.param
    handle = RippleMem(
        tmp_path / "store",
        user_id="alice",
        embedder=embedder,
        store=StoreOptions(isolation=isolation, **backend_named(backend)),
        clock=clock,
    )
    yield handle
    handle.close()


def raw_hits(path: str | None, words: tuple[str, ...] = DISTINCTIVE) -> dict[str, list[str]]:
    """Which files under the store hold each word in their raw bytes (UTF-8 or UTF-16)."""
    assert path is not None
    found: dict[str, list[str]] = {}
    for folder, _, names in os.walk(path):
        for name in names:
            file = os.path.join(folder, name)
            with open(file, "rb") as handle:
                data = handle.read()
            for word in words:
                if word.encode("utf-8") in data or word.encode("utf-16-le") in data:
                    found.setdefault(word, []).append(os.path.relpath(file, path))
    return found


def fill(mem: RippleMem) -> dict[str, str]:
    """Alice's medical memories and a hobby, Bob's secret; returns their ids by name."""
    diagnosis = mem.add(DIAGNOSIS, type="semantic", importance=0.9)
    medication = mem.add(MEDICATION, type="semantic", importance=0.9)
    hobby = mem.add(HOBBY)
    bob = mem.scope("bob").add(BOB_SECRET)
    return {"diagnosis": diagnosis.id, "medication": medication.id, "hobby": hobby.id, "bob": bob.id}


def contents(mem: RippleMem) -> set[str]:
    return {m.content for m in mem.list()}


def test_erase_one_memory_leaves_no_byte_of_it(store: RippleMem) -> None:
    ids = fill(store)
    store.update(ids["diagnosis"], content=DIAGNOSIS + " after a long search")
    assert "Quellwarden" in raw_hits(store.path)  # the test can fail: the words are on disk now
    report = store.erase(ids["diagnosis"])
    assert report.verified and report.verification["residues"]["raw_files"] == 0
    assert report.memory_ids == [ids["diagnosis"]]
    assert report.removed["memories"] == 1 and report.removed["vectors"] == 1
    assert report.removed["history"] >= 2  # added + updated (the update kept the old text)
    assert store.get(ids["diagnosis"]) is None
    assert "Quellwarden" not in raw_hits(store.path)
    assert contents(store) == {MEDICATION, HOBBY}
    assert [h.memory.content for h in store.recall("Quellwarden", mode="keyword").hits] == []
    assert store.graph.neighbors("Quellwarden") == []
    assert store.scope("bob").get(ids["bob"]) is not None


def test_dry_run_previews_and_changes_nothing(store: RippleMem) -> None:
    ids = fill(store)
    before = store.stats()
    preview = store.erase(matching="my medical condition", dry_run=True)
    assert preview.dry_run and not preview.verified and preview.removed == {}
    assert set(preview.memory_ids) == {ids["diagnosis"], ids["medication"]}
    assert preview.planned["memories"] == 2
    assert store.stats()["total"] == before["total"] and store.stats()["vectors"] == before["vectors"]
    assert set(raw_hits(store.path)) == set(DISTINCTIVE)


def test_erase_matching_takes_what_the_text_points_to(store: RippleMem) -> None:
    ids = fill(store)
    report = store.erase(matching="my medical condition")
    assert set(report.memory_ids) == {ids["diagnosis"], ids["medication"]}
    assert report.verified, {k: v for k, v in report.verification["residues"].items() if v}
    assert contents(store) == {HOBBY}
    assert raw_hits(store.path) == {}
    assert [m.content for m in store.scope("bob").list()] == [BOB_SECRET]


def test_forget_me_erases_a_user_everywhere_and_keeps_others(store: RippleMem, tmp_path: Path) -> None:
    ids = fill(store)
    store.sensors.record("heart_rate", 72)
    (tmp_path / "docs").mkdir()
    write_md(tmp_path / "docs" / "travel.md", heading="Travel", sentence=KB_FACT)
    store.ingest(tmp_path / "docs", "shared-handbook")
    store.kb.grant("shared-handbook", "bob")
    store.observe("user", "Remember: Zelpratrexol makes me dizzy")
    report = store.erase(user_id="alice")
    assert report.verified, {k: v for k, v in report.verification["residues"].items() if v}
    assert report.removed["readings"] == 1 and report.removed["knowledge_base_grants"] == 1
    assert report.removed["working_items"] == 1
    assert store.list() == [] and store.stats()["vectors"] == 0 and store.sensors.metrics() == {}
    assert store.kb.list() == []
    assert raw_hits(store.path) == {}
    bob = store.scope("bob")
    assert bob.get(ids["bob"]) is not None
    assert [kb.name for kb in bob.kb.list()] == ["shared-handbook"]
    assert any(KB_FACT in h.memory.content for h in bob.recall("train tickets travel policy").hits)


def test_a_kb_only_the_erased_user_reads_goes_with_them(store: RippleMem, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    write_md(tmp_path / "docs" / "notes.md", heading="Private notes", sentence="Quellwarden clinic notes")
    store.ingest(tmp_path / "docs", "alice-notes")
    assert "Quellwarden" in raw_hits(store.path)
    report = store.erase(user_id="alice")
    assert report.removed["knowledge_bases"] == 1 and report.verified
    assert raw_hits(store.path) == {}


def test_cold_archived_memories_and_history_are_erased(store: RippleMem, clock: ManualClock) -> None:
    ids = fill(store)
    store.update(ids["hobby"], importance=0.2)
    clock.advance(45)
    store.lifecycle.archive()
    store.lifecycle.archive()
    assert store.get(ids["hobby"]).tier == "cold"  # type: ignore[union-attr]
    report = store.erase(matching="Granitewerk bouldering gym")
    assert ids["hobby"] in report.memory_ids
    assert report.removed["archive_entries"] >= 1 and report.verified
    assert raw_hits(store.path, ("Granitewerk",)) == {}
    with pytest.raises(MemoryNotFoundError):
        store.history(ids["hobby"])


def test_a_reopened_store_shows_nothing_erased(tmp_path: Path, embedder: Embedder) -> None:
    with RippleMem(tmp_path / "s", user_id="alice", embedder=embedder) as mem:
        ids = fill(mem)
        mem.erase(matching="Vornakian syndrome")
    with RippleMem(tmp_path / "s", user_id="alice", embedder=embedder) as mem:
        assert mem.get(ids["diagnosis"]) is None and mem.get(ids["medication"]) is None
        assert contents(mem) == {HOBBY}
        assert mem.recall("Vornakian syndrome medication", mode="hybrid").hits[0].memory.content == HOBBY
        assert mem.stats()["vectors"] == 1
    assert raw_hits(str(tmp_path / "s")) == {}


def test_the_audit_report_holds_no_erased_text(store: RippleMem) -> None:
    fill(store)
    report = store.erase(matching="Vornakian syndrome")
    text = report.to_json()
    assert json.loads(text)["verified"] is True
    for phrase in (DIAGNOSIS, MEDICATION, *DISTINCTIVE, "Vornakian syndrome"):
        assert phrase not in text
    assert len(json.loads(text)["request_hash"]) == 64
    assert "verification: no residue" in report.summary()


def test_erase_refuses_bad_requests_and_other_users(store: RippleMem) -> None:
    ids = fill(store)
    with pytest.raises(UserMismatchError):
        store.erase(user_id="bob")
    with pytest.raises(MemoryNotFoundError):
        store.erase(ids["bob"])  # Bob's id through Alice's handle: not found, nothing erased
    with pytest.raises(InvalidInputError, match="exactly one"):
        store.erase(ids["hobby"], matching="gym")
    with pytest.raises(InvalidInputError, match="exactly one"):
        store.erase()
    assert store.scope("bob").get(ids["bob"]) is not None and len(store.list()) == 3


def test_admin_erase_user_by_path(tmp_path: Path, embedder: Embedder) -> None:
    with RippleMem(tmp_path / "s", user_id="alice", embedder=embedder) as mem:
        ids = fill(mem)
    report = RippleMem.erase_user(tmp_path / "s", "bob", embedder=embedder)
    assert report.verified and report.memory_ids == [ids["bob"]]
    assert raw_hits(str(tmp_path / "s"), ("Krellsworth",)) == {}
    with RippleMem(tmp_path / "s", user_id="alice", embedder=embedder) as mem:
        assert len(mem.list()) == 3


@pytest.fixture
def alice(tmp_path: Path, embedder: Embedder) -> Iterator[RippleMem]:
    """Alice's on-disk store (embedded Chroma): the selection tests need one backend only."""
    with RippleMem(tmp_path / "store", user_id="alice", embedder=embedder) as handle:
        yield handle


def test_a_secret_in_metadata_is_erased_and_a_merely_similar_memory_stays(alice: RippleMem) -> None:
    # MiniLM puts "I check my email every hour" at 0.34 to the address: above the 0.25 floor.
    inbox = alice.add("I check my email every hour")
    plumber = alice.add(
        "Call the plumber about the leaking tap", metadata={"contact": "jonas.quellwarden@example.com"}
    )
    alice.add(HOBBY)
    assert "quellwarden@example" in json.dumps(raw_hits(alice.path, ("quellwarden@example",)))
    report = alice.erase(matching="jonas.quellwarden@example.com")
    assert report.memory_ids == [plumber.id]
    assert report.verified, {k: v for k, v in report.verification["residues"].items() if v}
    assert alice.get(inbox.id) is not None and alice.get(plumber.id) is None
    assert raw_hits(alice.path, ("quellwarden@example",)) == {}


def test_a_text_that_points_nowhere_clearly_erases_nothing(alice: RippleMem) -> None:
    alice.add("I check my email every hour")
    alice.add("John from accounting emailed me yesterday")
    alice.add("Send the photos to my mail address")
    alice.add(HOBBY)
    preview = alice.erase(matching="jonas.whitfield@protonmail.example", dry_run=True)
    assert preview.memory_ids == [] and preview.preview == []


def test_the_dry_run_shows_the_texts_and_the_erase_report_never_does(alice: RippleMem) -> None:
    ids = fill(alice)
    preview = alice.erase(matching="Vornakian syndrome", dry_run=True)
    assert dict(preview.preview) == {ids["diagnosis"]: DIAGNOSIS, ids["medication"]: MEDICATION}
    assert DIAGNOSIS in preview.summary() and MEDICATION in preview.summary()
    report = alice.erase(matching="Vornakian syndrome")
    assert report.preview == [] and DIAGNOSIS not in report.summary() + report.to_json()


def test_the_cli_dry_run_prints_what_it_would_erase(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ripplemem.interfaces.cli.main import main

    path = str(tmp_path / "store")
    with RippleMem(path, user_id="alice", embedder="hashing") as mem:
        fill(mem)
    assert main(["erase", "--path", path, "--user", "alice", "--matching", "Zelpratrexol", "--dry-run"]) == 0
    out = capsys.readouterr().out
    # The medication names it; the diagnosis shares its rare entity (Vornakian syndrome).
    assert "would erase 2 memories" in out and MEDICATION in out and DIAGNOSIS in out
    with RippleMem(path, user_id="alice", embedder="hashing") as mem:
        assert MEDICATION in contents(mem)


def test_verified_means_the_request_text_is_gone_from_every_layer(alice: RippleMem) -> None:
    fill(alice)
    alice.observe("user", "Remember: Zelpratrexol makes me dizzy")
    report = alice.erase(matching="Zelpratrexol")
    assert report.verified and report.removed["working_items"] == 1
    assert [i.text for i in alice.working().items() if "Zelpratrexol" in i.text] == []
    # A copy the erase cannot reach (an export left in the store folder) makes verified False.
    Path(alice.path or "", "export.txt").write_text("notes: Vornakian syndrome since March", encoding="utf-8")
    report = alice.erase(matching="Vornakian syndrome")
    assert not report.verified and report.verification["residues"]["raw_files"] == 1
    assert "verification FAILED" in report.summary()


def test_a_matching_text_longer_than_a_recall_query_is_refused(alice: RippleMem) -> None:
    fill(alice)
    with pytest.raises(InvalidInputError, match="matching is 100001 characters; the limit is 100000"):
        alice.erase(matching="Vornakian " * 10_000 + "x")
    assert len(alice.list()) == 3


def test_python_without_serialize_still_searches_every_stored_value(alice: RippleMem) -> None:
    # Python 3.10 has no Connection.serialize: the verification reads every row's values instead.
    from ripplemem.store.sqlite.side_connection import database_values, side_connection

    fill(alice)
    with side_connection(alice.path or "") as conn:
        values = b"".join(database_values(conn))
    assert DIAGNOSIS.encode() in values and BOB_SECRET.encode() in values


def test_forget_me_leaves_no_graph_folder_of_the_user(tmp_path: Path, embedder: Embedder) -> None:
    # Chroma deletes a collection but leaves its graph folder, with every vector of the user in it.
    with RippleMem(
        tmp_path / "s", user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        fill(mem)
        folders = _graph_folders(tmp_path / "s")
        assert len(folders) == 2  # alice's collection and bob's
        assert mem.erase(user_id="alice").verified
        assert len(_graph_folders(tmp_path / "s")) == 1
        bob = mem.scope("bob")
        assert bob.recall("savings account PIN", k=1, mode="dense").hits[0].memory.content == BOB_SECRET
    report = RippleMem.erase_user(tmp_path / "s", "bob", embedder=embedder)
    assert report.verified and _graph_folders(tmp_path / "s") == []


def _graph_folders(path: Path) -> list[str]:
    return [entry.name for entry in (path / "chroma").iterdir() if entry.is_dir()]
