"""Working memory through the facade: observe() and working(), and what reaches long-term memory."""

from __future__ import annotations

from ripplemem import RippleMem


def test_observe_writes_user_statements_at_once_but_not_questions_or_replies(memory_only: RippleMem) -> None:
    memory_only.observe("user", "Remember that Mia is allergic to peanuts", session_id="s1")
    memory_only.observe("assistant", "Got it, I will remember Mia's peanut allergy!", session_id="s1")
    memory_only.observe("user", "Can you remember what Mia is allergic to?", session_id="s1")
    assert [m.content for m in memory_only.list()] == ["Remember that Mia is allergic to peanuts"]
    assert len(memory_only.working("s1").items()) == 3


def test_working_memory_is_per_session_and_gives_a_prompt_context(memory_only: RippleMem) -> None:
    memory_only.observe("user", "We are planning the trip to Kyoto", session_id="s1")
    memory_only.observe("user", "I bought a blue notebook today", session_id="s2")
    assert [i.text for i in memory_only.working("s1").items()] == ["We are planning the trip to Kyoto"]
    assert "Kyoto" in memory_only.working("s1").context(100)
    assert "notebook" not in memory_only.working("s1").context(100)
    assert memory_only.list() == []  # plain statements wait for consolidation


def test_scope_keeps_the_agent_unless_given(memory_only: RippleMem) -> None:
    agent = memory_only.scope(agent_id="planner")
    assert agent.scope(session_id="s9").scope_info.agent_id == "planner"
    assert agent.scope(agent_id="writer").scope_info.agent_id == "writer"


def test_a_polite_request_to_remember_is_stored_even_as_a_question(memory_only: RippleMem) -> None:
    memory_only.observe("user", "Could you remember that my gate is B12?", session_id="s1")
    memory_only.observe("user", "Do you remember my gate?", session_id="s1")
    assert [m.content for m in memory_only.list()] == ["Could you remember that my gate is B12?"]
