"""The child process of docs/samples.py: runs one page's steps in order and reports what each printed.

The job comes as JSON on stdin: ``start`` (the clock's first reading), ``report`` (where to write the
results), ``root`` (the repository, for ``python cookbook/...`` paths) and ``steps``, each
``{"kind": "python", "code", "where"}`` or ``{"kind": "command", "argv"}``. Python steps share one
namespace; a command runs in this process (``ripplemem ...``, ``python -m module ...``,
``python path ...``, or ``echo $?`` for the previous command's exit status). The clock starts at
``start`` and moves 1 ms per reading, and uuid4 ids come from a seeded generator, so every run of a
page stores the same times and ids. A Python step that raises stops the page.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import json
import random
import runpy
import sys
import traceback
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

IDS = random.Random(21)


class SampleClock:
    """A clock that starts at a fixed time and moves 1 ms each time it is read."""

    def __init__(self, start: str) -> None:
        """Start at ``start`` (ISO-8601 with an offset)."""
        self.now, self.step = datetime.fromisoformat(start), timedelta(milliseconds=1)

    def __call__(self) -> datetime:
        """The next reading."""
        self.now += self.step
        return self.now


def _seeded_uuid4() -> uuid.UUID:
    return uuid.UUID(int=IDS.getrandbits(128), version=4)


def _fix_time_and_ids(start: str) -> None:
    import ripplemem.engine.engine
    import ripplemem.rules.lifecycle.working

    clock = SampleClock(start)
    for module in (ripplemem.engine.engine, ripplemem.rules.lifecycle.working):
        module.utc_now = clock
    uuid.uuid4 = _seeded_uuid4


def run_python(code: str, where: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Run one block in the shared namespace (top-level await allowed); what it printed."""
    out = io.StringIO()
    try:
        compiled = compile(code, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        with contextlib.redirect_stdout(out):
            result = eval(compiled, namespace)  # noqa: S307 - the docs' own code blocks
            if asyncio.iscoroutine(result):
                asyncio.run(result)
    except BaseException:  # noqa: BLE001 - reported to the parent, which fails the page
        return {"stdout": out.getvalue(), "error": traceback.format_exc(), "status": None}
    return {"stdout": out.getvalue(), "error": None, "status": 0}


def _start(argv: list[str], root: Path) -> None:
    if argv[0] == "ripplemem":
        sys.argv = argv
        runpy.run_module("ripplemem", run_name="__main__", alter_sys=True)
    elif argv[1] == "-m":
        sys.argv = [argv[2], *argv[3:]]
        runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
    else:
        path = argv[1] if Path(argv[1]).exists() else str(root / argv[1])
        sys.argv = [path, *argv[2:]]
        sys.path.insert(0, str(Path(path).parent))  # as `python path` puts the script's folder first
        try:
            runpy.run_path(path, run_name="__main__")
        finally:
            sys.path.remove(str(Path(path).parent))


def run_command(argv: list[str], root: Path, last_status: int) -> dict[str, Any]:
    """Run a command in this process, its stdout and stderr together; its exit status."""
    if argv == ["echo", "$?"]:
        return {"stdout": f"{last_status}\n", "error": None, "status": last_status}
    out, saved, status, error = io.StringIO(), sys.argv, 0, None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            _start(argv, root)
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported to the parent, which fails the page
        error = traceback.format_exc()
    finally:
        sys.argv = saved
    return {"stdout": out.getvalue(), "error": error, "status": status}


def main() -> None:
    """Run the job on stdin; write one result per step run."""
    job = json.load(sys.stdin)
    _fix_time_and_ids(job["start"])
    namespace: dict[str, Any] = {"__name__": "__main__"}
    results: list[dict[str, Any]] = []
    status = 0
    for step in job["steps"]:
        if step["kind"] == "python":
            result = run_python(step["code"], step["where"], namespace)
        else:
            result = run_command(step["argv"], Path(job["root"]), status)
        results.append(result)
        status = result["status"] if result["status"] is not None else status
        if result["error"]:
            break
    Path(job["report"]).write_text(json.dumps(results), encoding="utf-8")


if __name__ == "__main__":
    main()
