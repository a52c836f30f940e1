"""The formats read with the standard library alone, so the default install ingests them: plain
text, Markdown, JSON and (when MarkItDown is not installed) HTML.

Text is decoded from its BOM, as UTF-8, or by charset detection (charset-normalizer, as MarkItDown
does, when it is importable); JSON is pretty-printed with its non-ASCII text as written; HTML keeps
its title, headings as Markdown headings, paragraphs, list items and table rows, and drops scripts,
styles and the head.
"""

from __future__ import annotations

import codecs
import json
import re
from html.parser import HTMLParser

# Formats this module converts whether or not MarkItDown is installed.
PLAIN_FORMATS = frozenset({"txt", "text", "md", "json"})

_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def decode_text(data: bytes) -> str:
    """The text of a file's bytes: by its BOM, as UTF-8, else the detected charset (GBK, Latin-1, ...)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data.decode(encoding, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        from charset_normalizer import from_bytes
    except ImportError:
        return data.decode("utf-8", errors="replace")
    best = from_bytes(data).best()
    return str(best) if best is not None else data.decode("utf-8", errors="replace")


def convert_plain(fmt: str, data: bytes) -> str:
    """A text, Markdown or JSON file as text; JSON (one document, or one per line) pretty-printed."""
    text = decode_text(data)
    return _readable_json(text) if fmt == "json" else text


def _readable_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, indent=2) + "\n"
    except (ValueError, RecursionError):
        pass
    try:  # JSON Lines: one value a line
        values = [json.loads(line) for line in text.splitlines() if line.strip()]
    except (ValueError, RecursionError):
        return text  # not JSON after all: keep what was written
    return "\n\n".join(json.dumps(value, ensure_ascii=False, indent=2) for value in values) + "\n"


def convert_html(data: bytes) -> tuple[str, str | None]:
    """An HTML page as Markdown-like text and its <title> (None without one)."""
    reader = _HtmlText()
    reader.feed(decode_text(data))
    reader.close()
    return reader.markdown(), reader.title()


_SKIPPED = frozenset({"script", "style", "noscript", "template", "head", "svg", "iframe", "object"})
_BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "blockquote", "figure"}
    | {"ul", "ol", "dl", "dt", "dd", "table", "thead", "tbody", "form", "hr", "address", "details"}
)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}


class _HtmlText(HTMLParser):
    """Collects an HTML page's readable text as Markdown-ish blocks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._blocks: list[str] = []
        self._line: list[str] = []
        self._prefix = ""
        self._skipping: list[str] = []
        self._pre = 0
        self._in_title = False
        self._title: list[str] = []
        self._cells: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in _SKIPPED:
            self._skipping.append(tag)
        if self._skipping:
            return
        if tag in _HEADINGS:
            self._flush()
            self._prefix = "#" * _HEADINGS[tag] + " "
        elif tag == "li":
            self._flush()
            self._prefix = "- "
        elif tag == "tr":
            self._flush()
            self._cells = []
        elif tag in ("td", "th") and self._cells is not None:
            self._cells.append("")
        elif tag == "br":
            self._flush()
        elif tag == "pre":
            self._flush()
            self._pre += 1
        elif tag in _BLOCKS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if self._skipping:
            if tag == self._skipping[-1]:
                self._skipping.pop()
            return
        if tag == "tr" and self._cells is not None:
            cells = [" ".join(cell.split()) for cell in self._cells]
            self._cells = None
            if any(cells):
                self._blocks.append("| " + " | ".join(cells) + " |")
        elif tag == "pre":
            self._flush()
            self._pre = max(0, self._pre - 1)
        elif tag in _HEADINGS or tag == "li":
            self._flush()
            self._prefix = ""  # an empty heading or item marks nothing after it
        elif tag in _BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title.append(data)
        if self._skipping:
            return
        if self._cells is not None and self._cells:
            self._cells[-1] += data
        elif self._cells is None:
            self._line.append(data)

    def _flush(self) -> None:
        raw = "".join(self._line)
        self._line = []
        text = raw.strip("\n") if self._pre else " ".join(raw.split())
        if text:  # an empty block keeps the prefix for the text to come (<li><p>text</p></li>)
            self._blocks.append(self._prefix + text)
            self._prefix = ""

    def markdown(self) -> str:
        """The collected text, one block per paragraph, heading, list item or table row."""
        self._flush()
        text = "\n\n".join(self._blocks)
        text = re.sub(r"\n\n(- |\| )", r"\n\1", text)  # keep list items and table rows together
        return text + "\n" if text else ""

    def title(self) -> str | None:
        """The page's <title>, whitespace collapsed; None when it has none."""
        title = " ".join("".join(self._title).split())
        return title or None
