"""RippleMemToolSpec: the four memory tools as LlamaIndex FunctionTools, called directly."""

from __future__ import annotations

import re

import pytest
from llama_index.core.tools import FunctionTool

from llamaindex_ripplemem import RippleMemToolSpec
from ripplemem import InvalidInputError, InvalidTypeError, RippleMem


def tools_of(spec: RippleMemToolSpec) -> dict[str, FunctionTool]:
    return {tool.metadata.name: tool for tool in spec.to_tool_list()}  # type: ignore[misc]


def stored_id(output: str) -> str:
    match = re.search(r"Stored memory ([0-9a-f]{32})", output)
    assert match, output
    return match.group(1)


def test_tools_have_names_schemas_and_guidance(memory_only: RippleMem) -> None:
    tools = tools_of(RippleMemToolSpec(memory=memory_only))
    assert list(tools) == ["store_memory", "recall_memory", "find_connections", "forget_memory"]
    schemas = {name: tool.metadata.get_parameters_dict() for name, tool in tools.items()}
    assert schemas["store_memory"]["required"] == ["content"]
    assert schemas["store_memory"]["properties"]["type"]["enum"] == ["episodic", "semantic"]
    assert "ISO date" in schemas["store_memory"]["properties"]["event_time"]["description"]
    assert schemas["recall_memory"]["required"] == ["query"]
    assert schemas["find_connections"]["required"] == ["source", "target"]
    assert schemas["forget_memory"]["required"] == ["memory_id"]
    assert "recall_memory first" in tools["forget_memory"].metadata.description
    assert all(tool.async_fn is not None for tool in tools.values())


def test_store_recall_forget_round_trip(memory_only: RippleMem) -> None:
    tools = tools_of(RippleMemToolSpec(memory=memory_only))
    output = tools["store_memory"].call(content="The user's sister Ana lives in Lisbon.", type="semantic",
                                        importance=0.9, event_time="2024-05-02").content
    memory_id = stored_id(output)
    stored = memory_only.get(memory_id)
    assert stored is not None and stored.type == "semantic" and stored.importance == 0.9
    assert stored.event_time is not None and stored.event_time.date().isoformat() == "2024-05-02"

    recalled = tools["recall_memory"].call(query="Where does my sister live?", k=3).content
    assert recalled.startswith("1 memory for 'Where does my sister live?'")
    assert f"[id={memory_id}] (2024-05-02, semantic, score" in recalled and "Lisbon" in recalled

    assert tools["forget_memory"].call(memory_id=memory_id).content == (
        f"Forgot memory {memory_id}: The user's sister Ana lives in Lisbon.")
    assert memory_only.get(memory_id) is None
    assert tools["recall_memory"].call(query="Where does my sister live?").content == (
        "No memories found for 'Where does my sister live?'.")
    assert "No memory with id" in tools["forget_memory"].call(memory_id=memory_id).content


def test_recall_respects_k_types_and_the_cap(memory_only: RippleMem) -> None:
    memory_only.add_many([f"Note {n}: the user watered plant number {n}" for n in range(6)])
    memory_only.add("The user prefers green tea", type="semantic")
    recall = tools_of(RippleMemToolSpec(memory=memory_only, max_k=4))["recall_memory"]
    assert recall.call(query="plants", k=10).content.startswith("4 memories")
    only_semantic = recall.call(query="plants", types=["semantic"]).content
    assert "green tea" in only_semantic and "watered" not in only_semantic


def test_find_connections_explains_the_path(memory_only: RippleMem) -> None:
    memory_only.add("Bob adopted a cat called Tom")
    memory_only.add("Tom was found at the Lisbon shelter")
    connect = tools_of(RippleMemToolSpec(memory=memory_only))["find_connections"]
    found = connect.call(source="Bob", target="Lisbon", max_hops=4).content
    assert found.startswith("1 connection between 'Bob' and 'Lisbon'")
    assert "Bob adopted a cat called Tom" in found and "Tom was found at the Lisbon shelter" in found
    assert "No connection found" in connect.call(source="Bob", target="Lisbon", max_hops=2).content
    assert "No connection found" in connect.call(source="Bob", target="Madrid").content


async def test_async_tools_do_the_same(memory_only: RippleMem) -> None:
    tools = tools_of(RippleMemToolSpec(memory=memory_only))
    memory_id = stored_id((await tools["store_memory"].acall(content="The user runs every Sunday")).content)
    assert memory_id in (await tools["recall_memory"].acall(query="When does the user run?")).content
    assert (await tools["forget_memory"].acall(memory_id=memory_id)).content.startswith("Forgot memory")
    assert "No connection" in (await tools["find_connections"].acall(source="a", target="b")).content


def test_read_only_spec_cannot_write(memory_only: RippleMem) -> None:
    assert list(tools_of(RippleMemToolSpec(memory=memory_only, read_only=True))) == [
        "recall_memory", "find_connections"]


def test_other_users_tools_cannot_see_or_delete(memory_only: RippleMem) -> None:
    alice = tools_of(RippleMemToolSpec(memory=memory_only))
    output = alice["store_memory"].call(content="Alice's PIN hint is her cat's birthday").content
    memory_id = stored_id(output)
    bob = tools_of(RippleMemToolSpec(memory=memory_only.scope(user_id="bob")))
    assert bob["recall_memory"].call(query="PIN hint cat birthday").content.startswith("No memories found")
    assert "No memory with id" in bob["forget_memory"].call(memory_id=memory_id).content
    assert memory_only.get(memory_id) is not None
    bob["store_memory"].call(content="Bob's PIN hint is his first car")
    assert "first car" not in alice["recall_memory"].call(query="PIN hint car").content


def test_bad_input_names_the_argument(memory_only: RippleMem) -> None:
    spec = RippleMemToolSpec(memory=memory_only)
    with pytest.raises(InvalidInputError, match="type must be one of episodic, semantic; got 'working'"):
        spec.store_memory("something", type="working")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="k must be a positive integer"):
        spec.recall_memory("anything", k=0)
    with pytest.raises(InvalidInputError, match="importance"):
        spec.store_memory("something", importance=3)
    with pytest.raises(InvalidTypeError, match="memory must be a ripplemem.RippleMem"):
        RippleMemToolSpec(memory=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="mode must be one of"):
        RippleMemToolSpec(memory=memory_only, mode="graph")
