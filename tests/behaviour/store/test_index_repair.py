"""A process killed while Chroma persists its HNSW graph can leave files that make Chroma segfault,
grow a huge sparse file, or fail every later call. Opening such a store finds the damage before
Chroma loads the files and rebuilds the collection from the vectors SQLite keeps; `check` reports
it. Every use of a damaged store runs in a child process, so a segfault fails the test instead of
ending pytest."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ripplemem import HashingEmbedder, RippleMem, StoreOptions
from ripplemem.store.sqlite.rows import DB_FILENAME
from ripplemem.store.vectors.chroma import CHROMA_DIRNAME
from ripplemem.store.vectors.chroma_calls import collection_name
from ripplemem.store.vectors.chroma_files import vector_segments
from ripplemem.store.vectors.chroma_health import index_damage
from ripplemem.store.write_lock import PENDING_DIRNAME

# Chroma persists a graph every 1,000 vectors: alice's collection gets persisted graph files.
ALICE_NOTES = 1100
ELEMENT_BYTES = 4236  # one element of data_level0.bin: 33 link words, 1,024 floats, an 8-byte label

# Opens the store, writes and recalls as a resumed import would, and prints what a user would see.
USE_STORE = r"""
import json, sys
from ripplemem import HashingEmbedder, RippleMem, StoreOptions
path = sys.argv[1]
embedder = HashingEmbedder()
with RippleMem(path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")) as mem:
    old_note, new_notes = sys.argv[2], json.loads(sys.argv[3])
    mem.add_many(new_notes)
    old = mem.recall(old_note, k=1, mode="dense").hits[0].memory.content
    new = mem.recall(new_notes[7], k=1, mode="dense").hits[0].memory.content
    report = mem._engine.last_check
    total = mem.stats()["total"]
    bob = mem.scope("bob").recall("bees on the roof", k=1, mode="dense").hits[0].memory.content
after = RippleMem.check(path, repair=False)
print(json.dumps({"old": old, "new": new, "bob": bob, "total": total,
                  "damage": None if report is None else report.index_damage,
                  "after": after.lines(), "consistent": after.consistent}))
"""


def _note(i: int) -> str:
    # Alike enough to sit close in the graph (HNSW can miss a lone vector), never near-duplicates
    # (which add_many would merge).
    return f"Note {i}: parcel {i * 37 + 11} reached depot {i * 53 + 7} on route {i * 71 + 3}"


RESUMED = [_note(ALICE_NOTES + i) for i in range(30)]  # what the resumed import adds


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed store: alice with a persisted Chroma graph, bob with a few memories."""
    path = tmp_path_factory.mktemp("healthy") / "store"
    with RippleMem(
        path, user_id="alice", embedder=HashingEmbedder(), store=StoreOptions(vector_index="chroma")
    ) as mem:
        mem.add_many([_note(i) for i in range(ALICE_NOTES)])
        mem.scope("bob").add_many(["Bob keeps bees on the roof", "Bob's boat is moored at Howth"])
    return path


def _copy(healthy: Path, tmp_path: Path) -> Path:
    path = tmp_path / "store"
    shutil.copytree(healthy, path)
    return path


def _alice_total(path: Path) -> int:
    with sqlite3.connect(path / DB_FILENAME) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM memories WHERE user_id = 'alice'").fetchone()[0])


def _graph(path: Path, user_id: str = "alice") -> Path:
    """The folder of a user's persisted HNSW graph."""
    directory = path / CHROMA_DIRNAME
    wanted = collection_name(user_id)
    (segment,) = [s.segment for s in vector_segments(str(directory)) if s.collection == wanted]
    return directory / segment


def _leave_crash_marker(path: Path) -> None:
    """The pending-write marker a writer killed mid-write leaves (for a process that is gone)."""
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    (path / PENDING_DIRNAME).mkdir(exist_ok=True)
    (path / PENDING_DIRNAME / f"{socket.gethostname()}:{gone.stdout.strip()}:0123456789ab").write_text("0")


def _sparse_link_lists(graph: Path) -> None:
    os.truncate(graph / "link_lists.bin", 100 * 2**30)  # the 858 GB file of the issue, sparse


def _phantom_elements(graph: Path) -> None:
    with open(graph / "header.bin", "r+b") as header:
        header.seek(4 + 8 + 8)  # version, offsetLevel0, max_elements, then cur_element_count
        header.write(struct.pack("=Q", 10**9))


def _truncated_vectors(graph: Path) -> None:
    os.truncate(graph / "data_level0.bin", (graph / "data_level0.bin").stat().st_size // 2)


def _truncated_link_lists(graph: Path) -> None:
    os.truncate(graph / "link_lists.bin", (graph / "link_lists.bin").stat().st_size // 2 + 2)


def _links_out_of_range(graph: Path) -> None:
    with open(graph / "data_level0.bin", "r+b") as data:
        for element in range(300):
            data.seek(element * ELEMENT_BYTES + 4)
            data.write(struct.pack("=32I", *range(4_000_000_000, 4_000_000_032)))


def _deleted_graph_file(graph: Path) -> None:
    (graph / "length.bin").unlink()


def _torn_id_map(graph: Path) -> None:
    with open(graph / "index_metadata.pickle", "r+b") as id_map:
        id_map.truncate(id_map.seek(0, os.SEEK_END) // 2)


# (how the graph is broken, whether the killed writer's marker is left beside it)
DAMAGE: dict[str, tuple[Callable[[Path], None], bool]] = {
    "link_lists.bin grown to a 100 GB sparse file": (_sparse_link_lists, False),
    "a header counting a billion elements": (_phantom_elements, False),
    "data_level0.bin cut in half": (_truncated_vectors, False),
    "link_lists.bin cut mid-element": (_truncated_link_lists, True),
    "level-0 links to elements that do not exist": (_links_out_of_range, True),
    "a graph file deleted": (_deleted_graph_file, True),
    "a torn id map": (_torn_id_map, True),
}


def _use(path: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", USE_STORE, str(path), _note(417), json.dumps(RESUMED)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_store_with_a_broken_graph_reopens_rebuilt_from_sqlite(
    healthy: Path, tmp_path: Path, kind: str
) -> None:
    path = _copy(healthy, tmp_path)
    total = _alice_total(path)
    damage, crashed = DAMAGE[kind]
    damage(_graph(path))
    if crashed:
        _leave_crash_marker(path)

    seen = _use(path)
    assert seen["old"] == _note(417)
    assert seen["new"] == RESUMED[7]
    assert seen["bob"] == "Bob keeps bees on the roof"
    assert seen["total"] == total + len(RESUMED)
    assert seen["damage"], "the open did not say the index was damaged"
    assert seen["consistent"], seen["after"]
    # The rebuilt graph is an ordinary one: no giant (sparse) file is left to fill a disk on copy.
    assert max(f.stat().st_size for f in (path / CHROMA_DIRNAME).rglob("*.bin")) < 2**30
    assert index_damage(path) == []


def test_check_reports_a_broken_graph_then_rebuilds_it(healthy: Path, tmp_path: Path) -> None:
    path = _copy(healthy, tmp_path)
    _phantom_elements(_graph(path))
    looked = subprocess.run(
        [sys.executable, "-m", "ripplemem", "check", "--path", str(path), "--no-repair", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert looked.returncode == 1, looked.stderr[-2000:]
    found = json.loads(looked.stdout)
    assert not found["consistent"]
    assert "header.bin is corrupt" in found["index_damage"][0]
    assert found["missing_vectors"] == _alice_total(path)  # unusable until rebuilt
    assert index_damage(path) != []  # looking changed nothing

    fixed = subprocess.run(
        [sys.executable, "-m", "ripplemem", "check", "--path", str(path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert fixed.returncode == 0, fixed.stderr[-2000:]
    assert "vector index damage (rebuilt from SQLite)" in fixed.stdout
    assert f"missing vectors: {_alice_total(path)} repaired" in fixed.stdout
    assert index_damage(path) == []
    assert _use(path)["old"] == _note(417)


def test_index_damage_reads_a_store_without_changing_it(healthy: Path, tmp_path: Path) -> None:
    assert index_damage(healthy, probe=False) == []
    path = _copy(healthy, tmp_path)
    graph = _graph(path)
    _links_out_of_range(graph)
    before = {f.name: (f.stat().st_size, f.stat().st_mtime_ns) for f in graph.iterdir()}
    (found,) = index_damage(path)
    assert found.collection == collection_name("alice")
    assert "links to elements that do not exist" in found.problem
    assert {f.name: (f.stat().st_size, f.stat().st_mtime_ns) for f in graph.iterdir()} == before


# Keeps the store open across another process's write, then recalls and writes again.
STAY_OPEN = r"""
import json, sys
from ripplemem import HashingEmbedder, RippleMem, StoreOptions
with RippleMem(sys.argv[1], user_id="alice", embedder=HashingEmbedder(),
               store=StoreOptions(vector_index="chroma")) as mem:
    first = mem.recall(sys.argv[2], k=1, mode="dense").hits[0].memory.content
    print("ready", flush=True)
    sys.stdin.readline()  # meanwhile another process writes and the graph files break
    again = mem.recall(sys.argv[2], k=1, mode="dense").hits[0].memory.content
    mem.add_many(json.loads(sys.argv[3]))
    new = mem.recall(json.loads(sys.argv[3])[7], k=1, mode="dense").hits[0].memory.content
    print(json.dumps({"first": first, "again": again, "new": new,
                      "damage": mem._engine.last_check.index_damage}))
"""


def test_an_open_store_survives_another_process_breaking_the_graph(healthy: Path, tmp_path: Path) -> None:
    path = _copy(healthy, tmp_path)
    reader = subprocess.Popen(
        [sys.executable, "-c", STAY_OPEN, str(path), _note(417), json.dumps(RESUMED)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert reader.stdout is not None and reader.stdout.readline().strip() == "ready"
    with RippleMem(
        path, user_id="bob", embedder=HashingEmbedder(), store=StoreOptions(vector_index="chroma")
    ) as writer:
        writer.add("Bob's kayak is stored in the boathouse")
    _phantom_elements(_graph(path))  # as a writer killed inside Chroma's persist would leave it
    out, err = reader.communicate("go\n", timeout=600)
    assert reader.returncode == 0, f"exit {reader.returncode}: {err[-2000:]}"
    seen = json.loads(out.splitlines()[-1])
    assert seen["first"] == seen["again"] == _note(417)
    assert seen["new"] == RESUMED[7]
    assert "header.bin is corrupt" in seen["damage"][0]
