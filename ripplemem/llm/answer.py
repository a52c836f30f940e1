"""Grounded answers: a chat model answers from numbered recalled context and cites it as [1], [2].

The citations are parsed back to the ids of the memories or chunks they point at. The model is
told to say it does not know when the context lacks the answer, and such replies come back with
`answered=False`. A model that ignores the citation format still gets citations, inferred from
the words its answer shares with each entry (`cited_by="inferred"`). A failed call or an empty
reply gives an Answer with `error` set and a logged warning, never an exception.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from ripplemem.core.text import estimate_tokens, keyword_tokens
from ripplemem.core.validation import check_count, check_nonblank_text
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.llm.chat import (
    ChatTask,
    arun_tasks,
    language_of,
    require_llm,
    run_tasks,
    strip_thinking,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

__all__ = [
    "Answer",
    "ContextItem",
    "aanswer_question",
    "answer_question",
    "answer_messages",
    "cite",
    "says_unknown",
]

logger = logging.getLogger("ripplemem.llm.answer")

ANSWER_PROMPT = """\
You answer the user's question from the numbered context: entries from their memories and \
passages from documents, each with its date when known.
- Use only facts stated in the context, never outside knowledge.
- After each statement, cite the numbers of the entries that support it in square brackets, \
like [1] or [2][3].
- If the context does not contain the answer, say only that you don't know ("I don't know." in \
English, "我不知道。" in Chinese) and cite nothing.
- Work out relative dates ("last week") from the entry dates.{today}
- {language}
- Be brief: one to three sentences.\
"""
ANSWER_RETRY = "That reply was not usable: {error}. Answer the question again from the context, citing [n]."
UNKNOWN = {"Chinese": "我不知道。", "Japanese": "わかりません。", "Korean": "모르겠습니다."}

_CITATION = re.compile(
    r"[\[【]\s*(?:\^|(?:sources?|memory|memories|context|refs?|docs?|documents?|items?|entry|entries|来源|记忆|文档|资料|条目)"
    r"\s*#?\s*)?(?P<numbers>\d{1,3}(?:\s*(?:,|，|、|;|；|-|–|and|&)\s*(?:\^)?\d{1,3})*)\s*[\]】]"
    r"|[(（](?:sources?|memory|entry|来源|记忆|条目)\s*#?\s*(?P<paren>\d{1,3})[)）]",
    re.IGNORECASE,
)
_SPLIT_NUMBERS = re.compile(r"(\d{1,3})\s*[-–]\s*(\d{1,3})|(\d{1,3})")
_UNKNOWN = re.compile(
    r"\b(?:i (?:don'?t|do not) know|i'?m not sure"
    r"|(?:do not|don'?t|doesn'?t|does not) (?:have|contain|include|mention|say|provide|state)\b"
    r".{0,40}\b(?:information|answer|details?|mention)"
    r"|no (?:information|mention|record)|not (?:mentioned|stated|found|given|provided) in"
    r"|(?:cannot|can'?t|unable to) (?:find|determine|answer|tell)"
    r"|(?:context|memories|notes|documents|entries) (?:do(?:es)? not|don'?t|doesn'?t) "
    r"(?:say|mention|contain|include))"
    r"|不知道|不清楚|没有(?:提到|提及|相关信息|相关内容|找到|足够的?信息|记录)|未(?:提及|提到|找到|说明)"
    r"|无法(?:确定|回答|找到|判断|得知)|上下文中没有|资料中没有|わかりません|모르겠습니다",
    re.IGNORECASE,
)
_MIN_ID_CHARS = 6  # ids this long are matched verbatim in the answer ("as memory 3f9a2c says")


@dataclass(frozen=True)
class ContextItem:
    """One recalled entry offered to the model: its id, text, date and optional source label."""

    id: str
    text: str
    when: date | datetime | None = None
    source: str | None = None

    @classmethod
    def from_hit(cls, hit: Any) -> ContextItem:
        """The entry for a recall Hit (anything with .memory.id, .content, .when and .source)."""
        memory = hit.memory
        return cls(id=memory.id, text=memory.content, when=memory.when, source=memory.source)


@dataclass(frozen=True)
class Answer:
    """A grounded answer: its text, the ids it cites, and whether the context held an answer.

    `cited_by` is "model" when the ids come from the model's [n] markers, "inferred" when the
    model ignored the format and the ids were matched from shared words, "none" otherwise.
    `context_ids` are the entries the model was shown, in their [n] order.
    """

    text: str
    citations: list[str] = field(default_factory=list)
    answered: bool = True
    cited_by: str = "none"
    context_ids: list[str] = field(default_factory=list)
    error: str | None = None


def answer_question(
    llm: BaseChatModel | None,
    question: str,
    context: Sequence[Any],
    *,
    max_retries: int = 1,
    max_context_tokens: int = 3000,
    now: date | datetime | None = None,
    how: str = "pass llm=... to ask(...) or to RippleMem(...)",
) -> Answer:
    """Answer a question from recalled context with [n] citations mapped back to entry ids.

    `context` holds ContextItem objects or (id, text, date | None) tuples, best first; entries
    past `max_context_tokens` are left out. With no context the model is not called and the
    answer says it does not know.
    """
    model, question, shown = _prepare(llm, question, context, max_retries, max_context_tokens, how)
    if not shown:
        return _unknown(question)
    task = _task(question, shown, max_retries, now)
    run_tasks(model, [task])
    return _finish(question, shown, task)


async def aanswer_question(
    llm: BaseChatModel | None,
    question: str,
    context: Sequence[Any],
    *,
    max_retries: int = 1,
    max_context_tokens: int = 3000,
    now: date | datetime | None = None,
    how: str = "pass llm=... to ask(...) or to RippleMem(...)",
) -> Answer:
    """Async answer_question."""
    model, question, shown = _prepare(llm, question, context, max_retries, max_context_tokens, how)
    if not shown:
        return _unknown(question)
    task = _task(question, shown, max_retries, now)
    await arun_tasks(model, [task])
    return _finish(question, shown, task)


def answer_messages(
    question: str, items: Sequence[ContextItem], *, now: date | datetime | None = None
) -> list[BaseMessage]:
    """The system and user messages the model is first shown."""
    from langchain_core.messages import HumanMessage, SystemMessage

    language = language_of(question)
    rule = (
        f"Answer in {language}, the language of the question."
        if language
        else "Answer in the same language as the question."
    )
    today = f" Today is {_format_when(now)}." if now is not None else ""
    lines = [f"[{number}] ({_label(item)}) {item.text}" for number, item in enumerate(items, start=1)]
    user = "Context:\n" + "\n".join(lines) + f"\n\nQuestion: {question}"
    return [SystemMessage(ANSWER_PROMPT.format(today=today, language=rule)), HumanMessage(user)]


def cite(text: str, items: Sequence[ContextItem]) -> tuple[str, list[str]]:
    """The answer text with its [n] markers checked, and the ids they cite in first-cited order.

    Markers like [1], [1, 2], [1-3], 【2】, [^1] and [source 2] are read; numbers outside the
    context are dropped from the text; ids quoted verbatim also count as citations.
    """
    cited: list[str] = []

    def rewrite(match: re.Match[str]) -> str:
        numbers = _numbers(match.group("numbers") or match.group("paren"))
        valid = [n for n in numbers if 1 <= n <= len(items)]
        for n in valid:
            if items[n - 1].id not in cited:
                cited.append(items[n - 1].id)
        return "".join(f"[{n}]" for n in valid)

    checked = _CITATION.sub(rewrite, text)
    checked = re.sub(r"[ \t]+([.,;:!?。，；：！？])", r"\1", checked)  # "x [9]." -> "x."
    checked = re.sub(r"[ \t]{2,}", " ", checked).strip()
    for item in items:
        if len(item.id) >= _MIN_ID_CHARS and item.id in text and item.id not in cited:
            cited.append(item.id)
    return checked, cited


def says_unknown(text: str) -> bool:
    """True when an answer says the context does not hold the answer ("I don't know", 不知道)."""
    return _UNKNOWN.search(text) is not None


def _prepare(
    llm: Any, question: Any, context: Any, max_retries: int, max_context_tokens: int, how: str
) -> tuple[BaseChatModel, str, list[ContextItem]]:
    model = require_llm(llm, "a grounded answer", how)
    question = check_nonblank_text("question", question)
    check_count("max_retries", max_retries, minimum=0)
    check_count("max_context_tokens", max_context_tokens, minimum=50)
    items = _coerce(context)
    shown: list[ContextItem] = []
    used = 0
    for item in items:
        cost = estimate_tokens(item.text) + 12  # + the number, date and source label
        if shown and used + cost > max_context_tokens:
            break
        if cost > max_context_tokens:  # one entry larger than the whole budget: keep its start
            keep = max(1, len(item.text) * max_context_tokens // cost)
            item = replace(item, text=item.text[:keep])
            cost = max_context_tokens
        shown.append(item)
        used += cost
    return model, question, shown


def _coerce(context: Any) -> list[ContextItem]:
    if isinstance(context, (str, bytes)) or not isinstance(context, Sequence):
        raise InvalidTypeError(
            f"context must be a list of ContextItem or (id, text, date) tuples, got {type(context).__name__}"
        )
    items = []
    for index, entry in enumerate(context):
        if isinstance(entry, tuple) and len(entry) in (2, 3, 4):
            entry = ContextItem(*entry)
        if not isinstance(entry, ContextItem):
            raise InvalidTypeError(
                f"context[{index}] must be a ContextItem or an (id, text, date) tuple, "
                f"got {type(entry).__name__}"
            )
        if not isinstance(entry.id, str) or not entry.id:
            raise InvalidInputError(f"context[{index}] needs a non-empty string id")
        if not isinstance(entry.text, str):
            raise InvalidTypeError(f"context[{index}] text must be a string, got {type(entry.text).__name__}")
        if entry.when is not None and not isinstance(entry.when, date):
            raise InvalidTypeError(
                f"context[{index}] date must be a date, a datetime or None, got {type(entry.when).__name__}"
            )
        if entry.text.strip():
            items.append(entry)
    return items


def _task(
    question: str, shown: list[ContextItem], max_retries: int, now: date | datetime | None
) -> ChatTask[str]:
    return ChatTask(answer_messages(question, shown, now=now), _parse_reply, ANSWER_RETRY, max_retries)


def _parse_reply(reply: str) -> str:
    text = strip_thinking(reply)
    if not text:
        raise ValueError("the reply is empty")
    return text


def _finish(question: str, shown: list[ContextItem], task: ChatTask[str]) -> Answer:
    ids = [item.id for item in shown]
    if not task.ok or task.result is None:
        logger.warning("grounded answer failed: %s", task.error)
        return Answer(text="", answered=False, context_ids=ids, error=task.error)
    text, cited = cite(task.result, shown)
    if says_unknown(text) and not cited:
        return Answer(text=text, answered=False, context_ids=ids)
    if cited:
        return Answer(text=text, citations=cited, cited_by="model", context_ids=ids)
    inferred = _infer_citations(question, text, shown)
    return Answer(text=text, citations=inferred, cited_by="inferred" if inferred else "none", context_ids=ids)


def _infer_citations(question: str, text: str, items: Sequence[ContextItem], limit: int = 3) -> list[str]:
    """Entries that share the answer's own words (those not already in the question), best first."""
    asked = set(keyword_tokens(question, drop_stopwords=True))
    novel = set(keyword_tokens(text, drop_stopwords=True)) - asked
    if not novel:
        return []
    needed = min(2, len(novel))
    scored = []
    for position, item in enumerate(items):
        shared = len(novel & set(keyword_tokens(item.text, drop_stopwords=True)))
        if shared >= needed:
            scored.append((-shared, position, item.id))
    return [item_id for _, _, item_id in sorted(scored)[:limit]]


def _unknown(question: str) -> Answer:
    return Answer(text=UNKNOWN.get(language_of(question) or "", "I don't know."), answered=False)


def _numbers(raw: str) -> list[int]:
    numbers: list[int] = []
    for start, end, single in _SPLIT_NUMBERS.findall(raw.replace("^", "")):
        if single:
            numbers.append(int(single))
        elif int(end) - int(start) <= 20:
            numbers.extend(range(int(start), int(end) + 1))
    return list(dict.fromkeys(numbers))


def _format_when(when: date | datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M") if isinstance(when, datetime) else when.isoformat()


def _label(item: ContextItem) -> str:
    when = _format_when(item.when) if item.when is not None else "undated"
    return f"{when}, {item.source}" if item.source else when
