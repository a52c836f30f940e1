"""The public surface: every name `ripplemem` exports resolves, and every public method of the
facade says what it does."""

from __future__ import annotations

import inspect

import ripplemem
from ripplemem import RippleMem


def test_every_exported_name_resolves() -> None:
    missing = [name for name in ripplemem.__all__ if getattr(ripplemem, name, None) is None]
    assert missing == []


def test_every_public_facade_method_has_a_docstring() -> None:
    methods = [name for name, member in inspect.getmembers(RippleMem)
               if not name.startswith("_") and callable(member)]
    assert {"add", "recall", "forget", "archive", "maintain", "history", "erase", "ingest", "record",
            "graph_quality", "learning_report", "consolidate", "observe"} <= set(methods)
    undocumented = [name for name in methods if not (getattr(RippleMem, name).__doc__ or "").strip()]
    assert undocumented == []
