"""`--json` on every `ripplemem` command: results and errors are JSON a script can read."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from ripplemem.interfaces.cli.main import build_parser, main


def command_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every runnable command of the parser, as word paths ('add',), ('kb', 'list') ..."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += command_paths(child, (*prefix, name))
    return found or [prefix]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """Run the command line in this process; returns the status, stdout parsed as JSON, stderr."""
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, json.loads(out), err


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A hashing-embedder store where 'mei' has three memories and a knowledge base 'notes'."""
    path = tmp_path / "db"
    for text in (
        "Mei's sister Lin lives in Berlin.",
        "Lin works at Siemens in Berlin.",
        "Mei drinks Longjing tea every morning.",
    ):
        assert main(["add", text, "--path", str(path), "--user", "mei", "--embedder", "hashing"]) == 0
    notes = tmp_path / "tea.md"
    notes.write_text("# Tea\n\nLongjing is a green tea from Hangzhou, pan-fired by hand.\n", encoding="utf-8")
    assert main(["ingest", str(notes), "--kb", "notes", "--path", str(path), "--user", "mei"]) == 0
    capsys.readouterr()
    return path


def successes(store: Path) -> dict[tuple[str, ...], tuple[list[str], Any]]:
    """For each command: arguments that succeed, and a check of what the JSON must say (run in
    this order: `add` makes mei's memories four)."""
    db, user = ["--path", str(store)], ["--path", str(store), "--user", "mei"]
    graph = str(store.parent / "graph.html")
    return {
        ("add",): (
            ["Mei moved to Hangzhou in May.", *user],
            lambda out: out["content"] == "Mei moved to Hangzhou in May." and len(out["id"]) == 32,
        ),
        ("recall",): (
            ["Where does Lin live?", "-k", "1", "--type", "episodic", *user],
            lambda out: out["hits"][0]["memory"]["content"] == "Mei's sister Lin lives in Berlin.",
        ),
        ("list",): (user, lambda out: len(out) == 4 and {m["user_id"] for m in out} == {"mei"}),
        ("stats",): (user, lambda out: out["total"] == 4 and out["user_id"] == "mei"),
        ("demo",): (
            ["--embedder", "hashing"],
            lambda out: out["turns"] > 10 and all(query["hits"] for query in out["queries"]),
        ),
        ("reembed",): ([*db, "--embedder", "hashing"], lambda out: out["reembedded"] >= 4),
        ("check",): (db, lambda out: out["consistent"] is True and out["users"] >= 1),
        ("maintain",): (
            [*user, "--dry-run"],
            lambda out: [(r["user_id"], r["dry_run"]) for r in out] == [("mei", True)],
        ),
        ("viz",): (
            [*user, "--out", graph],
            lambda out: out["user"] == "mei" and Path(out["out"]).is_file() and out["nodes"],
        ),
        ("ingest",): (
            [str(store.parent / "tea.md"), "--kb", "notes", *user],
            lambda out: out["knowledge_base"] == "notes" and out["unchanged"],
        ),
        ("grant",): (
            ["notes", "bob", *user],
            lambda out: (
                out == {"knowledge_base": "notes", "reader": "bob", "can_read": True, "changed": True}
            ),
        ),
        ("revoke",): (
            ["notes", "lin", *user],
            lambda out: (
                out == {"knowledge_base": "notes", "reader": "lin", "can_read": False, "changed": False}
            ),
        ),
        ("kb", "list"): (user, lambda out: [kb["name"] for kb in out] == ["notes"]),
        ("erase",): (
            ["--matching", "Longjing tea", "--dry-run", *user],
            lambda out: (
                out["dry_run"] is True
                and out["removed"] == {}
                and out["planned"]["memories"] == len(out["memory_ids"]) > 0
            ),
        ),
        ("import",): (
            [str(store.parent / "tea.md"), "--format", "text", *user],
            lambda out: (out["user_id"], out["lines"], out["stored"]) == ("mei", 2, 2),
        ),
        ("migrate",): (
            [str(store), str(store.parent / "copy")],
            lambda out: out["counts"]["memories"] >= 6 and out["rows"] > out["counts"]["memories"],
        ),
    }


def failures(store: Path) -> dict[tuple[str, ...], tuple[list[str], str]]:
    """For each command: arguments that fail, and the error type the JSON must name."""
    db, user = ["--path", str(store)], ["--path", str(store), "--user", "mei"]
    missing = ["--path", str(store.parent / "nowhere"), "--user", "mei"]
    return {
        ("add",): (["Tea.", "--importance", "7", *user], "InvalidInputError"),
        ("recall",): (["tea", *missing], "StoreError"),
        ("list",): (["--limit", "0", *user], "InvalidInputError"),
        ("stats",): (missing, "StoreError"),
        ("demo",): (["--embedder", "bogus"], "InvalidInputError"),
        ("reembed",): (["--path", str(store.parent / "nowhere"), "--embedder", "hashing"], "StoreError"),
        ("check",): (["--path", str(store.parent / "nowhere")], "StoreError"),
        ("maintain",): ([*db, "--strategy", "whim"], "InvalidInputError"),
        ("mcp",): (["--path", str(store), "--user", "  "], "InvalidInputError"),
        ("viz",): ([*user, "--out", str(store.parent / "no" / "g.html")], "InvalidInputError"),
        ("ingest",): ([str(store.parent / "tea.md"), "--max-tokens", "0", *user], "InvalidInputError"),
        ("grant",): (["recipes", "bob", *user], "KnowledgeBaseAccessError"),
        ("revoke",): (["recipes", "bob", *user], "KnowledgeBaseAccessError"),
        ("kb", "list"): (["--path", str(store), "--user", ""], "InvalidInputError"),
        ("erase",): (["--id", "abc", *missing], "StoreError"),
        ("import",): ([str(store.parent / "absent.jsonl"), *user], "InvalidInputError"),
        ("migrate",): ([str(store.parent / "nowhere"), str(store.parent / "copy")], "StoreError"),
    }


def test_every_command_accepts_json() -> None:
    parser = build_parser()
    commands = command_paths(parser)
    assert {("add",), ("recall",), ("mcp",), ("viz",), ("kb", "list")} <= set(commands)
    for command in commands:
        positional = {
            ("add",): ["x"],
            ("recall",): ["x"],
            ("ingest",): ["x"],
            ("grant",): ["kb", "u"],
            ("revoke",): ["kb", "u"],
            ("viz",): ["--out", "x"],
            ("import",): ["f"],
            ("migrate",): ["src", "dst"],
        }.get(command, [])
        reembed = ["--embedder", "hashing"] if command == ("reembed",) else []
        assert parser.parse_args([*command, *positional, *reembed, "--json"]).json is True, command


def test_every_command_has_a_json_success_and_error_case(store: Path) -> None:
    commands = set(command_paths(build_parser()))
    # mcp's output is the MCP protocol itself; with --json only its start errors are JSON.
    assert set(successes(store)) == commands - {("mcp",)}
    assert set(failures(store)) == commands


def test_json_results_of_every_command(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for command, (args, expected) in successes(store).items():
        status, out, _ = run(capsys, *command, *args, "--json")
        assert status == 0, (command, out)
        assert expected(out), (command, out)


def test_json_errors_of_every_command(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for command, (args, error_type) in failures(store).items():
        status, out, err = run(capsys, *command, *args, "--json")
        assert status == 2, (command, out)
        assert set(out) == {"error"} and out["error"]["type"] == error_type, (command, out)
        assert out["error"]["message"] and "\n" not in out["error"]["message"], command
        assert "error:" not in err, (command, err)
    assert not (store.parent / "nowhere").exists()


def test_usage_errors_are_json_too(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "recall", "tea", "--bogus", "--json")
    assert status == 2 and err == ""
    assert out == {
        "error": {"type": "UsageError", "message": "unrecognized arguments: --bogus (see: ripplemem --help)"}
    }
    status, out, _ = run(capsys, "viz", "--json")
    assert status == 2 and "--out" in out["error"]["message"]


def test_without_json_errors_stay_one_line_on_stderr(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--limit", "0", "--path", str(store), "--user", "mei"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == "error: limit must be a positive integer, got 0\n"
    assert main(["recall", "tea", "--bogus"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == "error: unrecognized arguments: --bogus (see: ripplemem --help)\n"


def test_demo_json_keeps_the_story_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "demo", "--embedder", "hashing", "--json")
    assert status == 0
    assert err.startswith("RippleMem demo: ") and "removed the temporary store" in err
    assert out["kept"] is False and out["embedder"].startswith("hashing")
    assert out["stats"]["total"] == out["turns"]
    assert all(hit["content"] and hit["date"] for query in out["queries"] for hit in query["hits"])
