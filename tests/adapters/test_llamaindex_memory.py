"""RippleMemMemory (a BaseMemory) and RippleMemMemoryBlock (a block of LlamaIndex's Memory), used directly."""

from __future__ import annotations

import pytest
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.memory import Memory

from llamaindex_ripplemem import RippleMemMemory, RippleMemMemoryBlock
from ripplemem import InvalidInputError, InvalidTypeError, RippleMem


def user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def assistant(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text)


def test_explicit_requests_are_stored_at_once_small_talk_is_not(memory_only: RippleMem) -> None:
    memory = RippleMemMemory(memory=memory_only, session_id="s1")
    memory.put(user("Please remember that my passport expires in June 2027."))
    memory.put(assistant("Got it, I'll keep that in mind."))  # a cue, but the assistant's own words
    memory.put(user("How are you today?"))
    memory.put(user("Am I allergic to anything important?"))  # urgent-sounding, but a question
    stored = memory_only.list()
    assert [m.content for m in stored] == ["Please remember that my passport expires in June 2027."]
    assert stored[0].session_id == "s1" and stored[0].metadata["role"] == "user"
    assert [item.text for item in memory_only.working("s1").items()] == [
        "Please remember that my passport expires in June 2027.",
        "Got it, I'll keep that in mind.",
        "How are you today?",
        "Am I allergic to anything important?",
    ]
    memory.put(user("Could you remember that my gate is B12?"))  # a request, though it ends with '?'
    assert memory_only.list()[0].content == "Could you remember that my gate is B12?"


def test_get_returns_history_with_recalled_memories_in_front(memory_only: RippleMem) -> None:
    memory_only.add("The user's passport expires in June 2027", type="semantic")
    memory = RippleMemMemory(memory=memory_only, session_id="s1")
    memory.put(user("When does my passport expire?"))
    messages = memory.get()
    assert [m.role.value for m in messages] == ["user"]
    text = messages[0].content or ""
    assert text.startswith("Long-term memories about the user") and "passport expires in June 2027" in text
    assert text.endswith("When does my passport expire?")
    assert memory.get_all() == [user("When does my passport expire?")]  # no recalled text in the history


def test_recalled_memories_join_the_user_message_or_the_system_message(memory_only: RippleMem) -> None:
    memory_only.add("The user's passport expires in June 2027")
    history = [ChatMessage(role="system", content="Be brief."), user("When does my passport expire?")]
    memory = RippleMemMemory(memory=memory_only, session_id="s1")
    memory.set(history)
    messages = memory.get()
    assert messages[0].content == "Be brief."
    assert "passport expires in June 2027" in (messages[1].content or "")
    assert (messages[1].content or "").endswith("When does my passport expire?")

    in_system = RippleMemMemory(memory=memory_only, session_id="s2", insert_method="system")
    in_system.set(history)
    merged = in_system.get()
    assert len(merged) == 2 and (merged[0].content or "").startswith("Be brief.")
    assert "passport expires in June 2027" in (merged[0].content or "")
    assert in_system.get_all()[0].content == "Be brief."  # the stored system message is left untouched


async def test_async_twins_match(memory_only: RippleMem) -> None:
    memory_only.add("The user's dentist is Dr Silva")
    memory = RippleMemMemory(memory=memory_only, session_id="s1")
    await memory.aput(user("Who is my dentist?"))
    await memory.aput_messages([assistant("Let me check."), ChatMessage(role="tool", content="Dr Silva")])
    messages = await memory.aget()
    assert "Dr Silva" in (messages[0].content or "") and len(await memory.aget_all()) == 3
    assert [item.role for item in memory_only.working("s1").items()] == ["user", "assistant"]
    await memory.areset()
    assert await memory.aget_all() == [] and memory_only.working("s1").items() == []


def test_only_new_text_turns_are_observed(memory_only: RippleMem) -> None:
    memory = RippleMemMemory(memory=memory_only, session_id="s1")
    first = [user("I booked a trip to Kyoto."), assistant("Exciting!")]
    memory.set(first)
    tool_call = ChatMessage(
        role="assistant",
        blocks=[ToolCallBlock(tool_call_id="c1", tool_name="recall_memory", tool_kwargs={"query": "Kyoto"})],
    )
    memory.set([*first, tool_call, ChatMessage(role="tool", content="No memories found."), user("...")])
    observed = [item.text for item in memory_only.working("s1").items()]
    assert observed == ["I booked a trip to Kyoto.", "Exciting!"]


def test_turns_mentioned_three_times_are_consolidated_once_each(memory_only: RippleMem) -> None:
    memory = RippleMemMemory(memory=memory_only, session_id="s1")
    memory.put(user("My aunt Clara lives in Porto."))
    memory.put(assistant("Porto is lovely."))
    assert memory_only.list() == []
    memory.put(user("Clara grows lemons in her garden."))
    memory.put(user("I will visit Clara in May."))
    first = [(m.content, m.type) for m in memory_only.list()]
    assert first == [("My aunt Clara lives in Porto.", "semantic")]
    memory.put(user("Clara said hello."))  # a fourth mention of the first turn, a third of the second
    assert sorted(m.content for m in memory_only.list()) == [
        "Clara grows lemons in her garden.",
        "My aunt Clara lives in Porto.",
    ]


def test_a_turn_written_at_once_is_not_written_again_by_the_mention_rule(memory_only: RippleMem) -> None:
    memory = RippleMemMemory(memory=memory_only, session_id="s1")
    for text in ["I'm so excited that Clara is visiting!", "Clara loves the sea.", "Clara arrives Friday."]:
        memory.put(user(text))
    # Written at once (emotional); now mentioned three times, the mention rule calls it due as well.
    assert [m.content for m in memory_only.list()] == ["I'm so excited that Clara is visiting!"]
    assert [d.action for _, d in memory_only.working("s1").decide()][0] == "consolidate"
    # A new RippleMemMemory on the session (an agent restarted in-process) does not write it again.
    RippleMemMemory(memory=memory_only, session_id="s1").put(user("Clara called."))
    assert sorted(m.content for m in memory_only.list()) == [
        "Clara loves the sea.",
        "I'm so excited that Clara is visiting!",
    ]


def test_reset_clears_the_conversation_not_long_term_memory(memory_only: RippleMem) -> None:
    memory = RippleMemMemory(memory=memory_only, session_id="s1")
    memory.put(user("Remember that my locker code is 4512."))
    memory.reset()
    assert memory.get_all() == [] and memory_only.working("s1").items() == []
    assert [m.content for m in memory_only.list()] == ["Remember that my locker code is 4512."]


def test_another_users_memory_recalls_nothing_of_alices(memory_only: RippleMem) -> None:
    RippleMemMemory(memory=memory_only, session_id="s1").put(user("Remember that my locker code is 4512."))
    bob = RippleMemMemory(memory=memory_only.scope(user_id="bob"), session_id="s1")
    bob.put(user("What is my locker code?"))
    assert [m.role.value for m in bob.get()] == ["user"]
    assert memory_only.scope(user_id="bob").list() == []


async def test_block_recalls_into_a_user_message_in_front(memory_only: RippleMem) -> None:
    memory_only.add("The user's favourite band is Radiohead")
    chat = Memory.from_defaults(session_id="b1", memory_blocks=[RippleMemMemoryBlock(memory=memory_only)])
    await chat.aput(user("Which band do I like most?"))
    recalled, question = await chat.aget()
    assert (recalled.role.value, question.content) == ("user", "Which band do I like most?")
    text = recalled.content or ""
    assert text.startswith("Long-term memories about the user") and "favourite band is Radiohead" in text


async def test_block_stores_turns_only_when_short_term_memory_overflows(memory_only: RippleMem) -> None:
    turns = [
        user("I just got back from Porto where I visited my aunt Clara."),
        assistant("How was it?"),
        user("Great, we walked along the Douro river."),
        assistant("Lovely."),
        user("What should I cook?"),
    ]
    roomy = Memory.from_defaults(session_id="b1", memory_blocks=[RippleMemMemoryBlock(memory=memory_only)])
    for turn in turns:
        await roomy.aput(turn)
    assert memory_only.list() == []  # 30000-token default: nothing overflowed, the block received nothing

    tight = Memory.from_defaults(
        session_id="b2", token_limit=30, memory_blocks=[RippleMemMemoryBlock(memory=memory_only)]
    )
    for turn in turns:
        await tight.aput(turn)
    stored = memory_only.list(newest_first=False)
    assert [m.content for m in stored] == [turn.content for turn in turns[: len(stored)]] and stored
    assert {(m.type, m.session_id) for m in stored} == {("episodic", "b2")}
    assert "Porto" in (await tight.aget())[0].content  # the overflowed turns come back by recall


async def test_block_of_another_user_recalls_nothing(memory_only: RippleMem) -> None:
    memory_only.add("The user's favourite band is Radiohead")
    bob_block = RippleMemMemoryBlock(memory=memory_only.scope(user_id="bob"))
    assert await bob_block.aget([user("Which band do I like most?")]) == []


def test_bad_arguments_are_named(memory_only: RippleMem) -> None:
    with pytest.raises(InvalidTypeError, match="memory must be a ripplemem.RippleMem"):
        RippleMemMemory(memory="alice")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="RippleMemMemory needs memory="):
        RippleMemMemory.from_defaults()
    with pytest.raises(InvalidInputError, match="insert_method must be one of system, user"):
        RippleMemMemory(memory=memory_only, insert_method="prompt")
    with pytest.raises(InvalidInputError, match="k must be a positive integer"):
        RippleMemMemory(memory=memory_only, k=0)
    with pytest.raises(InvalidTypeError, match="session_id must be a string"):
        RippleMemMemory(memory=memory_only, session_id=7)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="primary_memory must be a LlamaIndex BaseMemory"):
        RippleMemMemory(memory=memory_only, primary_memory=[])  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="observe_roles"):
        RippleMemMemory(memory=memory_only, observe_roles="user")
    with pytest.raises(InvalidInputError, match="token_budget"):
        RippleMemMemoryBlock(memory=memory_only, token_budget=-5)
    with pytest.raises(InvalidTypeError, match="memory must be a ripplemem.RippleMem"):
        RippleMemMemoryBlock(memory=None)  # type: ignore[arg-type]
