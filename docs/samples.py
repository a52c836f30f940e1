"""Runs the Python blocks of README.md and docs/*.md and writes or checks the sample outputs shown.

    python docs/samples.py            # run every page's blocks, rewrite the output blocks
    python docs/samples.py --check    # fail (exit 1) when a shown output differs from a fresh run
    python docs/samples.py docs/mcp.md --check

Markers (HTML comments, invisible when rendered), on the line right before a fence:

- ``<!-- not-run: reason -->`` before a ```python block: the block is not run (it needs an LLM, a
  server or files the reader has); every other ```python block is run.
- ``<!-- output: name -->`` before a fenced block: that block shows what the nearest ```python block
  above it printed; this script writes it, and ``--check`` compares it.

A page's blocks run in order in one namespace (as a reader pastes them into one session), in a new
empty working directory under /tmp, offline (HF_HUB_OFFLINE=1), in a subprocess with the real
MiniLM. The clock starts at SAMPLE_TIME and moves 1 ms per reading, and ids come from a seeded
generator, so stored times, recency and ids are the same on every run; the directory's path is
shown as SHOWN_DIR. ``--check`` compares outputs
with ids, timings and temporary paths masked and numbers rounded to 2 decimals.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_TIME = "2026-12-01T09:00:00+00:00"
SHOWN_DIR = "/tmp/ripplemem-docs"
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(?P<reason>\S.*?)\s*-->\s*$")
OUTPUT = re.compile(r"^<!--\s*output:\s*(?P<name>[\w.-]+)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w+-]*)\s*$")

# Runs in the child: the blocks come as JSON on stdin, each block's stdout goes to a JSON file.
DRIVER = r'''
import ast, asyncio, contextlib, io, json, random, sys, traceback, uuid
from datetime import datetime, timedelta
import ripplemem.engine, ripplemem.lifecycle._common, ripplemem.lifecycle.working

ids = random.Random(21)
uuid.uuid4 = lambda: uuid.UUID(int=ids.getrandbits(128), version=4)

class SampleClock:
    def __init__(self, start):
        self.now, self.step = datetime.fromisoformat(start), timedelta(milliseconds=1)
    def __call__(self):
        self.now += self.step
        return self.now

job = json.load(sys.stdin)
clock = SampleClock(job["start"])
for module in (ripplemem.engine, ripplemem.lifecycle._common, ripplemem.lifecycle.working):
    module.utc_now = clock
namespace, results = {"__name__": "__main__"}, []
for block in job["blocks"]:
    out = io.StringIO()
    try:
        code = compile(block["code"], block["where"], "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        with contextlib.redirect_stdout(out):
            result = eval(code, namespace)
            if asyncio.iscoroutine(result):
                asyncio.run(result)
        results.append({"stdout": out.getvalue(), "error": None})
    except BaseException:
        results.append({"stdout": out.getvalue(), "error": traceback.format_exc()})
        break
with open(job["report"], "w", encoding="utf-8") as report:
    json.dump(results, report)
'''


@dataclass
class Block:
    """One fenced block of a page: its language, text, line span and marker."""

    lang: str
    code: str
    first: int          # index of the opening fence line
    last: int           # index of the closing fence line
    not_run: str | None = None
    output: str | None = None

    @property
    def runs(self) -> bool:
        """Whether this is a Python block the samples run."""
        return self.lang == "python" and self.not_run is None


def parse(text: str) -> list[Block]:
    """The fenced blocks of a Markdown page, with the marker on the line before each."""
    lines, blocks, index = text.split("\n"), [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = next((i for i in range(index + 1, len(lines))
                    if lines[i].strip() == "```" and lines[i].startswith(opening["indent"])), None)
        if end is None:
            raise ValueError(f"unclosed ``` fence at line {index + 1}")
        indent = len(opening["indent"])
        block = Block(opening["lang"], "\n".join(line[indent:] for line in lines[index + 1:end]), index, end)
        marker = lines[index - 1].strip() if index else ""
        if match := NOT_RUN.match(marker):
            block.not_run = match["reason"]
        elif match := OUTPUT.match(marker):
            block.output = match["name"]
        blocks.append(block)
        index = end + 1
    return blocks


def pages(names: list[str]) -> list[Path]:
    """The pages named (default: README.md and every docs/*.md)."""
    if names:
        return [Path(name).resolve() for name in names]
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _environment() -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("OPENAI_")}
    environment.update(HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False", TRANSFORMERS_VERBOSITY="error",
                       PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return environment


def run_page(page: Path, timeout: float = 300) -> tuple[list[Block], list[dict], str]:
    """Run a page's runnable blocks in one fresh process and directory: (blocks, results, directory)."""
    blocks = parse(page.read_text(encoding="utf-8"))
    runnable = [block for block in blocks if block.runs]
    if not runnable:
        return blocks, [], ""
    with tempfile.TemporaryDirectory(prefix="ripplemem-docs-") as directory:
        report = Path(directory) / ".samples.json"
        job = {"start": SAMPLE_TIME, "report": str(report),
               "blocks": [{"code": block.code, "where": f"{page.name}:{block.first + 2}"} for block in runnable]}
        done = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps(job), capture_output=True,
                              text=True, env=_environment(), cwd=directory, timeout=timeout, check=False)
        if not report.exists():
            raise RuntimeError(f"{page.name}: the sample run died (exit {done.returncode}):\n{done.stderr[-3000:]}")
        results = json.loads(report.read_text(encoding="utf-8"))
        return blocks, results, os.path.realpath(directory)


def failures(page: Path, blocks: list[Block], results: list[dict]) -> list[str]:
    """A message for each runnable block that raised or never ran."""
    runnable = [block for block in blocks if block.runs]
    problems = [f"{page.name}:{block.first + 2}: raised\n{result['error']}"
                for block, result in zip(runnable, results) if result["error"]]
    problems += [f"{page.name}:{block.first + 2}: not reached" for block in runnable[len(results):]]
    return problems


def fresh_outputs(blocks: list[Block], results: list[dict], directory: str) -> dict[int, str]:
    """For each output block (by index in ``blocks``), what the Python block above it printed."""
    printed, outputs, ran = {}, {}, iter(results)
    last_python: Block | None = None
    for index, block in enumerate(blocks):
        if block.runs:
            result = next(ran, None)
            printed[id(block)] = None if result is None else result["stdout"]
        if block.lang == "python":
            last_python = block
        if block.output is None:
            continue
        if last_python is None or not last_python.runs:
            raise ValueError(f"output '{block.output}' (line {block.first}) follows no runnable python block")
        shown = printed.get(id(last_python))
        if shown is not None:
            outputs[index] = _shown(shown, directory)
    return outputs


def _shown(stdout: str, directory: str) -> str:
    text = stdout.rstrip("\n")
    if directory:
        text = text.replace(directory, SHOWN_DIR).replace(directory.replace("/private", ""), SHOWN_DIR)
    return text


MASKS = [
    (re.compile(r"\b[0-9a-f]{32}\b"), "<id>"),
    (re.compile(re.escape(SHOWN_DIR) + r"[\w.-]*"), "<dir>"),
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:ms|s)\b"), "<time>"),
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
        lines[block.first + 1:block.last] = body
    return "\n".join(lines)


def check_page(page: Path, write: bool) -> list[str]:
    """Run one page; rewrite its outputs (write) or list the outputs that differ (check)."""
    blocks, results, directory = run_page(page)
    problems = failures(page, blocks, results)
    outputs = fresh_outputs(blocks, results, directory)
    if write:
        if outputs:
            text = page.read_text(encoding="utf-8")
            page.write_text(rewrite(text, blocks, outputs), encoding="utf-8")
        return problems
    for index, fresh in outputs.items():
        shown = blocks[index].code
        if normalise(shown) != normalise(fresh):
            problems.append(f"{page.name}:{blocks[index].first + 1}: output '{blocks[index].output}' "
                            f"differs from a fresh run (python docs/samples.py rewrites it):\n"
                            f"--- shown\n{shown}\n--- fresh run\n{fresh}")
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
