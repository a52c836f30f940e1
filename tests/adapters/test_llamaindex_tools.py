"""RippleMemToolSpec: the four memory tools as LlamaIndex FunctionTools, called directly."""

from __future__ import annotations

import re

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.schema import NodeWithScore
from llama_index.core.tools import FunctionTool

from llamaindex_ripplemem import RippleMemToolSpec
from ripplemem import InvalidInputError, InvalidTypeError, RippleMem
from ripplemem.interfaces.tool_replies import TOOL_NAMES, ToolReply

# llama-index's workflows inspect the agent (a pydantic model) and trip pydantic's deprecation notices.
pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning:inspect", "ignore:is_running called from within a step:DeprecationWarning"
)


def tools_of(spec: RippleMemToolSpec) -> dict[str, FunctionTool]:
    return {tool.metadata.name: tool for tool in spec.to_tool_list()}  # type: ignore[misc]


def stored_id(output: str) -> str:
    match = re.search(r"Stored memory ([0-9a-f]{32})", output)
    assert match, output
    return match.group(1)


def test_tools_have_names_schemas_and_guidance(memory_only: RippleMem) -> None:
    tools = tools_of(RippleMemToolSpec(memory=memory_only))
    assert list(tools) == [
        "store_memory",
        "recall_memory",
        "update_memory",
        "find_connections",
        "forget_memory",
    ]
    schemas = {name: tool.metadata.get_parameters_dict() for name, tool in tools.items()}
    assert schemas["store_memory"]["required"] == ["content"]
    assert schemas["store_memory"]["properties"]["type"]["enum"] == ["episodic", "semantic"]
    assert "ISO date" in schemas["store_memory"]["properties"]["event_time"]["description"]
    assert schemas["recall_memory"]["required"] == ["query"]
    assert schemas["find_connections"]["required"] == ["source", "target"]
    assert schemas["forget_memory"]["required"] == ["memory_id"]
    assert schemas["update_memory"]["required"] == ["memory_id"]
    assert "recall_memory first" in tools["forget_memory"].metadata.description
    assert all(tool.async_fn is not None for tool in tools.values())


def test_store_recall_forget_round_trip(memory_only: RippleMem) -> None:
    tools = tools_of(RippleMemToolSpec(memory=memory_only))
    output = (
        tools["store_memory"]
        .call(
            content="The user's sister Ana lives in Lisbon.",
            type="semantic",
            importance=0.9,
            event_time="2024-05-02",
        )
        .content
    )
    memory_id = stored_id(output)
    stored = memory_only.get(memory_id)
    assert stored is not None and stored.type == "semantic" and stored.importance == 0.9
    assert stored.event_time is not None and stored.event_time.date().isoformat() == "2024-05-02"

    recalled = tools["recall_memory"].call(query="Where does my sister live?", k=3).content
    assert recalled.startswith("1 memory for 'Where does my sister live?'")
    assert f"[id={memory_id}] (2024-05-02, semantic, score" in recalled and "Lisbon" in recalled

    assert tools["forget_memory"].call(memory_id=memory_id).content == (
        f"Forgot memory {memory_id}: The user's sister Ana lives in Lisbon."
    )
    assert memory_only.get(memory_id) is None
    assert tools["recall_memory"].call(query="Where does my sister live?").content == (
        "No memories found for 'Where does my sister live?'."
    )
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
        "recall_memory",
        "find_connections",
    ]


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


def test_tools_can_be_renamed_redescribed_and_chosen(memory_only: RippleMem) -> None:
    spec = RippleMemToolSpec(
        memory=memory_only,
        include=["recall_memory", "forget_memory", "erase_memory"],
        names={"recall_memory": "search_memory"},
        descriptions={"erase_memory": "Erase what the user asks to forget."},
    )
    tools = tools_of(spec)
    assert list(tools) == ["search_memory", "forget_memory", "erase_memory"]
    assert tools["search_memory"].metadata.description.startswith("search_memory(query: str")
    assert "Find the id with search_memory first" in tools["forget_memory"].metadata.description
    assert tools["erase_memory"].metadata.description == "Erase what the user asks to forget."
    missing = tools["forget_memory"].call(memory_id="nope").content
    assert missing.endswith("use search_memory to find the right id.")
    with pytest.raises(InvalidInputError, match=r"include names \['erase'\], not memory tools"):
        RippleMemToolSpec(memory=memory_only, include=["erase"])
    with pytest.raises(InvalidInputError, match="response_format must be one of content, content_and_"):
        RippleMemToolSpec(memory=memory_only, response_format="artifact")


def test_update_changes_a_memory_by_id(memory_only: RippleMem) -> None:
    update = tools_of(RippleMemToolSpec(memory=memory_only))["update_memory"]
    memory = memory_only.add("The user's sister Ana lives in Lisbon.", metadata={"from": "chat 3"})
    reply = update.call(
        memory_id=memory.id,
        content="The user's sister Ana lives in Porto.",
        metadata={"from": None, "checked": True},
    ).content
    assert reply == f"Updated memory {memory.id} (episodic): The user's sister Ana lives in Porto."
    updated = memory_only.get(memory.id)
    assert (updated.content, updated.metadata) == ("The user's sister Ana lives in Porto.", {"checked": True})
    assert "nothing was updated" in update.call(memory_id="f" * 32, importance=0.5).content


def test_content_and_artifact_puts_the_structure_in_raw_output(memory_only: RippleMem) -> None:
    tools = tools_of(
        RippleMemToolSpec(memory=memory_only, include=TOOL_NAMES, response_format="content_and_artifact")
    )
    stored = tools["store_memory"].call(content="Mia is allergic to peanuts.", type="semantic")
    memory_id = stored.raw_output.artifact["metadata"]["memory_id"]
    assert stored.content == f"Stored memory {memory_id} (semantic): Mia is allergic to peanuts."
    recalled = tools["recall_memory"].call(query="Mia's allergies", k=3)
    assert isinstance(recalled.raw_output, ToolReply) and recalled.content.startswith("1 memory for")
    [node] = recalled.raw_output.artifact
    assert isinstance(node, NodeWithScore) and (node.node.node_id, node.node.get_content()) == (
        memory_id,
        "Mia is allergic to peanuts.",
    )
    preview = tools["erase_memory"].call(matching="peanuts").raw_output.artifact
    assert preview["dry_run"] and preview["memory_ids"] == [memory_id]
    assert type(RippleMemToolSpec(memory=memory_only).recall_memory("peanuts")) is str  # no artifact


def test_erase_previews_then_erases_and_forget_me_must_be_allowed(memory_only: RippleMem) -> None:
    memory_only.add_many(["My diabetes check-up is next week.", "I play the cello."])
    erase = tools_of(RippleMemToolSpec(memory=memory_only, include=["erase_memory"]))["erase_memory"]
    preview = erase.call(matching="diabetes").content
    assert preview.startswith("Preview, nothing erased yet: 1 memory matching 'diabetes'")
    assert "] My diabetes check-up is next week." in preview and len(memory_only.list()) == 2
    assert erase.call(matching="diabetes", confirm=True).content == (
        "Erased 1 memory for good; verified: nothing of them is left in any layer."
    )
    assert [m.content for m in memory_only.list()] == ["I play the cello."]
    with pytest.raises(InvalidInputError, match="turned off for this tool"):
        erase.call(everything=True, confirm=True)
    assert len(memory_only.list()) == 1
    forget_me = RippleMemToolSpec(memory=memory_only, include=["erase_memory"], allow_erase_everything=True)
    forget_me.erase_memory(everything=True, confirm=True)
    assert memory_only.list() == []


async def test_agent_previews_before_it_erases(memory_only: RippleMem) -> None:
    memory_only.add_many(["My knee hurts since I started running.", "I like jazz."])
    steps = [
        ChatMessage(
            role="assistant",
            blocks=[
                ToolCallBlock(
                    tool_call_id="c1", tool_name="erase_memory", tool_kwargs={"matching": "my knee"}
                )
            ],
        ),
        ChatMessage(role="assistant", content="I would erase 1 memory about your knee. Shall I?"),
    ]
    llm = MockFunctionCallingLLM(response_generator=lambda messages, **_: steps.pop(0))
    tools = RippleMemToolSpec(memory=memory_only, include=["erase_memory"]).to_tool_list()
    agent = FunctionAgent(tools=tools, llm=llm)
    response = await agent.run("Forget what I told you about my knee.")
    assert str(response) == "I would erase 1 memory about your knee. Shall I?"
    assert len(memory_only.list()) == 2  # the preview erased nothing
