"""Document conversion and discovery on real files the tests write: every format, pages, failures."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from doc_fixtures import (
    CHINESE_PARAGRAPHS,
    CHINESE_TITLE,
    CSV_ROWS,
    DOCX_HEADINGS,
    DOCX_PARAGRAPHS,
    DOCX_TITLE,
    EPUB_CHAPTERS,
    EPUB_TITLE,
    HTML_SENTENCE,
    HTML_TITLE,
    JSON_DATA,
    MD_HEADING,
    MD_SENTENCE,
    PDF_PAGES,
    PDF_TABLE,
    PPTX_SLIDES,
    TXT_SENTENCE,
    XLSX_SHEETS,
    XML_SENTENCE,
    write_binary,
    write_corpus,
    write_corrupt,
    write_csv,
    write_md,
    write_pdf,
    write_txt,
    write_wav,
)

from ripplemem.errors import InvalidInputError, InvalidTypeError, MissingDependencyError
from ripplemem.markdown.convert import markitdown_engine
from ripplemem.markdown.convert.convert import (
    ConversionError,
    ConvertedDocument,
    UnsupportedFormatError,
    check_change,
    content_hash,
    convert_file,
    convert_many,
    iter_convert,
    source_key,
)
from ripplemem.markdown.convert.discover import discover_files

pytest.importorskip("markitdown")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ConvertedDocument]:
    """One file of each format, written and converted once for the module: {format: document}."""
    folder = tmp_path_factory.mktemp("corpus")
    files = write_corpus(folder)
    report = convert_many(folder)
    assert report.ok, report.errors
    by_path = {doc.source: doc for doc in report.documents}
    return {name: by_path[path.resolve()] for name, path in files.items()}


# --- every format -----------------------------------------------------------------------------


def test_every_format_converts_with_the_text_that_was_written(corpus: dict[str, ConvertedDocument]) -> None:
    expected = {
        "pdf": PDF_PAGES,
        "docx": (DOCX_TITLE, *DOCX_HEADINGS, *DOCX_PARAGRAPHS),
        "xlsx": ("Marguerite", "Beekeeper", "Compost"),
        "pptx": tuple(text for slide in PPTX_SLIDES for text in slide),
        "epub": tuple(text for chapter in EPUB_CHAPTERS for text in chapter),
        "html": (HTML_TITLE, HTML_SENTENCE, "binoculars"),
        "csv": ("Reykjavik", "139000"),
        "json": (JSON_DATA["owner"], "Lantern"),
        "xml": (XML_SENTENCE,),
        "txt": (TXT_SENTENCE,),
        "md": (MD_HEADING, MD_SENTENCE),
        "docx_zh": (CHINESE_TITLE, *CHINESE_PARAGRAPHS),
        "md_zh": (CHINESE_TITLE, *CHINESE_PARAGRAPHS),
    }
    assert set(corpus) == set(expected)
    for name, texts in expected.items():
        doc = corpus[name]
        for text in texts:
            assert text in doc.markdown, (name, text)
        assert doc.format == name.removesuffix("_zh")
        assert doc.size == doc.source.stat().st_size
        assert doc.mtime == doc.source.stat().st_mtime
        assert doc.content_hash == content_hash(doc.source)


def test_spreadsheets_and_csv_become_markdown_tables(corpus: dict[str, ConvertedDocument]) -> None:
    xlsx = corpus["xlsx"].markdown
    assert "| Item | Cost |" in xlsx and "| Seeds | 42 |" in xlsx and "| Marguerite | Gardener |" in xlsx
    assert "## Budget" in xlsx and "## Staff" in xlsx
    csv_text = corpus["csv"].markdown
    assert csv_text.splitlines()[:3] == ["| city | population |", "| --- | --- |", "| Reykjavik | 139000 |"]
    assert len(csv_text.splitlines()) == len(CSV_ROWS) + 1


def test_each_sheet_has_a_start_offset(corpus: dict[str, ConvertedDocument]) -> None:
    doc = corpus["xlsx"]
    assert doc.page_unit == "sheet" and doc.page_count == len(XLSX_SHEETS)
    assert doc.page_of(doc.markdown.index("Compost")) == 1
    assert doc.page_of(doc.markdown.index("Beekeeper")) == 2


def test_docx_headings_become_markdown_headings_and_the_title_comes_from_its_properties(
    corpus: dict[str, ConvertedDocument],
) -> None:
    doc = corpus["docx"]
    lines = doc.markdown.splitlines()
    for heading in DOCX_HEADINGS:
        assert f"# {heading}" in lines
    assert doc.title == DOCX_TITLE
    assert doc.page_starts == [] and doc.page_of(0) is None


def test_slides_keep_their_text_and_their_numbers(corpus: dict[str, ConvertedDocument]) -> None:
    doc = corpus["pptx"]
    assert doc.page_unit == "slide" and doc.page_count == len(PPTX_SLIDES)
    for number, (title, body) in enumerate(PPTX_SLIDES, start=1):
        assert f"# {title}" in doc.markdown.splitlines()
        assert doc.page_of(doc.markdown.index(body)) == number
    assert doc.title == PPTX_SLIDES[0][0]


def test_epub_chapters_come_in_spine_order_with_the_book_title(corpus: dict[str, ConvertedDocument]) -> None:
    doc = corpus["epub"]
    assert doc.title == EPUB_TITLE
    positions = [doc.markdown.index(f"# {heading}\n\n{sentence}") for heading, sentence in EPUB_CHAPTERS]
    assert positions == sorted(positions)


def test_html_keeps_the_title_and_drops_scripts(corpus: dict[str, ConvertedDocument]) -> None:
    doc = corpus["html"]
    assert doc.title == HTML_TITLE
    assert f"# {HTML_TITLE}" in doc.markdown
    assert "do-not-index" not in doc.markdown


def test_chinese_documents_stay_intact(corpus: dict[str, ConvertedDocument], tmp_path: Path) -> None:
    for name in ("docx_zh", "md_zh"):
        assert corpus[name].title == CHINESE_TITLE
        for paragraph in CHINESE_PARAGRAPHS:
            assert paragraph in corpus[name].markdown
    gbk = tmp_path / "纪要.txt"
    gbk.write_bytes("这是用GBK编码的会议纪要，下周三之前提交预算。".encode("gbk"))
    assert "下周三之前提交预算" in convert_file(gbk).markdown


# --- PDF pages --------------------------------------------------------------------------------


def test_pdf_page_starts_tell_which_page_a_sentence_is_on(corpus: dict[str, ConvertedDocument]) -> None:
    doc = corpus["pdf"]
    assert doc.page_unit == "page" and doc.page_count == len(PDF_PAGES)
    assert doc.title == "Harbour Log"
    for number, sentence in enumerate(PDF_PAGES, start=1):
        start = doc.markdown.index(sentence)
        assert doc.page_of(start) == number
        assert doc.page_of(start + len(sentence) - 1) == number
    # The table on page 2 is read as a Markdown table, on page 2.
    for vessel, tonnage, port in PDF_TABLE[1:]:
        assert doc.page_of(doc.markdown.index(port)) == 2
        rows = [line for line in doc.markdown.splitlines() if line.startswith("|")]
        assert any(vessel in row and tonnage in row for row in rows)
    first, second = doc.markdown.index(PDF_PAGES[0]), doc.markdown.index(PDF_PAGES[1])
    assert doc.page_range(first, second + 5) == (1, 2)


def test_pdf_tables_can_be_skipped_for_speed_keeping_text_and_pages(tmp_path: Path) -> None:
    doc = convert_file(write_pdf(tmp_path / "log.pdf", table=PDF_TABLE), pdf_tables=False)
    assert not any(line.startswith("|") for line in doc.markdown.splitlines())
    assert doc.page_of(doc.markdown.index("Borealis")) == 2
    assert doc.page_of(doc.markdown.index(PDF_PAGES[2])) == 3


def test_a_pdf_page_without_text_keeps_the_numbering(tmp_path: Path) -> None:
    pages = ("Alpha page words.", "", "Gamma page words.", "Delta page words.")
    doc = convert_file(write_pdf(tmp_path / "gap.pdf", pages, title=None))
    assert doc.page_count == 4 and doc.page_starts == sorted(doc.page_starts)
    assert doc.page_of(doc.markdown.index("Alpha")) == 1
    assert doc.page_of(doc.markdown.index("Gamma")) == 3
    assert doc.page_of(doc.markdown.index("Delta")) == 4
    assert doc.title is None


def test_a_pdf_without_any_text_is_reported_as_such(tmp_path: Path) -> None:
    with pytest.raises(ConversionError) as caught:
        convert_file(write_pdf(tmp_path / "scan.pdf", ("",)))
    assert caught.value.kind == "no_text" and "OCR" in caught.value.reason


# --- failures, per file -----------------------------------------------------------------------


def test_a_bad_file_is_reported_and_the_rest_of_the_batch_converts(tmp_path: Path) -> None:
    write_txt(tmp_path / "a_good.txt")
    write_corrupt(tmp_path / "b_broken.docx")
    write_corrupt(tmp_path / "c_broken.pdf")
    write_binary(tmp_path / "d_blob.bin")
    write_binary(tmp_path / "e_old.doc")
    write_md(tmp_path / "f_good.md")
    calls: list[tuple[int, int, str]] = []
    report = convert_many(tmp_path, on_progress=lambda done, total, p: calls.append((done, total, p.name)))
    assert [doc.source.name for doc in report.documents] == ["a_good.txt", "f_good.md"]
    failures = {failure.path.name: failure for failure in report.errors}
    assert set(failures) == {"b_broken.docx", "c_broken.pdf", "d_blob.bin", "e_old.doc"}
    assert failures["b_broken.docx"].kind == "corrupt" and "DOCX" in failures["b_broken.docx"].reason
    assert failures["c_broken.pdf"].kind == "corrupt" and "PDF" in failures["c_broken.pdf"].reason
    assert failures["d_blob.bin"].kind == "unsupported" and "'.bin'" in failures["d_blob.bin"].reason
    assert failures["e_old.doc"].kind == "unsupported" and ".docx" in failures["e_old.doc"].reason
    assert calls == [(i, 6, name) for i, name in enumerate(sorted(p.name for p in tmp_path.iterdir()), 1)]
    assert report.total == 6 and not report.ok
    assert report.summary() == "6 files: 2 converted, 0 unchanged, 4 failed"


def test_single_file_errors_raise_with_a_kind(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFormatError) as caught:
        convert_file(write_binary(tmp_path / "blob"))
    assert caught.value.kind == "unsupported" and "without an extension" in caught.value.reason
    with pytest.raises(ConversionError) as broken:
        convert_file(write_corrupt(tmp_path / "broken.xlsx"))
    assert broken.value.kind == "corrupt" and str(broken.value).startswith(str(tmp_path / "broken.xlsx"))
    with pytest.raises(InvalidInputError, match="no such file"):
        convert_file(tmp_path / "missing.pdf")
    with pytest.raises(InvalidInputError, match="folder"):
        convert_file(tmp_path)


def test_an_unreadable_file_is_a_per_file_permission_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_txt(tmp_path / "open.txt")
    locked = write_txt(tmp_path / "locked.txt", "secret")
    real_open = os.open

    # File modes do not stop root (who may run the tests), so the refusal is simulated.
    def open_file(path: str | os.PathLike[str], flags: int, *args: int) -> int:
        if Path(path).name == locked.name:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", open_file)
    report = convert_many(tmp_path)
    assert [doc.source.name for doc in report.documents] == ["open.txt"]
    assert [(f.path.name, f.kind) for f in report.errors] == [("locked.txt", "permission")]
    with pytest.raises(ConversionError, match="permission denied"):
        convert_file(locked)


def test_unknown_text_files_are_read_as_text_and_empty_ones_are_empty(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("disk quota exceeded on node 4\n", encoding="utf-8")
    doc = convert_file(log)
    assert doc.format == "text" and "disk quota exceeded" in doc.markdown and doc.title is None
    empty = convert_file(write_txt(tmp_path / "empty.txt", ""))
    assert empty.markdown.strip() == "" and empty.size == 1
    with pytest.raises(ConversionError) as caught:
        convert_file(write_binary(tmp_path / "mislabelled.txt"))
    assert caught.value.kind == "corrupt" and "binary" in caught.value.reason


def test_audio_is_never_transcribed_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from markitdown.converters import _audio_converter

    heard: list[str] = []

    def fake_transcribe(stream: object, *, audio_format: str = "wav", language: str = "en-US") -> str:
        heard.append(audio_format)
        return "the spoken words"

    monkeypatch.setattr(_audio_converter, "transcribe_audio", fake_transcribe)
    monkeypatch.setattr(markitdown_engine, "exiftool_path", lambda: None)
    wav = write_wav(tmp_path / "memo.wav")
    with pytest.raises(ConversionError) as caught:
        convert_file(wav)
    assert caught.value.kind == "no_text" and "allow_network=True" in caught.value.reason
    assert heard == []
    doc = convert_file(wav, allow_network=True)
    assert heard == ["wav"] and "the spoken words" in doc.markdown and doc.format == "audio"


def test_without_markitdown_office_files_fail_with_the_extra_and_text_still_converts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(markitdown_engine, "_engines", {})
    monkeypatch.setitem(sys.modules, "markitdown", None)
    note = write_txt(tmp_path / "note.txt")
    pdf = write_pdf(tmp_path / "report.pdf")
    with pytest.raises(MissingDependencyError, match=r"PDF files need MarkItDown.*ripplemem\[documents\]"):
        convert_file(pdf)
    report = convert_many(tmp_path)
    assert [doc.source.name for doc in report.documents] == ["note.txt"]
    assert [(f.path.name, f.kind) for f in report.errors] == [("report.pdf", "missing_dependency")]
    assert "pip install 'ripplemem[documents]'" in report.errors[0].reason
    assert TXT_SENTENCE in convert_file(note).markdown
    assert not markitdown_engine.markitdown_available()


# --- hashes and change detection --------------------------------------------------------------


def test_hash_is_stable_for_identical_bytes_and_changes_with_an_edit(tmp_path: Path) -> None:
    one = write_csv(tmp_path / "one.csv")
    two = write_csv(tmp_path / "two.csv")
    assert content_hash(one) == content_hash(two) == content_hash(one.read_bytes())
    assert convert_file(one).content_hash == convert_file(two).content_hash == content_hash(one)
    before = content_hash(one)
    with one.open("a", encoding="utf-8") as handle:
        handle.write("Tasiilaq,2000\n")
    assert content_hash(one) != before
    assert len(before) == 64


def test_check_change_compares_with_the_stored_hash(tmp_path: Path) -> None:
    path = write_txt(tmp_path / "plan.txt", "Plan A.")
    first = check_change(path, None)
    assert first.status == "new" and first.needs_ingest
    assert check_change(path, first.content_hash).status == "unchanged"
    write_txt(path, "Plan B.")
    changed = check_change(path, first.content_hash)
    assert changed.status == "changed" and changed.needs_ingest and changed.content_hash != first.content_hash


def test_a_second_run_skips_unchanged_files_and_converts_edited_ones(tmp_path: Path) -> None:
    keep = write_txt(tmp_path / "keep.txt", "Unchanged words.")
    edit = write_txt(tmp_path / "edit.txt", "Old words.")
    first = convert_many(tmp_path)
    stored = {str(doc.source): doc.content_hash for doc in first.documents}
    assert set(stored) == {source_key(keep), source_key(edit)}
    write_txt(edit, "New words.")
    second = convert_many(tmp_path, known_hashes=stored)
    assert second.unchanged == [keep.resolve()]
    assert [doc.source for doc in second.documents] == [edit.resolve()]
    assert "New words." in second.documents[0].markdown
    # Keys may be given as the caller spelled the path; they are resolved before comparing.
    spelled = str(tmp_path / "." / "keep.txt")
    outcomes = list(iter_convert([keep], known_hashes={spelled: stored[source_key(keep)]}))
    assert outcomes[0].unchanged and outcomes[0].document is None and outcomes[0].error is None


# --- discovery --------------------------------------------------------------------------------


def _tree(root: Path) -> None:
    for relative in (
        "a.md",
        "B.PDF",
        "notes.txt",
        "sub/c.md",
        "sub/deep/d.md",
        "sub/deep/e.csv",
        "drafts/f.md",
        ".hidden.md",
        ".git/config.md",
        "sub/.cache/g.md",
        "~$lock.docx",
        "Thumbs.db",
        ".DS_Store",
        "backup.md~",
        "__pycache__/h.md",
        "node_modules/pkg/i.md",
    ):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(relative, encoding="utf-8")


def _names(root: Path, files: list[Path]) -> list[str]:
    return [path.relative_to(root.resolve()).as_posix() for path in files]


def test_discovery_walks_folders_in_order_and_skips_hidden_files_and_junk(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert _names(tmp_path, discover_files(tmp_path)) == [
        "B.PDF",
        "a.md",
        "drafts/f.md",
        "notes.txt",
        "sub/c.md",
        "sub/deep/d.md",
        "sub/deep/e.csv",
    ]
    assert _names(tmp_path, discover_files(str(tmp_path), recursive=False)) == ["B.PDF", "a.md", "notes.txt"]


def test_discovery_filters_with_globs(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert _names(tmp_path, discover_files(tmp_path, include="*.md")) == [
        "a.md",
        "drafts/f.md",
        "sub/c.md",
        "sub/deep/d.md",
    ]
    assert _names(tmp_path, discover_files(tmp_path, include=["*.pdf", "*.csv"])) == [
        "B.PDF",
        "sub/deep/e.csv",
    ]
    assert _names(tmp_path, discover_files(tmp_path, include="*.md", exclude="drafts")) == [
        "a.md",
        "sub/c.md",
        "sub/deep/d.md",
    ]
    assert _names(tmp_path, discover_files(tmp_path, include="sub/*.md")) == ["sub/c.md", "sub/deep/d.md"]
    assert _names(tmp_path, discover_files(tmp_path, include="**/*.md", exclude=["sub/deep/*"])) == [
        "a.md",
        "drafts/f.md",
        "sub/c.md",
    ]


def test_discovery_takes_named_files_as_given_and_deduplicates(tmp_path: Path) -> None:
    _tree(tmp_path)
    files = discover_files(
        [tmp_path / "sub" / "deep" / "e.csv", tmp_path / ".hidden.md", tmp_path / "sub"], include="*.md"
    )
    assert _names(tmp_path, files) == ["sub/deep/e.csv", ".hidden.md", "sub/c.md", "sub/deep/d.md"]
    assert discover_files([tmp_path / "a.md", tmp_path / "a.md"]) == [(tmp_path / "a.md").resolve()]


def test_discovery_rejects_missing_paths_and_bad_arguments(tmp_path: Path) -> None:
    _tree(tmp_path)
    with pytest.raises(InvalidInputError, match="nope"):
        discover_files([tmp_path / "a.md", tmp_path / "nope"])
    with pytest.raises(InvalidInputError):
        convert_many(tmp_path / "nope")
    with pytest.raises(InvalidInputError):
        discover_files([])
    with pytest.raises(InvalidInputError):
        discover_files(tmp_path, include=[""])
    with pytest.raises(InvalidTypeError):
        discover_files(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError):
        discover_files([tmp_path, 42])  # type: ignore[list-item]


def test_convert_many_applies_the_discovery_filters(tmp_path: Path) -> None:
    _tree(tmp_path)
    report = convert_many(tmp_path, include="*.md", exclude=["drafts", "sub/deep"], recursive=True)
    assert [doc.source.name for doc in report.documents] == ["a.md", "c.md"]
    assert report.ok and report.total == 2
