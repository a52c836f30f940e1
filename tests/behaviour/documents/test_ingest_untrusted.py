"""mem.ingest on a folder someone else filled: symlinks that leave it, FIFOs, devices, symlink loops,
undecodable names, oversized files and zip bombs are each refused with a per-file reason, the
rest of the folder goes in, and nothing stored before is changed."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest
from cli_runner import cli, run_cli
from doc_fixtures import DOCX_PARAGRAPHS, write_docx, write_md, write_txt

from ripplemem import HashingEmbedder, InvalidInputError, InvalidTypeError, RippleMem, StoreOptions
from ripplemem.documents.ingest import IngestReport
from ripplemem.markdown.convert.file_limits import FileLimits

SECRET = "root:x:0:0:the secret line outside the folder"
# How long an ingest may take before it counts as hung (it takes about a second).
HANG_SECONDS = 60


def _store(tmp_path: Path) -> RippleMem:
    return RippleMem(tmp_path / "store", user_id="alice", embedder=HashingEmbedder())


def _docs(tmp_path: Path) -> Path:
    """A folder with one good Markdown file; the tests add hostile entries beside it."""
    docs = tmp_path / "docs"
    docs.mkdir()
    write_md(docs / "good.md", heading="Boiler", sentence="The boiler pressure must stay at 1.5 bar.")
    return docs


def _failures(report: IngestReport) -> dict[str, str]:
    return {f.path.name: f.kind for f in report.failed}


def _stored_text(mem: RippleMem, kb: str = "default") -> str:
    return "\n".join(chunk.content for chunk in mem.kb.chunks(kb))


def _zipped(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_symlink_leaving_the_folder_is_refused_unless_asked_for(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    outside = write_txt(tmp_path / "passwd.txt", SECRET)
    os.symlink(outside, docs / "notes.md")
    os.symlink(docs / "good.md", docs / "alias.md")  # inside the folder: followed, stored once
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_md(elsewhere / "far.md")
    os.symlink(elsewhere, docs / "linked")  # a folder outside
    with _store(tmp_path) as mem:
        report = mem.ingest(docs, "shared")
        assert [p.name for p in report.ingested] == ["good.md"]
        assert _failures(report) == {"linked": "symlink", "notes.md": "symlink"}
        assert all("outside the folder" in failure.reason for failure in report.failed)
        assert SECRET not in _stored_text(mem, "shared")
        followed = mem.ingest(docs, "mine", follow_outside_symlinks=True)
        assert [p.name for p in followed.ingested] == ["good.md", "far.md", "passwd.txt"] and followed.ok
        # A file named on its own is held to the folder it sits in.
        named = mem.ingest(docs / "notes.md", "named")
        assert _failures(named) == {"notes.md": "symlink"}
        assert SECRET not in _stored_text(mem, "shared") and SECRET in _stored_text(mem, "mine")


def test_a_fifo_is_skipped_without_hanging_the_ingest(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    fifo = docs / "pipe.txt"
    os.mkfifo(fifo)
    reports: list[IngestReport] = []
    with _store(tmp_path) as mem:
        worker = threading.Thread(target=lambda: reports.append(mem.ingest(docs)), daemon=True)
        worker.start()
        worker.join(HANG_SECONDS)
        hung = worker.is_alive()
        if hung:  # give the blocked reader an end of file, so the thread and the store can finish
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            worker.join()
        assert not hung, "ingest hung on a FIFO"
        [report] = reports
        assert [p.name for p in report.ingested] == ["good.md"]
        assert _failures(report) == {"pipe.txt": "special_file"}
        assert "named pipe" in report.failed[0].reason


def test_devices_are_refused_even_through_a_followed_symlink(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    os.symlink("/dev/zero", docs / "zero.txt")
    os.symlink("/dev/null", docs / "null.md")
    with _store(tmp_path) as mem:
        report = mem.ingest(docs, follow_outside_symlinks=True)
        assert [p.name for p in report.ingested] == ["good.md"]
        assert {f.path.name: (f.kind, "character device" in f.reason) for f in report.failed} == {
            "null.md": ("special_file", True),
            "zero.txt": ("special_file", True),
        }


def test_loops_broken_links_and_undecodable_names_fail_per_file(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    os.symlink(docs / "b.md", docs / "a.md")
    os.symlink(docs / "a.md", docs / "b.md")
    os.symlink(docs / "gone.md", docs / "broken.md")
    os.symlink(docs, docs / "again")  # a folder linking to itself
    undecodable = Path(os.fsdecode(os.fsencode(docs) + b"/caf\xe9.md"))
    undecodable.write_text("Undecodable names are reported.", encoding="utf-8")
    expected = {"a.md": "symlink", "b.md": "symlink", "broken.md": "symlink", undecodable.name: "bad_name"}
    with _store(tmp_path) as mem:
        report = mem.ingest(docs)
        assert [p.name for p in report.ingested] == ["good.md"] and _failures(report) == expected
        reasons = {f.path.name: f.reason for f in report.failed}
        assert "loop" in reasons["a.md"] and "does not exist" in reasons["broken.md"]
        assert "caf\\xe9.md" in reasons[undecodable.name]
        # Following links leaves the folder that links to itself after one pass.
        again = mem.ingest(docs, "followed", follow_outside_symlinks=True)
        assert [p.name for p in again.ingested] == ["good.md"] and _failures(again) == expected
        # Named one by one, as a shell expands `docs/*`: the same refusals, per file.
        named = mem.ingest([docs / "a.md", docs / "broken.md", docs / "good.md"], "named")
        assert [p.name for p in named.ingested] == ["good.md"]
        assert _failures(named) == {"a.md": "symlink", "broken.md": "symlink"}
        assert [kb.sources for kb in mem.kb.list()] == [1, 1, 1]


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    write_txt(docs / "big.txt", "All work and no play. " * 60_000)  # 1.3 MB
    with _store(tmp_path) as mem:
        report = mem.ingest(docs, max_file_bytes=1_000_000)
        assert [p.name for p in report.ingested] == ["good.md"]
        assert _failures(report) == {"big.txt": "too_large"}
        assert "max_file_bytes" in report.failed[0].reason
        assert "no play" not in _stored_text(mem)


def test_zip_bombs_are_refused_from_their_central_directory(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    zeros = b"\0" * 10_000_000  # compresses about 1000:1
    bomb = {"[Content_Types].xml": b"<Types/>", "word/document.xml": zeros}
    (docs / "bomb.docx").write_bytes(_zipped(bomb))
    # A real DOCX carrying a part that unpacks far past its size: the converter would read the
    # text and never notice.
    padded = write_docx(docs / "padded.docx")
    with zipfile.ZipFile(padded, "a", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/media/padding.bin", zeros)
    noise = {f"ppt/slides/slide{i}.xml": os.urandom(1_000_000) for i in range(6)}
    (docs / "slides.pptx").write_bytes(_zipped(noise))
    with _store(tmp_path) as mem:
        report = mem.ingest(docs)
        assert [p.name for p in report.ingested] == ["good.md"]
        assert _failures(report) == {
            "bomb.docx": "too_large",
            "padded.docx": "too_large",
            "slides.pptx": "corrupt",
        }  # incompressible: not a bomb
        assert all("max_compression_ratio" in f.reason for f in report.failed[:2])
        assert DOCX_PARAGRAPHS[0] not in _stored_text(mem)
        capped = mem.ingest(docs, "capped", max_unpacked_bytes=5_000_000, max_compression_ratio=10_000)
        assert _failures(capped) == {
            "bomb.docx": "too_large",
            "padded.docx": "too_large",
            "slides.pptx": "too_large",
        }
        assert all("max_unpacked_bytes" in f.reason for f in capped.failed)


# A long text without headings, cut by the semantic chunker under a 1 GB address-space cap:
# comparing every sentence with every other would need 1.6 GB for these 20,000.
LONG_TEXT_SCRIPT = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (1_000_000_000, 1_000_000_000))
from ripplemem.markdown.chunk.semantic_chunker import chunk_semantic
from ripplemem.embedding.embedders import HashingEmbedder
chunks = chunk_semantic("All work and no play. " * 20_000, embedder=HashingEmbedder(64))
print(len(chunks))
"""


def test_a_long_text_without_headings_is_chunked_in_bounded_memory(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", LONG_TEXT_SCRIPT], capture_output=True, text=True, cwd=tmp_path, timeout=600
    )
    assert done.returncode == 0, done.stderr[-600:]
    assert int(done.stdout) > 1000


def test_a_refused_file_leaves_what_was_stored_unchanged(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    notes = write_md(docs / "notes.md", heading="Keys", sentence="The spare key hangs behind the door.")
    with _store(tmp_path) as mem:
        mem.ingest(docs)
        before = [(c.id, c.content) for c in mem.kb.chunks()]
        notes.unlink()
        os.symlink(write_txt(tmp_path / "passwd.txt", SECRET), notes)
        report = mem.ingest(docs)
        assert _failures(report) == {"notes.md": "symlink"} and report.unchanged == [docs / "good.md"]
        assert [(c.id, c.content) for c in mem.kb.chunks()] == before
        assert mem.kb.list()[0].sources == 2


def test_the_default_limits_are_the_documented_ones(tmp_path: Path) -> None:
    limits = FileLimits()
    assert (limits.max_file_bytes, limits.max_unpacked_bytes, limits.max_compression_ratio) == (
        100_000_000,
        200_000_000,
        100,
    )
    docs = (Path(__file__).parents[3] / "docs" / "documents.md").read_text(encoding="utf-8")
    for documented in (
        "`max_file_bytes=100_000_000`",
        "`max_unpacked_bytes=200_000_000`",
        "`max_compression_ratio=100`",
        "`follow_outside_symlinks=False`",
    ):
        assert documented in docs


def test_bad_limits_fail_before_anything_is_stored(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    with _store(tmp_path) as mem:
        for bad in (
            {"max_file_bytes": 0},
            {"max_unpacked_bytes": -1},
            {"max_compression_ratio": float("nan")},
            {"max_compression_ratio": 0.5},
        ):
            with pytest.raises(InvalidInputError, match=next(iter(bad))):
                mem.ingest(docs, **bad)
        for wrong in ({"max_file_bytes": "1e6"}, {"max_file_bytes": True}, {"follow_outside_symlinks": 1}):
            with pytest.raises(InvalidTypeError, match=next(iter(wrong))):
                mem.ingest(docs, **wrong)
        assert mem.kb.list() == []


def test_the_command_line_reports_refused_files_and_takes_the_limits(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    os.symlink(write_txt(tmp_path / "passwd.txt", SECRET), docs / "notes.md")
    Path(os.fsdecode(os.fsencode(docs) + b"/caf\xe9.md")).write_text("Odd name.", encoding="utf-8")
    write_txt(docs / "big.txt", "All work and no play. " * 60_000)
    common = ("--path", str(tmp_path / "memdb"), "--user", "mei", "--embedder", "hashing")
    refused = run_cli("ingest", str(docs), "--max-file-mb", "1", *common, cwd=tmp_path)
    assert refused.returncode == 1, refused.stderr
    assert f"failed: {docs / 'notes.md'}: a symlink to" in refused.stdout
    assert f"failed: {docs}/caf\\xe9.md: the file name is not valid UTF-8" in refused.stdout
    assert "big.txt" in refused.stdout and "1 new, 0 replaced, 0 unchanged, 3 failed" in refused.stdout
    followed = run_cli(
        "ingest",
        str(docs),
        "--kb",
        "all",
        "--follow-outside-symlinks",
        "--max-file-mb",
        "2",
        "--chunker",
        "markdown",
        "--json",
        *common,
        cwd=tmp_path,
    )
    assert followed.returncode == 1, followed.stderr
    report = json.loads(followed.stdout)
    assert [Path(p).name for p in report["ingested"]] == ["big.txt", "good.md", "passwd.txt"]
    assert [(f["path"], f["kind"]) for f in report["failed"]] == [(f"{docs}/caf\\xe9.md", "bad_name")]


def test_bad_limits_on_the_command_line_fail_before_a_store_is_made(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    docs = _docs(tmp_path)
    common = ("--path", str(tmp_path / "memdb"), "--user", "mei", "--embedder", "hashing")
    for flags in (("--max-file-mb", "0"), ("--max-unpacked-mb", "nan"), ("--max-compression-ratio", "0.5")):
        status, _, err = cli(capsys, "ingest", str(docs), *flags, *common)
        assert status == 2 and "must be" in err, flags
    assert not (tmp_path / "memdb").exists()


def test_the_store_s_own_files_are_never_ingested(tmp_path: Path) -> None:
    # A store kept inside the folder being ingested: its database, log and index files are not
    # documents, and reading a live SQLite file with open() would drop this process's locks on it.
    docs = _docs(tmp_path)
    with RippleMem(
        docs / "memdb", user_id="alice", embedder=HashingEmbedder(), store=StoreOptions(vector_index="chroma")
    ) as mem:
        mem.add("My locker code is 4417")
        report = mem.ingest(docs, include=["*"])
        refused = {f.path.name for f in report.failed if f.kind == "store_file"}
        assert "ripplemem.db" in refused and "chroma.sqlite3" in refused
        assert [path.name for path in report.ingested] == ["good.md"]
        assert "4417" not in _stored_text(mem)
        assert mem.recall("locker code", mode="keyword").hits[0].memory.content == "My locker code is 4417"
