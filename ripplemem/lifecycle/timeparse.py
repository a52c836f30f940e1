"""Relative and absolute time phrases in queries, English and Chinese, resolved against a reference time.

`resolve_time("what did I eat yesterday?", now)` gives the range of yesterday in now's time zone;
`find_times` gives every phrase. Ranges are half-open [start, end) and follow calendar units:

- days: today, yesterday, the day before yesterday, tomorrow, 今天, 昨天, 前天, 大前天, 明天, 后天,
  with parts of the day (this morning, last night, 昨晚, 昨天下午);
- weeks start on Monday: this / last / next week, 本周, 上周, 上上周, 下周; weekdays: last Monday
  (the latest Monday before today), this / next Monday, bare Monday (the latest on or before
  today), 上周一 (Monday of last week), 周三, 星期五;
- months and years: this / last month, this / last year, 上个月, 去年, 前年, 2024年3月, March 2024,
  in 2023, 2023年, in March / 三月 (the March nearest to now), 去年三月, March 15, 2024-03-15;
- counts back: 3 days ago, two months ago, a week ago, 三个月前, 两年前 (the calendar unit that
  many units back); spans up to now: the last 3 days, past two weeks, 最近三天, 过去两周;
- seasons with a qualifier: last summer, in the winter of 2023, 去年夏天 (northern hemisphere).

Numbers are digits, English words (one .. twelve, a, a couple of, a few) or Chinese numerals
(一 .. 九十九, 两). Words that are only sometimes dates ("may", "march", "sat", a bare "2000")
need a date-like neighbour ("in May", "March 2024"). Unparseable or impossible dates give nothing.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from ripplemem.errors import InvalidTypeError
from ripplemem.lifecycle._common import aware


@dataclass(frozen=True)
class TimeRange:
    """A half-open time range [start, end) a query phrase refers to, and where the phrase is."""

    start: datetime
    end: datetime
    phrase: str
    span: tuple[int, int] = (0, 0)

    def contains(self, when: datetime) -> bool:
        """True when `when` (naive = UTC) falls inside the range."""
        moment = aware(when, "when")
        return self.start <= moment < self.end

    def strip_from(self, query: str) -> str:
        """The query without this phrase (spaces tidied), e.g. to embed only what is asked about."""
        begin, finish = self.span
        return re.sub(r"\s{2,}", " ", query[:begin] + " " + query[finish:]).strip()


# --- numbers -------------------------------------------------------------------------------------

_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
               "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
               "a couple of": 2, "couple of": 2, "a couple": 2, "a few": 3, "few": 3, "several": 3}
_EN_NUM = (r"(\d{1,3}|a couple of|couple of|a few|several|an?|one|two|three|four|five|six|seven|eight|nine"
           r"|ten|eleven|twelve)")
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
_ZH_NUM = r"(\d{1,3}|[零〇一二两三四五六七八九十]{1,3})"


def chinese_number(text: str) -> int | None:
    """An integer from digits or Chinese numerals up to 99: 三 -> 3, 十二 -> 12, 二十 -> 20, 两 -> 2."""
    if text.isdigit():
        return int(text)
    if not text or any(ch not in _ZH_DIGITS and ch != "十" for ch in text):
        return None
    if "十" not in text:
        return _ZH_DIGITS[text] if len(text) == 1 else None
    tens, _, ones = text.partition("十")
    if len(tens) > 1 or len(ones) > 1 or "十" in ones:
        return None
    return (_ZH_DIGITS[tens] if tens else 1) * 10 + (_ZH_DIGITS[ones] if ones else 0)


def _number(text: str) -> int | None:
    text = " ".join(text.lower().split())
    if text in _EN_NUMBERS:
        return _EN_NUMBERS[text]
    return chinese_number(text)


# --- calendar helpers ----------------------------------------------------------------------------

def _at(day: date, tz: tzinfo | None, hour: int = 0) -> datetime:
    return datetime.combine(day, time(hour), tzinfo=tz)


def _add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


class _Frame:
    """The reference moment and calendar arithmetic in its time zone."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.tz = now.tzinfo
        self.today = now.date()

    def days(self, first: date, count: int = 1) -> tuple[datetime, datetime]:
        return _at(first, self.tz), _at(first + timedelta(days=count), self.tz)

    def day_part(self, day: date, part: str) -> tuple[datetime, datetime]:
        start_hour, end_hour = _DAY_PARTS[part]
        start = _at(day, self.tz, start_hour)
        end = _at(day + timedelta(days=end_hour // 24), self.tz, end_hour % 24)
        return start, end

    def week(self, offset: int) -> tuple[datetime, datetime]:
        monday = self.today - timedelta(days=self.today.weekday()) + timedelta(weeks=offset)
        return self.days(monday, 7)

    def month(self, year: int, month: int) -> tuple[datetime, datetime] | None:
        if not 1 <= month <= 12 or not 1 <= year <= 9998:
            return None
        next_year, next_month = _add_months(year, month, 1)
        return _at(date(year, month, 1), self.tz), _at(date(next_year, next_month, 1), self.tz)

    def month_offset(self, offset: int) -> tuple[datetime, datetime] | None:
        return self.month(*_add_months(self.today.year, self.today.month, offset))

    def year(self, year: int) -> tuple[datetime, datetime] | None:
        if not 1 <= year <= 9998:
            return None
        return _at(date(year, 1, 1), self.tz), _at(date(year + 1, 1, 1), self.tz)

    def date(self, year: int, month: int, day: int) -> tuple[datetime, datetime] | None:
        try:
            return self.days(date(year, month, day))
        except ValueError:
            return None

    def nearest_year(self, month: int, day: int | None = None) -> int:
        """The year that puts month (and day) closest to today: "in March" asked in May is this March."""
        best, best_gap = self.today.year, None
        for year in (self.today.year - 1, self.today.year, self.today.year + 1):
            last = calendar.monthrange(year, month)[1]
            anchor = date(year, month, min(day or 15, last))
            gap = abs((anchor - self.today).days)
            if best_gap is None or gap < best_gap:
                best, best_gap = year, gap
        return best

    def weekday(self, weekday: int, mode: str) -> tuple[datetime, datetime]:
        if mode == "last":  # the latest such day strictly before today
            back = (self.today.weekday() - weekday) % 7 or 7
            return self.days(self.today - timedelta(days=back))
        if mode == "bare":  # the latest on or before today
            return self.days(self.today - timedelta(days=(self.today.weekday() - weekday) % 7))
        offset = {"this": 0, "next": 1, "prev_week": -1, "prev2_week": -2}[mode]
        monday = self.today - timedelta(days=self.today.weekday()) + timedelta(weeks=offset)
        return self.days(monday + timedelta(days=weekday))

    def units_ago(self, count: int, unit: str) -> tuple[datetime, datetime] | None:
        if unit == "day":
            return self.days(self.today - timedelta(days=count))
        if unit == "week":
            return self.week(-count)
        if unit == "month":
            return self.month_offset(-count)
        return self.year(self.today.year - count)

    def units_ahead(self, count: int, unit: str) -> tuple[datetime, datetime] | None:
        if unit == "day":
            return self.days(self.today + timedelta(days=count))
        if unit == "week":
            return self.week(count)
        if unit == "month":
            return self.month_offset(count)
        return self.year(self.today.year + count)

    def span_back(self, count: int, unit: str) -> tuple[datetime, datetime] | None:
        """The rolling span of `count` units up to now: "the last 3 days" from this moment back."""
        if unit == "day":
            start = self.now - timedelta(days=count)
        elif unit == "week":
            start = self.now - timedelta(weeks=count)
        else:
            months = count * (12 if unit == "year" else 1)
            year, month = _add_months(self.now.year, self.now.month, -months)
            if not 1 <= year <= 9998:
                return None
            start = self.now.replace(year=year, month=month,
                                     day=min(self.now.day, calendar.monthrange(year, month)[1]))
        return start, self.now + timedelta(microseconds=1)

    def season(self, name: str, year: int) -> tuple[datetime, datetime] | None:
        first_month, length = _SEASONS[name]
        start = self.month(year, first_month)
        if start is None:
            return None
        end_year, end_month = _add_months(year, first_month, length)
        return start[0], _at(date(end_year, end_month, 1), self.tz)

    def season_relative(self, name: str, mode: str) -> tuple[datetime, datetime] | None:
        first_month, length = _SEASONS[name]
        # The year whose season contains or precedes today ("this winter" in January is the one
        # that started last December).
        year = self.today.year
        if first_month == 12 and self.today.month < 12:
            year -= 1
        this_start = date(year, first_month, 1)
        if this_start > self.today:
            year -= 1
        if mode == "last":
            end_year, end_month = _add_months(year, first_month, length)
            if date(end_year, end_month, 1) > self.today:  # still in it: the one before
                year -= 1
        elif mode == "next":
            year += 1
        return self.season(name, year)


_DAY_PARTS = {"morning": (5, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 30),
              "noon": (11, 14), "早上": (5, 12), "早晨": (5, 12), "上午": (5, 12), "中午": (11, 14),
              "下午": (12, 18), "傍晚": (17, 20), "晚上": (18, 24), "夜里": (18, 30), "凌晨": (0, 6)}
_SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3),
            "春天": (3, 3), "夏天": (6, 3), "秋天": (9, 3), "冬天": (12, 3),
            "春季": (3, 3), "夏季": (6, 3), "秋季": (9, 3), "冬季": (12, 3)}
_MONTHS = {name: index for index, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}
_MONTHS.update({name[:3]: index for name, index in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH_RE = ("(january|february|march|april|may|june|july|august|september|october|november|december"
             "|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\\.?")
_WEEKDAYS = {name: index for index, name in enumerate(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])}
_WEEKDAY_RE = "(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6,
                "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}
_UNIT_EN = {"day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month",
            "months": "month", "year": "year", "years": "year"}
_UNIT_ZH = {"天": "day", "日": "day", "周": "week", "星期": "week", "个星期": "week", "礼拜": "week",
            "个礼拜": "week", "月": "month", "个月": "month", "年": "year"}
_YEAR_OFFSET_ZH = {"今年": 0, "本年": 0, "去年": -1, "前年": -2, "大前年": -3, "明年": 1, "后年": 2}
_ZH_DAY_OFFSETS = {"大前天": -3, "前天": -2, "昨天": -1, "昨日": -1, "今天": 0, "今日": 0, "明天": 1,
                   "明日": 1, "后天": 2, "大后天": 3}

Span = tuple[datetime, datetime] | None
Rule = tuple[re.Pattern[str], Callable[[re.Match[str], _Frame], Span]]
_RULES: list[Rule] = []


def _rule(pattern: str, flags: int = re.IGNORECASE) -> Callable[[Callable[[re.Match[str], _Frame], Span]],
                                                                 Callable[[re.Match[str], _Frame], Span]]:
    def register(handler: Callable[[re.Match[str], _Frame], Span]) -> Callable[[re.Match[str], _Frame], Span]:
        _RULES.append((re.compile(pattern, flags), handler))
        return handler
    return register


# --- English -------------------------------------------------------------------------------------

@_rule(r"\b(?:the\s+)?day\s+before\s+yesterday\b")
def _before_yesterday(m: re.Match[str], f: _Frame) -> Span:
    return f.days(f.today - timedelta(days=2))


@_rule(r"\b(?:the\s+)?day\s+after\s+tomorrow\b")
def _after_tomorrow(m: re.Match[str], f: _Frame) -> Span:
    return f.days(f.today + timedelta(days=2))


@_rule(r"\b(yesterday|today|tomorrow)(?:\s+(morning|afternoon|evening|night|noon))?\b")
def _named_day(m: re.Match[str], f: _Frame) -> Span:
    day = f.today + timedelta(days={"yesterday": -1, "today": 0, "tomorrow": 1}[m.group(1).lower()])
    return f.day_part(day, m.group(2).lower()) if m.group(2) else f.days(day)


@_rule(r"\b(?:this\s+(morning|afternoon|evening)|(tonight)|(last\s+night)|earlier\s+today)\b")
def _day_part(m: re.Match[str], f: _Frame) -> Span:
    if m.group(1):
        return f.day_part(f.today, m.group(1).lower())
    if m.group(2):
        return f.day_part(f.today, "night")
    if m.group(3):
        return f.day_part(f.today - timedelta(days=1), "night")
    return f.days(f.today)


@_rule(r"\b(this|last|next|previous|coming|past|the\s+past)\s+(week|month|year)\b(?!\s+(?:of|and)\b)")
def _relative_unit(m: re.Match[str], f: _Frame) -> Span:
    which, unit = " ".join(m.group(1).lower().split()), m.group(2).lower()
    if which in ("past", "the past"):
        return f.span_back(1, unit)
    offset = {"this": 0, "last": -1, "previous": -1, "next": 1, "coming": 1}[which]
    if unit == "week":
        return f.week(offset)
    if unit == "month":
        return f.month_offset(offset)
    return f.year(f.today.year + offset)


@_rule(rf"\b{_EN_NUM}\s+(days?|weeks?|months?|years?)\s+ago\b")
def _units_ago(m: re.Match[str], f: _Frame) -> Span:
    count = _number(m.group(1))
    return f.units_ago(count, _UNIT_EN[m.group(2).lower()]) if count is not None else None


@_rule(rf"\b(?:in\s+)?{_EN_NUM}\s+(days?|weeks?|months?|years?)\s+from\s+now\b|\bin\s+{_EN_NUM}\s+(days?|weeks?|months?|years?)\b")
def _units_ahead(m: re.Match[str], f: _Frame) -> Span:
    raw, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    count = _number(raw)
    return f.units_ahead(count, _UNIT_EN[unit.lower()]) if count is not None else None


@_rule(rf"\b(?:(?:in|over|during)\s+)?(?:the\s+)?(?:last|past)\s+{_EN_NUM}\s+(days?|weeks?|months?|years?)\b")
def _span_back(m: re.Match[str], f: _Frame) -> Span:
    count = _number(m.group(1))
    return f.span_back(count, _UNIT_EN[m.group(2).lower()]) if count else None


@_rule(rf"\b(?:(last|this|next|on)\s+)?{_WEEKDAY_RE}\b")
def _weekday_en(m: re.Match[str], f: _Frame) -> Span:
    mode = (m.group(1) or "bare").lower()
    return f.weekday(_WEEKDAYS[m.group(2).lower()], "bare" if mode == "on" else mode)


@_rule(rf"\b{_MONTH_RE}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
def _month_day_year(m: re.Match[str], f: _Frame) -> Span:
    return f.date(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2)))


@_rule(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_RE},?\s+(\d{{4}})\b")
def _day_month_year(m: re.Match[str], f: _Frame) -> Span:
    return f.date(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1)))


@_rule(rf"\b{_MONTH_RE}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!\s*(?:,\s*)?\d)(?!\s*(?:am|pm|:))")
def _month_day(m: re.Match[str], f: _Frame) -> Span:
    month, day = _MONTHS[m.group(1).lower()], int(m.group(2))
    if m.group(1).lower() in ("may", "march") and not m.group(0)[0].isupper():
        return None  # "may 3 people come" / "march 5 miles": verbs, not months
    return f.date(f.nearest_year(month, day), month, day)


@_rule(rf"\b{_MONTH_RE}\s+(?:of\s+)?(\d{{4}})\b")
def _month_year(m: re.Match[str], f: _Frame) -> Span:
    return f.month(int(m.group(2)), _MONTHS[m.group(1).lower()])


@_rule(rf"\b(in|during|since|from|last|this|next|early|late|mid|mid-)\s+{_MONTH_RE}\b(?!\s*\d)")
def _month_alone(m: re.Match[str], f: _Frame) -> Span:
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


@_rule(r"\b(?:in|during|since|from|of|back\s+in|around|the\s+year)\s+((?:19|20)\d{2})\b(?!\s*[-/]\d)")
def _year_en(m: re.Match[str], f: _Frame) -> Span:
    return f.year(int(m.group(1)))


@_rule(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")
def _iso_date(m: re.Match[str], f: _Frame) -> Span:
    return f.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))


@_rule(r"\b((?:19|20)\d{2})-(\d{2})\b(?![-/.]\d)")
def _iso_month(m: re.Match[str], f: _Frame) -> Span:
    return f.month(int(m.group(1)), int(m.group(2)))


@_rule(r"\b(?:(last|this|next)\s+|(?:in|during)\s+the\s+)(spring|summer|autumn|fall|winter)"
       r"(?:\s+(?:of\s+)?((?:19|20)\d{2}))?\b")
def _season_en(m: re.Match[str], f: _Frame) -> Span:
    name = m.group(2).lower()
    if m.group(3):
        return f.season(name, int(m.group(3)))
    return f.season_relative(name, (m.group(1) or "this").lower())


# --- Chinese -------------------------------------------------------------------------------------

@_rule(r"(大前天|前天|昨天|昨日|今天|今日|明天|明日|大后天|后天)"
       r"(早上|早晨|上午|中午|下午|傍晚|晚上|夜里|凌晨)?", 0)
def _named_day_zh(m: re.Match[str], f: _Frame) -> Span:
    day = f.today + timedelta(days=_ZH_DAY_OFFSETS[m.group(1)])
    return f.day_part(day, m.group(2)) if m.group(2) else f.days(day)


@_rule(r"(昨晚|昨夜|今早|今晚|今夜|明早|明晚)", 0)
def _short_day_part_zh(m: re.Match[str], f: _Frame) -> Span:
    word = m.group(1)
    day = f.today + timedelta(days={"昨": -1, "今": 0, "明": 1}[word[0]])
    return f.day_part(day, "早上" if word[1] == "早" else "夜里")


@_rule(r"(上上|上|这|本|下下|下)(?:个)?(周|星期|礼拜)(?![一二三四五六日天1-7])", 0)
def _week_zh(m: re.Match[str], f: _Frame) -> Span:
    return f.week({"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}[m.group(1)])


@_rule(r"(上上|上|这|本|下下|下)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天1-7])", 0)
def _weekday_zh(m: re.Match[str], f: _Frame) -> Span:
    weekday = _ZH_WEEKDAYS[m.group(2)]
    mode = {"上上": "prev2_week", "上": "prev_week", "这": "this", "本": "this", "下": "next",
            "下下": "next", None: "bare"}[m.group(1)]
    if m.group(1) == "下下":
        start, end = f.weekday(weekday, "next")
        return start + timedelta(weeks=1), end + timedelta(weeks=1)
    return f.weekday(weekday, mode)


@_rule(r"(上上个|上个|上|这个|这|本|下个|下下个|下)月"
       r"(?!\d|[一二三四五六七八九十]|份?[0-9一二三四五六七八九十]+[日号])", 0)
def _month_zh(m: re.Match[str], f: _Frame) -> Span:
    return f.month_offset({"上上个": -2, "上个": -1, "上": -1, "这个": 0, "这": 0, "本": 0, "下个": 1,
                           "下下个": 2, "下": 1}[m.group(1)])


@_rule(r"(大前年|前年|去年|今年|本年|明年|后年)(?![0-9一二三四五六七八九十]+月|春|夏|秋|冬)", 0)
def _year_word_zh(m: re.Match[str], f: _Frame) -> Span:
    return f.year(f.today.year + _YEAR_OFFSET_ZH[m.group(1)])


@_rule(rf"{_ZH_NUM}(天|日|周|个星期|星期|个礼拜|礼拜|个月|年)(?:以前|之前|前)", 0)
def _units_ago_zh(m: re.Match[str], f: _Frame) -> Span:
    count = chinese_number(m.group(1))
    return f.units_ago(count, _UNIT_ZH[m.group(2)]) if count is not None else None


@_rule(rf"(?:最近|过去|近)(?:的)?{_ZH_NUM}(天|日|周|个星期|星期|个礼拜|礼拜|个月|年)(?:里|内|以来|来|中)?", 0)
def _span_back_zh(m: re.Match[str], f: _Frame) -> Span:
    count = chinese_number(m.group(1))
    return f.span_back(count, _UNIT_ZH[m.group(2)]) if count else None


@_rule(rf"{_ZH_NUM}(天|周|个星期|个月|年)(?:以后|之后|后)", 0)
def _units_ahead_zh(m: re.Match[str], f: _Frame) -> Span:
    count = chinese_number(m.group(1))
    return f.units_ahead(count, _UNIT_ZH[m.group(2)]) if count is not None else None


@_rule(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]", 0)
def _full_date_zh(m: re.Match[str], f: _Frame) -> Span:
    return f.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))


@_rule(r"(\d{4})\s*年\s*(\d{1,2}|[一二三四五六七八九十]{1,3})\s*月(?:份)?", 0)
def _year_month_zh(m: re.Match[str], f: _Frame) -> Span:
    month = chinese_number(m.group(2))
    return f.month(int(m.group(1)), month) if month else None


@_rule(r"(\d{4})\s*年(?!\s*(?:\d{1,2}|[一二三四五六七八九十]{1,3})\s*月)(?!代)", 0)
def _year_zh(m: re.Match[str], f: _Frame) -> Span:
    return f.year(int(m.group(1)))


@_rule(r"(大前年|前年|去年|今年|本年|明年|后年)(\d{1,2}|[一二三四五六七八九十]{1,3})月(?:份)?"
       r"(?:(\d{1,2}|[一二三四五六七八九十]{1,3})[日号])?", 0)
def _relative_year_month_zh(m: re.Match[str], f: _Frame) -> Span:
    year = f.today.year + _YEAR_OFFSET_ZH[m.group(1)]
    month = chinese_number(m.group(2))
    if not month:
        return None
    if m.group(3):
        day = chinese_number(m.group(3))
        return f.date(year, month, day) if day else None
    return f.month(year, month)


@_rule(r"(?<![\d年])(\d{1,2}|[一二三四五六七八九十]{1,3})月(?:份)?"
       r"(?:(\d{1,2}|[一二三四五六七八九十]{1,3})[日号])?", 0)
def _month_day_zh(m: re.Match[str], f: _Frame) -> Span:
    month = chinese_number(m.group(1))
    if not month or not 1 <= month <= 12:
        return None
    if m.group(2):
        day = chinese_number(m.group(2))
        return f.date(f.nearest_year(month, day), month, day) if day else None
    return f.month(f.nearest_year(month), month)


@_rule(r"(大前年|前年|去年|今年|明年)?(春天|夏天|秋天|冬天|春季|夏季|秋季|冬季)", 0)
def _season_zh(m: re.Match[str], f: _Frame) -> Span:
    if m.group(1):
        return f.season(m.group(2), f.today.year + _YEAR_OFFSET_ZH[m.group(1)])
    return None  # a bare season ("夏天很热") is not a time reference


# --- entry points --------------------------------------------------------------------------------

def find_times(query: str, now: datetime) -> list[TimeRange]:
    """Every time phrase in the query, left to right; where phrases overlap the longest wins."""
    if not isinstance(query, str):
        raise InvalidTypeError(f"query must be a string, got {type(query).__name__}")
    frame = _Frame(aware(now, "now"))
    found: list[tuple[int, int, int, tuple[datetime, datetime]]] = []
    for order, (pattern, handler) in enumerate(_RULES):
        for match in pattern.finditer(query):
            try:
                span = handler(match, frame)
            except (ValueError, OverflowError):
                span = None
            if span is not None:
                found.append((match.start(), match.end(), order, span))
    chosen: list[TimeRange] = []
    longest_first = sorted(found, key=lambda item: (item[0] - item[1], item[0], item[2]))
    for start, end, _, (begin, finish) in longest_first:
        if not any(start < c.span[1] and c.span[0] < end for c in chosen):
            chosen.append(TimeRange(begin, finish, query[start:end].strip(), (start, end)))
    return sorted(chosen, key=lambda r: r.span[0])


def resolve_time(query: str, now: datetime) -> TimeRange | None:
    """The first time phrase in a query as a range, or None: "上周" -> Monday..Monday of last week."""
    found = find_times(query, now)
    return found[0] if found else None
