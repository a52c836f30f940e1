"""Chinese time phrases: 昨天, 上周三, 三个月前, 最近三天, 2024年3月, 去年夏天."""

from __future__ import annotations

import re
from datetime import timedelta

from ripplemem.language._time_frame import Frame, Rule, Span, chinese_number, rule_registrar

_ZH_NUM = r"(\d{1,3}|[零〇一二两三四五六七八九十]{1,3})"
_ZH_WEEKDAYS = {
    "一": 0,
    "二": 1,
    "三": 2,
    "四": 3,
    "五": 4,
    "六": 5,
    "日": 6,
    "天": 6,
    "1": 0,
    "2": 1,
    "3": 2,
    "4": 3,
    "5": 4,
    "6": 5,
    "7": 6,
}
_UNIT_ZH = {
    "天": "day",
    "日": "day",
    "周": "week",
    "星期": "week",
    "个星期": "week",
    "礼拜": "week",
    "个礼拜": "week",
    "月": "month",
    "个月": "month",
    "年": "year",
}
_YEAR_OFFSET_ZH = {"今年": 0, "本年": 0, "去年": -1, "前年": -2, "大前年": -3, "明年": 1, "后年": 2}
_ZH_DAY_OFFSETS = {
    "大前天": -3,
    "前天": -2,
    "昨天": -1,
    "昨日": -1,
    "今天": 0,
    "今日": 0,
    "明天": 1,
    "明日": 1,
    "后天": 2,
    "大后天": 3,
}

RULES: list[Rule] = []
rule = rule_registrar(RULES)


@rule(
    r"(大前天|前天|昨天|昨日|今天|今日|明天|明日|大后天|后天)"
    r"(早上|早晨|上午|中午|下午|傍晚|晚上|夜里|凌晨)?",
    0,
)
def _named_day_zh(m: re.Match[str], f: Frame) -> Span:
    day = f.today + timedelta(days=_ZH_DAY_OFFSETS[m.group(1)])
    return f.day_part(day, m.group(2)) if m.group(2) else f.days(day)


@rule(r"(昨晚|昨夜|今早|今晚|今夜|明早|明晚)", 0)
def _short_day_part_zh(m: re.Match[str], f: Frame) -> Span:
    word = m.group(1)
    day = f.today + timedelta(days={"昨": -1, "今": 0, "明": 1}[word[0]])
    return f.day_part(day, "早上" if word[1] == "早" else "夜里")


@rule(r"(上上|上|这|本|下下|下)(?:个)?(周|星期|礼拜)(?![一二三四五六日天1-7])", 0)
def _week_zh(m: re.Match[str], f: Frame) -> Span:
    return f.week({"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}[m.group(1)])


@rule(r"(上上|上|这|本|下下|下)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天1-7])", 0)
def _weekday_zh(m: re.Match[str], f: Frame) -> Span:
    weekday = _ZH_WEEKDAYS[m.group(2)]
    mode = {
        "上上": "prev2_week",
        "上": "prev_week",
        "这": "this",
        "本": "this",
        "下": "next",
        "下下": "next",
        None: "bare",
    }[m.group(1)]
    if m.group(1) == "下下":
        start, end = f.weekday(weekday, "next")
        return start + timedelta(weeks=1), end + timedelta(weeks=1)
    return f.weekday(weekday, mode)


@rule(
    r"(上上个|上个|上|这个|这|本|下个|下下个|下)月"
    r"(?!\d|[一二三四五六七八九十]|份?[0-9一二三四五六七八九十]+[日号])",
    0,
)
def _month_zh(m: re.Match[str], f: Frame) -> Span:
    return f.month_offset(
        {"上上个": -2, "上个": -1, "上": -1, "这个": 0, "这": 0, "本": 0, "下个": 1, "下下个": 2, "下": 1}[
            m.group(1)
        ]
    )


@rule(r"(大前年|前年|去年|今年|本年|明年|后年)(?![0-9一二三四五六七八九十]+月|春|夏|秋|冬)", 0)
def _year_word_zh(m: re.Match[str], f: Frame) -> Span:
    return f.year(f.today.year + _YEAR_OFFSET_ZH[m.group(1)])


@rule(rf"{_ZH_NUM}(天|日|周|个星期|星期|个礼拜|礼拜|个月|年)(?:以前|之前|前)", 0)
def _units_ago_zh(m: re.Match[str], f: Frame) -> Span:
    count = chinese_number(m.group(1))
    return f.units_ago(count, _UNIT_ZH[m.group(2)]) if count is not None else None


@rule(rf"(?:最近|过去|近)(?:的)?{_ZH_NUM}(天|日|周|个星期|星期|个礼拜|礼拜|个月|年)(?:里|内|以来|来|中)?", 0)
def _span_back_zh(m: re.Match[str], f: Frame) -> Span:
    count = chinese_number(m.group(1))
    return f.span_back(count, _UNIT_ZH[m.group(2)]) if count else None


@rule(rf"{_ZH_NUM}(天|周|个星期|个月|年)(?:以后|之后|后)", 0)
def _units_ahead_zh(m: re.Match[str], f: Frame) -> Span:
    count = chinese_number(m.group(1))
    return f.units_ahead(count, _UNIT_ZH[m.group(2)]) if count is not None else None


@rule(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]", 0)
def _full_date_zh(m: re.Match[str], f: Frame) -> Span:
    return f.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))


@rule(r"(\d{4})\s*年\s*(\d{1,2}|[一二三四五六七八九十]{1,3})\s*月(?:份)?", 0)
def _year_month_zh(m: re.Match[str], f: Frame) -> Span:
    month = chinese_number(m.group(2))
    return f.month(int(m.group(1)), month) if month else None


@rule(r"(\d{4})\s*年(?!\s*(?:\d{1,2}|[一二三四五六七八九十]{1,3})\s*月)(?!代)", 0)
def _year_zh(m: re.Match[str], f: Frame) -> Span:
    return f.year(int(m.group(1)))


@rule(
    r"(大前年|前年|去年|今年|本年|明年|后年)(\d{1,2}|[一二三四五六七八九十]{1,3})月(?:份)?"
    r"(?:(\d{1,2}|[一二三四五六七八九十]{1,3})[日号])?",
    0,
)
def _relative_year_month_zh(m: re.Match[str], f: Frame) -> Span:
    year = f.today.year + _YEAR_OFFSET_ZH[m.group(1)]
    month = chinese_number(m.group(2))
    if not month:
        return None
    if m.group(3):
        day = chinese_number(m.group(3))
        return f.date(year, month, day) if day else None
    return f.month(year, month)


@rule(
    r"(?<![\d年])(\d{1,2}|[一二三四五六七八九十]{1,3})月(?:份)?"
    r"(?:(\d{1,2}|[一二三四五六七八九十]{1,3})[日号])?",
    0,
)
def _month_day_zh(m: re.Match[str], f: Frame) -> Span:
    month = chinese_number(m.group(1))
    if not month or not 1 <= month <= 12:
        return None
    if m.group(2):
        day = chinese_number(m.group(2))
        return f.date(f.nearest_year(month, day), month, day) if day else None
    return f.month(f.nearest_year(month), month)


@rule(r"(大前年|前年|去年|今年|明年)?(春天|夏天|秋天|冬天|春季|夏季|秋季|冬季)", 0)
def _season_zh(m: re.Match[str], f: Frame) -> Span:
    if m.group(1):
        return f.season(m.group(2), f.today.year + _YEAR_OFFSET_ZH[m.group(1)])
    return None  # a bare season ("夏天很热") is not a time reference
