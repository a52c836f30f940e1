"""Each cookbook recipe says which extra it needs, and without it stops with the pip command."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from absent_packages import sitecustomize_blocking
from cookbook_runner import COOKBOOK, recipe_process

REPO = COOKBOOK.parent
# recipe: (the extra it needs, a package of that extra to make unimportable)
RECIPES = {
    "health_assistant.py": ("langchain", "langchain_core"),
    "langchain_agent_store_middleware.py": ("langgraph", "langgraph"),
    "langchain_agent_tools.py": ("langgraph", "langchain"),
    "langchain_retriever_chain.py": ("langchain", "langchain_core"),
    "langchain_vectorstore.py": ("langchain", "langchain_core"),
    "learning_assistant.py": ("langchain", "langchain_core"),
    "llamaindex_agent.py": ("llamaindex", "llama_index"),
    "llamaindex_query_engine.py": ("llamaindex", "llama_index"),
}
HELPERS = {"extras.py", "langchain_models.py", "llamaindex_llm.py"}


def test_every_recipe_names_its_extra_in_its_docstring() -> None:
    assert sorted(p.name for p in COOKBOOK.glob("*.py") if p.name not in HELPERS) == sorted(RECIPES)
    for name, (extra, _) in RECIPES.items():
        docstring = ast.get_docstring(ast.parse((COOKBOOK / name).read_text(encoding="utf-8"))) or ""
        assert f"pip install 'ripplemem[{extra}]'" in " ".join(docstring.split()), name


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_a_recipe_without_its_extra_stops_with_the_pip_command(name: str, tmp_path: Path) -> None:
    extra, package = RECIPES[name]
    site = sitecustomize_blocking(tmp_path / "site", package)
    done = recipe_process(name, "--offline", PYTHONPATH=f"{site}:{REPO}")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().endswith(f"is not installed): pip install 'ripplemem[{extra}]'"), done.stderr
    assert done.stdout == ""
