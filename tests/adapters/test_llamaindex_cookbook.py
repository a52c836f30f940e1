"""The LlamaIndex cookbook recipes run offline, as a user would start them, and print the right answers."""

from __future__ import annotations

import importlib.util

from cookbook_runner import run_recipe


def test_agent_recipe_remembers_monday_on_tuesday() -> None:
    out = run_recipe("llamaindex_agent.py", "--offline")
    assert out.startswith("LLM: offline stand-in")
    monday, tuesday = out.split("== Tuesday ==")
    assert "tool     store_memory(" in monday and "tool     recall_memory(" not in monday
    assert "assistant: From memory: My sister Ana moved to Lisbon last spring." in tuesday
    assert "assistant: From memory: Please remember that I am allergic to peanuts." in tuesday
    assert "[episodic, session monday] Please remember that I am allergic to peanuts." in tuesday


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package (llama_index.llms) is missing
        return False


def test_query_engine_recipe_answers_from_documents_and_memories() -> None:
    if installed("llama_index.llms.openai_like") or installed("llama_index.llms.openai"):
        out = run_recipe("llamaindex_query_engine.py", "--offline")  # a key would make it call the API
    else:
        # One run checks both: a model configured without its package is reported, then it runs offline.
        out = run_recipe("llamaindex_query_engine.py", OPENAI_API_KEY="sk-test")
        assert out.startswith(
            "OPENAI_API_KEY is set, but llama-index-llms-openai-like (or "
            "llama-index-llms-openai) is not installed"
        )
    assert "LLM: offline stand-in" in out
    budget, leave = out.split("\nQ: ")[1:]
    assert "1000 EUR per calendar year" in budget and "I spent 650 EUR" in budget.split("\n")[1]
    sources = [line for line in budget.splitlines() if line.startswith("   ")]
    assert "[document, handbook.md" in sources[0] and "[episodic, memory, 2025-02-10]" in sources[1]
    assert "8 weeks before the due date" in leave and "Our baby is due on 12 May 2025." in leave
