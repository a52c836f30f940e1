"""Text cues of questions and answers: whether a turn is a short question (its answer is the
next turn), whether a query asks "when" or about the present ("now", "现在"), and whether a memory
names a time (a date, a weekday, a clock time, "yesterday", "上周")."""

from __future__ import annotations

import re

_ASKS_WHEN = re.compile(
    r"^\s*(?:and\s+|so\s+)?(?:when\b|what\s+(?:time|date|day|year|month)\b|which\s+(?:day|date|year|month)\b"
    r"|how\s+long\s+ago\b|since\s+when\b)"
    r"|什么时候|几点|哪天|哪一天|几号|几月|哪年|哪一年|何时",
    re.IGNORECASE,
)

# A question about the present state of something ("What book am I reading now?", 我现在住在哪？),
# unless it also asks about an earlier state ("my previous status before the current one").
_ASKS_PRESENT = re.compile(
    r"\b(?:now|currently|current|these\s+days|at\s+the\s+moment|nowadays|presently|still|lately)\b"
    r"|现在|目前|最近|如今|当前|眼下|这些天|这阵子|近来",
    re.IGNORECASE,
)
_ASKS_PAST = re.compile(
    r"\b(?:previous|previously|used\s+to|originally|at\s+first|initially|formerly)\b"
    r"|以前|之前|原来|当初|曾经|过去|起初|最初",
    re.IGNORECASE,
)

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_NAMES_TIME = re.compile(
    rf"\b(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b"
    rf"|\b(?:{_WEEKDAYS})\b|\b\d{{1,2}}:\d{{2}}\b|\b\d{{1,2}}\s*(?:am|pm|a\.m\.|p\.m\.)(?!\w)"
    r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b(?:19|20)\d{2}\b"
    r"|\b(?:yesterday|today|tonight|tomorrow|last\s+(?:night|week|month|year|weekend)"
    r"|next\s+(?:week|month|year|weekend)|\w+\s+(?:days?|weeks?|months?|years?)\s+ago)\b"
    r"|\d+月\d+[日号]|星期[一二三四五六日天]|周[一二三四五六日末]|[上下本这]个?(?:周|星期|月)|昨天|今天|明天|前天|后天"
    r"|去年|今年|明年|[早上下晚]午?\d+点|\d+点",
    re.IGNORECASE,
)


_SPEAKER = re.compile(r"^[^:：\n]{1,40}[:：]\s*")
# A turn longer than this is not a bare question, even if it ends with one ("... Anything else?").
_QUESTION_MAX_WORDS = 20
_QUESTION_MAX_CHARS = 160


def is_question(text: str) -> bool:
    """Whether a turn is a short question ("Assistant: When is the appointment?", "什么时候？"),
    after any "Speaker:" prefix."""
    body = _SPEAKER.sub("", text.strip(), count=1)
    return (
        body.endswith(("?", "？"))
        and len(body.split()) <= _QUESTION_MAX_WORDS
        and len(body) <= _QUESTION_MAX_CHARS
    )


def asks_when(query: str) -> bool:
    """Whether the query asks for a time ("When is ...", "what time", "什么时候")."""
    return _ASKS_WHEN.search(query) is not None


def asks_present(query: str) -> bool:
    """Whether the query asks about the present ("now", "currently", "these days", 现在, 目前, 最近)
    and not also about an earlier state ("previous", "used to", 以前)."""
    return _ASKS_PRESENT.search(query) is not None and _ASKS_PAST.search(query) is None


def names_time(text: str) -> bool:
    """Whether the text names a time: a date, weekday, clock time or relative day."""
    return _NAMES_TIME.search(text) is not None
