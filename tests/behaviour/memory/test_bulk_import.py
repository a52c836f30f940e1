"""Bulk import of a file of memories: every line once, even across a SIGKILL and a second run; bad
lines named before anything is written."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from ripplemem import RippleMem
from ripplemem.errors import InvalidInputError
from ripplemem.interfaces.cli.main import main
from ripplemem.store.sqlite.rows import DB_FILENAME

PEOPLE = ["Asha", "Bruno", "Chen", "Dara", "Emil", "Fatima", "Goran", "Hana"]
THINGS = [
    "the pottery class",
    "a trip to Porto",
    "the garden",
    "a chess match",
    "the choir",
    "a bike repair",
    "the book swap",
    "a sourdough starter",
]


def line_texts(n: int) -> list[str]:
    """n distinct memories (each carries its own number, so none repeats another)."""
    return [
        f"Day {i}: {PEOPLE[i % 8]} talked about {THINGS[(i // 8) % 8]} for {i % 50 + 5} minutes"
        for i in range(n)
    ]


def stored_contents(path: Path, user: str) -> list[str]:
    """Every memory content of one user, read straight from the SQLite file."""
    with sqlite3.connect(path / DB_FILENAME) as conn:
        return [row[0] for row in conn.execute("SELECT content FROM memories WHERE user_id=?", (user,))]


def stored_so_far(path: Path) -> int:
    """How many memories the store holds now (0 while its file or schema is still being made)."""
    try:
        return len(stored_contents(path, "ivy")) if (path / DB_FILENAME).exists() else 0
    except sqlite3.OperationalError:
        return 0


def test_an_import_killed_mid_way_and_run_again_stores_every_line_exactly_once(tmp_path: Path) -> None:
    texts = line_texts(1500)
    source = tmp_path / "notes.jsonl"
    source.write_text("".join(json.dumps(t) + "\n" for t in texts), encoding="utf-8")
    path = tmp_path / "db"
    command = [
        sys.executable,
        "-m",
        "ripplemem",
        "import",
        str(source),
        "--path",
        str(path),
        "--user",
        "ivy",
        "--embedder",
        "hashing",
        "--batch-size",
        "100",
        "--json",
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    writer = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if stored_so_far(path) >= 300:
            break
        assert writer.poll() is None, writer.stderr.read().decode() if writer.stderr else ""
        time.sleep(0.05)
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    partial = len(stored_contents(path, "ivy"))
    assert 300 <= partial < len(texts), "the kill should land part-way through the file"

    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["resumed"] is True and report["skipped"] == partial
    assert report["skipped"] + report["stored"] == report["lines"] == len(texts)

    counts = Counter(stored_contents(path, "ivy"))
    assert counts == Counter(texts), "every line is stored, and stored once"
    with RippleMem(path, user_id="ivy", embedder="hashing") as mem:
        stats = mem.stats()
        assert stats["total"] == stats["vectors"] == len(texts)
        hit = mem.recall("Day 1234 Chen", k=3, mode="hybrid").hits[0]
        assert hit.memory.content == texts[1234]


def test_a_bad_line_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    source = tmp_path / "notes.jsonl"
    source.write_text(
        '"I planted tomatoes"\n{"content": "Kai visits in May", "type": "semantic"}\n'
        '{"content": "oops", "colour": "red"}\n"never stored"\n',
        encoding="utf-8",
    )
    with RippleMem(tmp_path / "db", user_id="ivy", embedder="hashing") as mem:
        with pytest.raises(InvalidInputError, match=r"line 3 has unknown fields \['colour'\]"):
            mem.import_file(source)
        assert mem.stats()["total"] == 0
        source.write_text('"fine"\n[1, 2]\n', encoding="utf-8")
        with pytest.raises(InvalidInputError, match="line 2: expected a JSON string or an object"):
            mem.import_file(source)
        source.write_text('"fine"\n{"content": "half\n', encoding="utf-8")
        with pytest.raises(InvalidInputError, match="line 2: not valid JSON"):
            mem.import_file(source)
        assert mem.stats()["total"] == 0


def test_fields_of_json_lines_are_kept_and_text_files_take_each_line(tmp_path: Path) -> None:
    jsonl = tmp_path / "facts.jsonl"
    jsonl.write_text(
        json.dumps(
            {
                "content": "Noor is allergic to peanuts",
                "type": "semantic",
                "metadata": {"source": "intake form"},
                "event_time": "2024-03-01T09:30:00",
            }
        )
        + "\n\n"
        + json.dumps("Noor ran 10 km on Sunday")
        + "\n",
        encoding="utf-8",
    )
    text = tmp_path / "diary.txt"
    text.write_text("Bought a blue kettle\n\n  Fixed the porch light  \n", encoding="utf-8")
    seen: list[tuple[int, int]] = []
    with RippleMem(tmp_path / "db", user_id="noor", embedder="hashing") as mem:
        report = mem.import_file(jsonl, progress=lambda done, total: seen.append((done, total)))
        assert (report.format, report.lines, report.stored) == ("jsonl", 2, 2)
        assert seen[-1] == (2, 2)
        fact = mem.list(type="semantic")[0]
        assert fact.content == "Noor is allergic to peanuts"
        assert fact.metadata == {"source": "intake form"}
        assert fact.event_time is not None and fact.event_time.year == 2024
        assert mem.import_file(text).format == "text"
        contents = {m.content for m in mem.list(limit=10)}
        assert {"Bought a blue kettle", "Fixed the porch light"} <= contents and len(contents) == 4


def test_a_finished_import_is_not_repeated_and_a_grown_file_adds_only_its_new_lines(tmp_path: Path) -> None:
    texts = line_texts(30)
    source = tmp_path / "log.txt"
    source.write_text("\n".join(texts[:20]) + "\n", encoding="utf-8")
    with RippleMem(tmp_path / "db", user_id="ivy", embedder="hashing") as mem:
        first = mem.import_file(source, batch_size=7)
        assert (first.stored, first.batches) == (20, 3)
        again = mem.import_file(source)
        assert (again.stored, again.skipped) == (0, 20)
        assert "already imported" in again.summary()
        source.write_text("\n".join(texts) + "\n", encoding="utf-8")
        grown = mem.import_file(source)
        # A changed file is a new import: its old lines repeat stored memories and merge into them.
        assert (grown.stored, grown.merged) == (10, 20)
        assert Counter(stored_contents(tmp_path / "db", "ivy")) == Counter(texts)


def test_the_import_command_reports_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "diary.txt"
    source.write_text("Planted garlic in the north bed\nThe plumber comes on Friday\n", encoding="utf-8")
    args = ["import", str(source), "--path", str(tmp_path / "db"), "--user", "ivy", "--embedder", "hashing"]
    assert main(args) == 0
    assert f"imported 2 memories from {source}" in capsys.readouterr().out
    assert main([*args, "--batch-size", "0"]) == 2
    assert "batch-size must be a positive integer" in capsys.readouterr().err
