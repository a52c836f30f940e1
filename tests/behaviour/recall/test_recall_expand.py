"""recall(expand=...): MQE rewrites and HyDE passages from a chat model widen what a recall finds;
junk from the model falls back to the plain query; no model, a clear error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from chat_fakes import ByPromptChatModel, ScriptedChatModel

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError
from ripplemem.llm.chat import LLMRequiredError

FACTS = [
    "I parked my vehicle on level 3 of the airport garage",
    "My sister lives in Lisbon",
    "The dentist appointment moved to Friday",
]


@pytest.fixture
def mem(tmp_path: Path, embedder: Embedder) -> Iterator[RippleMem]:
    """Alice's store with a few facts, opened without a chat model (adds need none)."""
    handle = RippleMem(path=tmp_path / "store", user_id="alice", embedder=embedder)
    handle.add_many(FACTS)
    yield handle
    handle.close()


def test_mqe_rewrites_find_what_the_query_words_miss(mem: RippleMem) -> None:
    # Keyword mode makes the point exactly: "car" is not in any memory, "vehicle" is.
    assert mem.recall("where is my car?", mode="keyword", record_access=False).hits == []
    model = ScriptedChatModel(replies=['["where did I leave my vehicle?", "car parking spot"]'])
    result = mem.recall("where is my car?", mode="keyword", expand="mqe", llm=model, record_access=False)
    assert [hit.memory.content for hit in result.hits] == [FACTS[0]]
    assert result.expansion is not None
    assert result.expansion["queries"][0] == "where is my car?"
    assert "where did I leave my vehicle?" in result.expansion["queries"]
    assert "rank_fusion" in result.hits[0].components
    # The model was shown the user's query.
    assert "where is my car?" in model.seen[0][-1].content


def test_hyde_passage_is_searched_beside_the_query(mem: RippleMem) -> None:
    model = ScriptedChatModel(replies=["You left the vehicle in the airport garage, on level 3."])
    result = mem.recall("where is my car?", mode="keyword", expand="hyde", llm=model, record_access=False)
    assert result.hits[0].memory.content == FACTS[0]
    assert result.expansion is not None and result.expansion["mode"] == "hyde"


def test_both_runs_mqe_and_hyde_and_the_handle_model_is_used(
    tmp_path: Path, embedder: Embedder, mem: RippleMem
) -> None:
    model = ByPromptChatModel(
        script={
            "rewrite": ['["when do I see the dentist?"]'],
            "passage": ["Your dentist appointment is on Friday."],
        }
    )
    handle = mem.scope()
    handle.llm = model
    result = handle.recall("tooth doctor visit", k=2, expand="both", record_access=False)
    assert result.hits[0].memory.content == FACTS[2]
    assert len(result.expansion["queries"]) == 3  # type: ignore[index]
    assert len(model.seen) == 2


def test_a_model_that_returns_junk_falls_back_to_the_plain_query(mem: RippleMem) -> None:
    model = ScriptedChatModel(replies=["Sure! Here you go:", "I cannot help with that."])
    plain = mem.recall("sister", k=3, record_access=False)
    result = mem.recall("sister", k=3, expand="mqe", llm=model, record_access=False)
    assert result.expansion is not None and result.expansion["queries"] == ["sister"]
    assert result.expansion["problems"]
    assert [h.memory.id for h in result.hits] == [h.memory.id for h in plain.hits]


def test_expand_without_a_model_or_with_an_unknown_mode_is_a_clear_error(mem: RippleMem) -> None:
    with pytest.raises(LLMRequiredError, match="expand='mqe' needs an LLM"):
        mem.recall("where is my car?", expand="mqe")
    with pytest.raises(InvalidInputError, match="expand must be one of"):
        mem.recall("where is my car?", expand="paraphrase", llm=ScriptedChatModel(replies=[]))
