"""A process killed in the middle of a write leaves a store that the next open makes consistent:
every active memory with a stored vector has one in Chroma and no vector lacks its row, no edge
dangles, the keyword rows match, and every write the killed process saw finish is still there."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from internals import engine_of

from ripplemem import HashingEmbedder, RippleMem, StoreOptions
from ripplemem.interfaces.cli.main import main
from ripplemem.store.recovery.reconcile import check_path
from ripplemem.store.sqlite.rows import DB_FILENAME
from ripplemem.store.vectors.chroma import ChromaIndex
from ripplemem.store.write_lock import PENDING_DIRNAME

# A "zygote" process imports RippleMem and Chroma once, then forks one writer per kill, so a kill
# costs a fork instead of two seconds of imports. Each writer opens the store, keeps adding batches,
# deleting and erasing some of its own memories until it is killed; after each add_many or delete returns it
# appends the ids to its log, so the log lists acknowledged writes only (a delete or erase is announced
# before it starts: a writer killed inside it may or may not have deleted the memory). The hashing
# embedder keeps writes fast (the model is not the point here).
ZYGOTE = r"""
import os, random, sys
import chromadb  # noqa: F401 - imported before forking, opened only in the writers
from ripplemem import HashingEmbedder, RippleMem

def write_until_killed(path, log_path, seed):
    rng = random.Random(seed)
    animals = ["otter", "heron", "badger", "lynx", "ibis", "marmot", "gecko", "wren"]
    places = ["harbour", "orchard", "quarry", "meadow", "glacier", "canyon", "library", "market"]
    mem = RippleMem(path, user_id=rng.choice(["alice", "bob"]), embedder=HashingEmbedder(),
                    vector_index="chroma")
    log = open(log_path, "a", buffering=1)
    mine, batch = [], 0
    while True:
        batch += 1
        items = [f"Run {seed} batch {batch} item {i}: the {rng.choice(animals)} {rng.randint(1, 10**6)} "
                 f"crossed the {rng.choice(places)} at {rng.randint(0, 23)}:{rng.randint(10, 59)}"
                 for i in range(rng.randint(2, 12))]
        stored = mem.add_many(items)
        log.write("".join(f"add {mem.user_id} {m.id}\n" for m in stored))
        mine.extend(m.id for m in stored)
        if batch == 1:
            print("ready", os.getpid(), flush=True)
        if batch % 3 == 0 and len(mine) > 4:
            for memory_id in rng.sample(mine, 2):
                log.write(f"deleting {mem.user_id} {memory_id}\n")
                mem.delete(memory_id)
                mine.remove(memory_id)
                log.write(f"del {mem.user_id} {memory_id}\n")
        if batch % 4 == 0 and mine:
            memory_id = rng.choice(mine)
            log.write(f"deleting {mem.user_id} {memory_id}\n")
            mem.erase(memory_id)
            mine.remove(memory_id)
            log.write(f"del {mem.user_id} {memory_id}\n")

for line in sys.stdin:
    path, log_path, seed = line.split()
    pid = os.fork()
    if pid == 0:
        try:
            write_until_killed(path, log_path, int(seed))
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    print("exit", os.waitstatus_to_exitcode(status), flush=True)
"""


def _acknowledged(log_path: Path) -> tuple[dict[str, str], set[str], set[str]]:
    """(id -> user of acknowledged adds, ids of deletes begun, ids of acknowledged deletes);
    a torn last line is skipped."""
    added: dict[str, str] = {}
    begun: set[str] = set()
    deleted: set[str] = set()
    for line in log_path.read_text().splitlines():
        parts = line.split()
        if len(parts) != 3 or len(parts[2]) != 32:
            continue
        if parts[0] == "add":
            added[parts[2]] = parts[1]
        elif parts[0] == "deleting":
            begun.add(parts[2])
        elif parts[0] == "del":
            deleted.add(parts[2])
    return added, begun, deleted


def _rows(path: Path) -> dict[str, str]:
    """Every memory id in the SQLite file, with its user."""
    with sqlite3.connect(path / DB_FILENAME) as conn:
        return dict(conn.execute("SELECT id, user_id FROM memories").fetchall())


class Zygote:
    """The forking parent of the writers (see ZYGOTE)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def kill_during_writes(self, path: Path, log_path: Path, seed: int, delay: float) -> None:
        """Start a writer, let it write for `delay` seconds, SIGKILL it and wait until it is gone."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{path} {log_path} {seed}\n")
        self.process.stdin.flush()
        ready = self.process.stdout.readline().split()
        assert ready[:1] == ["ready"], f"the writer did not start: {ready}"
        time.sleep(delay)
        os.kill(int(ready[1]), signal.SIGKILL)
        assert self.process.stdout.readline().split() == ["exit", str(-signal.SIGKILL)]

    def close(self) -> None:
        """Let the zygote end."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def test_random_sigkills_during_add_many_delete_and_erase_leave_a_consistent_store(tmp_path: Path) -> None:
    path = tmp_path / "store"
    log_path = tmp_path / "acknowledged.log"
    rng = random.Random(20260611)
    kills, damaged = 20, 0
    embedder = HashingEmbedder()
    zygote = Zygote()
    for kill in range(kills):
        zygote.kill_during_writes(path, log_path, seed=kill, delay=rng.uniform(0.0, 0.5))
        # An ordinary open finds the killed writer's marker and repairs what the kill left behind.
        with RippleMem(
            path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
        ) as mem:
            stats = mem.stats()
            assert stats["vectors"] == stats["total"]
            damaged += engine_of(mem).last_check is not None
        after = check_path(path, repair=False)
        assert after.consistent, (kill, after.lines())
        assert after.memories == after.vectors
        added, begun, deleted = _acknowledged(log_path)
        rows = _rows(path)
        assert set(added) - begun <= set(rows), f"kill {kill}: an acknowledged add was lost"
        assert not deleted & set(rows), f"kill {kill}: an acknowledged delete came back"
        assert all(rows[i] == user for i, user in added.items() if i in rows)
    zygote.close()
    # Many kills land inside a write (the open had to check), not between writes. Not most: an
    # erase spends most of its time verifying, outside the write lock, where a kill leaves nothing.
    assert damaged >= kills // 4
    with sqlite3.connect(path / DB_FILENAME) as conn:
        user, content = conn.execute(
            "SELECT user_id, content FROM memories ORDER BY rowid DESC LIMIT 1"
        ).fetchone()
    with RippleMem(path, user_id=user, embedder=embedder, store=StoreOptions(vector_index="chroma")) as mem:
        top = mem.recall(content, k=1, mode="dense", record_access=False).hits[0].memory
        assert top.content == content
        assert mem.stats()["total"] == sum(1 for i, u in _rows(path).items() if u == user)


KILL_AFTER_SQLITE = r"""
import os, signal, sys
from ripplemem import HashingEmbedder, RippleMem, StoreOptions
from ripplemem.engine.items import build_memory
mem = RippleMem(sys.argv[1], user_id="alice", embedder=HashingEmbedder(),
                store=StoreOptions(vector_index="chroma"))
engine = mem._engine
memory = build_memory("The lighthouse on Skellig has a red lamp", 0, "episodic", engine.clock(),
                      mem.scope_info, mem.settings)
vectors = engine.embedder.embed_documents([memory.content])
with engine.unit_of_work("alice"):
    engine.store.insert([memory], vectors)  # committed to SQLite ...
    print(memory.id, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # ... and killed before the vector index saw it
"""


def test_a_write_killed_between_sqlite_and_chroma_is_repaired_on_open(tmp_path: Path) -> None:
    path = tmp_path / "store"
    embedder = HashingEmbedder()
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        mem.add("The ferry to Inis Mor leaves at nine")
    done = subprocess.run(
        [sys.executable, "-c", KILL_AFTER_SQLITE, str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    lost_vector = done.stdout.strip()
    assert os.listdir(path / PENDING_DIRNAME), "the killed writer left no marker"
    damage = check_path(path, repair=False)
    assert (damage.missing_vectors, damage.interrupted_writes) == (1, 1)

    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        hit = mem.recall("red lamp lighthouse Skellig", k=1, mode="dense").hits[0]
        assert hit.memory.id == lost_vector
        report = engine_of(mem).last_check
        assert report is not None and report.missing_vectors == 1
    assert not os.listdir(path / PENDING_DIRNAME)
    assert check_path(path, repair=False).consistent


def test_a_clean_open_skips_the_check(tmp_path: Path) -> None:
    path = tmp_path / "store"
    embedder = HashingEmbedder()
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        mem.add_many(["Olive trees need little water", "The kiln reached 1200 degrees"])
        mem.delete(mem.list()[0].id)
    assert not os.listdir(path / PENDING_DIRNAME)
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        assert mem.stats()["vectors"] == 1
        assert engine_of(mem).last_check is None


def _damage(path: Path) -> dict[str, str]:
    """Break a closed two-user store in every way a crash (or a bug) could; returns some ids."""
    with sqlite3.connect(path / DB_FILENAME) as conn:
        alice = [r[0] for r in conn.execute("SELECT id FROM memories WHERE user_id = 'alice' ORDER BY rowid")]
        conn.execute(
            "INSERT INTO edges (src, dst, type, user_id, created_at) "
            "VALUES (?, 'gone-memory', 'NEXT', 'alice', 0)",
            (alice[0],),
        )
        conn.execute(
            "INSERT INTO entities (id, user_id, name, canonical, created_at) "
            "VALUES ('ent_orphan', 'alice', 'Nobody', 'nobody', 0)"
        )
        rowid = conn.execute("SELECT rowid FROM memories WHERE id = ?", (alice[1],)).fetchone()[0]
        conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (rowid,))
        conn.execute("INSERT INTO memories_fts (rowid, scope, tokens) VALUES (999999, 'x', 'stray words')")
    index = ChromaIndex(str(path))
    try:
        index.delete("alice", [alice[2]])
        meta = {"agent_id": "", "session_id": "", "type": "episodic", "when": 0.0}
        index.add("alice", ["not-a-row"], np.ones((1, 1024), dtype=np.float32), [meta])
        index.add("carol-was-erased", ["old-vector"], np.ones((1, 1024), dtype=np.float32), [meta])
    finally:
        index.close()
    return {"unindexed": alice[2], "unkeyworded": alice[1]}


def test_check_reports_then_repairs_every_kind_of_damage(tmp_path: Path) -> None:
    path = tmp_path / "store"
    embedder = HashingEmbedder()
    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        mem.add_many(
            [
                "Maya adopted a grey cat named Pixel",
                "The boiler was serviced in March",
                "Grandma's recipe uses three eggs",
                "The garage code is 4417",
            ]
        )
        mem.scope("bob").add("Bob keeps bees on the roof")
    ids = _damage(path)

    found = RippleMem.check(path, repair=False)
    assert (
        found.missing_vectors,
        found.stray_vectors,
        found.dangling_edges,
        found.orphan_entities,
        found.missing_keywords,
        found.stray_keywords,
    ) == (1, 2, 1, 1, 1, 1)
    assert not found.consistent and "INCONSISTENT" in found.lines()[0]
    assert RippleMem.check(path, repair=False).problems == found.problems  # looking changed nothing

    fixed = RippleMem.check(path)
    assert fixed.repaired and fixed.problems == found.problems
    again = RippleMem.check(path, repair=False)
    assert again.consistent and again.memories == again.vectors == 5

    with RippleMem(
        path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    ) as mem:
        dense = mem.recall("Grandma's recipe uses three eggs", k=1, mode="dense").hits[0].memory
        assert dense.id == ids["unindexed"]
        keyword = mem.recall("boiler serviced March", k=1, mode="keyword").hits[0].memory
        assert keyword.id == ids["unkeyworded"]
        assert mem.stats()["total"] == 4
        assert [h.memory.content for h in mem.scope("bob").recall("bees", k=1).hits] == [
            "Bob keeps bees on the roof"
        ]


def test_check_command_reports_and_exits_nonzero_on_damage_without_repair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "store"
    with RippleMem(
        path, user_id="alice", embedder=HashingEmbedder(), store=StoreOptions(vector_index="chroma")
    ) as mem:
        mem.add_many(
            [
                "The spare key is under the blue pot",
                "Swim practice moved to Thursdays",
                "The router password was changed",
            ]
        )
    _damage(path)
    with pytest.raises(SystemExit) as exited:
        main(["check", "--path", str(path), "--no-repair"])
    looked = capsys.readouterr().out
    assert exited.value.code == 1
    assert "INCONSISTENT" in looked and "missing vectors: 1 found" in looked
    assert main(["check", "--path", str(path)]) == 0
    assert "missing vectors: 1 repaired" in capsys.readouterr().out
    assert main(["check", "--path", str(path), "--no-repair", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["consistent"] is True
    assert main(["check", "--path", str(tmp_path / "none")]) == 2
    assert "no RippleMem store" in capsys.readouterr().err
