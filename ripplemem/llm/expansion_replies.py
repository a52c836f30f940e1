"""What a chat model's query-expansion replies mean: MQE's rewritten queries and HyDE's passage.

Models wrap lists in JSON, half-broken JSON, numbered or bulleted lines, code fences, preambles
("Here are three rewrites:") and refusals. `parse_queries` and `parse_passage` take what is
usable and raise ValueError, with the reason, when nothing is, so the expander can retry.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence

from ripplemem.llm.chat import normalise_for_compare, strip_thinking

_FENCE = re.compile(r"```[\w-]*\s*(.*?)```", re.DOTALL)
_MARKED_LINE = re.compile(
    r"""^\s*(?:
        (?:\(?\d{1,2}[.)、:：](?!\d)|[（(\[]\d{1,2}[)）\]]|\d{1,2}\s+[-–—]|[一二三四五六七八九十]{1,2}[、.．])
                                                                   # 1. 1) (1) [1] 1、 一、
      | [-*•·‣◦–—+]                                                                    # bullets
      | (?:query|rewrite|paraphrase|question|version|variant|查询|问题|改写|问法)\s*\d{1,2}\s*[:：.)]
    )\s*(?P<item>\S.*)$""",
    re.IGNORECASE | re.VERBOSE,
)
_QUOTED_LINE = re.compile(r"""^\s*["“「'](?P<item>[^"”」]+?)["”」']\s*,?\s*$""")
_ITEM_KEYS = ("query", "text", "question", "rewrite", "paraphrase", "content")
_LIST_KEYS = ("queries", "rewrites", "paraphrases", "questions", "results", "items")
_REFUSAL = re.compile(
    r"^\s*(?:i'?m sorry|sorry|i apologi[sz]e|i (?:cannot|can'?t|can not|am unable|'m unable)|as an ai"
    r"|i (?:don'?t|do not) (?:know|have (?:access|any information|information|enough information))"
    r"|抱歉|对不起|很抱歉|我无法|我不能|作为(?:一个)?(?:ai|人工智能))",
    re.IGNORECASE,
)
_PREAMBLE = re.compile(
    r"^\s*(?:(?:(?:here(?:'s| is| are)|sure|certainly|okay|ok)\b|以下是|好的|当然)"
    r"[^\n]{0,80}?(?<!\d)[:：](?:\s|$)"
    r"|(?:hypothetical )?(?:passage|answer|document|段落|答案|回答|假设文档)\s*[:：])\s*",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?。！？](?=\s|$)|[。！？]")


def parse_queries(reply: str, query: str, n: int) -> list[str]:
    """Up to n rewrites from a reply: a JSON array or object, or numbered, bulleted or quoted lines.

    Rewrites that repeat the query or each other are dropped. Raises ValueError when nothing
    usable is left (empty reply, prose without a list, only copies of the query).
    """
    text = strip_thinking(reply)
    if not text:
        raise ValueError("the reply is empty")
    fenced = _FENCE.search(text)
    candidates = _json_items(fenced.group(1) if fenced else text)
    if candidates is None:
        candidates = _list_lines(text)
    if not candidates:
        raise ValueError("the reply holds no list of queries (expected a JSON array of strings)")
    limit = max(300, 3 * len(query))
    cleaned = [_clean_item(item) for item in candidates]
    kept = [item for item in cleaned if item and len(item) <= limit and not item.endswith((":", "："))]
    original = normalise_for_compare(query)
    rewrites = [item for item in dedupe_texts(kept) if normalise_for_compare(item) != original]
    if not rewrites:
        raise ValueError("the list holds no rewrite that differs from the query")
    return rewrites[:n]


def parse_passage(reply: str, query: str, max_chars: int = 2000) -> str:
    """The hypothetical passage in a reply, without preamble or quotes, cut to max_chars.

    Raises ValueError for an empty reply, a refusal or a copy of the question.
    """
    text = strip_thinking(reply)
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict):
            value = next(
                (
                    data[key]
                    for key in ("passage", "text", "answer", "content")
                    if isinstance(data.get(key), str)
                ),
                None,
            )
            if value is None:
                raise ValueError("the JSON reply has no 'passage' string")
            text = value
    text = _PREAMBLE.sub("", text, count=1).strip().strip('"“”「」').strip()
    if not text:
        raise ValueError("the reply is empty")
    if _REFUSAL.match(text):
        raise ValueError("the reply is a refusal, not a passage; write a plausible passage anyway")
    if normalise_for_compare(text) == normalise_for_compare(query):
        raise ValueError("the reply repeats the question instead of answering it")
    return _cut(text, max_chars)


def _json_items(text: str) -> list[str] | None:
    """Strings from the first JSON array (or list inside an object) in text; None if there is none."""
    decoder = json.JSONDecoder()
    starts = [match.start() for match in re.finditer(r"[\[{]", text)][:20]
    for start in starts:
        try:
            data, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            lists = [data[key] for key in _LIST_KEYS if isinstance(data.get(key), list)]
            lists += [value for value in data.values() if isinstance(value, list)]
            data = lists[0] if lists else None
        if not isinstance(data, list):
            continue
        items = []
        for item in data:
            if isinstance(item, dict):
                item = next((item[key] for key in _ITEM_KEYS if isinstance(item.get(key), str)), None)
            if isinstance(item, str):
                items.append(item)
        if items:
            return items
    return _broken_json_strings(text)


def _broken_json_strings(text: str) -> list[str] | None:
    """The quoted strings after a '[' that never parsed: a Python list or an array cut short."""
    start = text.find("[")
    if start < 0:
        return None
    body = text[start:]
    end = body.find("]")
    try:
        data = ast.literal_eval(body[: end + 1]) if end > 0 else None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        data = None
    if isinstance(data, list) and all(isinstance(item, str) for item in data) and data:
        return data
    if not re.match(r"\[\s*[\"“]", body):
        return None
    items = re.findall(r'"((?:[^"\\\n]|\\.)+)"|“([^”\n]+)”', body)
    strings = [double or curly for double, curly in items]
    return strings or None


def _list_lines(text: str) -> list[str]:
    """Items of numbered, bulleted or quoted lines; else question lines when every line is one."""
    lines = [line.replace("**", "").strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    marked = []
    for line in lines:
        match = _MARKED_LINE.match(line) or _QUOTED_LINE.match(line)
        if match:
            marked.append(match.group("item"))
    if marked:
        return marked
    body = [line for line in lines if not line.endswith((":", "："))]
    if len(body) >= 2 and all(line.endswith(("?", "？")) for line in body):
        return body
    return []


def _clean_item(item: str) -> str:
    item = re.sub(r"\s+", " ", item.replace("**", "").replace("`", "")).strip()
    item = item.rstrip(",，").strip()
    for left, right in (('"', '"'), ("“", "”"), ("「", "」"), ("'", "'")):
        if len(item) >= 2 and item.startswith(left) and item.endswith(right):
            item = item[1:-1].strip()
    return item


def dedupe_texts(texts: Sequence[str]) -> list[str]:
    """The texts without repeats (the first kept); case, width, spacing and end punctuation do not count."""
    seen: set[str] = set()
    kept = []
    for text in texts:
        key = normalise_for_compare(text)
        if key and key not in seen:
            seen.add(key)
            kept.append(text)
    return kept


def _cut(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    ends = [match.end() for match in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] > max_chars // 2:
        return head[: ends[-1]].strip()
    space = head.rfind(" ")
    return (head[:space] if space > max_chars // 2 else head).strip()
