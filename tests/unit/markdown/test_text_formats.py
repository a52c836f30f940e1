"""Plain text, Markdown, HTML and JSON convert in the default install, with MarkItDown absent."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from doc_fixtures import (
    HTML_SENTENCE,
    HTML_TITLE,
    JSON_DATA,
    MD_HEADING,
    MD_SENTENCE,
    TXT_SENTENCE,
    write_html,
    write_json,
    write_md,
    write_txt,
)

from ripplemem.markdown.convert import markitdown_engine
from ripplemem.markdown.convert.convert import convert_file, convert_many


@pytest.fixture(autouse=True)
def no_markitdown(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `import markitdown` fail, as in `pip install ripplemem` without [documents]."""
    monkeypatch.setattr(markitdown_engine, "_engines", {})
    monkeypatch.setitem(sys.modules, "markitdown", None)


def test_text_markdown_html_and_json_convert_without_markitdown(tmp_path: Path) -> None:
    write_txt(tmp_path / "reminder.txt")
    write_md(tmp_path / "checklist.md")
    write_html(tmp_path / "notes.html")
    write_json(tmp_path / "project.json", {**JSON_DATA, "city": "Tromsø"})
    report = convert_many(tmp_path)
    assert report.ok, report.errors
    docs = {doc.source.name: doc for doc in report.documents}
    assert TXT_SENTENCE in docs["reminder.txt"].markdown
    assert docs["checklist.md"].title == MD_HEADING and MD_SENTENCE in docs["checklist.md"].markdown
    assert docs["notes.html"].title == HTML_TITLE
    assert f"# {HTML_TITLE}\n\n{HTML_SENTENCE}\n- binoculars\n- notebook" in docs["notes.html"].markdown
    assert "do-not-index" not in docs["notes.html"].markdown
    assert '"city": "Tromsø"' in docs["project.json"].markdown
    assert json.loads(docs["project.json"].markdown)["owner"] == JSON_DATA["owner"]


def test_html_headings_lists_and_tables_stay_readable(tmp_path: Path) -> None:
    page = tmp_path / "leave.html"
    page.write_text(
        "<html><head><title>Leave policy</title><style>p {color: red}</style></head><body>"
        "<nav><a href='/'>Home</a></nav><h1>Leave</h1><h2>Annual &amp; sick leave</h2>"
        "<p>Everyone gets <b>25 days</b>\n of paid leave a year.</p>"
        "<ul><li><p>Ask your manager</p></li><li>Book it in the portal</li></ul>"
        "<table><tr><th>Years</th><th>Days</th></tr><tr><td>0-5</td><td>25</td></tr></table>"
        "<pre>keep\n  this layout</pre><script>track()</script></body></html>",
        encoding="utf-8",
    )
    doc = convert_file(page)
    assert doc.format == "html" and doc.title == "Leave policy"
    assert doc.markdown == (
        "Home\n\n# Leave\n\n## Annual & sick leave\n\nEveryone gets 25 days of paid leave a year.\n"
        "- Ask your manager\n- Book it in the portal\n| Years | Days |\n| 0-5 | 25 |\n\n"
        "keep\n  this layout\n"
    )


def test_text_in_another_encoding_and_json_lines_are_read(tmp_path: Path) -> None:
    gbk = tmp_path / "纪要.txt"
    gbk.write_bytes("这是用GBK编码的会议纪要，下周三之前提交预算。".encode("gbk"))
    assert "下周三之前提交预算" in convert_file(gbk).markdown
    lines = tmp_path / "events.jsonl"
    escaped = '{"event": "deploy", "note": "\\u4e0a\\u7ebf"}\n{"event": "rollback"}\n'
    lines.write_text(escaped, encoding="utf-8")
    text = convert_file(lines).markdown
    assert '"note": "上线"' in text and '"event": "rollback"' in text
    broken = write_txt(tmp_path / "broken.json", '{"not": json')
    assert convert_file(broken).markdown == '{"not": json\n'
