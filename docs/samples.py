"""Runs the code of README.md and docs/*.md and writes or checks the sample outputs shown.

    python docs/samples.py            # run every page, rewrite the output blocks that changed
    python docs/samples.py --check    # fail (exit 1) when a shown output differs from a fresh run
    python docs/samples.py docs/mcp.md --check

Markers (HTML comments, invisible when rendered), on the line right before a fence:

- ``<!-- not-run: reason -->`` before a ```python block: the block is not run (it needs an LLM, a
  server or files the reader has); every other ```python block is run.
- ``<!-- output: name -->`` before a fenced block: it shows what the nearest ```python block above
  it printed.
- ``<!-- output: name; run: COMMAND; lines: 3-9 -->``: it shows lines 3 to 9 (all without
  ``lines``) of what COMMAND printed: ``ripplemem ...``, ``python -m module ...`` or
  ``python path ...`` (a path under the repository, e.g. a cookbook recipe).
- ``<!-- console -->`` before a transcript: each ``$ COMMAND`` line is run (``echo $?`` too) and
  the lines under it are what it printed, stdout and stderr together.

A page runs in order (Python blocks in one namespace, as a reader pastes them into one session,
commands in the same directory) in a new empty directory under /tmp, offline (HF_HUB_OFFLINE=1),
in one subprocess (docs/sample_driver.py) with the real MiniLM. Its clock starts at SAMPLE_TIME and
moves 1 ms per reading, and ids come from a seeded generator, so stored times, recency and ids are
the same on every run; the directory is shown as SHOWN_DIR. ``--check`` compares with ids,
timings, sizes and temporary paths masked and numbers rounded to 2 decimals.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVER = Path(__file__).resolve().with_name("sample_driver.py")
SAMPLE_TIME = "2026-12-01T09:00:00+00:00"
SHOWN_DIR = "/tmp/ripplemem-docs"
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(?P<reason>\S.*?)\s*-->\s*$")
OUTPUT = re.compile(
    r"^<!--\s*output:\s*(?P<name>[\w.-]+)\s*(?:;\s*run:\s*(?P<run>[^;]+?)\s*)?"
    r"(?:;\s*lines:\s*(?P<start>\d+)-(?P<end>\d+)\s*)?-->\s*$"
)
CONSOLE = re.compile(r"^<!--\s*console\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w+-]*)\s*$")
ENV_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")


@dataclass
class Block:
    """One fenced block of a page: its language, text, line span and marker."""

    lang: str
    code: str
    first: int  # index of the opening fence line
    last: int  # index of the closing fence line
    not_run: str | None = None
    output: str | None = None
    run: list[str] | None = None  # the command an output block shows
    lines: tuple[int, int] | None = None
    console: bool = False
    steps: list[int] = field(default_factory=list)  # indexes of this block's steps in the run

    @property
    def runs(self) -> bool:
        """Whether this is a Python block the samples run."""
        return self.lang == "python" and self.not_run is None

    @property
    def commands(self) -> list[str]:
        """A console block's commands, without their ``$ ``."""
        return [line[2:] for line in self.code.split("\n") if line.startswith("$ ")] if self.console else []


def command_argv(command: str) -> list[str]:
    """A shown command as the driver runs it: environment settings dropped, any python as python."""
    argv = shlex.split(command, comments=True)
    while argv and ENV_ASSIGNMENT.match(argv[0]):
        argv.pop(0)
    if argv and (argv[0].endswith("/python") or argv[0] in ("python3", "python")):
        argv[0] = "python"
    if argv == ["echo", "$?"] or (argv[:1] == ["ripplemem"]) or (argv[:1] == ["python"] and len(argv) > 1):
        return argv
    raise ValueError(f"cannot run {command!r}: commands are ripplemem ..., python ... or echo $?")


def _marked(block: Block, marker: str) -> None:
    if match := NOT_RUN.match(marker):
        block.not_run = match["reason"]
    elif match := OUTPUT.match(marker):
        block.output = match["name"]
        block.run = command_argv(match["run"]) if match["run"] else None
        block.lines = (int(match["start"]), int(match["end"])) if match["start"] else None
    elif CONSOLE.match(marker):
        block.console = True
    elif re.match(r"^<!--\s*(not-run|output|console)\b", marker):
        raise ValueError(f"malformed marker {marker!r} (see docs/samples.py for the forms)")


def parse(text: str) -> list[Block]:
    """The fenced blocks of a Markdown page, with the marker on the line before each."""
    lines, blocks, index = text.split("\n"), [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = next(
            (
                i
                for i in range(index + 1, len(lines))
                if lines[i].strip() == "```" and lines[i].startswith(opening["indent"])
            ),
            None,
        )
        if end is None:
            raise ValueError(f"unclosed ``` fence at line {index + 1}")
        indent = len(opening["indent"])
        block = Block(
            opening["lang"], "\n".join(line[indent:] for line in lines[index + 1 : end]), index, end
        )
        try:
            _marked(block, lines[index - 1].strip() if index else "")
        except ValueError as error:
            raise ValueError(f"line {index}: {error}") from None
        blocks.append(block)
        index = end + 1
    return blocks


def pages(names: list[str]) -> list[Path]:
    """The pages named (default: README.md and every docs/*.md)."""
    if names:
        return [Path(name).resolve() for name in names]
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def plan(page: Path, blocks: list[Block]) -> list[dict]:
    """The steps a page runs, in page order; each block learns which steps are its own."""
    steps: list[dict] = []
    for block in blocks:
        if block.runs:
            block.steps = [len(steps)]
            steps.append({"kind": "python", "code": block.code, "where": f"{page.name}:{block.first + 2}"})
        elif block.run:
            block.steps = [len(steps)]
            steps.append({"kind": "command", "argv": block.run})
        elif block.console:
            block.steps = list(range(len(steps), len(steps) + len(block.commands)))
            steps += [{"kind": "command", "argv": command_argv(command)} for command in block.commands]
    return steps


def _environment() -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("OPENAI_")}
    environment.update(
        HF_HUB_OFFLINE="1",
        ANONYMIZED_TELEMETRY="False",
        TRANSFORMERS_VERBOSITY="error",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    return environment


def run_page(page: Path, timeout: float = 300) -> tuple[list[Block], list[dict], str]:
    """Run a page's steps in one fresh process and directory: (blocks, results, directory)."""
    blocks = parse(page.read_text(encoding="utf-8"))
    steps = plan(page, blocks)
    if not steps:
        return blocks, [], ""
    with tempfile.TemporaryDirectory(prefix="ripplemem-docs-") as directory:
        report = Path(directory) / ".samples.json"
        job = {"start": SAMPLE_TIME, "report": str(report), "root": str(ROOT), "steps": steps}
        done = subprocess.run(
            [sys.executable, str(DRIVER)],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            env=_environment(),
            cwd=directory,
            timeout=timeout,
            check=False,
        )
        if not report.exists():
            raise RuntimeError(f"{page.name}: the run died (exit {done.returncode}):\n{done.stderr[-3000:]}")
        return blocks, json.loads(report.read_text(encoding="utf-8")), os.path.realpath(directory)


def failures(page: Path, blocks: list[Block], results: list[dict]) -> list[str]:
    """A message for each step that raised or was never reached, named by its block's line."""
    problems = []
    for block in blocks:
        for step in block.steps:
            if step >= len(results):
                problems.append(f"{page.name}:{block.first + 2}: not reached")
            elif results[step]["error"]:
                problems.append(f"{page.name}:{block.first + 2}: raised\n{results[step]['error']}")
    return problems


def _printed(block: Block, results: list[dict]) -> list[str] | None:
    done = [results[step]["stdout"] for step in block.steps if step < len(results)]
    return done if len(done) == len(block.steps) else None


def _body(block: Block, printed: list[str]) -> str:
    if block.console:
        return "\n".join(
            f"$ {command}\n{text.rstrip()}".rstrip()
            for command, text in zip(block.commands, printed, strict=True)
        )
    text = printed[0].rstrip("\n")
    if block.lines:
        text = "\n".join(text.split("\n")[block.lines[0] - 1 : block.lines[1]])
    return text


def fresh_outputs(blocks: list[Block], results: list[dict], directory: str) -> dict[int, str]:
    """For each output or console block (by index in ``blocks``), what its run printed."""
    outputs: dict[int, str] = {}
    last_python: Block | None = None
    for index, block in enumerate(blocks):
        if block.output is not None and block.run is None:
            if last_python is None or not last_python.runs:
                raise ValueError(
                    f"output '{block.output}' (line {block.first + 1}) follows no runnable python block"
                )
            source = last_python
        else:
            source = block
        if block.lang == "python":
            last_python = block
        if block.output is None and not block.console:
            continue
        printed = _printed(source, results)
        if printed is not None:
            outputs[index] = _shown(_body(block, printed), directory)
    return outputs


def _shown(text: str, directory: str) -> str:
    if directory:
        text = text.replace(directory, SHOWN_DIR)
    return "\n".join(line.rstrip() for line in text.split("\n"))


MASKS = [
    (re.compile(r"\b[0-9a-f]{32}\b"), "<id>"),
    (re.compile(r"/tmp/[\w.-]+"), "<tmp>"),
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:ms|s|KB|MB|GB)\b"), "<measured>"),
]


def normalise(text: str) -> str:
    """A shown output with ids, timings and temporary paths masked and numbers to 2 decimals."""
    for pattern, mask in MASKS:
        text = pattern.sub(mask, text)
    text = re.sub(r"\b\d+\.\d{3,}\b", lambda number: f"{float(number[0]):.2f}", text)
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))


def rewrite(text: str, blocks: list[Block], outputs: dict[int, str]) -> str:
    """The page with each output block's body replaced by its fresh output."""
    lines = text.split("\n")
    for index in sorted(outputs, reverse=True):
        block = blocks[index]
        indent = FENCE.match(lines[block.first])["indent"]
        body = [indent + line if line else line for line in outputs[index].split("\n")]
        lines[block.first + 1 : block.last] = body
    return "\n".join(lines)


def check_page(page: Path, write: bool) -> list[str]:
    """Run one page; rewrite its outputs (write) or list the outputs that differ (check)."""
    blocks, results, directory = run_page(page)
    problems = failures(page, blocks, results)
    outputs = fresh_outputs(blocks, results, directory)
    if write:
        changed = {
            index: fresh
            for index, fresh in outputs.items()
            if normalise(blocks[index].code) != normalise(fresh)
        }  # no churn from timings alone
        if changed:
            text = page.read_text(encoding="utf-8")
            page.write_text(rewrite(text, blocks, changed), encoding="utf-8")
        return problems
    for index, fresh in outputs.items():
        shown = blocks[index].code
        if normalise(shown) != normalise(fresh):
            name = blocks[index].output or "console"
            problems.append(
                f"{page.name}:{blocks[index].first + 1}: output '{name}' "
                f"differs from a fresh run (python docs/samples.py rewrites it):\n"
                f"--- shown\n{shown}\n--- fresh run\n{fresh}"
            )
    return problems


def main(argv: list[str] | None = None) -> int:
    """Run the pages; write or check their sample outputs; 1 if a block failed or an output differs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pages", nargs="*", help="Markdown pages (default: README.md and docs/*.md)")
    parser.add_argument("--check", action="store_true", help="compare instead of rewriting")
    options = parser.parse_args(argv)
    problems = [problem for page in pages(options.pages) for problem in check_page(page, not options.check)]
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
