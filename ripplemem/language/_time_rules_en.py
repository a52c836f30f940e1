"""English time phrases: yesterday, last week, 3 days ago, the past two weeks, March 15, 2024-03-15."""

from __future__ import annotations

import re
from datetime import timedelta

from ripplemem.language._time_frame import Frame, Rule, Span, chinese_number, rule_registrar

_EN_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "couple of": 2,
    "a couple": 2,
    "a few": 3,
    "few": 3,
    "several": 3,
}
_EN_NUM = (
    r"(\d{1,3}|a couple of|couple of|a few|several|an?|one|two|three|four|five|six|seven|eight|nine"
    r"|ten|eleven|twelve)"
)
_MONTHS = {
    name: index
    for index, name in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}
_MONTHS.update({name[:3]: index for name, index in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH_RE = (
    "(january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\\.?"
)
_WEEKDAYS = {
    name: index
    for index, name in enumerate(
        ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    )
}
_WEEKDAY_RE = "(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_UNIT_EN = {
    "day": "day",
    "days": "day",
    "week": "week",
    "weeks": "week",
    "month": "month",
    "months": "month",
    "year": "year",
    "years": "year",
}

RULES: list[Rule] = []
rule = rule_registrar(RULES)


def _number(text: str) -> int | None:
    text = " ".join(text.lower().split())
    if text in _EN_NUMBERS:
        return _EN_NUMBERS[text]
    return chinese_number(text)


@rule(r"\b(?:the\s+)?day\s+before\s+yesterday\b")
def _before_yesterday(m: re.Match[str], f: Frame) -> Span:
    return f.days(f.today - timedelta(days=2))


@rule(r"\b(?:the\s+)?day\s+after\s+tomorrow\b")
def _after_tomorrow(m: re.Match[str], f: Frame) -> Span:
    return f.days(f.today + timedelta(days=2))


@rule(r"\b(yesterday|today|tomorrow)(?:\s+(morning|afternoon|evening|night|noon))?\b")
def _named_day(m: re.Match[str], f: Frame) -> Span:
    day = f.today + timedelta(days={"yesterday": -1, "today": 0, "tomorrow": 1}[m.group(1).lower()])
    return f.day_part(day, m.group(2).lower()) if m.group(2) else f.days(day)


@rule(r"\b(?:this\s+(morning|afternoon|evening)|(tonight)|(last\s+night)|earlier\s+today)\b")
def _day_part(m: re.Match[str], f: Frame) -> Span:
    if m.group(1):
        return f.day_part(f.today, m.group(1).lower())
    if m.group(2):
        return f.day_part(f.today, "night")
    if m.group(3):
        return f.day_part(f.today - timedelta(days=1), "night")
    return f.days(f.today)


@rule(r"\b(this|last|next|previous|coming|past|the\s+past)\s+(week|month|year)\b(?!\s+(?:of|and)\b)")
def _relative_unit(m: re.Match[str], f: Frame) -> Span:
    which, unit = " ".join(m.group(1).lower().split()), m.group(2).lower()
    if which in ("past", "the past"):
        return f.span_back(1, unit)
    offset = {"this": 0, "last": -1, "previous": -1, "next": 1, "coming": 1}[which]
    if unit == "week":
        return f.week(offset)
    if unit == "month":
        return f.month_offset(offset)
    return f.year(f.today.year + offset)


@rule(rf"\b{_EN_NUM}\s+(days?|weeks?|months?|years?)\s+ago\b")
def _units_ago(m: re.Match[str], f: Frame) -> Span:
    count = _number(m.group(1))
    return f.units_ago(count, _UNIT_EN[m.group(2).lower()]) if count is not None else None


@rule(
    rf"\b(?:in\s+)?{_EN_NUM}\s+(days?|weeks?|months?|years?)\s+from\s+now\b|\bin\s+{_EN_NUM}\s+(days?|weeks?|months?|years?)\b"
)
def _units_ahead(m: re.Match[str], f: Frame) -> Span:
    raw, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    count = _number(raw)
    return f.units_ahead(count, _UNIT_EN[unit.lower()]) if count is not None else None


@rule(rf"\b(?:(?:in|over|during)\s+)?(?:the\s+)?(?:last|past)\s+{_EN_NUM}\s+(days?|weeks?|months?|years?)\b")
def _span_back(m: re.Match[str], f: Frame) -> Span:
    count = _number(m.group(1))
    return f.span_back(count, _UNIT_EN[m.group(2).lower()]) if count else None


@rule(rf"\b(?:(last|this|next|on)\s+)?{_WEEKDAY_RE}\b")
def _weekday_en(m: re.Match[str], f: Frame) -> Span:
    mode = (m.group(1) or "bare").lower()
    return f.weekday(_WEEKDAYS[m.group(2).lower()], "bare" if mode == "on" else mode)


@rule(rf"\b{_MONTH_RE}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
def _month_day_year(m: re.Match[str], f: Frame) -> Span:
    return f.date(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2)))


@rule(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_RE},?\s+(\d{{4}})\b")
def _day_month_year(m: re.Match[str], f: Frame) -> Span:
    return f.date(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1)))


@rule(rf"\b{_MONTH_RE}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!\s*(?:,\s*)?\d)(?!\s*(?:am|pm|:))")
def _month_day(m: re.Match[str], f: Frame) -> Span:
    month, day = _MONTHS[m.group(1).lower()], int(m.group(2))
    if m.group(1).lower() in ("may", "march") and not m.group(0)[0].isupper():
        return None  # "may 3 people come" / "march 5 miles": verbs, not months
    return f.date(f.nearest_year(month, day), month, day)


@rule(rf"\b{_MONTH_RE}\s+(?:of\s+)?(\d{{4}})\b")
def _month_year(m: re.Match[str], f: Frame) -> Span:
    return f.month(int(m.group(2)), _MONTHS[m.group(1).lower()])


@rule(rf"\b(in|during|since|from|last|this|next|early|late|mid|mid-)\s+{_MONTH_RE}\b(?!\s*\d)")
def _month_alone(m: re.Match[str], f: Frame) -> Span:
    month = _MONTHS[m.group(2).lower()]
    which = m.group(1).lower()
    if which == "last":
        year = f.today.year if month < f.today.month else f.today.year - 1
    elif which == "this":
        year = f.today.year
    elif which == "next":
        year = f.today.year if month > f.today.month else f.today.year + 1
    else:
        year = f.nearest_year(month)
    return f.month(year, month)


@rule(r"\b(?:in|during|since|from|of|back\s+in|around|the\s+year)\s+((?:19|20)\d{2})\b(?!\s*[-/]\d)")
def _year_en(m: re.Match[str], f: Frame) -> Span:
    return f.year(int(m.group(1)))


@rule(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")
def _iso_date(m: re.Match[str], f: Frame) -> Span:
    return f.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))


@rule(r"\b((?:19|20)\d{2})-(\d{2})\b(?![-/.]\d)")
def _iso_month(m: re.Match[str], f: Frame) -> Span:
    return f.month(int(m.group(1)), int(m.group(2)))


@rule(
    r"\b(?:(last|this|next)\s+|(?:in|during)\s+the\s+)(spring|summer|autumn|fall|winter)"
    r"(?:\s+(?:of\s+)?((?:19|20)\d{2}))?\b"
)
def _season_en(m: re.Match[str], f: Frame) -> Span:
    name = m.group(2).lower()
    if m.group(3):
        return f.season(name, int(m.group(3)))
    return f.season_relative(name, (m.group(1) or "this").lower())
