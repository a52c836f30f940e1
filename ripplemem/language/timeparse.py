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

import re
from dataclasses import dataclass
from datetime import datetime

from ripplemem.core.clock import aware
from ripplemem.errors import InvalidTypeError
from ripplemem.language import _time_rules_en, _time_rules_zh
from ripplemem.language._time_frame import Frame, Rule


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


# English rules first: on equal spans, the earlier rule wins.
_RULES: list[Rule] = _time_rules_en.RULES + _time_rules_zh.RULES


# --- entry points --------------------------------------------------------------------------------


def find_times(query: str, now: datetime) -> list[TimeRange]:
    """Every time phrase in the query, left to right; where phrases overlap the longest wins."""
    if not isinstance(query, str):
        raise InvalidTypeError(f"query must be a string, got {type(query).__name__}")
    frame = Frame(aware(now, "now"))
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
