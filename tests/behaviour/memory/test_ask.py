"""mem.ask(): recall plus a grounded answer from a chat model, citing memory ids."""

from __future__ import annotations

import pytest
from chat_fakes import ScriptedChatModel

from ripplemem import InvalidInputError, RippleMem


def test_ask_answers_from_recalled_memories_and_cites_them(memory_only: RippleMem) -> None:
    sister = memory_only.add("My sister Anna moved to Berlin last autumn")
    memory_only.add("I drink green tea every morning")
    model = ScriptedChatModel(replies=["Your sister Anna lives in Berlin [1]."])
    answer = memory_only.ask("Where does my sister live?", llm=model, k=2)
    assert answer.text.startswith("Your sister Anna lives in Berlin") and answer.citations == [sister.id]
    shown = "\n".join(str(m.content) for m in model.seen[0])
    assert "My sister Anna moved to Berlin last autumn" in shown


def test_ask_without_a_model_names_the_problem(memory_only: RippleMem) -> None:
    memory_only.add("My sister Anna moved to Berlin last autumn")
    with pytest.raises(InvalidInputError, match="llm"):
        memory_only.ask("Where does my sister live?")
