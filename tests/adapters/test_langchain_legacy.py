"""RippleMemMemory (the legacy BaseMemory) in an old-style ConversationChain; what imports need."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain_core.language_models.fake import FakeListLLM
from pydantic import Field

from langchain_ripplemem import RippleMemMemory
from ripplemem import RippleMem
from ripplemem.errors import InvalidInputError, InvalidTypeError, MissingDependencyError


class RecordingLLM(FakeListLLM):
    """FakeListLLM that keeps each prompt it was given."""

    prompts: list[str] = Field(default_factory=list)

    def _call(self, prompt: str, *args: Any, **kwargs: Any) -> str:
        self.prompts.append(prompt)
        return super()._call(prompt, *args, **kwargs)


def conversation(memory: RippleMemMemory, *replies: str) -> tuple[Any, RecordingLLM]:
    from langchain_classic.chains import ConversationChain

    llm = RecordingLLM(responses=list(replies))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConversationChain itself is deprecated
        return ConversationChain(llm=llm, memory=memory), llm


def test_old_chain_sees_long_term_and_recent_memory(alice: RippleMem) -> None:
    alice.add("Alice's anniversary is on 14 June.", type="semantic")
    chain, llm = conversation(
        RippleMemMemory(memory=alice.scope("alice", session_id="chat-1")),
        "Noted.",
        "Book a table for 14 June.",
    )
    chain.invoke({"input": "I want to plan a surprise dinner."})
    chain.invoke({"input": "When should I book it?"})
    first, second = llm.prompts
    assert "] Alice's anniversary is on 14 June." in first
    assert "] I want to plan a surprise dinner." in second and "assistant] Noted." in second
    assert [i.text for i in alice.working("chat-1").items()] == [
        "I want to plan a surprise dinner.",
        "Noted.",
        "When should I book it?",
        "Book a table for 14 June.",
    ]


def test_remember_requests_reach_long_term_and_clear_keeps_them(alice: RippleMem) -> None:
    memory = RippleMemMemory(memory=alice)
    memory.save_context({"input": "Remember that my locker code is 3316."}, {"response": "Will do."})
    assert [m.content for m in alice.list()] == ["Remember that my locker code is 3316."]
    memory.clear()
    assert alice.working().items() == []
    assert "3316" in memory.load_memory_variables({"input": "locker"})["history"]


async def test_async_load_and_save(alice: RippleMem) -> None:
    memory = RippleMemMemory(memory=alice, memory_key="memories")
    await memory.asave_context({"question": "My cat is named Pixel."}, {"answer": "Cute!"})
    loaded = await memory.aload_memory_variables({"question": "What is my cat's name?"})
    assert list(loaded) == ["memories"] and "My cat is named Pixel." in loaded["memories"]


def test_bad_arguments_are_named(alice: RippleMem) -> None:
    with pytest.raises(InvalidTypeError, match="memory must be a RippleMem handle"):
        RippleMemMemory(memory="alice")
    with pytest.raises(InvalidInputError, match="k must be positive"):
        RippleMemMemory(memory=alice, k=0)
    memory = RippleMemMemory(memory=alice)
    with pytest.raises(InvalidInputError, match="pass input_key= to RippleMemMemory"):
        memory.load_memory_variables({"input": "a", "context": "b"})
    with pytest.raises(InvalidInputError, match="output_key 'text' is not among the outputs"):
        RippleMemMemory(memory=alice, output_key="text").save_context({"input": "hi"}, {"response": "yo"})


def test_without_langchain_classic_the_import_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    import langchain_ripplemem

    monkeypatch.delattr(langchain_ripplemem, "RippleMemMemory", raising=False)
    monkeypatch.delitem(sys.modules, "langchain_ripplemem.legacy", raising=False)
    monkeypatch.setitem(sys.modules, "langchain_classic.base_memory", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ripplemem\[langchain-classic\]'"):
        langchain_ripplemem.RippleMemMemory  # noqa: B018


def test_every_public_name_imports() -> None:
    import langchain_ripplemem

    assert all(getattr(langchain_ripplemem, name) is not None for name in langchain_ripplemem.__all__)
    assert sorted(langchain_ripplemem.__all__) == dir(langchain_ripplemem)
