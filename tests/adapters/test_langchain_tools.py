"""Memory tools: the LangChain standard tool suites, what each tool returns, and a real agent loop."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from langchain_ripplemem import (
    EraseMemoryTool,
    FindConnectionsTool,
    ForgetMemoryTool,
    RecallMemoryTool,
    RippleMemToolkit,
    StoreMemoryTool,
    UpdateMemoryTool,
)
from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.interfaces.tool_replies import TOOL_NAMES


@pytest.fixture(scope="module")
def suite_memory(embedder: Embedder) -> Iterator[RippleMem]:
    handle = RippleMem(path=None, user_id="suite", embedder=embedder)
    handle.add_many(["Calvin bought a Ferrari 488 in March.", "Calvin drove the Ferrari 488 to Maranello."])
    yield handle
    handle.close()


class _Standard:
    """One tool under LangChain's standard suites, built on a real store."""

    tool_class: type[BaseTool]
    example: dict[str, Any]
    options: dict[str, Any]

    @pytest.fixture(autouse=True)
    def _memory(self, suite_memory: RippleMem) -> None:
        self.memory = suite_memory

    @property
    def tool_constructor(self) -> type[BaseTool]:
        return self.tool_class

    @property
    def tool_constructor_params(self) -> dict:
        return {"memory": self.memory, **self.options}

    @property
    def tool_invoke_params_example(self) -> dict:
        return self.example


ARTIFACT: dict[str, Any] = {"response_format": "content_and_artifact"}
NO_ID = "0123456789abcdef0123456789abcdef"
for _label, _cls, _example, _options in [
    ("Store", StoreMemoryTool, {"content": "Calvin's Ferrari is red.", "type": "semantic"}, {}),
    ("Recall", RecallMemoryTool, {"query": "What car does Calvin have?", "k": 2}, {}),
    ("RecallArtifact", RecallMemoryTool, {"query": "What car does Calvin have?", "k": 2}, ARTIFACT),
    ("Update", UpdateMemoryTool, {"memory_id": NO_ID, "importance": 0.4}, ARTIFACT),
    ("FindConnections", FindConnectionsTool, {"source": "Calvin", "target": "Maranello"}, {}),
    ("Forget", ForgetMemoryTool, {"memory_id": NO_ID}, {}),
    ("Erase", EraseMemoryTool, {"matching": "Ferrari"}, ARTIFACT),  # previews only: nothing is erased
    ("EraseEverything", EraseMemoryTool, {"everything": True}, {"allow_everything": True}),
]:
    for _base in (ToolsUnitTests, ToolsIntegrationTests):
        _name = f"Test{_label}Tool{_base.__name__.removeprefix('Tools')}"
        globals()[_name] = type(
            _name, (_Standard, _base), {"tool_class": _cls, "example": _example, "options": _options}
        )


def tools_of(memory: RippleMem) -> dict[str, BaseTool]:
    return {tool.name: tool for tool in RippleMemToolkit(memory=memory).get_tools()}


def test_toolkit_gives_five_tools_or_the_read_only_two(alice: RippleMem) -> None:
    assert list(tools_of(alice)) == [
        "store_memory",
        "recall_memory",
        "update_memory",
        "find_connections",
        "forget_memory",
    ]
    read_only = RippleMemToolkit(memory=alice, read_only=True).get_tools()
    assert [tool.name for tool in read_only] == ["recall_memory", "find_connections"]
    schema = tools_of(alice)["store_memory"].tool_call_schema.model_json_schema()
    assert schema["properties"]["type"]["enum"] == ["episodic", "semantic"]
    assert "self-contained sentence" in schema["properties"]["content"]["description"]


def test_store_recall_connect_forget(alice: RippleMem) -> None:
    tools = tools_of(alice)
    stored = tools["store_memory"].invoke(
        {
            "content": "Calvin bought a Ferrari 488.",
            "type": "semantic",
            "importance": 0.9,
            "event_time": "2024-03-15",
        }
    )
    memory = alice.list()[0]
    assert stored == f"Stored memory {memory.id} (semantic): Calvin bought a Ferrari 488."
    assert (memory.type, memory.importance) == ("semantic", 0.9)
    assert memory.event_time.date().isoformat() == "2024-03-15"
    tools["store_memory"].invoke({"content": "The Ferrari 488 was repainted in Maranello."})
    recalled = tools["recall_memory"].invoke({"query": "Calvin's car", "k": 1})
    assert recalled.splitlines() == [
        '1 memory for "Calvin\'s car", best first:',
        f"1. [id={memory.id}] (2024-03-15, semantic, score {recalled.split('score ')[1][:4]}) "
        "Calvin bought a Ferrari 488.",
    ]
    assert "within 3 hops" in tools["find_connections"].invoke({"source": "Calvin", "target": "Maranello"})
    connected = tools["find_connections"].invoke({"source": "Calvin", "target": "Maranello", "max_hops": 4})
    assert connected.splitlines()[1] == (
        "1. Calvin -MENTIONS- Calvin bought a Ferrari 488. -MENTIONS- Ferrari 488 -MENTIONS- "
        "The Ferrari 488 was repainted in Maranello. -MENTIONS- Maranello"
    )
    assert tools["forget_memory"].invoke({"memory_id": memory.id}) == (
        f"Forgot memory {memory.id}: Calvin bought a Ferrari 488."
    )
    assert alice.get(memory.id) is None
    assert "nothing was deleted" in tools["forget_memory"].invoke({"memory_id": memory.id})


def test_model_mistakes_come_back_as_messages_not_crashes(alice: RippleMem) -> None:
    tools = tools_of(alice)
    args = {"content": "x", "event_time": "yesterday"}
    bad_date = tools["store_memory"].invoke(
        {"type": "tool_call", "id": "c1", "name": "store_memory", "args": args}
    )
    assert isinstance(bad_date, ToolMessage) and bad_date.status == "error"
    assert "event_time 'yesterday' is not an ISO-8601 date" in bad_date.content
    too_many = tools["recall_memory"].invoke(
        {"type": "tool_call", "id": "c2", "name": "recall_memory", "args": {"query": "cat", "k": 500}}
    )
    assert too_many.content.startswith("Invalid arguments: k: Input should be less than or equal to 20")
    assert alice.list() == []
    assert "No memories found" in tools["recall_memory"].invoke({"query": "anything"})
    nowhere = tools["find_connections"].invoke({"source": "A", "target": "B"})
    assert nowhere == "No connection between 'A' and 'B' within 3 hops."


async def test_async_tools_and_plain_string_input(alice: RippleMem) -> None:
    tools = tools_of(alice)
    await tools["store_memory"].ainvoke("Dana runs every Sunday.")  # a string is the first argument
    assert "Dana runs every Sunday." in await tools["recall_memory"].ainvoke({"query": "exercise"})
    assert "Dana runs every Sunday." in tools["recall_memory"].invoke("exercise")


def test_tools_need_a_ripplemem_handle() -> None:
    with pytest.raises(InvalidTypeError, match="memory must be a RippleMem handle"):
        RecallMemoryTool(memory=None)
    with pytest.raises(InvalidTypeError, match="memory must be a RippleMem handle"):
        RippleMemToolkit(memory={"user_id": "alice"})


def test_agent_stores_in_one_conversation_and_recalls_in_the_next(
    alice: RippleMem, script: Any, call: Any
) -> None:
    model = script(
        call(
            "store_memory",
            "c1",
            content="The user's daughter Mia is allergic to peanuts.",
            type="semantic",
            importance=0.9,
        ),
        AIMessage("I'll keep that in mind."),
        call("recall_memory", "c2", query="Mia allergies"),
        AIMessage("Mia is allergic to peanuts, so skip the satay."),
    )
    agent = create_agent(model, RippleMemToolkit(memory=alice).get_tools(), system_prompt="You have memory.")
    agent.invoke({"messages": [HumanMessage("My daughter Mia is allergic to peanuts.")]})
    out = agent.invoke({"messages": [HumanMessage("Planning dinner for Mia, any concerns?")]})
    assert out["messages"][-1].text == "Mia is allergic to peanuts, so skip the satay."
    second = model.seen[2]  # the second conversation starts fresh: only memory links it to the first
    assert [m.type for m in second] == ["system", "human"]
    shown = model.seen[3][-1]
    assert shown.type == "tool" and "The user's daughter Mia is allergic to peanuts." in shown.text
    assert [m.content for m in alice.list()] == ["The user's daughter Mia is allergic to peanuts."]


def test_a_run_config_picks_the_user(alice: RippleMem) -> None:
    tools = tools_of(alice)
    config = {"configurable": {"user_id": "bob", "thread_id": "t-9"}}
    tools["store_memory"].invoke({"content": "Bob plays the cello."}, config=config)
    assert alice.list() == []
    bob = alice.scope("bob")
    assert [(m.content, m.session_id) for m in bob.list()] == [("Bob plays the cello.", "t-9")]
    assert "Bob plays the cello." in tools["recall_memory"].invoke({"query": "music"}, config=config)
    assert "No memories found" in tools["recall_memory"].invoke({"query": "music"})


def tool_message(tool: BaseTool, call_id: str = "c1", **args: Any) -> ToolMessage:
    """Invoke a tool as an agent does (a tool call), so the reply is a ToolMessage."""
    return tool.invoke({"type": "tool_call", "id": call_id, "name": tool.name, "args": args})


def test_tools_can_be_renamed_redescribed_and_chosen(alice: RippleMem) -> None:
    toolkit = RippleMemToolkit(
        memory=alice,
        include=("recall_memory", "forget_memory", "erase_memory"),
        names={"recall_memory": "search_memory", "forget_memory": "delete_memory"},
        descriptions={"erase_memory": "Erase what the user asks to forget."},
    )
    tools = {tool.name: tool for tool in toolkit.get_tools()}
    assert list(tools) == ["search_memory", "delete_memory", "erase_memory"]
    assert "Call search_memory first to find its id" in tools["delete_memory"].description
    assert "passed to find_connections or delete_memory" in tools["search_memory"].description
    assert tools["erase_memory"].description == "Erase what the user asks to forget."
    assert tools["delete_memory"].invoke({"memory_id": "nope"}).endswith("Use search_memory to find the id.")
    with pytest.raises(InvalidInputError, match="no memory tool 'recall' to rename"):
        RippleMemToolkit(memory=alice, names={"recall": "search"})
    with pytest.raises(InvalidInputError, match="must be 1 to 64 letters"):
        RippleMemToolkit(memory=alice, names={"recall_memory": "search memory"})
    with pytest.raises(InvalidInputError, match=r"include names \['erase'\], not memory tools"):
        RippleMemToolkit(memory=alice, include=("erase",))
    with pytest.raises(InvalidInputError, match=r"read_only=True .* but include lists \['update_memory'\]"):
        RippleMemToolkit(memory=alice, read_only=True, include=("recall_memory", "update_memory"))


def test_update_changes_text_and_metadata_by_id(alice: RippleMem) -> None:
    tools = tools_of(alice)
    memory = alice.add("Dana works at Acme as a designer.", metadata={"source_chat": "c7", "team": "web"})
    reply = tools["update_memory"].invoke(
        {
            "memory_id": memory.id,
            "type": "semantic",
            "content": "Dana works at Globex as a designer.",
            "metadata": {"team": None, "verified": True},
        }
    )
    assert reply == f"Updated memory {memory.id} (semantic): Dana works at Globex as a designer."
    updated = alice.get(memory.id)
    assert (updated.content, updated.type) == ("Dana works at Globex as a designer.", "semantic")
    assert updated.metadata == {"source_chat": "c7", "verified": True}
    assert f"[id={memory.id}]" in tools["recall_memory"].invoke({"query": "Where does Dana work?", "k": 1})
    assert "nothing was updated" in tools["update_memory"].invoke({"memory_id": "f" * 32, "content": "x"})
    empty = tool_message(tools["update_memory"], memory_id=memory.id)
    assert empty.status == "error" and "nothing to update: give content" in empty.content


def test_content_and_artifact_keeps_the_structure_out_of_the_prompt(alice: RippleMem) -> None:
    tools = {
        t.name: t
        for t in RippleMemToolkit(
            memory=alice, response_format="content_and_artifact", include=TOOL_NAMES
        ).get_tools()
    }
    stored = tool_message(tools["store_memory"], content="Mia is allergic to peanuts.", type="semantic")
    memory_id = stored.artifact["metadata"]["memory_id"]
    assert stored.content == f"Stored memory {memory_id} (semantic): Mia is allergic to peanuts."
    recalled = tool_message(tools["recall_memory"], query="Mia's allergies", k=3)
    assert recalled.content.startswith('1 memory for "Mia\'s allergies"')
    [document] = recalled.artifact
    assert (document.id, document.page_content, document.metadata["type"]) == (
        memory_id,
        "Mia is allergic to peanuts.",
        "semantic",
    )
    updated = tool_message(tools["update_memory"], memory_id=memory_id, importance=0.95)
    assert updated.artifact["metadata"]["importance"] == 0.95
    preview = tool_message(tools["erase_memory"], matching="peanuts")
    assert preview.artifact["dry_run"] and preview.artifact["memory_ids"] == [memory_id]
    assert tools["recall_memory"].invoke({"query": "peanuts"}).startswith("1 memory")  # plain call: text


def test_erase_previews_then_erases_only_the_run_users_memories(alice: RippleMem) -> None:
    erase = RippleMemToolkit(memory=alice, include=("erase_memory",)).get_tools()[0]
    bob = {"configurable": {"langgraph_user_id": "bob"}}
    alice.add("I was diagnosed with type 2 diabetes in March.")
    alice.scope("bob").add_many(["My diabetes check-up is next week.", "I play the cello."])
    preview = erase.invoke({"matching": "diabetes"}, config=bob)
    assert preview.splitlines()[0] == (
        "Preview, nothing erased yet: 1 memory matching 'diabetes' would be "
        "erased for good, with their other versions and summaries:"
    )
    assert preview.splitlines()[1].endswith("] My diabetes check-up is next week.")
    assert "call erase_memory again with the same arguments and confirm=true" in preview
    assert len(alice.scope("bob").list()) == 2
    done = erase.invoke({"matching": "diabetes", "confirm": True}, config=bob)
    assert done == "Erased 1 memory for good; verified: nothing of them is left in any layer."
    assert [m.content for m in alice.scope("bob").list()] == ["I play the cello."]
    assert [m.content for m in alice.list()] == ["I was diagnosed with type 2 diabetes in March."]
    refused = tool_message(erase, everything=True)  # not in its schema unless allowed
    assert refused.content.startswith("Invalid arguments: everything: Extra inputs are not permitted")
    forget_me = EraseMemoryTool(memory=alice, allow_everything=True)
    assert "1 memory all of the user's memories would be erased" in forget_me.invoke(
        {"everything": True}, config=bob
    )
    forget_me.invoke({"everything": True, "confirm": True}, config=bob)
    assert alice.scope("bob").list() == [] and len(alice.list()) == 1


def test_agent_asks_before_it_erases(alice: RippleMem, script: Any, call: Any) -> None:
    alice.add_many(
        [
            "My knee hurts since I started running.",
            "I booked a physio appointment for my knee.",
            "I like jazz.",
        ]
    )
    model = script(
        call("erase_memory", "c1", matching="my knee"),
        AIMessage("I would erase 2 memories about your knee. Shall I?"),
        call("erase_memory", "c2", matching="my knee", confirm=True),
        AIMessage("Done, they are gone."),
    )
    agent = create_agent(model, RippleMemToolkit(memory=alice, include=("erase_memory",)).get_tools())
    agent.invoke({"messages": [HumanMessage("Forget everything about my knee.")]})
    preview = model.seen[1][-1]
    assert preview.type == "tool" and "Preview, nothing erased yet: 2 memories" in preview.text
    assert len(alice.list()) == 3
    agent.invoke({"messages": [HumanMessage("Yes, erase them.")]})
    assert [m.content for m in alice.list()] == ["I like jazz."]
