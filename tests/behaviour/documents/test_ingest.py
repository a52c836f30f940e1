"""mem.ingest: real files of every format written by the tests go into a knowledge base as chunks
with their source, headings, offsets and pages; unchanged files are skipped, changed ones replace
their chunks, a broken file is reported while the rest go in."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from doc_fixtures import (
    CHINESE_PARAGRAPHS,
    CSV_ROWS,
    DOCX_HEADINGS,
    DOCX_PARAGRAPHS,
    EPUB_CHAPTERS,
    HTML_SENTENCE,
    JSON_DATA,
    MD_SENTENCE,
    PDF_PAGES,
    PPTX_SLIDES,
    TXT_SENTENCE,
    XML_SENTENCE,
    write_corpus,
    write_corrupt,
    write_md,
    write_txt,
)

from ripplemem import InvalidInputError, RippleMem, StoreOptions
from ripplemem.core.types import Memory
from ripplemem.documents.ingest import IngestReport
from ripplemem.embedding.embedders import Embedder

# One sentence planted in each format, to be found again in the stored chunks.
PLANTED = {
    "pdf": PDF_PAGES[1],
    "docx": DOCX_PARAGRAPHS[0],
    "xlsx": "Marguerite",
    "pptx": PPTX_SLIDES[1][1],
    "epub": EPUB_CHAPTERS[0][1],
    "html": HTML_SENTENCE,
    "csv": CSV_ROWS[1][0],
    "json": JSON_DATA["owner"],
    "xml": XML_SENTENCE,
    "txt": TXT_SENTENCE,
    "md": MD_SENTENCE,
    "docx_zh": CHINESE_PARAGRAPHS[0],
    "md_zh": CHINESE_PARAGRAPHS[1],
}


@pytest.fixture(scope="module")
def corpus(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder
) -> Iterator[tuple[RippleMem, dict[str, Path], IngestReport]]:
    """Alice's store with one file of every format (and a corrupt DOCX) ingested once."""
    root = tmp_path_factory.mktemp("ingest")
    files = write_corpus(root / "docs")
    write_corrupt(root / "docs" / "broken.docx")
    handle = RippleMem(
        root / "store", user_id="alice", embedder=embedder, store=StoreOptions(vector_index="chroma")
    )
    report = handle.ingest(root / "docs")
    yield handle, files, report
    handle.close()


def by_source(chunks: list[Memory]) -> dict[str, list[Memory]]:
    grouped: dict[str, list[Memory]] = {}
    for chunk in chunks:
        grouped.setdefault(chunk.metadata["source"], []).append(chunk)
    return grouped


def test_every_format_is_stored_and_the_corrupt_file_is_reported(corpus) -> None:
    mem, files, report = corpus
    assert sorted(report.ingested) == sorted(p.resolve() for p in files.values())
    assert [(f.path.name, f.kind) for f in report.failed] == [("broken.docx", "corrupt")]
    assert "corrupt" in report.failed[0].reason
    assert report.created and report.replaced == [] and report.unchanged == []
    chunks = by_source(mem.kb.chunks())
    assert report.chunks == sum(len(group) for group in chunks.values())
    for fmt, path in files.items():
        text = "\n".join(c.content for c in chunks[str(path.resolve())])
        assert PLANTED[fmt] in text, fmt
    [kb] = mem.kb.list()
    assert (kb.name, kb.sources, kb.chunks, kb.readers) == ("default", len(files), report.chunks, ("alice",))
    assert kb.pages == report.pages >= len(PDF_PAGES) + len(PPTX_SLIDES)


def test_chunks_carry_source_headings_offsets_and_pages(corpus) -> None:
    mem, files, _ = corpus
    pdf = mem.kb.chunks(source=files["pdf"])
    assert pdf and all(c.type == "document" and c.source == str(files["pdf"].resolve()) for c in pdf)
    for number, sentence in enumerate(PDF_PAGES, start=1):
        [holder] = [c for c in pdf if sentence in c.content]
        assert holder.metadata["page"] <= number <= holder.metadata["end_page"]
    docx = mem.kb.chunks(source=str(files["docx"]))
    [tomatoes] = [c for c in docx if DOCX_PARAGRAPHS[0] in c.content]
    assert DOCX_HEADINGS[0] in tomatoes.metadata["heading_path"]
    assert all(heading in tomatoes.content for heading in tomatoes.metadata["heading_path"])
    meta = tomatoes.metadata
    assert 0 <= meta["start"] < meta["end"]
    assert meta["format"] == "docx" and meta["file_name"] == "garden.docx"
    assert meta["knowledge_base"] == "default" and len(meta["content_hash"]) == 64
    assert [c.metadata["chunk_index"] for c in docx] == list(range(len(docx)))
    # Users never see the reserved scope id a knowledge base is stored under.
    assert {c.user_id for c in mem.kb.chunks()} == {"kb:default"}


def test_reingesting_unchanged_files_writes_nothing(corpus) -> None:
    mem, files, first = corpus
    before = [c.id for c in mem.kb.chunks()]
    again = mem.ingest(files["md"].parent)
    assert sorted(again.unchanged) == sorted(first.ingested)
    assert again.ingested == again.replaced == [] and again.chunks == 0
    assert [c.id for c in mem.kb.chunks()] == before


def test_a_changed_file_replaces_its_old_chunks(tmp_path: Path, embedder: Embedder) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    notes = write_md(
        docs / "notes.md", heading="Boiler", sentence="The boiler pressure must stay at 1.5 bar."
    )
    other = write_txt(docs / "other.txt", "The spare key hangs behind the kitchen door.")
    with RippleMem(tmp_path / "store", user_id="alice", embedder=embedder) as mem:
        mem.ingest(docs)
        old_ids = {c.id for c in mem.kb.chunks(source=notes)}
        kept = [c.id for c in mem.kb.chunks(source=other)]
        write_md(notes, heading="Boiler", sentence="The boiler pressure must now stay at 2.0 bar.")
        report = mem.ingest(docs)
        assert report.replaced == [notes.resolve()] and report.unchanged == [other.resolve()]
        new = mem.kb.chunks(source=notes)
        assert new and not old_ids & {c.id for c in new}
        text = "\n".join(c.content for c in mem.kb.chunks())
        assert "2.0 bar" in text and "1.5 bar" not in text
        assert [c.id for c in mem.kb.chunks(source=other)] == kept
        assert mem.kb.list()[0].sources == 2


def test_progress_callback_sees_every_file(tmp_path: Path, embedder: Embedder) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    write_txt(docs / "a.txt", "Apples ripen in September.")
    write_txt(docs / "b.txt", "Bees swarm in May.")
    write_corrupt(docs / "c.pptx")
    calls: list[tuple[int, int, str]] = []
    with RippleMem(tmp_path / "store", user_id="alice", embedder=embedder) as mem:
        report = mem.ingest(docs, progress=lambda done, total, path: calls.append((done, total, path.name)))
    assert calls == [(1, 3, "a.txt"), (2, 3, "b.txt"), (3, 3, "c.pptx")]
    assert len(report.ingested) == 2 and [f.path.name for f in report.failed] == ["c.pptx"]


def test_globs_recursion_and_force(tmp_path: Path, embedder: Embedder) -> None:
    docs = tmp_path / "docs"
    (docs / "deep").mkdir(parents=True)
    write_md(docs / "top.md")
    write_md(docs / "deep" / "inner.md", heading="Inner", sentence="The inner file is two folders down.")
    write_txt(docs / "skip.txt")
    with RippleMem(tmp_path / "store", user_id="alice", embedder=embedder) as mem:
        flat = mem.ingest(docs, "flat", include="*.md", recursive=False)
        assert [p.name for p in flat.ingested] == ["top.md"]
        deep = mem.ingest(docs, "deep", include="*.md", exclude="top.md")
        assert [p.name for p in deep.ingested] == ["inner.md"]
        forced = mem.ingest(docs, "deep", include="*.md", exclude="top.md", force=True, chunker="markdown")
        assert [p.name for p in forced.replaced] == ["inner.md"]
        assert {c.metadata["chunker"] for c in mem.kb.chunks("deep")} == {"markdown"}
        assert sorted(kb.name for kb in mem.kb.list()) == ["deep", "flat"]


def test_bad_input_fails_before_anything_is_stored(tmp_path: Path, embedder: Embedder) -> None:
    with RippleMem(tmp_path / "store", user_id="alice", embedder=embedder) as mem:
        with pytest.raises(InvalidInputError, match="no such file or folder"):
            mem.ingest(tmp_path / "missing")
        with pytest.raises(InvalidInputError, match="chunker"):
            mem.ingest(write_txt(tmp_path / "a.txt"), chunker="sentences")
        with pytest.raises(InvalidInputError, match="knowledge_base"):
            mem.ingest(tmp_path / "a.txt", knowledge_base="  ")
        with pytest.raises(InvalidInputError, match="max_tokens"):
            mem.ingest(tmp_path / "a.txt", max_tokens=0)
        assert mem.kb.list() == []


def test_aingest(tmp_path: Path, embedder: Embedder) -> None:
    with RippleMem(tmp_path / "store", user_id="alice", embedder=embedder) as mem:
        report = asyncio.run(mem.aingest([write_txt(tmp_path / "a.txt")], "notes"))
        assert len(report.ingested) == 1 and TXT_SENTENCE in mem.kb.chunks("notes")[0].content
