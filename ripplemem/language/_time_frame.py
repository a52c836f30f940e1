"""What time phrases resolve against: a reference moment, calendar arithmetic in its time zone, and
Chinese numerals; plus the rule type the English and Chinese phrase rules share."""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import date, datetime, time, timedelta, tzinfo

_ZH_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}


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


def _at(day: date, tz: tzinfo | None, hour: int = 0) -> datetime:
    return datetime.combine(day, time(hour), tzinfo=tz)


def _add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


class Frame:
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
            start = self.now.replace(
                year=year, month=month, day=min(self.now.day, calendar.monthrange(year, month)[1])
            )
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


_DAY_PARTS = {
    "morning": (5, 12),
    "afternoon": (12, 18),
    "evening": (18, 24),
    "night": (18, 30),
    "noon": (11, 14),
    "早上": (5, 12),
    "早晨": (5, 12),
    "上午": (5, 12),
    "中午": (11, 14),
    "下午": (12, 18),
    "傍晚": (17, 20),
    "晚上": (18, 24),
    "夜里": (18, 30),
    "凌晨": (0, 6),
}
_SEASONS = {
    "spring": (3, 3),
    "summer": (6, 3),
    "autumn": (9, 3),
    "fall": (9, 3),
    "winter": (12, 3),
    "春天": (3, 3),
    "夏天": (6, 3),
    "秋天": (9, 3),
    "冬天": (12, 3),
    "春季": (3, 3),
    "夏季": (6, 3),
    "秋季": (9, 3),
    "冬季": (12, 3),
}

Span = tuple[datetime, datetime] | None
Handler = Callable[[re.Match[str], Frame], Span]
Rule = tuple[re.Pattern[str], Handler]


def rule_registrar(rules: list[Rule]) -> Callable[..., Callable[[Handler], Handler]]:
    """A decorator factory appending (compiled pattern, handler) to `rules`, in definition order."""

    def rule(pattern: str, flags: int = re.IGNORECASE) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            rules.append((re.compile(pattern, flags), handler))
            return handler

        return register

    return rule
