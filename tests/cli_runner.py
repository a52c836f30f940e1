"""The `ripplemem` command line driven as a user would, for the CLI tests of every folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ripplemem.interfaces.cli.main import main


def run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`python -m ripplemem ARGS` in a fresh process, as a shell user runs it."""
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "ripplemem", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
    )


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The command line in this process (fast); returns exit status, stdout and stderr."""
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err
