"""Making packages unimportable in a child Python, as if they were not installed."""

from __future__ import annotations

import textwrap
from pathlib import Path


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


def sitecustomize_blocking(folder: Path, *names: str) -> Path:
    """A folder holding a sitecustomize.py that blocks these packages in any Python that has the
    folder on PYTHONPATH (for a script started as a user starts it)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(blocking(*names), encoding="utf-8")
    return folder
