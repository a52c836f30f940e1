"""The typed surface: a user's program that imports RippleMem and its adapters passes `mypy --strict`,
and sees real types (not Any) for what it gets back."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# A user's program: the common calls, an error class and both adapters' retrievers. assert_type fails
# when a name reaches the program as Any (a name mypy sees as not exported, or an untyped method).
USER_PROGRAM = """
from typing_extensions import assert_type

from langchain_core.documents import Document
from llama_index.core.schema import NodeWithScore

from langchain_ripplemem import RippleMemRetriever
from llamaindex_ripplemem import RippleMemRetriever as LlamaRetriever
from ripplemem import Hit, InvalidInputError, Memory, Recall, RippleMem


def remember(mem: RippleMem, text: str) -> Memory:
    return mem.add(text, "semantic", metadata={"topic": "food"})


def best_line(mem: RippleMem, query: str) -> str:
    recall = mem.recall(query, k=3, mode="hybrid")
    assert_type(recall, Recall)
    for hit in recall:
        assert_type(hit, Hit)
        assert_type(hit.memory, Memory)
        return f"{hit.score:.2f} {hit.memory.content}"
    return recall.context(token_budget=200)


def documents(mem: RippleMem, query: str) -> list[Document]:
    return RippleMemRetriever(memory=mem, k=5).invoke(query)


def nodes(mem: RippleMem, query: str) -> list[NodeWithScore]:
    return LlamaRetriever(memory=mem, similarity_top_k=5).retrieve(query)


def main() -> None:
    with RippleMem(path=None, user_id="alice") as mem:
        remember(mem, "Alice loves Thai food.")
        try:
            print(best_line(mem, "what does alice eat?"))
        except InvalidInputError as error:
            print(f"bad input: {error}")
        print(documents(mem, "food"), nodes(mem, "food"))
"""


@pytest.mark.slow  # mypy reads langchain-core and llama-index too: ~45 s of CPU
def test_a_user_program_passes_mypy_strict(tmp_path: Path) -> None:
    program = tmp_path / "user_program.py"
    program.write_text(USER_PROGRAM, encoding="utf-8")
    # On PYTHONPATH the packages are found the way an installed RippleMem is (mypy reports no errors
    # inside them, only in the program), and this checkout comes before any other install.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", program.name],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found in 1 source file" in result.stdout


def _init_tree() -> ast.Module:
    return ast.parse((ROOT / "ripplemem" / "__init__.py").read_text(encoding="utf-8"))


def _assigned(tree: ast.Module, name: str) -> ast.expr:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return node.value
    raise AssertionError(f"ripplemem/__init__.py assigns no {name}")


def test_the_lazy_table_the_type_imports_and_all_name_the_same_exports() -> None:
    """`__all__` is a literal list (mypy reads nothing else), and every name in it is both loaded
    lazily (`_EXPORTS`) and imported for type checkers from the same module."""
    tree = _init_tree()
    exported = ast.literal_eval(_assigned(tree, "__all__"))
    lazy: dict[str, str] = ast.literal_eval(_assigned(tree, "_EXPORTS"))
    typed = {
        alias.asname or alias.name: node.module
        for block in tree.body
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert len(exported) == len(set(exported))
    assert set(exported) == {"__version__", *lazy}
    assert typed == lazy


def test_every_type_ignore_names_its_code_and_says_why() -> None:
    """A `# type: ignore` silences one error code and says why the checker is wrong (CONTRIBUTING.md);
    most are better fixed by typing the code."""
    pattern = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[a-z, -]+\])?(?P<rest>.*)$")
    bare = []
    for package in ("ripplemem", "langchain_ripplemem", "llamaindex_ripplemem"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                found = pattern.search(line)
                if found and not (found["codes"] and re.match(r"\s*#\s*\S", found["rest"])):
                    bare.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert bare == [], "type: ignore without [code] and a '# reason' comment:\n  " + "\n  ".join(bare)
