"""`ripplemem mcp`: the MCP server run as a subprocess and driven by the mcp package's own client
over stdio, as an MCP host (Claude Desktop, an IDE) drives it, and in-process on a real store."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.interfaces.cli.main import main

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install 'ripplemem[mcp]')")

TOOL_NAMES = {"store_memory", "recall_memory", "update_memory", "find_connections", "forget_memory"}
MEMORY_ID = re.compile(r"Stored memory ([0-9a-f]{32}) ")


def with_server(path: Path, user: str, session: Callable[[Any], Awaitable[Any]], *flags: str) -> Any:
    """Start `python -m ripplemem mcp` for one user, run `session(client)` against it, stop it."""
    params = mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "ripplemem", "mcp", "--path", str(path), "--user", user, *flags],
        env={"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"},
        cwd=str(Path(__file__).parents[2]),
    )

    async def run() -> Any:
        async with mcp.Client(params, read_timeout_seconds=120) as client:
            return await session(client)

    return asyncio.run(run())


def text_of(result: Any) -> str:
    """The text a tool call returned (what the model reads)."""
    return "\n".join(part.text for part in result.content)


def in_process(memory: RippleMem, session: Callable[[Any], Awaitable[Any]], **options: bool) -> Any:
    """Run `session(client)` against build_server(memory, **options) in this process."""
    from ripplemem.interfaces.mcp_server import build_server

    async def run() -> Any:
        async with mcp.Client(build_server(memory, **options)) as client:
            return await session(client)

    return asyncio.run(run())


def test_lists_five_tools_with_argument_schemas_and_runs_each(tmp_path: Path) -> None:
    async def session(client: Any) -> dict[str, Any]:
        listed = (await client.list_tools()).tools
        calls = {"tools": {tool.name: tool for tool in listed}}
        calls["stored"] = await client.call_tool(
            "store_memory",
            {"content": "Calvin bought a Ferrari 488 in Rome.", "type": "semantic", "importance": 0.8},
        )
        await client.call_tool(
            "store_memory",
            {"content": "Calvin drove to Milan for the Ferrari meetup.", "event_time": "2024-03-15"},
        )
        calls["recalled"] = await client.call_tool(
            "recall_memory", {"query": "What car does Calvin own?", "k": 2}
        )
        calls["connected"] = await client.call_tool(
            "find_connections", {"source": "Rome", "target": "Milan", "max_hops": 4}
        )
        memory_id = MEMORY_ID.search(text_of(calls["stored"])).group(1)  # type: ignore[union-attr]
        calls["forgot"] = await client.call_tool("forget_memory", {"memory_id": memory_id})
        calls["after"] = await client.call_tool(
            "recall_memory", {"query": "Ferrari 488", "types": ["semantic"]}
        )
        return calls

    calls = with_server(tmp_path / "store", "alice", session)
    tools = calls["tools"]
    assert set(tools) == TOOL_NAMES
    assert tools["recall_memory"].input_schema["required"] == ["query"]
    assert tools["recall_memory"].input_schema["properties"]["k"]["maximum"] == 20
    assert tools["store_memory"].input_schema["properties"]["type"]["enum"] == ["episodic", "semantic"]
    assert all(len(tool.description) > 60 for tool in tools.values())
    # Hosts ask before a destructive tool and may run read-only ones freely.
    hints = {
        name: (tool.annotations.read_only_hint, tool.annotations.destructive_hint)
        for name, tool in tools.items()
    }
    assert hints == {
        "store_memory": (False, False),
        "recall_memory": (True, None),
        "update_memory": (False, True),
        "find_connections": (True, None),
        "forget_memory": (False, True),
    }
    assert not any(result.is_error for name, result in calls.items() if name != "tools")

    stored = text_of(calls["stored"])
    assert stored.endswith("(semantic): Calvin bought a Ferrari 488 in Rome.")
    recalled = text_of(calls["recalled"]).splitlines()
    assert recalled[0] == "2 memories for 'What car does Calvin own?', best first:"
    assert "Calvin bought a Ferrari 488 in Rome." in recalled[1]
    assert "(2024-03-15, episodic" in "\n".join(recalled)
    connected = text_of(calls["connected"])
    first_path = connected.split("\n2.")[0]
    assert re.match(r"\d connections? between 'Rome' and 'Milan':\n1\. Rome -MENTIONS- .* Milan$", first_path)
    assert text_of(calls["forgot"]).startswith("Forgot memory ")
    assert text_of(calls["after"]) == "No memories found for 'Ferrari 488'."


def test_a_server_for_bob_sees_and_deletes_nothing_of_alices(tmp_path: Path, embedder: Embedder) -> None:
    store = tmp_path / "store"
    with RippleMem(store, user_id="alice", embedder=embedder) as alice:
        secret = alice.add("Alice's bank PIN hint is her cat Miso's birthday.", "semantic")
        alice.add("Alice adopted the cat Miso in Lyon.")

    async def as_bob(client: Any) -> list[str]:
        replies = [
            await client.call_tool("recall_memory", {"query": "PIN hint cat birthday"}),
            await client.call_tool("find_connections", {"source": "Miso", "target": "Lyon"}),
            await client.call_tool("forget_memory", {"memory_id": secret.id}),
            await client.call_tool("find_connections", {"source": secret.id, "target": "Miso"}),
        ]
        return [text_of(reply) for reply in replies]

    recalled, connected, forgot, by_id = with_server(store, "bob", as_bob)
    assert recalled == "No memories found for 'PIN hint cat birthday'."
    assert connected.startswith("No connection between 'Miso' and 'Lyon'")
    assert forgot.startswith(f"No memory with id '{secret.id}'; nothing was deleted.")
    assert by_id.startswith("No connection")
    with RippleMem(store, user_id="alice", embedder=embedder) as alice:
        assert alice.get(secret.id) is not None
        assert alice.graph.find_connections("Miso", "Lyon")


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(
    tmp_path: Path, embedder: Embedder
) -> None:
    bad_calls = [
        ("recall_memory", {"query": "tea", "k": 0}, "k"),
        ("recall_memory", {"k": 3}, "query"),
        ("store_memory", {"content": "Tea.", "type": "dream"}, "type"),
        ("store_memory", {"content": "   "}, "content must not be empty"),
        ("store_memory", {"content": "Tea at noon.", "event_time": "next blue moon"}, "event_time"),
        ("find_connections", {"source": "A", "target": "B", "max_hops": 50}, "max_hops"),
        ("forget_memory", {}, "memory_id"),
    ]

    async def session(client: Any) -> tuple[list[Any], Any]:
        errors = [await client.call_tool(name, arguments) for name, arguments, _ in bad_calls]
        after = await client.call_tool("store_memory", {"content": "The user drinks Longjing tea."})
        return errors, after

    errors, after = with_server(tmp_path / "store", "alice", session)
    for (name, _, named), result in zip(bad_calls, errors, strict=True):
        assert result.is_error, (name, text_of(result))
        assert text_of(result).startswith(f"Error executing tool {name}: ")
        assert named in text_of(result)
    assert not after.is_error and "The user drinks Longjing tea." in text_of(after)
    with RippleMem(tmp_path / "store", user_id="alice", embedder=embedder) as check:
        assert [m.content for m in check.list()] == ["The user drinks Longjing tea."]


def test_a_bad_user_id_stops_before_serving(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["mcp", "--path", str(tmp_path / "store"), "--user", "  "])
    assert status == 2
    assert capsys.readouterr().err.startswith("error: user_id must not be empty")
    assert not (tmp_path / "store").exists()


def test_recall_memory_returns_each_memory_with_the_adapters_metadata(memory_only: RippleMem) -> None:
    from ripplemem.interfaces.hit_metadata import RIPPLEMEM_KEYS
    from ripplemem.interfaces.mcp_server import build_server

    memory_only.add(
        "Priya is the user's manager at Acme Robotics.", type="semantic", metadata={"team": "R&D"}
    )
    met = memory_only.add(
        "The user met Priya in Lisbon for the robotics fair.", event_time="2024-05-02T10:00:00+02:00"
    )

    async def session(client: Any) -> tuple[Any, Any]:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        return listed, await client.call_tool("recall_memory", {"query": "Who is Priya?", "k": 2})

    async def run() -> tuple[Any, Any]:
        async with mcp.Client(build_server(memory_only)) as client:
            return await session(client)

    tools, result = asyncio.run(run())
    schema = tools["recall_memory"].output_schema
    assert schema["required"] == ["query", "memories"] and tools["store_memory"].output_schema is None
    memories = result.structured_content["memories"]
    assert [m["content"] for m in memories] == [
        line.split(") ", 1)[1] for line in text_of(result).splitlines()[1:]
    ]
    by_text = {m["content"]: m["metadata"] for m in memories}
    fair = by_text[met.content]
    assert list(fair)[: len(RIPPLEMEM_KEYS)] == list(RIPPLEMEM_KEYS)
    assert fair["memory_id"] == met.id and f"[id={met.id}]" in text_of(result)
    assert fair["time"] == "2024-05-02T08:00:00+00:00" and fair["time_basis"] == "event_time"
    assert isinstance(fair["why"], str) and fair["why"] and isinstance(fair["score"], float)
    assert by_text["Priya is the user's manager at Acme Robotics."]["team"] == "R&D"


def test_update_memory_corrects_a_memory_by_id(memory_only: RippleMem) -> None:
    job = memory_only.add("The user works at Acme as a tester.", metadata={"team": "QA", "desk": "4B"})
    calls = [
        (
            "update_memory",
            {
                "memory_id": job.id,
                "content": "The user works at Globex as a designer.",
                "type": "semantic",
                "importance": 0.9,
                "event_time": "2024-03-01",
                "metadata": {"team": "Design", "desk": None},
            },
        ),
        ("recall_memory", {"query": "Where does the user work?", "k": 1}),
        ("update_memory", {"memory_id": "f" * 32, "content": "The user works at Initech."}),
        ("update_memory", {"memory_id": job.id}),
        ("update_memory", {"memory_id": job.id, "importance": 2}),
    ]

    async def session(client: Any) -> tuple[dict[str, Any], list[Any]]:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        return listed, [await client.call_tool(name, arguments) for name, arguments in calls]

    tools, (updated, recalled, unknown, empty, bad) = in_process(memory_only, session)
    tool = tools["update_memory"]
    assert (
        tool.annotations.read_only_hint,
        tool.annotations.destructive_hint,
        tool.annotations.idempotent_hint,
    ) == (False, True, True)
    assert tool.input_schema["required"] == ["memory_id"]
    assert tool.output_schema["required"] == ["updated", "memory_id", "content", "metadata"]

    assert text_of(updated) == f"Updated memory {job.id} (semantic): The user works at Globex as a designer."
    output = updated.structured_content
    assert output["updated"] and output["memory_id"] == job.id
    assert output["metadata"]["team"] == "Design" and "desk" not in output["metadata"]
    assert output["metadata"]["importance"] == 0.9 and output["metadata"]["time"].startswith("2024-03-01")
    now = memory_only.get(job.id)
    assert now is not None and (now.content, now.type, now.metadata) == (
        "The user works at Globex as a designer.",
        "semantic",
        {"team": "Design"},
    )
    assert "Globex as a designer" in text_of(recalled)

    assert not unknown.is_error
    assert text_of(unknown).startswith(f"No memory with id '{'f' * 32}'; nothing was updated.")
    assert unknown.structured_content == {
        "updated": False,
        "memory_id": "f" * 32,
        "content": None,
        "metadata": None,
    }
    assert empty.is_error and "nothing to update" in text_of(empty)
    assert bad.is_error and "importance" in text_of(bad)


def test_erase_memory_is_offered_only_when_the_server_allows_it(memory_only: RippleMem) -> None:
    async def session(client: Any) -> tuple[dict[str, Any], Any]:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        return listed, await client.call_tool("erase_memory", {"matching": "anything"})

    default_tools, refused = in_process(memory_only, session)
    assert set(default_tools) == TOOL_NAMES and refused.is_error
    allowed, _ = in_process(memory_only, session, allow_erase=True)
    erase = allowed["erase_memory"]
    assert set(allowed) == TOOL_NAMES | {"erase_memory"}
    assert set(erase.input_schema["properties"]) == {"memory_id", "matching", "confirm"}
    assert (
        erase.annotations.read_only_hint,
        erase.annotations.destructive_hint,
        erase.annotations.idempotent_hint,
    ) == (False, True, True)
    assert erase.output_schema["required"] == ["erased", "memory_ids", "preview", "verified"]


def test_erase_memory_previews_the_texts_and_erases_only_when_confirmed(memory_only: RippleMem) -> None:
    peanuts = memory_only.add("The user is allergic to peanuts.", "semantic")
    physio = memory_only.add("The user has a physio appointment for the knee on Friday.")
    jazz = memory_only.add("The user likes jazz.", "semantic")
    bob_server = memory_only.scope("bob")
    medical = {"matching": "my medical condition"}

    async def session(client: Any) -> list[Any]:
        return [
            await client.call_tool("erase_memory", medical),
            await client.call_tool("erase_memory", {**medical, "confirm": True}),
            await client.call_tool("erase_memory", {"memory_id": jazz.id, "confirm": True}),
        ]

    async def as_bob(client: Any) -> list[Any]:
        return [
            await client.call_tool("erase_memory", {"memory_id": peanuts.id}),
            await client.call_tool("erase_memory", {"memory_id": jazz.id, "confirm": True}),
            await client.call_tool("update_memory", {"memory_id": jazz.id, "content": "Bob was here."}),
        ]

    for_bob = in_process(bob_server, as_bob, allow_erase=True)
    assert all(text_of(reply).startswith("No memory with id") for reply in for_bob)
    assert memory_only.get(jazz.id).content == "The user likes jazz."  # type: ignore[union-attr]
    preview, erased, unpreviewed = in_process(memory_only, session, allow_erase=True)

    lines = text_of(preview).splitlines()
    assert lines[0].startswith("Preview, nothing erased yet: 2 memories matching 'my medical condition'")
    assert {line.split("] ", 1)[1] for line in lines[1:3]} == {peanuts.content, physio.content}
    assert "confirm=true" in lines[-1]
    assert preview.structured_content["erased"] is False
    assert {m["content"] for m in preview.structured_content["preview"]} == {peanuts.content, physio.content}

    assert text_of(erased) == "Erased 2 memories for good; verified: nothing of them is left in any layer."
    assert erased.structured_content["erased"] and erased.structured_content["verified"]
    assert memory_only.get(peanuts.id) is None and memory_only.get(physio.id) is None
    # A confirm with no preview before it shows the preview and erases nothing.
    assert text_of(unpreviewed).startswith("Nothing erased: confirm=true only erases what this server showed")
    assert not unpreviewed.structured_content["erased"] and memory_only.get(jazz.id) is not None


def test_erasing_everything_needs_its_own_server_option(memory_only: RippleMem) -> None:
    for text in ("The user lives in Porto.", "The user's sister is Ines.", "The user plays chess."):
        memory_only.add(text)
    bobs = memory_only.scope("bob").add("Bob lives in Oslo.")

    async def session(client: Any) -> tuple[dict[str, Any], list[Any]]:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        return listed, [
            await client.call_tool("erase_memory", {"everything": True}),
            await client.call_tool("erase_memory", {"everything": True, "confirm": True}),
        ]

    _, refused = in_process(memory_only, session, allow_erase=True)
    assert all(reply.is_error for reply in refused) and len(memory_only.list()) == 3
    tools, (preview, erased) = in_process(memory_only, session, allow_erase_everything=True)
    assert "everything" in tools["erase_memory"].input_schema["properties"]
    assert text_of(preview).startswith("Preview, nothing erased yet: 3 memories ")
    assert erased.structured_content["erased"] and erased.structured_content["verified"]
    assert memory_only.list() == [] and memory_only.scope("bob").get(bobs.id) is not None


def test_ripplemem_mcp_allow_erase_serves_erase_memory(tmp_path: Path, embedder: Embedder) -> None:
    with RippleMem(tmp_path / "store", user_id="alice", embedder=embedder) as alice:
        note = alice.add("The user's locker code is 4471.")

    async def session(client: Any) -> tuple[set[str], list[str]]:
        names = {tool.name for tool in (await client.list_tools()).tools}
        replies = [
            await client.call_tool("erase_memory", {"memory_id": note.id, "confirm": confirm})
            for confirm in (False, True)
        ]
        return names, [text_of(reply) for reply in replies]

    names, (preview, erased) = with_server(tmp_path / "store", "alice", session, "--allow-erase")
    assert names == TOOL_NAMES | {"erase_memory"}
    assert f"[id={note.id}] The user's locker code is 4471." in preview
    assert erased.startswith("Erased 1 memory for good; verified")
    with RippleMem(tmp_path / "store", user_id="alice", embedder=embedder) as alice:
        assert alice.get(note.id) is None
