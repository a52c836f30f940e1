"""FunctionAgent and ReActAgent with RippleMem tools and memory, run for real offline.

The LLM is llama-index's MockFunctionCallingLLM playing a script: fixed tool calls, and answers
built from what the agent actually handed it (tool results, recalled memories), so a memory that
was not stored or not recalled makes the answer wrong. Each "session" reopens the store from disk.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent, ReActAgent, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.memory import Memory

from llamaindex_ripplemem import RippleMemMemory, RippleMemMemoryBlock, RippleMemToolSpec
from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder

Step = ChatMessage | Callable[[list[ChatMessage]], ChatMessage]
Opener = Callable[[], RippleMem]

# llama-index's workflows inspect the agent (a pydantic model) and trip pydantic's deprecation notices.
pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning:inspect", "ignore:is_running called from within a step:DeprecationWarning"
)


def scripted(*steps: Step) -> MockFunctionCallingLLM:
    """An LLM that replies with each step in turn; a callable step sees the messages it was sent."""
    queue = list(steps)

    def generate(messages: list[ChatMessage], **_: Any) -> ChatMessage:
        step = queue.pop(0)
        return step(list(messages)) if callable(step) else step

    return MockFunctionCallingLLM(response_generator=generate)


def tool_call(name: str, **kwargs: Any) -> ChatMessage:
    return ChatMessage(
        role="assistant",
        blocks=[ToolCallBlock(tool_call_id=f"call-{name}", tool_name=name, tool_kwargs=kwargs)],
    )


def answer_from_last_tool(messages: list[ChatMessage]) -> ChatMessage:
    results = [m.content or "" for m in messages if m.role == "tool"]
    return ChatMessage(role="assistant", content="From memory: " + results[-1])


def answer_from_system(messages: list[ChatMessage]) -> ChatMessage:
    shown = [m.content or "" for m in messages if m.role == "system"]
    return ChatMessage(role="assistant", content="I was told: " + " | ".join(shown))


def react_action(name: str, **kwargs: Any) -> ChatMessage:
    return ChatMessage(
        role="assistant",
        content=(f"Thought: I should use a tool.\nAction: {name}\nAction Input: {json.dumps(kwargs)}"),
    )


def react_answer(text: str) -> ChatMessage:
    return ChatMessage(
        role="assistant", content=f"Thought: I can answer without using any more tools.\nAnswer: {text}"
    )


def react_answer_from_observation(messages: list[ChatMessage]) -> ChatMessage:
    observations = [m.content or "" for m in messages if (m.content or "").startswith("Observation:")]
    return react_answer(observations[-1].removeprefix("Observation:").strip().replace("\n", " / "))


async def run(
    agent: FunctionAgent | ReActAgent, message: str, memory: RippleMemMemory | Memory | None = None
) -> tuple[str, list[tuple[str, str]]]:
    """The agent's answer and the (tool name, tool output) of every tool call it made."""
    handler = agent.run(user_msg=message, memory=memory)
    calls = [
        (event.tool_name, event.tool_output.content)
        async for event in handler.stream_events()
        if isinstance(event, ToolCallResult)
    ]
    return str(await handler), calls


@pytest.fixture
def open_store(tmp_path: Path, embedder: Embedder) -> Iterator[Callable[[], RippleMem]]:
    """Open Alice's on-disk store; each call is a new session (the previous handle is closed)."""
    handles: list[RippleMem] = []

    def open_() -> RippleMem:
        if handles:
            handles[-1].close()
        handles.append(RippleMem(path=tmp_path / "store", user_id="alice", embedder=embedder))
        return handles[-1]

    yield open_
    handles[-1].close()


async def test_function_agent_recalls_in_a_later_session_what_it_stored(open_store: Opener) -> None:
    monday = open_store()
    agent = FunctionAgent(
        tools=RippleMemToolSpec(memory=monday).to_tool_list(),
        llm=scripted(
            tool_call("store_memory", content="The user's sister Ana moved to Lisbon.", type="semantic"),
            ChatMessage(role="assistant", content="Noted, I'll remember that."),
        ),
    )
    answer, calls = await run(agent, "My sister Ana moved to Lisbon last spring.")
    assert answer == "Noted, I'll remember that."
    assert [name for name, _ in calls] == ["store_memory"] and calls[0][1].startswith("Stored memory")

    tuesday = open_store()
    agent = FunctionAgent(
        tools=RippleMemToolSpec(memory=tuesday).to_tool_list(),
        llm=scripted(
            tool_call("recall_memory", query="Where does the user's sister live?"), answer_from_last_tool
        ),
    )
    answer, calls = await run(agent, "Where does my sister live these days?")
    assert [name for name, _ in calls] == ["recall_memory"]
    assert "The user's sister Ana moved to Lisbon." in answer


async def test_react_agent_recalls_and_connects_in_a_later_session(open_store: Opener) -> None:
    monday = open_store()
    agent = ReActAgent(
        tools=RippleMemToolSpec(memory=monday).to_tool_list(),
        llm=scripted(
            react_action("store_memory", content="Bob adopted a cat called Tom."),
            react_action("store_memory", content="Tom was found at the Lisbon shelter."),
            react_answer("Stored both."),
        ),
    )
    answer, calls = await run(agent, "Bob adopted Tom, a cat found at the Lisbon shelter.")
    assert answer == "Stored both." and [name for name, _ in calls] == ["store_memory", "store_memory"]

    tuesday = open_store()
    agent = ReActAgent(
        tools=RippleMemToolSpec(memory=tuesday).to_tool_list(),
        llm=scripted(
            react_action("recall_memory", query="Bob's cat"),
            react_answer_from_observation,
        ),
    )
    answer, _ = await run(agent, "What is the name of Bob's cat?")
    assert "Bob adopted a cat called Tom." in answer

    agent = ReActAgent(
        tools=RippleMemToolSpec(memory=tuesday).to_tool_list(),
        llm=scripted(
            react_action("find_connections", source="Bob", target="Lisbon", max_hops=4),
            react_answer_from_observation,
        ),
    )
    answer, _ = await run(agent, "How is Bob linked to Lisbon?")
    assert answer.startswith("1 connection between 'Bob' and 'Lisbon'") and "Lisbon shelter" in answer


async def test_function_agent_with_ripplemem_memory_remembers_across_sessions(open_store: Opener) -> None:
    monday = open_store()
    agent = FunctionAgent(
        tools=[],
        llm=scripted(
            ChatMessage(role="assistant", content="Noted."), ChatMessage(role="assistant", content="Nice!")
        ),
    )
    monday_memory = RippleMemMemory(memory=monday, session_id="mon")
    await run(agent, "Please remember that I am allergic to peanuts.", monday_memory)
    await run(agent, "The weather is nice today.", monday_memory)
    assert [m.content for m in monday.list()] == ["Please remember that I am allergic to peanuts."]

    tuesday = open_store()
    memory = RippleMemMemory(memory=tuesday, session_id="tue", insert_method="system")
    agent = FunctionAgent(tools=[], llm=scripted(answer_from_system), system_prompt="You are a helpful cook.")
    answer, _ = await run(agent, "What am I allergic to?", memory)
    assert "You are a helpful cook." in answer and "I am allergic to peanuts" in answer
    # Tuesday's chat history holds only Tuesday's turns: the allergy came from long-term memory.
    assert [m.content for m in memory.get_all()] == ["What am I allergic to?", answer]

    bob_memory = RippleMemMemory(
        memory=tuesday.scope(user_id="bob"), session_id="tue", insert_method="system"
    )
    agent = FunctionAgent(tools=[], llm=scripted(answer_from_system))
    answer, _ = await run(agent, "What am I allergic to?", bob_memory)
    assert "peanuts" not in answer


def prompt_recorder(seen: list[str], answer: str) -> Callable[[list[ChatMessage]], ChatMessage]:
    """A ReAct step that keeps the text of every message the model was sent, then answers."""

    def step(messages: list[ChatMessage]) -> ChatMessage:
        seen.extend(m.content or "" for m in messages)
        return react_answer(answer)

    return step


async def test_react_agent_sees_recalled_memories_in_the_user_message(open_store: Opener) -> None:
    store = open_store()
    store.add("The user's daughter Mia starts school on 2025-09-01")
    seen: list[str] = []
    llm = scripted(prompt_recorder(seen, "Mia starts school on 2025-09-01."))
    agent = ReActAgent(tools=RippleMemToolSpec(memory=store).to_tool_list(), llm=llm)
    # The default placement: with insert_method="system" ReActAgent (no system_prompt) dropped it.
    memory = RippleMemMemory(memory=store, session_id="r1")
    answer, _ = await run(agent, "When does Mia start school?", memory)
    assert answer == "Mia starts school on 2025-09-01."
    assert any(
        "Long-term memories" in text
        and "starts school on 2025-09-01" in text
        and text.endswith("When does Mia start school?")
        for text in seen
    )


@pytest.mark.parametrize("system_prompt", [None, "You are a helpful assistant."])
async def test_react_agent_sees_what_the_memory_block_recalls(
    open_store: Opener, system_prompt: str | None
) -> None:
    store = open_store()
    store.add("The user's cat is called Tom")
    seen: list[str] = []
    agent = ReActAgent(tools=[], llm=scripted(prompt_recorder(seen, "Tom.")), system_prompt=system_prompt)
    # A block's text once went to the leading system message, which ReActAgent drops when it has
    # no system_prompt: the model never saw the memory.
    chat = Memory.from_defaults(session_id="r2", memory_blocks=[RippleMemMemoryBlock(memory=store)])
    answer, _ = await run(agent, "What is my cat called?", chat)
    assert answer == "Tom."
    assert any("Long-term memories" in text and "The user's cat is called Tom" in text for text in seen), seen
