"""Page, slide and sheet boundaries: PDFs page by page (pdfminer, MarkItDown's table reader),
PPTX slide markers, XLSX sheet headings, and Office titles."""

from __future__ import annotations

import html
import io
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from ripplemem.markdown.convert.conversion_types import DOCUMENTS_EXTRA, ConversionError, short_reason


def convert_pdf(path: Path, data: bytes, tables_too: bool = True) -> tuple[str, str | None, list[int]]:
    """PDF text page by page: pdfminer for prose, MarkItDown's table reader for form-like pages."""
    try:
        import pdfminer.high_level
        from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    except ImportError:
        raise ConversionError(
            path,
            f"the PDF converter (pdfminer.six) is not installed: {DOCUMENTS_EXTRA}",
            "missing_dependency",
        ) from None
    try:
        text = pdfminer.high_level.extract_text(io.BytesIO(data))
    except (PDFPasswordIncorrect, PDFEncryptionError):
        raise ConversionError(path, "the PDF is encrypted and needs a password", "encrypted") from None
    except Exception as exc:  # pdfminer raises many types (PSEOF, PDFSyntaxError, KeyError, ...)
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise ConversionError(
            path,
            f"could not read this PDF file; it looks corrupt ({short_reason(detail)})",
            "corrupt",
        ) from None
    # pdfminer ends every page with a form feed.
    count = text.count("\f")
    pages = text.split("\f")[:count] if count else [text]
    tables, title = _pdf_tables_and_title(data, len(pages), tables_too)

    merge = _markitdown_pdf_helper("_merge_partial_numbering_lines")
    parts: list[str] = []
    starts: list[int] = []
    cursor = 0
    for index, page_text in enumerate(pages):
        body = tables.get(index, page_text)
        if merge is not None:
            body = merge(body)
        body = normalise_markdown(body)
        gap = 2 if parts else 0
        starts.append(cursor + gap)
        if body:
            parts.append(body)
            cursor += gap + len(body)
    markdown = "\n\n".join(parts)
    return markdown, title, [min(start, len(markdown)) for start in starts]


def _markitdown_pdf_helper(name: str) -> Callable[..., Any] | None:
    """A helper of MarkItDown's PDF converter, or None if this MarkItDown lacks it."""
    try:
        from markitdown.converters import _pdf_converter
    except ImportError:
        return None
    helper = getattr(_pdf_converter, name, None)
    return helper if callable(helper) else None


def _pdf_tables_and_title(
    data: bytes, page_count: int, tables_too: bool = True
) -> tuple[dict[int, str], str | None]:
    """Markdown for the pages MarkItDown reads as forms/tables (by page index), and the PDF title."""
    extract = _markitdown_pdf_helper("_extract_form_content_from_words") if tables_too else None
    try:
        import pdfplumber
    except ImportError:
        return {}, None
    tables: dict[int, str] = {}
    title = None
    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            raw = (pdf.metadata or {}).get("Title")
            if isinstance(raw, bytes):
                raw = raw.decode("utf-8", "replace")
            title = raw if isinstance(raw, str) else None
            if extract is not None and len(pdf.pages) == page_count:
                for index, page in enumerate(pdf.pages):
                    content = extract(page)
                    if content is not None:
                        tables[index] = content
                    page.close()
    except Exception:  # as MarkItDown does: fall back to plain pdfminer text
        return {}, title
    return tables, title


def normalise_markdown(text: str) -> str:
    """MarkItDown's own clean-up (trailing spaces, at most one blank line), then strip."""
    text = "\n".join(line.rstrip() for line in re.split(r"\r?\n", text))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


_SLIDE_MARKER = re.compile(r"^<!-- Slide number: (\d+) -->$", re.MULTILINE)


def slide_starts(markdown: str) -> list[int]:
    """Offsets of MarkItDown's ``<!-- Slide number: N -->`` markers, taken in order 1, 2, 3, ..."""
    starts: list[int] = []
    for match in _SLIDE_MARKER.finditer(markdown):
        if int(match.group(1)) == len(starts) + 1:
            starts.append(match.start())
    return starts


def sheet_starts(markdown: str, data: bytes) -> list[int]:
    """Offsets of MarkItDown's ``## <sheet name>`` headings, found in workbook order."""
    starts: list[int] = []
    position = 0
    for name in _xlsx_sheet_names(data):
        match = re.compile(rf"^## {re.escape(name.rstrip())}$", re.MULTILINE).search(markdown, position)
        if match is None:
            return []  # the names and the headings disagree: better no boundaries than wrong ones
        starts.append(match.start())
        position = match.end()
    return starts


_MAIN_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


def _xlsx_sheet_names(data: bytes) -> list[str]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            root = ElementTree.fromstring(archive.read("xl/workbook.xml"))
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError):
        return []
    return [sheet.get("name", "") for sheet in root.iter(f"{_MAIN_NS}sheet")]


def office_title(data: bytes) -> str | None:
    """``dc:title`` from an Office file's docProps/core.xml, if set."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            core = archive.read("docProps/core.xml").decode("utf-8", "replace")
    except (zipfile.BadZipFile, KeyError):
        return None
    match = re.search(r"<dc:title>(.*?)</dc:title>", core, re.DOTALL)
    if match is None:
        return None
    return html.unescape(match.group(1)).strip() or None
