"""Writers for real document fixtures, made at test time (never committed, never downloaded).

Each writer takes a target path plus the text to put in the document and returns the path, so tests
can assert that the very sentences they wrote come back out of the conversion. The binary formats
use the libraries the converters themselves read them with (python-docx, openpyxl, python-pptx,
fpdf2, ebooklib); HTML, CSV, JSON, XML, TXT and MD are written as text. ``write_corpus`` writes one
file of every format into a folder, which also serves benchmarks that need a folder of documents.
"""

from __future__ import annotations

import csv
import json
import struct
import wave
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape

# Sentences planted in the fixtures; each is unique so a test can find it and nothing else.
PDF_PAGES = (
    "The lighthouse keeper logged forty ships on the first page.",
    "On the second page the harbour master counted the cargo crates.",
    "The third page records that the storm passed at midnight.",
)
PDF_TABLE = (
    ("Vessel", "Tonnage", "Port"),
    ("Aurora", "1200", "Bergen"),
    ("Borealis", "950", "Tromso"),
    ("Cygnus", "780", "Alesund"),
)
DOCX_TITLE = "Quarterly Garden Report"
DOCX_HEADINGS = ("Spring Planting", "Summer Harvest")
DOCX_PARAGRAPHS = (
    "The tomato seedlings went into the east bed in early April.",
    "By August the harvest filled eleven crates of tomatoes.",
)
XLSX_SHEETS = {
    "Budget": (("Item", "Cost"), ("Seeds", 42), ("Compost", 17)),
    "Staff": (("Name", "Role"), ("Marguerite", "Gardener"), ("Tobias", "Beekeeper")),
}
PPTX_SLIDES = (
    ("Migration Plan", "Move the archive to cold storage before June."),
    ("Risks", "The tape library firmware is out of support."),
    ("Next Steps", "Schedule the dry run with the operations team."),
)
HTML_TITLE = "Field Notes"
HTML_SENTENCE = "The heron returned to the marsh at dawn."
CSV_ROWS = (("city", "population"), ("Reykjavik", "139000"), ("Nuuk", "19600"))
JSON_DATA = {"project": "Lantern", "owner": "Ingrid Solberg", "milestones": ["design", "pilot"]}
XML_SENTENCE = "Valve seven must be inspected every spring."
TXT_SENTENCE = "Remember to water the fern on Thursdays."
MD_HEADING = "Release Checklist"
MD_SENTENCE = "Tag the release only after the smoke tests pass."
EPUB_TITLE = "The Quiet Valley"
EPUB_CHAPTERS = (
    ("Chapter One", "Mira found a copper key beneath the mill wheel."),
    ("Chapter Two", "The key opened the chapel bell tower at last."),
)
CHINESE_TITLE = "项目周报"
CHINESE_PARAGRAPHS = (
    "本周我们完成了向量索引的重构，检索速度提升了三倍。",
    "下周计划把文档导入功能接入命令行工具。",
)


def write_pdf(
    path: Path,
    pages: Sequence[str] = PDF_PAGES,
    *,
    title: str | None = "Harbour Log",
    table: Sequence[Sequence[str]] | None = None,
    table_page: int = 2,
) -> Path:
    """A PDF with one page per entry of ``pages`` (Latin-1 text); a table on ``table_page`` if given."""
    from fpdf import FPDF

    pdf = FPDF()
    if title:
        pdf.set_title(title)
    for number, text in enumerate(pages, start=1):
        pdf.add_page()
        pdf.set_font("Helvetica", size=12)
        pdf.multi_cell(0, 8, text)
        if table is not None and number == table_page:
            pdf.ln(6)
            with pdf.table() as grid:
                for row in table:
                    cells = grid.row()
                    for value in row:
                        cells.cell(str(value))
    pdf.output(str(path))
    return path


def write_docx(
    path: Path,
    *,
    title: str = DOCX_TITLE,
    headings: Sequence[str] = DOCX_HEADINGS,
    paragraphs: Sequence[str] = DOCX_PARAGRAPHS,
) -> Path:
    """A DOCX with a Title paragraph, then each heading (Heading 1) followed by its paragraph."""
    import docx

    document = docx.Document()
    document.core_properties.title = title
    document.add_heading(title, level=0)
    for heading, paragraph in zip(headings, paragraphs, strict=True):
        document.add_heading(heading, level=1)
        document.add_paragraph(paragraph)
    document.save(str(path))
    return path


def write_xlsx(path: Path, sheets: dict[str, Sequence[Sequence[object]]] = XLSX_SHEETS) -> Path:
    """An XLSX with one worksheet per entry, the first row a header."""
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
    workbook.save(str(path))
    return path


def write_pptx(path: Path, slides: Sequence[tuple[str, str]] = PPTX_SLIDES) -> Path:
    """A PPTX with a title-and-content slide per (title, body) pair."""
    from pptx import Presentation

    presentation = Presentation()
    layout = presentation.slide_layouts[1]
    for title, body in slides:
        slide = presentation.slides.add_slide(layout)
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    presentation.save(str(path))
    return path


def write_epub(
    path: Path, *, title: str = EPUB_TITLE, chapters: Sequence[tuple[str, str]] = EPUB_CHAPTERS
) -> Path:
    """An EPUB 3 book with one XHTML file per (heading, sentence) chapter, in spine order."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("ripplemem-fixture-epub")
    book.set_title(title)
    book.set_language("en")
    book.add_author("RippleMem Tests")
    items = []
    for number, (heading, sentence) in enumerate(chapters, start=1):
        item = epub.EpubHtml(title=heading, file_name=f"chapter{number}.xhtml", lang="en")
        item.content = f"<html><body><h1>{escape(heading)}</h1><p>{escape(sentence)}</p></body></html>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    epub.write_epub(str(path), book)
    return path


def write_html(path: Path, *, title: str = HTML_TITLE, sentence: str = HTML_SENTENCE) -> Path:
    """An HTML page with a <title>, an <h1>, a paragraph, a list and a script that must not leak."""
    path.write_text(
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>{escape(title)}</title><script>var secret = 'do-not-index';</script></head>"
        f"<body><h1>{escape(title)}</h1><p>{escape(sentence)}</p>"
        "<ul><li>binoculars</li><li>notebook</li></ul></body></html>\n",
        encoding="utf-8",
    )
    return path


def write_csv(path: Path, rows: Sequence[Sequence[str]] = CSV_ROWS) -> Path:
    """A CSV file, the first row a header."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


def write_json(path: Path, data: object = JSON_DATA) -> Path:
    """A JSON file (non-ASCII kept as-is)."""
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def write_xml(path: Path, sentence: str = XML_SENTENCE) -> Path:
    """A small XML maintenance record."""
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<maintenance>\n'
        f'  <task id="7"><note>{escape(sentence)}</note></task>\n</maintenance>\n',
        encoding="utf-8",
    )
    return path


def write_txt(path: Path, text: str = TXT_SENTENCE) -> Path:
    """A UTF-8 text file."""
    path.write_text(text + "\n", encoding="utf-8")
    return path


def write_md(path: Path, *, heading: str = MD_HEADING, sentence: str = MD_SENTENCE) -> Path:
    """A Markdown file with an H1, a paragraph and a list."""
    path.write_text(f"# {heading}\n\n{sentence}\n\n- build\n- test\n- publish\n", encoding="utf-8")
    return path


def write_chinese_docx(path: Path) -> Path:
    """A Chinese DOCX: a title and one heading per paragraph."""
    return write_docx(path, title=CHINESE_TITLE, headings=("进展", "计划"), paragraphs=CHINESE_PARAGRAPHS)


def write_chinese_md(path: Path) -> Path:
    """A Chinese Markdown file."""
    body = "\n\n".join(CHINESE_PARAGRAPHS)
    path.write_text(f"# {CHINESE_TITLE}\n\n{body}\n", encoding="utf-8")
    return path


def write_wav(path: Path, seconds: float = 0.1) -> Path:
    """A short silent mono WAV file (audio with no text in it)."""
    with wave.open(str(path), "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(8000)
        handle.writeframes(struct.pack("<h", 0) * int(8000 * seconds))
    return path


def write_corrupt(path: Path) -> Path:
    """Bytes that claim (by extension) to be a document but are not one."""
    path.write_bytes(b"PK\x03\x04 this is not really a zip archive \x00\x01\x02" * 4)
    return path


def write_binary(path: Path, size: int = 2048) -> Path:
    """Deterministic non-text bytes (NULs and high bytes), e.g. for an unsupported ``.bin``."""
    path.write_bytes(bytes((i * 37 + 11) % 256 for i in range(size)))
    return path


def write_corpus(folder: Path) -> dict[str, Path]:
    """One fixture of every supported format in ``folder``; returns {format: path}."""
    folder.mkdir(parents=True, exist_ok=True)
    return {
        "pdf": write_pdf(folder / "harbour.pdf", table=PDF_TABLE),
        "docx": write_docx(folder / "garden.docx"),
        "xlsx": write_xlsx(folder / "budget.xlsx"),
        "pptx": write_pptx(folder / "migration.pptx"),
        "epub": write_epub(folder / "valley.epub"),
        "html": write_html(folder / "notes.html"),
        "csv": write_csv(folder / "cities.csv"),
        "json": write_json(folder / "project.json"),
        "xml": write_xml(folder / "maintenance.xml"),
        "txt": write_txt(folder / "reminder.txt"),
        "md": write_md(folder / "checklist.md"),
        "docx_zh": write_chinese_docx(folder / "周报.docx"),
        "md_zh": write_chinese_md(folder / "周报.md"),
    }
