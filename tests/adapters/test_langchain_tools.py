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
    FindConnectionsTool,
    ForgetMemoryTool,
    RecallMemoryTool,
    RippleMemToolkit,
    StoreMemoryTool,
)
from ripplemem import RippleMem
from ripplemem.embeddings import Embedder
from ripplemem.errors import InvalidTypeError


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

    @pytest.fixture(autouse=True)
    def _memory(self, suite_memory: RippleMem) -> None:
        self.memory = suite_memory

    @property
    def tool_constructor(self) -> type[BaseTool]:
        return self.tool_class

    @property
    def tool_constructor_params(self) -> dict:
        return {"memory": self.memory}

    @property
    def tool_invoke_params_example(self) -> dict:
        return self.example


for _cls, _example in [
    (StoreMemoryTool, {"content": "Calvin's Ferrari is red.", "type": "semantic", "importance": 0.7}),
    (RecallMemoryTool, {"query": "What car does Calvin have?", "k": 2}),
    (FindConnectionsTool, {"source": "Calvin", "target": "Maranello"}),
    (ForgetMemoryTool, {"memory_id": "0123456789abcdef0123456789abcdef"}),
]:
    for _base in (ToolsUnitTests, ToolsIntegrationTests):
        _name = f"Test{_cls.__name__}{_base.__name__.removeprefix('Tools')}"
        globals()[_name] = type(_name, (_Standard, _base), {"tool_class": _cls, "example": _example})


def tools_of(memory: RippleMem) -> dict[str, BaseTool]:
    return {tool.name: tool for tool in RippleMemToolkit(memory=memory).get_tools()}


def test_toolkit_gives_four_tools_or_the_read_only_two(alice: RippleMem) -> None:
    assert list(tools_of(alice)) == ["store_memory", "recall_memory", "find_connections", "forget_memory"]
    read_only = RippleMemToolkit(memory=alice, read_only=True).get_tools()
    assert [tool.name for tool in read_only] == ["recall_memory", "find_connections"]
    schema = tools_of(alice)["store_memory"].tool_call_schema.model_json_schema()
    assert schema["properties"]["type"]["enum"] == ["episodic", "semantic"]
    assert "self-contained sentence" in schema["properties"]["content"]["description"]


def test_store_recall_connect_forget(alice: RippleMem) -> None:
    tools = tools_of(alice)
    stored = tools["store_memory"].invoke({"content": "Calvin bought a Ferrari 488.", "type": "semantic",
                                           "importance": 0.9, "event_time": "2024-03-15"})
    memory = alice.list()[0]
    assert stored == f"Stored memory {memory.id} (semantic): Calvin bought a Ferrari 488."
    assert (memory.type, memory.importance) == ("semantic", 0.9)
    assert memory.event_time.date().isoformat() == "2024-03-15"
    tools["store_memory"].invoke({"content": "The Ferrari 488 was repainted in Maranello."})
    recalled = tools["recall_memory"].invoke({"query": "Calvin's car", "k": 1})
    assert recalled.splitlines() == [
        "1 memory for \"Calvin's car\", best first:",
        f"1. [id={memory.id}] (2024-03-15, semantic, score {recalled.split('score ')[1][:4]}) "
        "Calvin bought a Ferrari 488."]
    assert "within 3 hops" in tools["find_connections"].invoke({"source": "Calvin", "target": "Maranello"})
    connected = tools["find_connections"].invoke({"source": "Calvin", "target": "Maranello", "max_hops": 4})
    assert connected.splitlines()[1] == (
        "1. Calvin -MENTIONS- Calvin bought a Ferrari 488. -MENTIONS- Ferrari 488 -MENTIONS- "
        "The Ferrari 488 was repainted in Maranello. -MENTIONS- Maranello")
    assert tools["forget_memory"].invoke({"memory_id": memory.id}) == (
        f"Forgot memory {memory.id}: Calvin bought a Ferrari 488.")
    assert alice.get(memory.id) is None
    assert "nothing was deleted" in tools["forget_memory"].invoke({"memory_id": memory.id})


def test_model_mistakes_come_back_as_messages_not_crashes(alice: RippleMem) -> None:
    tools = tools_of(alice)
    args = {"content": "x", "event_time": "yesterday"}
    bad_date = tools["store_memory"].invoke({"type": "tool_call", "id": "c1", "name": "store_memory",
                                             "args": args})
    assert isinstance(bad_date, ToolMessage) and bad_date.status == "error"
    assert "event_time 'yesterday' is not an ISO-8601 date" in bad_date.content
    too_many = tools["recall_memory"].invoke(
        {"type": "tool_call", "id": "c2", "name": "recall_memory", "args": {"query": "cat", "k": 500}})
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


def test_agent_stores_in_one_conversation_and_recalls_in_the_next(alice: RippleMem, script: Any,
                                                                  call: Any) -> None:
    model = script(
        call("store_memory", "c1", content="The user's daughter Mia is allergic to peanuts.", type="semantic",
             importance=0.9),
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
