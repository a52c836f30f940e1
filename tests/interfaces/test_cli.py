"""The `ripplemem` command line, driven as a user would: real stores, separate processes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import cli, run_cli

from ripplemem.interfaces.cli.main import main


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """A hashing-embedder store holding three memories of user 'mei'."""
    path = str(tmp_path / "memdb")
    for extra in (
        [
            "I love green tea, especially Longjing",
            "--event-time",
            "2025-03-21T12:40:00",
            "--session",
            "s2",
            "--importance",
            "0.8",
            "--metadata",
            '{"turn": 1}',
        ],
        ["我下个月去杭州出差", "--event-time", "2025-03-21T12:45:00"],
        ["Mei's sister Lin lives in Berlin", "--type", "semantic", "--event-time", "2025-03-08"],
    ):
        assert main(["add", *extra, "--path", path, "--user", "mei", "--embedder", "hashing"]) == 0
    capsys.readouterr()
    return path


def listed(capsys: pytest.CaptureFixture[str], path: str, user: str = "mei") -> list[dict]:
    status, out, _ = cli(capsys, "list", "--json", "--path", path, "--user", user, "--limit", "100")
    assert status == 0
    return json.loads(out)


def test_add_then_recall_list_stats_across_processes(tmp_path: Path) -> None:
    common = ["--path", "db", "--user", "mei", "--embedder", "hashing"]
    added = run_cli(
        "add",
        "I love green tea, especially Longjing",
        "--event-time",
        "2025-03-21T12:40:00",
        *common,
        cwd=tmp_path,
    )
    assert added.returncode == 0, added.stderr
    assert re.fullmatch(r"added [0-9a-f]{32} \(episodic, 2025-03-21\)\n", added.stdout)
    assert run_cli("add", "我下个月去杭州出差", "--type", "semantic", *common, cwd=tmp_path).returncode == 0

    recalled = run_cli("recall", "green tea", "-k", "1", *common, cwd=tmp_path)
    assert recalled.returncode == 0, recalled.stderr
    assert re.fullmatch(
        r"1\. \d\.\d{3}  2025-03-21  episodic +I love green tea, especially Longjing\n", recalled.stdout
    )

    listing = run_cli("list", "--path", "db", "--user", "mei", cwd=tmp_path)
    assert listing.returncode == 0
    assert [line.split("  ")[-1] for line in listing.stdout.splitlines()] == [
        "我下个月去杭州出差",
        "I love green tea, especially Longjing",
    ]

    stats = run_cli("stats", "--path", "db", "--user", "mei", cwd=tmp_path)
    assert "memories   2 (episodic 1, semantic 1)" in stats.stdout
    assert "embedder   hashing-v1-1024" in stats.stdout
    assert stats.stderr == ""


def test_json_output_parses_and_carries_the_memory(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(
        capsys, "recall", "green tea", "--json", "--context", "60", "--path", store, "--user", "mei"
    )
    assert status == 0
    payload = json.loads(out)
    assert payload["mode"] == "ripple"  # the default everywhere: Python, MCP and the CLI
    top = payload["hits"][0]
    assert top["memory"]["content"] == "I love green tea, especially Longjing"
    assert top["memory"]["event_time"] == "2025-03-21T12:40:00+00:00"
    assert top["memory"]["session_id"] == "s2" and top["memory"]["metadata"] == {"turn": 1}
    assert top["memory"]["importance"] == 0.8 and 0 < top["score"] <= 1.5
    assert "green tea" in payload["context"] and payload["context"].startswith("Relevant memories:")

    contents = {m["content"] for m in listed(capsys, store)}
    assert "我下个月去杭州出差" in contents and len(contents) == 3

    status, out, _ = cli(capsys, "stats", "--json", "--path", store, "--user", "mei")
    stats = json.loads(out)
    assert stats["total"] == 3 and stats["by_type"] == {"episodic": 2, "semantic": 1}
    assert stats["oldest"].startswith("2025-03-08")


def test_recall_filters_and_context(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(
        capsys, "recall", "Berlin tea 杭州", "--type", "semantic", "--path", store, "--user", "mei"
    )
    assert status == 0 and len(out.splitlines()) == 1 and "semantic    Mei's sister Lin" in out
    status, out, _ = cli(
        capsys, "recall", "tea Berlin", "--since", "2025-03-10", "--path", store, "--user", "mei"
    )
    assert "Berlin" not in out and "green tea" in out
    status, out, _ = cli(capsys, "recall", "杭州出差", "-k", "1", "--path", store, "--user", "mei")
    assert "2025-03-21  episodic    我下个月去杭州出差" in out
    status, out, _ = cli(capsys, "recall", "green tea", "--context", "40", "--path", store, "--user", "mei")
    assert out.startswith("Relevant memories:\n- [2025-03-21 12:40, episodic] I love green tea")


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["add", "   "], "content"),
        (["add", "tea", "--importance", "2"], "importance"),
        (["add", "tea", "--type", "dream"], "type"),
        (["add", "tea", "--metadata", "{not json"], "metadata"),
        (["add", "tea", "--event-time", "last tuesday"], "event_time"),
        (["recall", "tea", "-k", "0"], "k"),
        (["recall", "tea", "--type", "dream"], "type"),
        (["recall", "tea", "--context", "0"], "context"),
        (["list", "--limit", "0"], "limit"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_changes_nothing(
    store: str, capsys: pytest.CaptureFixture[str], args: list[str], field: str
) -> None:
    before = listed(capsys, store)
    status, out, err = cli(capsys, *args, "--path", store, "--user", "mei")
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and field in err
    assert "Traceback" not in err
    assert listed(capsys, store) == before


def test_bad_input_in_a_real_process_has_no_traceback(tmp_path: Path) -> None:
    result = run_cli("add", "tea", "--importance", "2", "--embedder", "hashing", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "error: importance must be in [0, 1], got 2.0\n"
    usage = run_cli("recall", cwd=tmp_path)
    assert usage.returncode == 2 and usage.stderr.count("\n") == 1
    assert usage.stderr.startswith("error: the following arguments are required: query")


def test_read_commands_need_an_existing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "nowhere")
    for command in (["stats"], ["list"], ["recall", "tea"]):
        status, _, err = cli(capsys, *command, "--path", missing)
        assert status == 2 and "no RippleMem store" in err
    assert not os.path.exists(missing)


def test_a_user_never_sees_another_users_memories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "db")
    alice = ["--user", "alice", "--path", db, "--embedder", "hashing"]
    assert main(["add", "The vault code is 4711", *alice]) == 0
    assert main(["add", "Bob plays chess on Sundays", "--user", "bob", "--path", db]) == 0
    capsys.readouterr()
    as_bob = ["--user", "bob", "--path", db]
    for command in (
        ["recall", "vault code 4711", "-k", "10"],
        ["recall", "vault", "--mode", "keyword"],
        ["list"],
    ):
        status, out, err = cli(capsys, *command, *as_bob)
        assert status == 0, err
        assert "4711" not in out and "vault" not in out
    hits = json.loads(cli(capsys, "recall", "vault code", "--json", *as_bob)[1])["hits"]
    assert [hit["memory"]["user_id"] for hit in hits] in ([], ["bob"])
    assert [m["content"] for m in listed(capsys, db, "bob")] == ["Bob plays chess on Sundays"]
    assert json.loads(cli(capsys, "stats", "--json", *as_bob)[1])["total"] == 1
    assert cli(capsys, "recall", "vault code", "--user", "default", "--path", db)[1] == "no memories match\n"
    assert "The vault code is 4711" in cli(capsys, "recall", "vault code", "--user", "alice", "--path", db)[1]


def test_environment_sets_default_path_and_user(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RIPPLEMEM_PATH", str(tmp_path / "envdb"))
    monkeypatch.setenv("RIPPLEMEM_USER", "mei")
    assert main(["add", "green tea", "--embedder", "hashing"]) == 0
    assert "green tea" in cli(capsys, "list", "--path", str(tmp_path / "envdb"), "--user", "mei")[1]
    assert not (tmp_path / "memdb").exists()


def test_reembed_switches_the_store_to_another_model(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "reembed", "--path", store, "--embedder", "hashing-v1-256")
    assert status == 0 and out.startswith("re-embedded 3 memories with hashing-v1-256")
    status, out, _ = cli(capsys, "stats", "--json", "--path", store, "--user", "mei")
    assert json.loads(out)["embedding_model"] == "hashing-v1-256"
    status, out, _ = cli(capsys, "recall", "Berlin", "-k", "1", "--path", store, "--user", "mei")
    assert "Lin lives in Berlin" in out
    status, _, err = cli(capsys, "recall", "Berlin", "--embedder", "hashing", "--path", store)
    assert status == 2 and "ripplemem reembed" in err


@pytest.mark.slow
def test_demo_recalls_facts_in_both_languages_with_the_default_model(tmp_path: Path) -> None:
    result = run_cli("demo", cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "embedder all-MiniLM-L6-v2" in out
    assert "My sister Lin called from Berlin" in out
    assert "我最近特别喜欢喝绿茶" in out
    assert "我下个月去杭州出差" in out
    assert "physiotherapy" in out and "Relevant memories:" in out
    assert re.search(r"^recall +\d+\.\d+ s", out, re.MULTILINE)
    assert "Loading weights" not in result.stderr and "Traceback" not in result.stderr
    store_path = re.search(r"^store +(\S+) \(temporary\)", out, re.MULTILINE).group(1)  # type: ignore[union-attr]
    assert not os.path.exists(store_path)


@pytest.mark.parametrize("command", ["import", "ingest"])
def test_progress_is_shown_with_progress_and_not_with_no_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    source = tmp_path / "notes.txt"
    source.write_text(
        "".join(f"Note {n}: the meeting moved to room {n % 7}\n" for n in range(30)), encoding="utf-8"
    )
    store = ["--path", str(tmp_path / "db"), "--user", "ivy", "--embedder", "hashing"]
    what = ["--batch-size", "10"] if command == "import" else []
    status, _, err = cli(capsys, command, str(source), *store, *what, "--progress")
    assert status == 0
    done = "30/30" if command == "import" else "1/1"
    assert re.search(rf"100%.*{done}", err), err  # the bar, although stderr is no terminal here
    source.write_text(source.read_text(encoding="utf-8") + "One more line\n", encoding="utf-8")
    status, _, err = cli(capsys, command, str(source), *store, *what, "--no-progress")
    assert status == 0 and "%|" not in err and err == ""


def test_the_import_bar_shows_on_a_terminal_that_reports_no_size(tmp_path: Path) -> None:
    source = tmp_path / "notes.txt"
    source.write_text("".join(f"Boiler note {n}\n" for n in range(30)), encoding="utf-8")
    master, terminal = os.openpty()  # a fresh pseudo-terminal: 0 rows, 0 columns, like `script` gives
    args = ["import", str(source), "--path", str(tmp_path / "db"), "--user", "ivy", "--embedder", "hashing"]
    process = subprocess.Popen(
        [sys.executable, "-m", "ripplemem", *args, "--batch-size", "10"],
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=terminal,
    )
    os.close(terminal)
    shown = b""
    with contextlib.suppress(OSError):  # EIO once the process has closed the terminal
        while chunk := os.read(master, 4096):
            shown += chunk
    os.close(master)
    assert process.wait(timeout=120) == 0
    assert re.search(rb"100%.*30/30", shown), shown
