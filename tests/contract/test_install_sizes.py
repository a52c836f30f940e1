"""The README's install sizes are measured, not typed, and the wheel carries the MiniLM files."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

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
    assert default["mb"] <= 800
    assert not {"scipy", "pandas", "duckdb"} & {name.lower() for name, _ in default["largest"]}


def test_the_wheel_hook_adds_every_minilm_file_checked(tmp_path):
    pytest.importorskip("hatchling")
    hook_module = _load(REPO / "hatch_build.py", "ripplemem_hatch_build")
    files = hook_module._minilm_files(REPO)
    hook = hook_module.MiniLMWeightsHook(str(REPO), {}, None, None, str(tmp_path), "wheel")
    build_data: dict = {"force_include": {}}
    hook.initialize("standard", build_data)
    shipped = build_data["force_include"]
    assert sorted(shipped.values()) == sorted(
        f"ripplemem/{files.BUNDLED_FOLDER}/{n}" for n in files.SHIPPED_FILES
    )
    assert all(Path(source).is_file() for source in shipped)
    editable: dict = {"force_include": {}}
    hook.initialize("editable", editable)  # a source checkout takes the files from the dev extra
    assert editable["force_include"] == {}
