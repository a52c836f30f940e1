"""Time phrases in queries, English and Chinese, resolved against a fixed reference time."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from ripplemem.errors import InvalidTypeError
from ripplemem.language._time_frame import chinese_number
from ripplemem.rules.lifecycle import find_times, resolve_time

# Wednesday 14 May 2025, 15:30 UTC.
NOW = datetime(2025, 5, 14, 15, 30, tzinfo=timezone.utc)


def d(text: str) -> datetime:
    """'2025-05-13' or '2025-05-13 18:00' as an aware UTC datetime."""
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


CASES = [
    # English: days
    ("what did I eat yesterday?", "yesterday", "2025-05-13", "2025-05-14"),
    ("anything new today", "today", "2025-05-14", "2025-05-15"),
    ("the day before yesterday", "the day before yesterday", "2025-05-12", "2025-05-13"),
    ("what's planned for tomorrow", "tomorrow", "2025-05-15", "2025-05-16"),
    ("yesterday morning's run", "yesterday morning", "2025-05-13 05:00", "2025-05-13 12:00"),
    ("what did we talk about last night", "last night", "2025-05-13 18:00", "2025-05-14 06:00"),
    ("this morning", "this morning", "2025-05-14 05:00", "2025-05-14 12:00"),
    ("3 days ago", "3 days ago", "2025-05-11", "2025-05-12"),
    ("ten days ago", "ten days ago", "2025-05-04", "2025-05-05"),
    ("a couple of days ago", "a couple of days ago", "2025-05-12", "2025-05-13"),
    ("in 3 days", "in 3 days", "2025-05-17", "2025-05-18"),
    # English: weeks and weekdays (weeks start on Monday)
    ("what did I do last week", "last week", "2025-05-05", "2025-05-12"),
    ("this week", "this week", "2025-05-12", "2025-05-19"),
    ("next week", "next week", "2025-05-19", "2025-05-26"),
    ("a week ago", "a week ago", "2025-05-05", "2025-05-12"),
    ("two weeks ago", "two weeks ago", "2025-04-28", "2025-05-05"),
    ("last Monday", "last Monday", "2025-05-12", "2025-05-13"),
    ("last Wednesday", "last Wednesday", "2025-05-07", "2025-05-08"),  # today is Wednesday
    ("on Friday", "on Friday", "2025-05-09", "2025-05-10"),
    ("Wednesday", "Wednesday", "2025-05-14", "2025-05-15"),
    ("this Monday", "this Monday", "2025-05-12", "2025-05-13"),
    ("next Monday", "next Monday", "2025-05-19", "2025-05-20"),
    # English: months, years, dates, seasons
    ("this month", "this month", "2025-05-01", "2025-06-01"),
    ("last month", "last month", "2025-04-01", "2025-05-01"),
    ("two months ago", "two months ago", "2025-03-01", "2025-04-01"),
    ("six months ago", "six months ago", "2024-11-01", "2024-12-01"),
    ("last year", "last year", "2024-01-01", "2025-01-01"),
    ("3 years ago", "3 years ago", "2022-01-01", "2023-01-01"),
    ("in 2023", "in 2023", "2023-01-01", "2024-01-01"),
    ("back in 2019 we met", "back in 2019", "2019-01-01", "2020-01-01"),
    ("March 2024", "March 2024", "2024-03-01", "2024-04-01"),
    ("in Sept 2023", "Sept 2023", "2023-09-01", "2023-10-01"),
    ("in March", "in March", "2025-03-01", "2025-04-01"),
    ("last December", "last December", "2024-12-01", "2025-01-01"),
    ("in December", "in December", "2024-12-01", "2025-01-01"),  # December 2024 is nearer than 2025
    ("March 15, 2024", "March 15, 2024", "2024-03-15", "2024-03-16"),
    ("15th of March 2024", "15th of March 2024", "2024-03-15", "2024-03-16"),
    ("on March 3", "March 3", "2025-03-03", "2025-03-04"),
    ("2024-03-15", "2024-03-15", "2024-03-15", "2024-03-16"),
    ("2024/3/5", "2024/3/5", "2024-03-05", "2024-03-06"),
    ("2024-03", "2024-03", "2024-03-01", "2024-04-01"),
    ("last summer", "last summer", "2024-06-01", "2024-09-01"),
    ("in the winter of 2023", "in the winter of 2023", "2023-12-01", "2024-03-01"),
    # English: spans up to now
    ("in the last 3 days", "in the last 3 days", "2025-05-11 15:30", "2025-05-14 15:30:00.000001"),
    ("the past two weeks", "the past two weeks", "2025-04-30 15:30", "2025-05-14 15:30:00.000001"),
    ("past week", "past week", "2025-05-07 15:30", "2025-05-14 15:30:00.000001"),
    ("over the past 2 months", "over the past 2 months", "2025-03-14 15:30", "2025-05-14 15:30:00.000001"),
    # Chinese: days
    ("昨天吃了什么", "昨天", "2025-05-13", "2025-05-14"),
    ("今天", "今天", "2025-05-14", "2025-05-15"),
    ("前天", "前天", "2025-05-12", "2025-05-13"),
    ("大前天", "大前天", "2025-05-11", "2025-05-12"),
    ("明天", "明天", "2025-05-15", "2025-05-16"),
    ("后天", "后天", "2025-05-16", "2025-05-17"),
    ("昨天下午开会说了什么", "昨天下午", "2025-05-13 12:00", "2025-05-13 18:00"),
    ("昨晚", "昨晚", "2025-05-13 18:00", "2025-05-14 06:00"),
    ("三天前", "三天前", "2025-05-11", "2025-05-12"),
    ("二十天前", "二十天前", "2025-04-24", "2025-04-25"),
    # Chinese: weeks and weekdays
    ("上周", "上周", "2025-05-05", "2025-05-12"),
    ("上个星期", "上个星期", "2025-05-05", "2025-05-12"),
    ("上礼拜", "上礼拜", "2025-05-05", "2025-05-12"),
    ("本周", "本周", "2025-05-12", "2025-05-19"),
    ("这周", "这周", "2025-05-12", "2025-05-19"),
    ("下周", "下周", "2025-05-19", "2025-05-26"),
    ("上上周", "上上周", "2025-04-28", "2025-05-05"),
    ("两周前", "两周前", "2025-04-28", "2025-05-05"),
    ("上周一", "上周一", "2025-05-05", "2025-05-06"),
    ("上星期五", "上星期五", "2025-05-09", "2025-05-10"),
    ("上周日", "上周日", "2025-05-11", "2025-05-12"),
    ("这周二", "这周二", "2025-05-13", "2025-05-14"),
    ("下周三", "下周三", "2025-05-21", "2025-05-22"),
    ("周三", "周三", "2025-05-14", "2025-05-15"),
    ("星期五", "星期五", "2025-05-09", "2025-05-10"),
    # Chinese: months, years, dates, seasons
    ("上个月", "上个月", "2025-04-01", "2025-05-01"),
    ("上月", "上月", "2025-04-01", "2025-05-01"),
    ("这个月", "这个月", "2025-05-01", "2025-06-01"),
    ("下个月", "下个月", "2025-06-01", "2025-07-01"),
    ("三个月前", "三个月前", "2025-02-01", "2025-03-01"),
    ("十二个月前", "十二个月前", "2024-05-01", "2024-06-01"),
    ("今年", "今年", "2025-01-01", "2026-01-01"),
    ("去年", "去年", "2024-01-01", "2025-01-01"),
    ("前年", "前年", "2023-01-01", "2024-01-01"),
    ("两年前", "两年前", "2023-01-01", "2024-01-01"),
    ("2023年", "2023年", "2023-01-01", "2024-01-01"),
    ("2024年3月", "2024年3月", "2024-03-01", "2024-04-01"),
    ("2024年十二月", "2024年十二月", "2024-12-01", "2025-01-01"),
    ("2024年3月15日", "2024年3月15日", "2024-03-15", "2024-03-16"),
    ("去年三月", "去年三月", "2024-03-01", "2024-04-01"),
    ("今年2月14号", "今年2月14号", "2025-02-14", "2025-02-15"),
    ("3月15号", "3月15号", "2025-03-15", "2025-03-16"),
    ("三月份", "三月份", "2025-03-01", "2025-04-01"),
    ("去年夏天", "去年夏天", "2024-06-01", "2024-09-01"),
    ("最近三天", "最近三天", "2025-05-11 15:30", "2025-05-14 15:30:00.000001"),
    ("过去两周里", "过去两周里", "2025-04-30 15:30", "2025-05-14 15:30:00.000001"),
    ("近一个月", "近一个月", "2025-04-14 15:30", "2025-05-14 15:30:00.000001"),
]


@pytest.mark.parametrize(("query", "phrase", "start", "end"), CASES)
def test_phrases_resolve_to_calendar_ranges(query: str, phrase: str, start: str, end: str) -> None:
    found = resolve_time(query, NOW)
    assert found is not None
    assert (found.phrase, found.start, found.end) == (phrase, d(start), d(end))
    assert query[found.span[0] : found.span[1]].strip() == phrase


@pytest.mark.parametrize(
    "query",
    [
        "I may go to the gym",
        "may 3 people come along?",
        "we march 5 miles every day",
        "I bought 2000 shares",
        "what is my dose",
        "夏天很热",
        "我一周去三次健身房",
        "the last one",
        "每周",
        "",
    ],
)
def test_text_without_a_time_phrase(query: str) -> None:
    assert resolve_time(query, NOW) is None


def test_every_phrase_in_a_query_left_to_right() -> None:
    found = find_times("上周的会议和去年的体检, and yesterday's call", NOW)
    assert [t.phrase for t in found] == ["上周", "去年", "yesterday"]


def test_the_longest_overlapping_phrase_wins() -> None:
    assert [t.phrase for t in find_times("in the last 3 days", NOW)] == ["in the last 3 days"]
    assert [t.phrase for t in find_times("去年三月的旅行", NOW)] == ["去年三月"]
    assert [t.phrase for t in find_times("yesterday afternoon", NOW)] == ["yesterday afternoon"]


def test_ranges_follow_the_reference_times_zone() -> None:
    shanghai = datetime(2025, 5, 14, 7, 0, tzinfo=ZoneInfo("Asia/Shanghai"))  # 2025-05-13 23:00 UTC
    found = resolve_time("昨天", shanghai)
    assert found is not None
    assert found.start == datetime(2025, 5, 13, tzinfo=ZoneInfo("Asia/Shanghai"))
    assert found.start.astimezone(timezone.utc) == d("2025-05-12 16:00")


def test_a_naive_reference_time_is_utc() -> None:
    found = resolve_time("today", datetime(2025, 5, 14, 15, 30))
    assert found is not None and found.start == d("2025-05-14")


def test_months_and_weeks_cross_year_boundaries() -> None:
    january = datetime(2025, 1, 2, 9, 0, tzinfo=timezone.utc)  # a Thursday
    cases = {
        "last month": ("2024-12-01", "2025-01-01"),
        "上周": ("2024-12-23", "2024-12-30"),
        "两个月前": ("2024-11-01", "2024-12-01"),
        "this winter": ("2024-12-01", "2025-03-01"),
        "last winter": ("2023-12-01", "2024-03-01"),
        "in December": ("2024-12-01", "2025-01-01"),
        "12月": ("2024-12-01", "2025-01-01"),
    }
    for query, (start, end) in cases.items():
        found = resolve_time(query, january)
        assert found is not None and (found.start, found.end) == (d(start), d(end)), query


def test_impossible_dates_give_nothing() -> None:
    assert resolve_time("2025-02-30", NOW) is None
    month = resolve_time("2023年2月29日", NOW)  # no such day: the month it names is left
    assert month is not None and (month.phrase, month.start) == ("2023年2月", d("2023-02-01"))
    found = resolve_time("2024年2月29日", NOW)
    assert found is not None and found.start == d("2024-02-29")
    assert resolve_time("13月", NOW) is None


def test_contains_and_strip_from() -> None:
    found = resolve_time("what did I eat yesterday at lunch?", NOW)
    assert found is not None
    assert found.contains(d("2025-05-13 12:30")) and not found.contains(d("2025-05-14"))
    assert found.contains(datetime(2025, 5, 13, 23, 59))  # naive = UTC
    assert found.strip_from("what did I eat yesterday at lunch?") == "what did I eat at lunch?"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("一", 1),
        ("两", 2),
        ("十", 10),
        ("十一", 11),
        ("二十", 20),
        ("二十三", 23),
        ("九十九", 99),
        ("7", 7),
        ("十十", None),
        ("百", None),
        ("", None),
        ("一二", None),
    ],
)
def test_chinese_numbers(text: str, value: int | None) -> None:
    assert chinese_number(text) == value


def test_bad_input() -> None:
    with pytest.raises(InvalidTypeError):
        resolve_time(None, NOW)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError):
        resolve_time("today", "2025-05-14")  # type: ignore[arg-type]


def test_spans_end_just_after_now_so_now_is_inside() -> None:
    found = resolve_time("最近三天", NOW)
    assert found is not None and found.contains(NOW) and not found.contains(NOW + timedelta(seconds=1))
