"""The LangChain recipes run offline, as a user would start them, and print what they promise."""

from __future__ import annotations

import pytest
from cookbook_runner import run_recipe


@pytest.mark.slow
def test_retriever_chain() -> None:
    out = run_recipe("langchain_retriever_chain.py", "--offline")
    recalled = out.split("Recalled (ripple):\n")[1].split("Chain with")[0].splitlines()
    # k=4 over five memories: the three about Leo first, one unrelated memory last.
    assert all("Leo" in line for line in recalled[:3]) and len(recalled) == 4
    assert "Leo's birthday is on 12 May." in "".join(recalled[:2])
    assert "Leo" not in recalled[3]
    shown = out.split("[model is shown]")[1].split("Answer:")[0]
    assert "] Leo took up rock climbing in the Chartreuse mountains." in shown
    assert "Answer: Leo has just taken up climbing" in out


@pytest.mark.slow
def test_agent_with_tools_remembers_after_a_restart() -> None:
    out = run_recipe("langchain_agent_tools.py", "--offline")
    first, second = out.split("Conversation 2:")
    assert "Stored memory" in first and "Priya is the user's manager at Acme Robotics." in first
    assert ", semantic, score" in second and ") Priya is the user's manager at Acme Robotics." in second
    assert "Priya -MENTIONS- Priya is the user's manager at Acme Robotics. -MENTIONS- Acme Robotics" in second


@pytest.mark.slow
def test_langgraph_agent_remembers_a_user_across_sessions() -> None:
    out = run_recipe("langchain_agent_store_middleware.py", "--offline")
    monday, friday, bob = out.split("session ")[1:4]
    assert "Relevant memories" not in monday.split("\n")[1]  # the first call: nothing known yet
    assert "] I'm vegetarian. Remember that my daughter Mia is allergic to peanuts." in friday
    assert "] diet: vegetarian" in friday
    shown_to_bob = bob.split("user:")[0]
    assert "[model is shown] You are a friendly cooking assistant.\n" in shown_to_bob
    assert "Mia" not in shown_to_bob and "vegetarian" not in shown_to_bob
    assert "('alice', 'profile') diet: diet: vegetarian" in out
