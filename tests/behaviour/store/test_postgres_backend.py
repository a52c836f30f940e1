"""The whole store on PostgreSQL: processes on different "hosts" (their own working folder and
HOME, no file shared) write and read one store; the password never shows; a server restart is a
clear StoreError and the next call reconnects; a killed writer leaves nothing half-written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ripplemem import HashingEmbedder, RippleMem, StoreOptions
from ripplemem.errors import InvalidInputError, StoreError

# One child process: open the store, wait for the go file, add `count` notes one by one, print ids.
WRITER = r"""
import json, os, sys, time
from ripplemem import HashingEmbedder, RippleMem, StoreOptions
uri, schema, writer, count, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
mem = RippleMem(user_id="alice", embedder=HashingEmbedder(),
                store=StoreOptions(backend="postgres", uri=uri, schema=schema))
while not os.path.exists(go):
    time.sleep(0.01)
ids = [mem.add(f"Writer {writer} packed crate {writer * 1000 + i} of quinces").id for i in range(count)]
print(json.dumps(ids))
"""


def options(uri: str, schema: str) -> StoreOptions:
    """The StoreOptions of a PostgreSQL store in one schema."""
    return StoreOptions(backend="postgres", uri=uri, schema=schema)


def host_env(root: Path, name: str) -> tuple[dict[str, str], Path]:
    """The environment and working folder of a process on a host of its own: no file in common."""
    home = root / name / "home"
    work = root / name / "work"
    home.mkdir(parents=True)
    work.mkdir(parents=True)
    env = {**os.environ, "HOME": str(home), "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    env.pop("RIPPLEMEM_CACHE_DIR", None)
    return env, work


def spawn(script: str, args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    """A child Python process running the script with these arguments."""
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_four_hosts_adding_at_once_store_every_note_exactly_once(
    pg_uri: str, pg_schema: str, tmp_path: Path
) -> None:
    with RippleMem(user_id="alice", embedder=HashingEmbedder(), store=options(pg_uri, pg_schema)) as mem:
        mem.add("The store exists before the writers start")
    go = tmp_path / "go"
    children = []
    for writer in range(4):
        env, cwd = host_env(tmp_path, f"host{writer}")
        children.append(spawn(WRITER, [pg_uri, pg_schema, str(writer), "50", str(go)], env, cwd))
    go.touch()
    returned: list[str] = []
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        returned += json.loads(out.strip().splitlines()[-1])
    with RippleMem(user_id="alice", embedder=HashingEmbedder(), store=options(pg_uri, pg_schema)) as mem:
        stored = mem.list(limit=1000)
        contents = sorted(m.content for m in stored if m.content.startswith("Writer"))
        assert contents == sorted(
            f"Writer {w} packed crate {w * 1000 + i} of quinces" for w in range(4) for i in range(50)
        )
        assert set(returned) == {m.id for m in stored if m.content.startswith("Writer")}
        assert len(returned) == 200
        assert mem.stats()["vectors"] == 201
        # The writers' hosts hold nothing of the store: no file in their working folders.
        assert [p for p in tmp_path.glob("host*/work/**/*") if p.is_file()] == []


def test_a_write_on_one_host_is_in_the_next_recall_on_another(pg_uri: str, pg_schema: str) -> None:
    first = RippleMem(user_id="alice", embedder=HashingEmbedder(), store=options(pg_uri, pg_schema))
    second = RippleMem(user_id="alice", embedder=HashingEmbedder(), store=options(pg_uri, pg_schema))
    try:
        first.add("Alice keeps her passport in the blue drawer")
        assert "blue drawer" in second.recall("where is the passport?", k=1).hits[0].memory.content
        # A recall on the second host warmed its keyword index and graph; a later write on the
        # first host must reach them (the content version in meta, not a file lock, tells it).
        first.add("Alice moved her passport to the hotel safe in Lisbon")
        hits = second.recall("passport hotel safe Lisbon", k=2, mode="keyword").hits
        assert "hotel safe" in hits[0].memory.content
    finally:
        first.close()
        second.close()


def test_user_ids_that_look_like_sql_are_only_data(pg_uri: str, pg_schema: str) -> None:
    tricky = ["%", "x' OR '1'='1", "bob'; DROP TABLE memories; --", "_"]
    handles = [
        RippleMem(user_id=user, embedder=HashingEmbedder(), store=options(pg_uri, pg_schema))
        for user in tricky
    ]
    try:
        for user, handle in zip(tricky, handles, strict=True):
            handle.add(f"The secret of {user} is a green umbrella")
        for user, handle in zip(tricky, handles, strict=True):
            seen = [m.content for m in handle.list(limit=100)]
            assert seen == [f"The secret of {user} is a green umbrella"]
            hits = handle.recall("secret green umbrella", k=10).hits
            assert [h.memory.content for h in hits] == seen
    finally:
        for handle in handles:
            handle.close()


def test_the_password_never_shows_in_a_repr_or_an_error(pg_uri: str) -> None:
    secret = "Tr0ub4dor-and-3"
    with_password = "postgresql://ripple:" + secret + "@127.0.0.1:1/memories"
    assert secret not in repr(StoreOptions(backend="postgres", uri=with_password))
    with pytest.raises(StoreError) as failure:
        RippleMem(
            user_id="alice",
            embedder=HashingEmbedder(),
            store=StoreOptions(backend="postgres", uri=with_password),
        )
    assert secret not in str(failure.value)
    assert "127.0.0.1:1" in str(failure.value)


def test_a_postgres_store_refuses_a_path_and_a_bad_schema(pg_uri: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="drop path"):
        RippleMem(tmp_path, user_id="alice", store=StoreOptions(backend="postgres", uri=pg_uri))
    with pytest.raises(InvalidInputError, match="schema must be"):
        RippleMem(user_id="alice", store=StoreOptions(backend="postgres", uri=pg_uri, schema="Robert'); --"))
    with pytest.raises(InvalidInputError, match="postgresql://"):
        RippleMem(user_id="alice", store=StoreOptions(backend="postgres", uri="mysql://x"))


def _terminate_other_connections(pg_uri: str) -> int:
    import psycopg

    with psycopg.connect(pg_uri, autocommit=True) as admin:
        return len(
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE pid <> pg_backend_pid() AND datname = current_database() "
                "AND backend_type = 'client backend'"
            ).fetchall()
        )


def test_a_dropped_connection_is_a_store_error_and_the_next_call_reconnects(
    pg_uri: str, pg_schema: str
) -> None:
    with RippleMem(user_id="alice", embedder=HashingEmbedder(), store=options(pg_uri, pg_schema)) as mem:
        mem.add("Before the server restarted")
        assert _terminate_other_connections(pg_uri) >= 1
        outcomes: list[Any] = []
        for attempt in range(3):
            try:
                outcomes.append(mem.add(f"After the restart, attempt {attempt}").content)
            except StoreError as exc:
                assert "PostgreSQL store" in str(exc)
                outcomes.append("StoreError")
        # The call in flight may fail (clearly); the next one works on a new connection.
        assert outcomes[-1] == "After the restart, attempt 2"
        assert outcomes.count("StoreError") <= 1
        contents = {m.content for m in mem.list(limit=10)}
        assert "Before the server restarted" in contents
        assert {o for o in outcomes if o != "StoreError"} <= contents


KILLED = r"""
import sys
from ripplemem import HashingEmbedder, RippleMem, StoreOptions
uri, schema = sys.argv[1], sys.argv[2]
mem = RippleMem(user_id="alice", embedder=HashingEmbedder(),
                store=StoreOptions(backend="postgres", uri=uri, schema=schema))
print("ready", flush=True)
batch = 0
while True:
    mem.add_many([f"Batch {batch} line {i}: the ledger of crate {batch * 100 + i}" for i in range(40)])
    batch += 1
"""


def test_a_writer_killed_mid_add_many_leaves_whole_batches_only(
    pg_uri: str, pg_schema: str, tmp_path: Path
) -> None:
    env, cwd = host_env(tmp_path, "victim")
    child = spawn(KILLED, [pg_uri, pg_schema], env, cwd)
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    time.sleep(2.5)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    with RippleMem(user_id="alice", embedder=HashingEmbedder(), store=options(pg_uri, pg_schema)) as mem:
        stored = mem.list(limit=100_000)
        batches: dict[str, int] = {}
        for memory in stored:
            batch = memory.content.split(" line ")[0]
            batches[batch] = batches.get(batch, 0) + 1
        assert batches, "the writer stored nothing before it was killed"
        assert set(batches.values()) == {40}, batches  # no batch half-written
        mem.add("A new writer after the kill")
        assert (
            mem.recall("the new writer after the kill", k=1).hits[0].memory.content
            == "A new writer after the kill"
        )
        stats = mem.stats()
        assert stats["total"] == len(stored) + 1
        assert stats["vectors"] == stats["total"]  # rows a killed writer had no time to index, repaired


def _files_holding(folder: Path, needle: bytes) -> list[str]:
    """The server's files (relative names) whose bytes contain the needle."""
    return sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and needle in path.read_bytes()
    )


def test_erase_leaves_no_table_file_holding_the_text(
    pg_uri: str, pg_schema: str, pg_data_dir: str | None
) -> None:
    if pg_data_dir is None:
        pytest.skip("the server's files are not on this machine ($RIPPLEMEM_TEST_PG)")
    import psycopg

    secret = "Quimby-7731 is the code of my garage door"
    with RippleMem(user_id="alice", embedder=HashingEmbedder(), store=options(pg_uri, pg_schema)) as mem:
        mem.add_many([f"Filler note {i} about the allotment" for i in range(50)])
        kept = mem.add("The spare key hangs behind the shed")
        mem.add(secret)
        with psycopg.connect(pg_uri, autocommit=True) as admin:
            admin.execute("CHECKPOINT")
        tables = Path(pg_data_dir) / "base"
        assert _files_holding(tables, b"Quimby-7731"), "the text should be in a table file before the erase"
        report = mem.erase(matching="Quimby-7731 garage door")
        assert report.verified and len(report.memory_ids) == 1
        assert "memories" in report.compaction["tables_rewritten"]
        assert any("replicas" in item for item in report.verification["not_verifiable"])
        with psycopg.connect(pg_uri, autocommit=True) as admin:
            admin.execute("CHECKPOINT")
        assert _files_holding(tables, b"Quimby-7731") == []  # no table or index file: WAL aside
        assert mem.get(kept.id).content == "The spare key hangs behind the shed"
        assert "spare key" in mem.recall("where is the spare key?", k=1).hits[0].memory.content


# A child that runs one long store-wide job (erase of bob, or maintain far in the future) in a loop,
# so that a SIGKILL lands in the middle of one.
LONG_JOB = r"""
import sys
from datetime import datetime, timedelta, timezone
from ripplemem import HashingEmbedder, RippleMem, StoreOptions
uri, schema, job = sys.argv[1], sys.argv[2], sys.argv[3]
later = datetime.now(timezone.utc) + timedelta(days=400)
mem = RippleMem(user_id="bob", embedder=HashingEmbedder(), clock=lambda: later,
                store=StoreOptions(backend="postgres", uri=uri, schema=schema))
print("ready", flush=True)
while True:
    mem.erase(user_id="bob") if job == "erase" else mem.maintain()
    mem.add_many([f"Bob's refilled note {i} on the pump house" for i in range(200)])
"""


def _kill_mid(script_args: list[str], tmp_path: Path, seconds: float) -> None:
    env, cwd = host_env(tmp_path, "victim")
    child = spawn(LONG_JOB, script_args, env, cwd)
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    time.sleep(seconds)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)


@pytest.mark.parametrize("job", ["erase", "maintain"])
def test_a_process_killed_mid_erase_or_maintain_leaves_a_consistent_store(
    pg_uri: str, pg_schema: str, tmp_path: Path, job: str
) -> None:
    store = options(pg_uri, pg_schema)
    with RippleMem(user_id="alice", embedder=HashingEmbedder(), store=store) as alice:
        alice.add_many([f"Alice's field note {i}: the heron came back to pond {i}" for i in range(60)])
        bob = alice.scope("bob")
        bob.add_many([f"Bob's note {i} on the pump house, valve {i}" for i in range(600)])
    _kill_mid([pg_uri, pg_schema, job], tmp_path, 3.0)
    with RippleMem(user_id="alice", embedder=HashingEmbedder(), store=store) as alice:
        # The other user lost nothing, and every user's rows and vectors agree after the open's check.
        assert alice.stats()["total"] == 60
        assert "pond 7" in alice.recall("the heron at pond 7", k=1).hits[0].memory.content
        bob = alice.scope("bob")
        stats = bob.stats()
        assert stats["by_tier"] != {"hot": 600}, "the job never got going before the kill"
        hot = stats["by_tier"].get("hot", 0) + stats["by_tier"].get("warm", 0)
        assert stats["vectors"] == hot
        # The store takes a new write and the interrupted job can run again to the end.
        added = bob.add("Bob replaced the pump house valve in spring")
        assert bob.recall("pump house valve replaced in spring", k=1).hits[0].memory.id == added.id
        if job == "erase":
            assert bob.erase(user_id="bob").verified
            assert bob.stats()["total"] == 0
        else:
            bob.maintain()
            assert bob.stats()["vectors"] == sum(
                n for tier, n in bob.stats()["by_tier"].items() if tier != "cold"
            )
