"""The image and audio indexes beside the text index: what removes or checks vectors covers them
(delete, erase in its three modes, the cold tier, the consistency check and repair, re-embedding),
and they persist across a reopen. Each test looks into the modality index itself."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from internals import engine_of
from manual_clock import ManualClock
from media_encoders import COLOURS, ColourSpaceImageEncoder, PitchSpaceAudioEncoder, write_ppm, write_tone

from ripplemem import RippleMem, StoreOptions
from ripplemem.core.types import Memory
from ripplemem.embedding.embedders import Embedder

ENCODER = ColourSpaceImageEncoder()


def image_ids(mem: RippleMem, user_id: str = "alice") -> set[str]:
    """The ids the image index holds for a user, read from the index itself."""
    return engine_of(mem).media.index("image").ids(user_id)  # type: ignore[attr-defined]


def nearest_images(mem: RippleMem, file: Path, user_id: str = "alice") -> list[str]:
    """The image index's nearest ids to a file's own vector."""
    vector = ENCODER.embed_image(file)
    found = engine_of(mem).media.index("image").query(user_id, vector / np.linalg.norm(vector), 10)
    return [memory_id for memory_id, _ in found]


def cross_modal(mem: RippleMem, query: str) -> list[str]:
    """The files recall found through the image encoder's text side (read-only)."""
    return [
        h.memory.metadata["file"]
        for h in mem.recall(query, 10, record_access=False).hits
        if "cross_modal" in h.components
    ]


def add_photos(mem: RippleMem, folder: Path, colours: tuple[str, ...] = ("red", "blue")) -> dict[str, Memory]:
    """Uncaptioned photos, embedded by the colour encoder only."""
    return {
        c: mem.media.add_image(write_ppm(folder / f"{mem.user_id}_{c}.ppm", COLOURS[c]), encoder=ENCODER)
        for c in colours
    }


def test_delete_leaves_no_vector_in_the_image_index(mem: RippleMem, tmp_path: Path) -> None:
    photos = add_photos(mem, tmp_path)
    assert image_ids(mem) == {m.id for m in photos.values()}
    assert mem.delete(photos["red"].id)
    assert image_ids(mem) == {photos["blue"].id}
    assert photos["red"].id not in nearest_images(mem, tmp_path / "alice_red.ppm")
    assert cross_modal(mem, "a red picture") == []
    with engine_of(mem).store.read() as conn:
        assert conn.execute("SELECT COUNT(*) FROM modality_vectors").fetchone()[0] == 1


@pytest.mark.parametrize("how", ["memory", "matching", "user"])
def test_erase_removes_image_vectors_and_verifies_it(mem: RippleMem, tmp_path: Path, how: str) -> None:
    photos = add_photos(mem, tmp_path)
    secret = mem.media.add_image(
        write_ppm(tmp_path / "scan.ppm", COLOURS["green"]), "scan of my passport page", encoder=ENCODER
    )
    bob_photos = add_photos(mem.scope("bob"), tmp_path)
    if how == "memory":
        report = mem.erase(secret.id)
    elif how == "matching":
        report = mem.erase(matching="my passport")
    else:
        report = mem.erase(user_id="alice")
    assert report.verified, report.verification
    assert report.verification["probes"]["modality_vectors"] >= 1
    gone = {secret.id} | ({m.id for m in photos.values()} if how == "user" else set())
    assert set(report.memory_ids) == gone and report.removed["modality_vectors"] == len(gone)
    assert image_ids(mem) == {m.id for m in photos.values()} - gone
    assert secret.id not in nearest_images(mem, tmp_path / "scan.ppm")
    assert image_ids(mem, "bob") == {m.id for m in bob_photos.values()}
    with engine_of(mem).store.read() as conn:
        left = {r[0] for r in conn.execute("SELECT memory_id FROM modality_vectors WHERE user_id = 'alice'")}
    assert not left & gone


def test_erase_user_as_an_administrator_clears_the_image_index(tmp_path: Path, embedder: Embedder) -> None:
    path = tmp_path / "store"
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        add_photos(mem, tmp_path)
    report = RippleMem.erase_user(path, "alice", embedder=embedder)
    assert report.verified and report.removed["modality_vectors"] == 2
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        assert image_ids(mem) == set() and engine_of(mem).media.counts("alice") == {"image": 0}


@pytest.fixture
def clock() -> ManualClock:
    """Time starts on 2025-01-01 and moves only when a test says so."""
    return ManualClock()


@pytest.fixture
def aging(
    store_dir: Path | None, embedder: Embedder, backend: dict[str, Any], clock: ManualClock
) -> Iterator[RippleMem]:
    """Alice's store on each backend, on the manual clock."""
    handle = RippleMem(
        store_dir, user_id="alice", embedder=embedder, clock=clock, store=StoreOptions(**backend)
    )
    yield handle
    handle.close()


def test_a_cold_image_leaves_its_index_and_comes_back_when_recalled(
    aging: RippleMem, clock: ManualClock, tmp_path: Path
) -> None:
    mem = aging
    beach = mem.media.add_image(
        write_ppm(tmp_path / "beach.ppm", COLOURS["yellow"]),
        "Rex on the beach at sunset",
        encoder=ENCODER,
        importance=0.4,
    )
    clock.advance(31)
    assert [e.to_tier for e in mem.lifecycle.archive().entries] == ["cold"]
    assert image_ids(mem) == set() and cross_modal(mem, "a yellow picture") == []
    with engine_of(mem).store.read() as conn:  # the image's own vector waits in SQLite
        assert conn.execute("SELECT COUNT(*) FROM modality_vectors").fetchone()[0] == 1
    # Recalled by its caption's keywords, the memory wakes: back in the image index.
    assert mem.recall("Rex beach sunset", 3, mode="keyword").hits[0].memory.id == beach.id
    assert image_ids(mem) == {beach.id}
    assert cross_modal(mem, "a yellow picture") == [str((tmp_path / "beach.ppm").resolve())]


def test_the_image_index_persists_across_a_reopen(
    mem: RippleMem, tmp_path: Path, embedder: Embedder, backend: dict[str, Any]
) -> None:
    add_photos(mem, tmp_path)
    mem.close()
    with RippleMem(mem.path, user_id="alice", embedder=embedder, store=StoreOptions(**backend)) as again:
        assert engine_of(again).media.counts("alice") == {"image": 2}
        assert cross_modal(again, "a red picture") == []  # no encoder registered in this process yet
        again.media.use_encoder("image", ColourSpaceImageEncoder())
        assert cross_modal(again, "a red picture") == [str((tmp_path / "alice_red.ppm").resolve())]


def test_check_finds_and_repairs_the_image_index_and_keeps_it(tmp_path: Path, embedder: Embedder) -> None:
    path = tmp_path / "store"
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        photos = add_photos(mem, tmp_path, ("red", "blue", "green"))
        add_photos(mem.scope("bob"), tmp_path, ("white",))
        index = engine_of(mem).media.index("image")
        index.delete("alice", [photos["red"].id])  # as if killed between SQLite and the index
        index.add(
            "alice",
            ["no-such-memory"],
            np.ones((1, 6), dtype=np.float32) / np.sqrt(6),
            [{"type": "perceptual"}],
        )
    found = RippleMem.check(path, repair=False)
    assert (found.missing_vectors, found.stray_vectors) == (1, 1) and not found.consistent
    repaired = RippleMem.check(path)
    assert repaired.repaired and (repaired.missing_vectors, repaired.stray_vectors) == (1, 1)
    again = RippleMem.check(path, repair=False)
    # The check keeps every user's image collection (they are not the text index's departed users).
    assert again.consistent and again.memories == again.vectors == 2 * 4
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        assert image_ids(mem) == {m.id for m in photos.values()} and len(image_ids(mem, "bob")) == 1


def test_a_crash_between_sqlite_and_the_image_index_is_repaired_on_open(
    tmp_path: Path, embedder: Embedder
) -> None:
    path = tmp_path / "store"
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        photos = add_photos(mem, tmp_path)
        engine_of(mem).media.index("image").delete("alice", [photos["blue"].id])
    # A dead writer's marker (pid 2**22 + 1 is above Linux's pid_max default) asks the next open to check.
    folder = os.path.join(path, "pending-writes")
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, f"{os.uname().nodename}:{2**22 + 1}:deadbeef0000"), "w").close()
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        assert engine_of(mem).index is not None and engine_of(mem).last_check is not None
        assert engine_of(mem).last_check.missing_vectors == 1
        assert image_ids(mem) == {m.id for m in photos.values()}


def test_reembed_changes_text_vectors_only(tmp_path: Path, embedder: Embedder) -> None:
    path = tmp_path / "store"
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        photos = add_photos(mem, tmp_path)
        mem.media.use_encoder("audio", PitchSpaceAudioEncoder())
        mem.media.add_audio(write_tone(tmp_path / "hum.wav", 80), "the fridge humming at night")
        before = engine_of(mem).media.counts("alice")
    assert RippleMem.reembed(path, embedder) == 3
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        assert engine_of(mem).media.counts("alice") == before == {"audio": 1, "image": 2}
        assert image_ids(mem) == {m.id for m in photos.values()}
        mem.media.use_encoder("image", ColourSpaceImageEncoder())
        assert cross_modal(mem, "a blue picture") == [str((tmp_path / "alice_blue.ppm").resolve())]


def test_a_numpy_store_sees_images_another_handle_wrote(tmp_path: Path, embedder: Embedder) -> None:
    # Two engines on one path stand for two processes: each keeps its numpy indexes in its own RAM.
    path = tmp_path / "store"
    with (
        RippleMem(
            path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="numpy")
        ) as reader,
        RippleMem(
            path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="numpy")
        ) as writer,
    ):
        reader.media.use_encoder("image", ColourSpaceImageEncoder())
        add_photos(writer, tmp_path, ("blue",))
        assert cross_modal(reader, "a blue picture") == [str((tmp_path / "alice_blue.ppm").resolve())]
        red = add_photos(writer, tmp_path, ("red",))["red"]
        assert cross_modal(reader, "a red picture") == [str((tmp_path / "alice_red.ppm").resolve())]
        writer.delete(red.id)
        assert cross_modal(reader, "a red picture") == [] and image_ids(reader) == image_ids(writer)
