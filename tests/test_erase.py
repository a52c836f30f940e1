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

from ripplemem import InvalidInputError, MemoryNotFoundError, RippleMem, UserMismatchError
from ripplemem.embeddings import Embedder

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


@pytest.fixture(params=[("chroma", "collection"), ("chroma", "filter"), ("numpy", None),
                        ("chroma-server", "collection")],
                ids=["chroma", "chroma-filter", "numpy", "chroma-server"])
def store(request: pytest.FixtureRequest, tmp_path: Path, embedder: Embedder, clock: ManualClock,
          backend_named: Callable[[str], dict[str, Any]]) -> Iterator[RippleMem]:
    """Alice's on-disk store on each backend (conftest.BACKENDS) and Chroma isolation."""
    backend, isolation = request.param
    handle = RippleMem(tmp_path / "store", user_id="alice", embedder=embedder, isolation=isolation,
                       clock=clock, **backend_named(backend))
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
    assert store.neighbors("Quellwarden") == []
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
    store.record("heart_rate", 72)
    (tmp_path / "docs").mkdir()
    write_md(tmp_path / "docs" / "travel.md", heading="Travel", sentence=KB_FACT)
    store.ingest(tmp_path / "docs", "shared-handbook")
    store.grant("shared-handbook", "bob")
    store.observe("user", "Remember: Zelpratrexol makes me dizzy")
    report = store.erase(user_id="alice")
    assert report.verified, {k: v for k, v in report.verification["residues"].items() if v}
    assert report.removed["readings"] == 1 and report.removed["knowledge_base_grants"] == 1
    assert report.removed["working_items"] == 1
    assert store.list() == [] and store.stats()["vectors"] == 0 and store.metrics() == {}
    assert store.knowledge_bases() == []
    assert raw_hits(store.path) == {}
    bob = store.scope("bob")
    assert bob.get(ids["bob"]) is not None
    assert [kb.name for kb in bob.knowledge_bases()] == ["shared-handbook"]
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
    store.archive()
    store.archive()
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
