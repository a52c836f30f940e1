"""The command line and the MCP server on a PostgreSQL store: `--store postgresql://...` (or
$RIPPLEMEM_STORE) with `--schema` reaches the same store a RippleMem handle opens, and no output
ever shows the URI's password."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_runner import cli

from ripplemem import HashingEmbedder, RippleMem, StoreOptions

PASSPORT = "Mei's passport expires in June 2027."


def handle(uri: str, schema: str, user: str = "mei") -> RippleMem:
    """A Python handle on the PostgreSQL store the command line was pointed at."""
    options = StoreOptions(backend="postgres", uri=uri, schema=schema)
    return RippleMem(user_id=user, embedder=HashingEmbedder(), store=options)


def test_add_recall_and_stats_on_a_postgres_store_by_flag(
    pg_uri: str, pg_schema: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ["--store", pg_uri, "--schema", pg_schema, "--user", "mei"]
    status, out, err = cli(capsys, "recall", "tea", *store)
    assert status == 2 and "no RippleMem store at" in err and f"(schema {pg_schema})" in err

    status, out, err = cli(capsys, "add", "Mei loves Longjing green tea", *store, "--embedder", "hashing")
    assert status == 0, err
    assert out.startswith("added ")
    status, out, _ = cli(capsys, "recall", "green tea", *store)
    assert status == 0 and "Mei loves Longjing green tea" in out
    status, out, _ = cli(capsys, "stats", "--json", *store)
    stats = json.loads(out)
    assert (stats["total"], stats["path"], stats["embedding_model"]) == (1, None, "hashing-v1-1024")
    with handle(pg_uri, pg_schema) as mem:
        assert [m.content for m in mem.list()] == ["Mei loves Longjing green tea"]


def test_the_environment_names_a_postgres_store(
    pg_uri: str,
    pg_schema: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RIPPLEMEM_STORE", pg_uri)
    with handle(pg_uri, pg_schema) as mem:
        mem.add("Mei's sister Lin lives in Berlin", "semantic")
    schema = ["--schema", pg_schema, "--user", "mei"]
    status, out, err = cli(capsys, "add", "Mei flies to Hangzhou in May", *schema)
    assert status == 0, err
    status, out, _ = cli(capsys, "recall", "Hangzhou trip", *schema, "--json")
    assert "Mei flies to Hangzhou in May" in [hit["memory"]["content"] for hit in json.loads(out)["hits"]]
    status, out, _ = cli(capsys, "stats", *schema, "--json")
    assert json.loads(out)["total"] == 2
    status, out, err = cli(capsys, "maintain", "--schema", pg_schema, "--dry-run", "--json")
    assert status == 0, err
    assert len(json.loads(out)) == 1  # one report: mei, the store's only user
    assert not (tmp_path / "memdb").exists()  # nothing was written to the default folder

    monkeypatch.setenv("RIPPLEMEM_PATH", str(tmp_path / "db"))
    status, _, err = cli(capsys, "stats", "--schema", pg_schema)
    assert status == 2 and "$RIPPLEMEM_STORE and $RIPPLEMEM_PATH are both set" in err


def test_store_errors_never_show_the_password(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unreachable = "postgresql://mei:s3cret-pw@127.0.0.1:1/memories"
    status, out, err = cli(capsys, "add", "green tea", "--store", unreachable, "--embedder", "hashing")
    assert status == 2 and "postgresql://mei:***@127.0.0.1:1/memories" in err
    assert "s3cret-pw" not in out + err
    status, out, err = cli(capsys, "list", "--store", unreachable, "--path", str(tmp_path), "--json")
    assert status == 2 and "--store or --path, not both" in out and "s3cret-pw" not in out + err
    status, _, err = cli(capsys, "list", "--path", unreachable)
    assert status == 2 and "pass a postgresql:// URI as --store" in err and "s3cret-pw" not in err
    status, _, err = cli(capsys, "reembed", "--store", unreachable, "--embedder", "hashing")
    assert status == 2 and "postgresql://mei:***@127.0.0.1:1/memories" in err and "s3cret-pw" not in err


def test_mcp_stores_and_recalls_on_a_postgres_store(pg_uri: str, pg_schema: str) -> None:
    mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install 'ripplemem[mcp]')")
    params = mcp.StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "ripplemem",
            "mcp",
            "--store",
            pg_uri,
            "--schema",
            pg_schema,
            "--user",
            "mei",
            "--embedder",
            "hashing",
        ],
        env={"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "RIPPLEMEM_STORE": ""},
        cwd=str(Path(__file__).parents[2]),
    )

    async def session() -> list[Any]:
        async with mcp.Client(params, read_timeout_seconds=120) as client:
            stored = await client.call_tool("store_memory", {"content": PASSPORT})
            recalled = await client.call_tool("recall_memory", {"query": "When does the passport expire?"})
            return [stored, recalled]

    stored, recalled = asyncio.run(session())
    assert not stored.is_error and not recalled.is_error
    assert PASSPORT in recalled.content[0].text
    with handle(pg_uri, pg_schema) as mem:
        assert [m.content for m in mem.list()] == [PASSPORT]
