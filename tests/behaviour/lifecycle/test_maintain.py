"""mem.maintain() and `ripplemem maintain`: consolidate + forget + archive as one scheduled job."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from manual_clock import ManualClock

from ripplemem import RippleMem
from ripplemem.core.types import Memory
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError
from ripplemem.interfaces.cli.main import main


def user_view(mem: RippleMem) -> tuple[list[Memory], dict, list[str]]:
    """What a user sees: every memory, the stats and the session's working items."""
    stats = mem.stats()
    stats.pop("disk_bytes")
    return mem.list(limit=1000), stats, [item.text for item in mem.working("s1").items()]


@pytest.fixture
def clock() -> ManualClock:
    """Time starts on 2025-01-01 and moves only when a test says so."""
    return ManualClock()


@pytest.fixture
def busy(tmp_path: Path, embedder: Embedder, clock: ManualClock) -> RippleMem:
    """Alice's store 100 days on: old memories, a fact mentioned three times in working memory
    and an important episodic memory that is promoted (importance >= 0.8)."""
    mem = RippleMem(tmp_path / "store", user_id="alice", embedder=embedder, clock=clock)
    trivial = mem.add("the vending machine ate my coin", importance=0.05)
    mem.add("the quarterly report is due on the fifth", importance=0.5)
    clock.advance(100)
    for _ in range(3):
        mem.observe("user", "I go swimming at the Aquatic Centre on Tuesdays", session_id="s1")
        clock.advance(2 / 1440)
    mem.add("my passport number ends in 4471", importance=0.85)
    mem.trivial = trivial  # type: ignore[attr-defined]
    return mem


def test_maintain_runs_consolidate_forget_and_archive_with_one_report(busy: RippleMem) -> None:
    report = busy.maintain()
    try:
        assert report.consolidation.counts() == {"stored": 1, "promoted": 1}
        assert busy.trivial.id in report.forget.ids("delete")  # type: ignore[attr-defined]
        assert busy.get(busy.trivial.id) is None  # type: ignore[attr-defined]
        swim = [m for m in busy.list() if "swimming" in m.content]
        assert len(swim) == 1 and swim[0].type == "semantic"
        assert report.tiers_before == {"hot": 3}
        assert report.tiers_after == busy.stats()["by_tier"]
        assert set(report.seconds) == {"consolidate", "forget", "archive"}
        text = report.summary()
        for line in (
            "consolidate did: stored 1, promoted 1",
            "forget (score) did:",
            "archive (tiers) did:",
            "tiers before: hot 3, warm 0, cold 0",
        ):
            assert line in text
        assert json.loads(json.dumps(report.as_dict()))["forget"]["counts"]["delete"] >= 1
    finally:
        busy.close()


def test_maintain_dry_run_changes_nothing(busy: RippleMem) -> None:
    try:
        before = user_view(busy)
        report = busy.maintain(dry_run=True)
        assert report.dry_run and report.consolidation.dry_run and report.forget.dry_run
        assert report.consolidation.counts() == {"stored": 1, "promoted": 1}
        assert busy.trivial.id in report.forget.ids("delete")  # type: ignore[attr-defined]
        assert user_view(busy) == before
        assert "(dry run)" in report.summary() and "forget (score) would:" in report.summary()
    finally:
        busy.close()


def test_a_bad_strategy_is_refused_before_anything_changes(busy: RippleMem) -> None:
    try:
        before = user_view(busy)
        with pytest.raises(InvalidInputError, match="strategy must be one of"):
            busy.maintain(strategy="lru")
        assert user_view(busy) == before
    finally:
        busy.close()


def test_async_twin(busy: RippleMem) -> None:
    try:
        report = asyncio.run(busy.amaintain(strategy="importance"))
        assert report.forget.strategy == "importance"
        assert report.forget.ids("delete") == [busy.trivial.id]  # type: ignore[attr-defined]
    finally:
        busy.close()


# -- the command line ---------------------------------------------------------------------------------
@pytest.fixture
def old_store(tmp_path: Path) -> str:
    """A hashing-embedder store whose memories were written 100 days ago, for alice and bob."""
    path = str(tmp_path / "memdb")
    past = datetime.now(timezone.utc) - timedelta(days=100)
    with RippleMem(path, user_id="alice", embedder="hashing", clock=lambda: past) as mem:
        mem.add("the vending machine ate my coin", importance=0.05)
        mem.add("Alice's sister Lin lives in Berlin", importance=0.9)
        mem.scope("bob").add("Bob's gym locker code is 2231", importance=0.5)
    return path


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The command line in this process; returns exit status, stdout and stderr."""
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def contents(path: str, user: str) -> list[str]:
    """The texts a user has in the store now."""
    with RippleMem(path, user_id=user, embedder="hashing") as mem:
        return sorted(m.content for m in mem.list())


def test_cli_maintain_one_user_as_json(old_store: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = cli(capsys, "maintain", "--path", old_store, "--user", "alice", "--json")
    assert status == 0, err
    (report,) = json.loads(out)
    assert report["user_id"] == "alice" and report["dry_run"] is False
    deleted = [e["preview"] for e in report["forget"]["entries"] if e["action"] == "delete"]
    assert "the vending machine ate my coin" in deleted
    assert "the vending machine ate my coin" not in contents(old_store, "alice")
    assert contents(old_store, "bob") == ["Bob's gym locker code is 2231"]


def test_cli_maintain_dry_run_covers_every_user_and_changes_nothing(
    old_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (contents(old_store, "alice"), contents(old_store, "bob"))
    status, out, err = cli(capsys, "maintain", "--path", old_store, "--dry-run")
    assert status == 0, err
    assert "maintain 'alice' (dry run)" in out and "maintain 'bob' (dry run)" in out
    assert "forget (score) would:" in out
    assert (contents(old_store, "alice"), contents(old_store, "bob")) == before


def test_cli_maintain_shows_a_progress_bar_over_users_on_a_terminal(
    old_store: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    status, out, err = cli(capsys, "maintain", "--path", old_store, "--dry-run")
    assert status == 0 and "2/2" in err and "user" in err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    status, out, err = cli(capsys, "maintain", "--path", old_store, "--dry-run", "--json")
    assert status == 0 and "2/2" not in err  # machine output: no bar
    json.loads(out)


def test_cli_maintain_errors_name_the_problem(
    tmp_path: Path, old_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = cli(capsys, "maintain", "--path", str(tmp_path / "nowhere"))
    assert status == 2 and "no RippleMem store at" in err
    status, _, err = cli(capsys, "maintain", "--path", old_store, "--strategy", "lru")
    assert status == 2 and "strategy must be one of score, importance, time, capacity" in err


def test_cli_maintain_as_a_scheduled_process(old_store: str, tmp_path: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "ripplemem", "maintain", "--path", old_store, "--strategy", "importance"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "forget (importance) did: delete 1, keep 1 of 2 memories" in done.stdout
    assert "maintain 'bob'" in done.stdout
    assert contents(old_store, "alice") == ["Alice's sister Lin lives in Berlin"]
