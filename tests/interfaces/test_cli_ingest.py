"""`ripplemem ingest`, `grant`, `revoke` and `kb list`, driven as a shell user would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import cli, run_cli
from doc_fixtures import DOCX_PARAGRAPHS, PDF_PAGES, write_corrupt, write_docx, write_md, write_pdf

from ripplemem.interfaces.cli.main import main


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A folder with a PDF, a DOCX, a Markdown file, a corrupt PPTX and a PDF in a subfolder."""
    folder = tmp_path / "docs"
    (folder / "archive").mkdir(parents=True)
    write_pdf(folder / "harbour.pdf")
    write_docx(folder / "garden.docx")
    write_md(folder / "checklist.md")
    write_corrupt(folder / "slides.pptx")
    write_pdf(folder / "archive" / "old.pdf", pages=("An old harbour log from the archive.",))
    return folder


def test_ingest_reports_every_file_and_skips_unchanged_ones(
    capsys: pytest.CaptureFixture[str], docs: Path, tmp_path: Path
) -> None:
    store = str(tmp_path / "memdb")
    base = ("--path", store, "--user", "mei", "--embedder", "hashing")
    with pytest.raises(SystemExit) as failed:  # one file failed (exit status 1); the others went in
        main(["ingest", str(docs), "--kb", "manuals", *base])
    assert failed.value.code == 1
    out = capsys.readouterr().out
    assert f"failed: {docs / 'slides.pptx'}" in out
    assert "5 files into 'manuals': 4 new, 0 replaced, 0 unchanged, 1 failed" in out
    status, out, _ = cli(
        capsys, "ingest", str(docs), "--kb", "manuals", "--exclude", "*.pptx", "--json", *base
    )
    report = json.loads(out)
    assert status == 0 and report["chunks"] == 0 and len(report["unchanged"]) == 4 and report["failed"] == []
    status, out, _ = cli(
        capsys, "ingest", str(docs), "--kb", "pdfs", "--include", "*.pdf", "--no-recursive", "--json", *base
    )
    assert status == 0 and json.loads(out)["ingested"] == [str((docs / "harbour.pdf").resolve())]
    status, out, _ = cli(capsys, "recall", "harbour master cargo crates", "-k", "1", "--json", *base)
    hit = json.loads(out)["hits"][0]["memory"]
    assert PDF_PAGES[1] in hit["content"] and hit["metadata"]["page"] <= 2 <= hit["metadata"]["end_page"]
    status, out, _ = cli(capsys, "kb", "list", "--path", store, "--user", "mei")
    assert status == 0 and out.splitlines()[0].startswith("manuals: ") and "readers: mei" in out


def test_grant_revoke_and_strangers(capsys: pytest.CaptureFixture[str], docs: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "memdb")
    common = ("--path", store, "--embedder", "hashing")
    cli(capsys, "ingest", str(docs / "garden.docx"), "--kb", "garden", "--user", "mei", *common)
    assert cli(capsys, "grant", "garden", "lin", "--user", "mei", *common)[1].strip() == (
        "'lin' can now read knowledge base 'garden'"
    )
    status, out, _ = cli(capsys, "recall", "tomato seedlings east bed", "--user", "lin", *common)
    assert status == 0 and DOCX_PARAGRAPHS[0] in out
    status, _, err = cli(capsys, "grant", "garden", "zoe", "--user", "zoe", *common)
    assert status == 2 and "no knowledge base 'garden' is shared with user 'zoe'" in err
    status, out, _ = cli(capsys, "recall", "tomato seedlings east bed", "--user", "zoe", *common)
    assert DOCX_PARAGRAPHS[0] not in out
    assert cli(capsys, "revoke", "garden", "lin", "--user", "mei", *common)[0] == 0
    status, out, _ = cli(capsys, "kb", "list", "--json", "--user", "lin", *common)
    assert status == 0 and json.loads(out) == []
    status, out, _ = cli(capsys, "recall", "tomato seedlings east bed", "--user", "lin", *common)
    assert DOCX_PARAGRAPHS[0] not in out


def test_maintain_every_user_leaves_knowledge_bases_alone(docs: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "memdb")
    common = ("--path", store, "--embedder", "hashing")
    ingested = run_cli("ingest", str(docs / "checklist.md"), "--user", "mei", *common, cwd=tmp_path)
    assert ingested.returncode == 0, ingested.stderr
    assert run_cli("add", "Mei waters the fern", "--user", "mei", *common, cwd=tmp_path).returncode == 0
    done = run_cli("maintain", "--json", *common, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [report["user_id"] for report in json.loads(done.stdout)] == ["mei"]
