"""The Python blocks of README.md and docs/*.md run as written, and the outputs they show are what a
fresh run prints (docs/samples.py runs them; `python docs/samples.py` rewrites the outputs)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_samples() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_samples", ROOT / "docs" / "samples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


samples = _load_samples()
PAGES = samples.pages([])


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_page_blocks_run_and_outputs_match(page: Path) -> None:
    """Every runnable block of the page runs in a fresh directory, and each shown output is current."""
    problems = samples.check_page(page, write=False)
    assert not problems, "\n\n".join(problems)


def test_readme_quickstart_runs_and_shows_its_output() -> None:
    """The Quickstart is the first Python block of the README, it runs, and its output is shown."""
    blocks = samples.parse((ROOT / "README.md").read_text(encoding="utf-8"))
    python = [index for index, block in enumerate(blocks) if block.lang == "python"]
    quickstart = blocks[python[0]]
    assert quickstart.runs and "RippleMem(path=" in quickstart.code
    assert blocks[python[0] + 1].output == "quickstart"
    assert 'mem.ingest("./handbook/"' in quickstart.code and 'Path("handbook").mkdir' in quickstart.code


def test_not_run_blocks_say_why_and_are_few() -> None:
    """Skipped blocks carry a reason; most Python blocks of the docs run."""
    blocks = [
        block
        for page in PAGES
        for block in samples.parse(page.read_text(encoding="utf-8"))
        if block.lang == "python"
    ]
    skipped = [block for block in blocks if block.not_run]
    assert all(len(block.not_run) > 10 for block in skipped)
    assert len(skipped) < len(blocks) / 2, f"{len(skipped)} of {len(blocks)} python blocks are not run"


def test_lcel_examples_use_the_mapping_form() -> None:
    """No page pipes a retriever straight into a prompt (a two-variable prompt fails on it), and the
    documented LCEL chain is a block that runs."""
    broken = re.compile(
        r"Retriever\([^)]*\)\s*\|\s*format_docs\s*\|\s*prompt"
        r"|retriever \| format_docs \| prompt"
    )
    for page in PAGES:
        assert not broken.search(page.read_text(encoding="utf-8")), page.name
    blocks = samples.parse((ROOT / "docs" / "langchain.md").read_text(encoding="utf-8"))
    chains = [block for block in blocks if "RunnablePassthrough()}" in block.code and block.lang == "python"]
    assert any(block.runs and "ChatPromptTemplate" in block.code for block in chains)


def _page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_a_drifted_output_is_reported_and_rewritten(tmp_path: Path) -> None:
    """--check names an output that differs from a fresh run; writing puts the fresh one in."""
    page = _page(
        tmp_path,
        "```python\nprint('id', 'ab' * 16, 'score', 0.8123)\n```\n\n"
        "<!-- output: demo -->\n```\nid 0123 score 0.81\n```\n",
    )
    problems = samples.check_page(page, write=False)
    assert len(problems) == 1 and "output 'demo' differs" in problems[0]
    assert samples.check_page(page, write=True) == []
    assert f"id {'ab' * 16} score 0.8123" in page.read_text(encoding="utf-8")
    assert samples.check_page(page, write=False) == []


def test_masks_ids_timings_and_rounds_numbers() -> None:
    """Ids, timings and digits past the second decimal do not count as drift."""
    shown = f"1. [id={'a' * 32}] score 0.8241 in 11.7 s ({samples.SHOWN_DIR}/handbook/a.md)"
    fresh = f"1. [id={'b' * 32}] score 0.8239 in 0.4 s ({samples.SHOWN_DIR}/handbook/a.md)"
    assert samples.normalise(shown) == samples.normalise(fresh)
    assert samples.normalise("score 0.82") != samples.normalise("score 0.91")


def test_a_failing_block_fails_and_not_run_blocks_are_skipped(tmp_path: Path) -> None:
    """A block that raises is reported with its line; a not-run block is never executed."""
    page = _page(
        tmp_path,
        "<!-- not-run: needs a server that is not here -->\n"
        "```python\nraise SystemExit(3)\n```\n\n```python\nprint('before')\n1 / 0\n```\n",
    )
    problems = samples.check_page(page, write=False)
    assert len(problems) == 1 and "page.md:7: raised" in problems[0] and "ZeroDivisionError" in problems[0]


def test_console_transcripts_and_command_outputs_are_run(tmp_path: Path) -> None:
    """A console block's commands run in the page's directory and their output is written under
    each; an output marker with run: shows the chosen lines of a command's output."""
    from ripplemem import __version__

    page = _page(
        tmp_path,
        "<!-- console -->\n```\n$ ripplemem --version\nold\n$ ripplemem nosuchcommand\n"
        "$ echo $?\n0\n```\n\n<!-- output: version; run: python -m ripplemem --version; "
        "lines: 1-1 -->\n```\nold\n```\n",
    )
    problems = samples.check_page(page, write=False)
    assert len(problems) == 2 and all("differs from a fresh run" in problem for problem in problems)
    samples.check_page(page, write=True)
    text = page.read_text(encoding="utf-8")
    assert f"$ ripplemem --version\nripplemem {__version__}\n$ ripplemem nosuchcommand\n" in text
    assert "$ echo $?\n2\n```" in text and f"-->\n```\nripplemem {__version__}\n```" in text
    assert samples.check_page(page, write=False) == []


def test_a_malformed_marker_is_refused() -> None:
    """A marker the script cannot read stops it, instead of leaving an output unchecked."""
    with pytest.raises(ValueError, match="line 1: malformed marker"):
        samples.parse("<!-- output: demo; lines: 3 -->\n```\nold\n```\n")
