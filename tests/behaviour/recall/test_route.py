"""recall(route=...): personal questions search memories, factual ones documents, by rules."""

from __future__ import annotations

import pytest

from ripplemem import InvalidInputError, RippleMem

HANDBOOK = [
    "Parental leave policy: employees may take 16 weeks of paid parental leave.",
    "Expense policy: the learning budget is 1000 EUR per calendar year.",
    "Security policy: laptops must use full-disk encryption.",
]
PERSONAL = [
    "I told my manager I want to take parental leave in May.",
    "I spent 650 EUR of my learning budget on a conference.",
]


@pytest.fixture
def filled(memory_only: RippleMem) -> RippleMem:
    memory_only.add_many([{"content": text, "type": "document"} for text in HANDBOOK])
    memory_only.add_many([{"content": text, "type": "episodic"} for text in PERSONAL])
    return memory_only


def test_auto_routes_personal_questions_to_memories(filled: RippleMem) -> None:
    result = filled.recall("What did I tell my manager about my leave?", k=3, route="auto")
    assert result.route is not None and result.route["target"] in ("memory", "both")
    assert result.route["order"][0] == "memory"
    assert result.hits[0].memory.content == PERSONAL[0]


def test_auto_routes_factual_questions_to_documents(filled: RippleMem) -> None:
    result = filled.recall("What is the parental leave policy?", k=3, route="auto")
    assert result.route is not None and result.route["order"][0] == "documents"
    assert result.hits[0].memory.content == HANDBOOK[0]


def test_explicit_routes_and_bad_values(filled: RippleMem) -> None:
    assert {h.memory.type for h in filled.recall("leave", k=5, route="documents").hits} == {"document"}
    assert "document" not in {h.memory.type for h in filled.recall("leave", k=5, route="memory").hits}
    assert filled.recall("leave", k=5).route is None
    with pytest.raises(InvalidInputError, match="route"):
        filled.recall("leave", route="web")
