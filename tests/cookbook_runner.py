"""Runs a cookbook recipe in a subprocess, as a user would start it: offline, without OpenAI
settings unless a test passes some."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

COOKBOOK = Path(__file__).resolve().parents[1] / "cookbook"


def recipe_process(
    name: str, *args: str, timeout: float = 300, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run cookbook/<name> with these arguments and extra environment; the finished process."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("OPENAI_")}
    environment.update(HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False", TRANSFORMERS_VERBOSITY="error")
    environment.update(env)
    return subprocess.run(
        [sys.executable, str(COOKBOOK / name), *args],
        capture_output=True,
        text=True,
        env=environment,
        cwd=COOKBOOK.parent,
        timeout=timeout,
        check=False,
    )


def run_recipe(name: str, *args: str, timeout: float = 300, **env: str) -> str:
    """Run cookbook/<name> with these arguments and extra environment; what it printed."""
    done = recipe_process(name, *args, timeout=timeout, **env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout
