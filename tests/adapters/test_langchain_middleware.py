"""RippleMemMiddleware in create_agent: what the model is shown, and what each turn leaves in memory."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_ripplemem import RippleMemMiddleware, RippleMemStore
from ripplemem import RippleMem
from ripplemem.errors import InvalidInputError, InvalidTypeError

SYSTEM = "You are a helpful assistant."


def ask(agent: Any, text: str, thread: str, **configurable: Any) -> str:
    config = {"configurable": {"thread_id": thread, **configurable}}
    return agent.invoke({"messages": [HumanMessage(text)]}, config=config)["messages"][-1].text


def test_a_fact_from_one_session_is_shown_in_the_next(alice: RippleMem, script: Any) -> None:
    model = script(AIMessage("Noted, Jane lives in Boston."), AIMessage("Jane lives in Boston."))
    agent = create_agent(model, [], system_prompt=SYSTEM, middleware=[RippleMemMiddleware(memory=alice)])
    ask(agent, "Remember that my sister Jane lives in Boston.", "monday")
    assert ask(agent, "Which city should I fly to for Jane's birthday?", "friday") == "Jane lives in Boston."
    first, second = model.system_prompts()
    assert first == SYSTEM  # nothing stored yet: the prompt is untouched
    assert second.startswith(f"{SYSTEM}\n\nRelevant memories:\n- [")
    assert "] Remember that my sister Jane lives in Boston." in second
    assert "Earlier in this conversation" not in second  # friday's session has no earlier turns
    stored = [(m.content, m.session_id) for m in alice.list()]
    assert stored == [("Remember that my sister Jane lives in Boston.", "monday")]


def test_working_memory_carries_the_session_without_a_checkpointer(alice: RippleMem, script: Any) -> None:
    model = script(AIMessage("Got it."), AIMessage("Book the taxi for 6:30pm."))
    agent = create_agent(model, [], middleware=[RippleMemMiddleware(memory=alice)])
    ask(agent, "My flight lands at 6pm on Thursday.", "trip")
    ask(agent, "When should the taxi pick me up?", "trip")
    shown = model.system_prompts()[1]
    lines = shown.split("Earlier in this conversation:\n")[1].splitlines()
    assert [line.split("] ", 1)[1] for line in lines] == ["My flight lands at 6pm on Thursday.", "Got it."]
    assert alice.list() == []  # nothing asked to be remembered: it stays short-term


def test_turns_already_in_the_messages_are_not_repeated(alice: RippleMem, script: Any) -> None:
    model = script(AIMessage("Got it."), AIMessage("Book the taxi for 6:30pm."))
    agent = create_agent(
        model, [], checkpointer=InMemorySaver(), middleware=[RippleMemMiddleware(memory=alice)]
    )
    ask(agent, "My flight lands at 6pm on Thursday.", "trip")
    ask(agent, "When should the taxi pick me up?", "trip")
    assert [m.text for m in model.seen[1]] == [
        "My flight lands at 6pm on Thursday.",
        "Got it.",
        "When should the taxi pick me up?",
    ]
    assert model.system_prompts()[1] == ""  # the checkpointer already shows the turns


def test_only_the_users_statements_become_long_term_memories(alice: RippleMem, script: Any) -> None:
    model = script(
        AIMessage("Kyoto is lovely in spring."),
        AIMessage("Peanut allergies can be serious; I'll remember your allergy."),
        AIMessage("Kinkaku-ji is a classic."),
    )
    agent = create_agent(model, [], middleware=[RippleMemMiddleware(memory=alice)])
    ask(agent, "I'm planning a trip to Kyoto in April.", "t")
    ask(agent, "Is my peanut allergy serious?", "t")  # a question and an echoing answer: not facts
    assert alice.list() == []
    ask(agent, "Which temples in Kyoto should I see?", "t")  # the trip is mentioned a third time
    written = [(m.type, m.content, m.session_id) for m in alice.list()]
    assert written == [("semantic", "I'm planning a trip to Kyoto in April.", "t")]


async def test_async_agent(alice: RippleMem, script: Any) -> None:
    alice.add("Alice's dentist appointment is on 3 March at 9am.", type="semantic")
    model = script(AIMessage("On 3 March at 9am."))
    agent = create_agent(model, [], middleware=[RippleMemMiddleware(memory=alice)])
    out = await agent.ainvoke(
        {"messages": [HumanMessage("When is my dentist appointment?")]},
        config={"configurable": {"thread_id": "t1"}},
    )
    assert out["messages"][-1].text == "On 3 March at 9am."
    assert "] Alice's dentist appointment is on 3 March at 9am." in model.system_prompts()[0]
    observed = [i.text for i in alice.working("t1").items()]
    assert observed == ["When is my dentist appointment?", "On 3 March at 9am."]


def test_with_tools_the_agent_can_store_by_itself(alice: RippleMem, script: Any, call: Any) -> None:
    model = script(
        call("store_memory", "c1", content="Alice's car is a blue Volvo.", type="semantic"),
        AIMessage("Saved."),
    )
    agent = create_agent(model, [], middleware=[RippleMemMiddleware(memory=alice, with_tools=True)])
    ask(agent, "I drive a blue Volvo.", "t1")
    assert [m.content for m in alice.list(type="semantic")] == ["Alice's car is a blue Volvo."]


def test_store_and_middleware_together(alice: RippleMem, script: Any) -> None:
    store = RippleMemStore(memory=alice)
    store.put(("alice", "profile"), "diet", {"content": "Alice is vegetarian"})
    model = script(AIMessage("Try the mushroom risotto."))
    agent = create_agent(model, [], store=store, middleware=[RippleMemMiddleware(memory=alice)])
    ask(agent, "What should I cook tonight?", "t1")
    assert "] Alice is vegetarian" in model.system_prompts()[0]


def test_memory_prompt_keeps_to_its_budgets(alice: RippleMem) -> None:
    alice.add_many([f"Alice visited museum number {n} in Madrid." for n in range(12)])
    roomy = RippleMemMiddleware(memory=alice, k=12, token_budget=400).memory_prompt("museums in Madrid")
    tight = RippleMemMiddleware(memory=alice, k=12, token_budget=40).memory_prompt("museums in Madrid")
    assert roomy.count("- [") == 12
    assert 1 <= tight.count("- [") < 4
    assert RippleMemMiddleware(memory=alice, working_token_budget=0).memory_prompt(None) == ""


def test_the_block_is_recalls_context_minus_what_the_model_already_sees(alice: RippleMem) -> None:
    alice.add_many(
        [
            "Calvin bought a Ferrari 488 in March.",
            "Alice drinks tea.",
            "The Ferrari 488 was repainted red in Maranello.",
            "Bob lives in Oslo.",
        ]
    )
    query = "What did Calvin buy?"
    middleware = RippleMemMiddleware(memory=alice, k=4)
    expected = alice.recall(query, k=4, record_access=False).context(400)
    assert middleware.memory_prompt(query, record_access=False) == expected
    assert "\n  - [" in expected  # the repainting is grouped under the purchase it is linked to
    trimmed = middleware.memory_prompt(query, exclude=["Bob lives in Oslo."], record_access=False)
    assert trimmed.splitlines() == [line for line in expected.splitlines() if "Oslo" not in line]


def test_bad_arguments_are_named(alice: RippleMem) -> None:
    with pytest.raises(InvalidTypeError, match="memory must be a RippleMem handle"):
        RippleMemMiddleware(memory=None)
    with pytest.raises(InvalidInputError, match="token_budget must be positive"):
        RippleMemMiddleware(memory=alice, token_budget=0)
    with pytest.raises(InvalidInputError, match="mode must be one of"):
        RippleMemMiddleware(memory=alice, mode="graph")
