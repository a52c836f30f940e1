"""One statement read by the rules as (owner, slot, qualifier, value, negated), English and Chinese.

A slot is a single-valued attribute (dose, address, residence, deadline, phone, email, job,
employer, salary, weight, birthday, appointment) or a preference (like / hate X, 喜欢 / 讨厌 X):
"My metformin dose is now 10 mg" reads as (user, dose, metformin, "10 mg", update cue "now");
"妈妈的剂量改成了10毫克" as (妈妈, dose, -, "10mg", update cue "改成"). `conflicts` compares two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ripplemem.core.text import STOPWORDS
from ripplemem.errors import InvalidTypeError
from ripplemem.rules.lifecycle._common import normalize_text
from ripplemem.rules.lifecycle.consolidation import detect_sentiment

# --- vocabulary ----------------------------------------------------------------------------------

_SLOT_NOUNS_EN = [
    ("dose", r"doses?|dosages?"),
    ("address", r"(?:home\s+|mailing\s+|postal\s+|email\s+(?=addr))?address"),
    ("deadline", r"deadline|due\s+date"),
    ("phone", r"(?:phone|mobile|cell(?:phone)?|telephone)(?:\s+number)?|phone\s+no\.?"),
    ("email", r"e-?mail(?:\s+address)?"),
    ("job", r"job|position|occupation|profession|job\s+title"),
    ("employer", r"employer"),
    ("salary", r"salary|wage"),
    ("weight", r"weight"),
    ("birthday", r"birthday|date\s+of\s+birth"),
    ("appointment", r"appointment"),
    ("meeting", r"meeting"),
    ("flight", r"flight"),
]
_SLOT_NOUNS_ZH = [
    ("dose", "剂量|用量|药量"),
    ("address", "地址|住址"),
    ("deadline", "截止日期|截止时间|截止|期限|交稿日期"),
    ("phone", "电话号码|手机号码|手机号|电话"),
    ("email", "邮箱|电子邮件"),
    ("job", "工作|职位|职业"),
    ("salary", "工资|薪水|月薪|年薪"),
    ("weight", "体重"),
    ("birthday", "生日"),
    ("appointment", "预约"),
    ("meeting", "会议|例会"),
    ("flight", "航班"),
]
_NOUN_EN = re.compile(
    r"\b(?:" + "|".join(f"(?P<{name}>{pattern})" for name, pattern in _SLOT_NOUNS_EN) + r")\b", re.IGNORECASE
)
_NOUN_ZH = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _SLOT_NOUNS_ZH))

_WHO_EN = (
    r"(?P<who>\bI\b|\b(?i:we|he|she|they)\b|\b(?i:my|our|his|her|their)\s+[a-z][\w-]*"
    r"|\b[A-Z][\w-]+(?:\s[A-Z][\w-]+)?)"
)
_AUX_EN = (
    r"(?P<aux>(?:\s*(?:'m|'ve|'s|'re|’m|’ve|’s|’re)|\s+(?:am|is|are|was|were|have|has|had|just|"
    r"recently|now|still|currently|also|finally|actually|really|absolutely|kind\s+of|no\s+longer|"
    r"don'?t|do\s+not|doesn'?t|does\s+not|didn'?t|did\s+not|never|not|started|start|stopped|"
    r"used\s+to|will|to|going\s+to|gonna|'ll|been|being))*)"
)
_CLAUSE_END = r"(?P<value>[^.;!?\n。；！？]+)"
_RESIDENCE_EN = re.compile(
    _WHO_EN + _AUX_EN + r"\s+(?P<verb>live|lives|living|lived|moved|move|moving|relocated|relocating|"
    r"reside|resides|residing|stay|stays|staying)\s+(?:back\s+|over\s+)?(?:in|at|to)\s+" + _CLAUSE_END
)
_EMPLOYER_EN = re.compile(
    _WHO_EN + _AUX_EN + r"\s+(?P<verb>work|works|working|worked|employed)\s+(?:at|for)\s+" + _CLAUSE_END
)
_OCCUPATION_EN = re.compile(
    _WHO_EN + _AUX_EN + r"\s+(?P<verb>work|works|working|worked|employed)\s+as\s+" + _CLAUSE_END
)
_DOSE_EN = re.compile(
    _WHO_EN + _AUX_EN + r"\s+(?P<verb>take|takes|taking|took|on)\s+(?P<value>\d+(?:\.\d+)?\s*"
    r"(?:mg|milligrams?|g|grams?|mcg|µg|ml|iu|units?|pills?|tablets?|capsules?|drops?))"
    r"(?:\s+(?:of\s+)?(?:(?:my|his|her|their|your|our|the)\s+)?(?P<qual>[A-Za-z][\w-]*))?",
    re.IGNORECASE,
)
_PREFERENCE_EN = re.compile(
    _WHO_EN + _AUX_EN + r"\s+(?P<verb>like|likes|love|loves|enjoy|enjoys|prefer|prefers|adore|adores|"
    r"hate|hates|dislike|dislikes|detest|detests|can'?t\s+stand|cannot\s+stand)\s+" + _CLAUSE_END
)
_NEGATIVE_VERBS_EN = re.compile(r"hate|dislike|detest|stand", re.IGNORECASE)
_NEGATION_EN = re.compile(
    r"\b(?:not|never|don'?t|doesn'?t|didn'?t|no\s+longer|isn'?t|aren'?t|stopped)\b", re.IGNORECASE
)

_WHO_ZH = r"(?P<who>我们|我|你|他们|她们|他|她|[\u4e00-\u9fff]{1,3}?)?"
_AUX_ZH = (
    r"(?P<aux>(?:现在|目前|已经|还|一直|也|都|刚|刚刚|最近|不再|已经不|不|没|并不|很|非常|"
    r"特别|真的|超|挺|就|又|从来不|才)*)"
)
_RESIDENCE_ZH = re.compile(
    _WHO_ZH + _AUX_ZH + r"(?P<verb>住在|住到|搬到了?|搬去了?|搬回了?|定居在?|生活在)"
    r"(?P<value>[^。，,；;！!？?\n了]+)"
)
_EMPLOYER_ZH = re.compile(
    _WHO_ZH + _AUX_ZH + r"在(?P<value>[^。，,；;！!？?\n]{1,20}?)(?P<verb>上班|工作|任职)"
)
_DOSE_ZH = re.compile(
    _WHO_ZH + _AUX_ZH + r"(?:每天|每日|每次|一天)?(?P<verb>吃|服用|用|打)"
    r"(?P<value>\d+(?:\.\d+)?\s*(?:mg|毫克|克|毫升|ml|片|粒|颗|单位))(?:的)?"
    r"(?P<qual>[\u4e00-\u9fffA-Za-z]{0,6})"
)
_PREFERENCE_ZH = re.compile(
    _WHO_ZH + _AUX_ZH + r"(?P<verb>喜欢|爱吃|爱喝|爱|讨厌|恨|受不了|不喜欢|不爱)"
    r"(?P<value>[^。，,；;！!？?\n]+)"
)
_NEGATION_ZH = re.compile(r"不再|已经不|不|没|并不|从来不")

_UPDATE_CUES = re.compile(
    r"\b(?:now|currently|these\s+days|anymore|any\s+more|no\s+longer|changed?|changing|moved|switched|"
    r"updated?|instead|increased|decreased|reduced|raised|lowered|bumped|postponed|pushed\s+back|"
    r"rescheduled|extended|brought\s+forward|new|from\s+now\s+on|not\s+anymore|starting\s+today)\b"
    r"|改成|改为|改到|换成|换了|变成|变为|调整|调到|调成|推迟|延期|提前到|搬到|搬家|不再|已经不"
    r"|新的|新地址|更新|现在|目前|以后",
    re.IGNORECASE,
)
_EMOTION_NOW = re.compile(
    r"\b(?:feel|feeling|felt|right\s+now|today|at\s+the\s+moment"
    r"|so\s+(?:angry|sad|upset|happy|tired))\b|今天|此刻|现在好|好烦|烦死|气死",
    re.IGNORECASE,
)
_LINK_EN = re.compile(
    r"^\s*(?:(?:is|was|are|were|will\s+be|has\s+been|have\s+been|had\s+been|got|gets|'s|’s|=)\s*)?"
    r"(?:(?:now|currently|still|officially|finally|just)\s+)*"
    r"(?:(?:been\s+)?(?:changed|moved|updated|increased|reduced|decreased|lowered|raised|pushed|"
    r"postponed|rescheduled|switched|bumped|extended|brought|set|changing|moving)\s+(?:up\s+|down\s+|back\s+|"
    r"forward\s+)?(?:to|until|till|for)\s+|to\s+|:\s*|of\s+|at\s+|on\s+|in\s+)?",
    re.IGNORECASE,
)
_LINK_ZH = re.compile(
    r"^\s*(?:现在|目前|已经|也)*(?:是|为|改成了?|改为|改到了?|换成了?|变成了?|调整为|调整到|调到了?|调成了?|"
    r"推迟到了?|延期到了?|提前到了?|定在了?|定为|在|：|:)?\s*"
)
_TRAILING_EN = re.compile(
    r"\s+(?:now|anymore|any\s+more|instead|from\s+now\s+on|these\s+days|again|too|as\s+well)$", re.IGNORECASE
)
_CUT_VALUE = re.compile(
    r",\s*(?:but|and|so|because)\b|\s+(?:but|because|since|which|so)\s+|，|,(?=\s*[a-z]+\s)", re.IGNORECASE
)
_OWNER_WORDS_EN = {
    "my": "user",
    "our": "us",
    "your": "you",
    "his": "him",
    "her": "her",
    "their": "them",
    "i": "user",
    "we": "us",
    "he": "him",
    "she": "her",
    "they": "them",
    "me": "user",
}
_OWNER_WORDS_ZH = {
    "我": "user",
    "我们": "us",
    "你": "you",
    "他": "him",
    "她": "her",
    "他们": "them",
    "她们": "them",
}
_NOT_QUALIFIERS = STOPWORDS | {
    "changed",
    "moved",
    "updated",
    "set",
    "new",
    "current",
    "old",
    "now",
    "also",
    "just",
    "got",
    "get",
    "the",
    "so",
    "well",
    "anyway",
    "oh",
    "ok",
    "okay",
    "actually",
    "update",
    "reminder",
    "note",
    "please",
    "remember",
}
_DOSE_WORDS = {
    "every",
    "each",
    "daily",
    "twice",
    "once",
    "per",
    "a",
    "day",
    "morning",
    "night",
    "now",
    "instead",
    "anymore",
    "since",
    "today",
    "tonight",
    "weekly",
    "with",
    "without",
}
_ZH_FILLERS = re.compile(r"^(?:把|将|给|跟|和|对|说|请|帮我|记住|提醒)+|(?:把|将|给)$")


@dataclass(frozen=True)
class Statement:
    """What the rules read from one text; slot None means no single-valued attribute was found."""

    text: str
    slot: str | None = None
    owner: str | None = None
    qualifier: str | None = None
    value: str | None = None
    negated: bool = False
    update_cue: str | None = None
    belief: str = "fact"


# --- reading one statement -----------------------------------------------------------------------


def parse_statement(text: str) -> Statement:
    """The first slot reading of a text: owner, slot, qualifier, value, negation, cue and belief."""
    if not isinstance(text, str):
        raise InvalidTypeError(f"text must be a string, got {type(text).__name__}")
    cue_match = _UPDATE_CUES.search(text)
    cue = cue_match.group(0) if cue_match else None
    found = _verb_frame(text) or _noun_frame(text)
    belief = _belief(text, found[0] if found else None)
    if found is None:
        return Statement(text, update_cue=cue, belief=belief)
    slot, owner, qualifier, value, negated = found
    return Statement(text, slot, owner, qualifier, value, negated, cue, belief)


_FRAMES_EN: list[tuple[str, re.Pattern[str]]] = [
    ("dose", _DOSE_EN),
    ("residence", _RESIDENCE_EN),
    ("employer", _EMPLOYER_EN),
    ("occupation", _OCCUPATION_EN),
    ("preference", _PREFERENCE_EN),
]
_FRAMES_ZH: list[tuple[str, re.Pattern[str]]] = [
    ("dose", _DOSE_ZH),
    ("residence", _RESIDENCE_ZH),
    ("employer", _EMPLOYER_ZH),
    ("preference", _PREFERENCE_ZH),
]
_HAN = re.compile(r"[\u4e00-\u9fff]")
_DIGIT = re.compile(r"\d")


def _verb_frame(text: str) -> tuple[str, str | None, str | None, str, bool] | None:
    # A Chinese frame needs a Han character and a dose a digit: skip the patterns that cannot match
    # (most of a parse's time on plain English).
    frames = _FRAMES_EN + _FRAMES_ZH if _HAN.search(text) else _FRAMES_EN
    has_digit = _DIGIT.search(text) is not None
    best: tuple[int, str, re.Match[str]] | None = None
    for slot, pattern in frames:
        if slot == "dose" and not has_digit:
            continue
        match = pattern.search(text)
        if match and (best is None or match.start("verb") < best[0]):
            best = (match.start("verb"), slot, match)
    if best is None:
        return None
    _, slot, match = best
    owner, qualifier = _who(match.group("who"))
    aux = match.group("aux") or ""
    verb = match.group("verb")
    chinese = bool(_HAN.search(verb))
    negated = bool((_NEGATION_ZH if chinese else _NEGATION_EN).search(aux + " " + (verb if chinese else "")))
    value = _clean_value(match.group("value"))
    if not value:
        return None
    if slot == "preference":
        negative = _NEGATIVE_VERBS_EN.search(verb) or verb in ("讨厌", "恨", "受不了")
        polarity = "dislikes" if negative else "likes"
        if verb in ("不喜欢", "不爱"):
            polarity, negated = "dislikes", False
        if negated:
            polarity = "dislikes" if polarity == "likes" else "likes"
        return "preference", owner, _short_key(value), polarity, False
    if slot == "dose":
        drug = (match.group("qual") or "").lower()
        if drug and drug not in _NOT_QUALIFIERS and drug not in _DOSE_WORDS:
            qualifier = _short_key(drug)
    return slot, owner, qualifier, value, negated


def _noun_frame(text: str) -> tuple[str, str | None, str | None, str, bool] | None:
    candidates = [(m, False) for m in _NOUN_EN.finditer(text)] + [(m, True) for m in _NOUN_ZH.finditer(text)]
    for match, chinese in sorted(candidates, key=lambda pair: pair[0].start()):
        slot = match.lastgroup or ""
        prefix = re.split(r"[.;!?\n。；！？，,]", text[: match.start()])[-1]
        rest = text[match.end() :]
        link = (_LINK_ZH if chinese else _LINK_EN).match(rest)
        raw_value = rest[link.end() :] if link else rest
        if not link or not link.group(0).strip():
            if not chinese:
                continue  # "my dose" without "is / changed to / :" is not a statement of its value
            if not re.match(r"\s*\d", raw_value):
                continue
        value = _clean_value(raw_value)
        if not value or value.endswith(("?", "？")) or re.match(r"^(?:是|为)?(?:什么|多少|哪|几)", value):
            continue
        owner, qualifier = _owner_zh(prefix) if chinese else _owner_en(prefix)
        denied = re.search(r"\b(?:isn'?t|is\s+not|not)\b", link.group(0) if link else "", re.IGNORECASE)
        negated = bool(denied) or (chinese and raw_value.lstrip().startswith("不是"))
        return slot, owner, qualifier, value, negated
    return None


def _who(who: str | None) -> tuple[str | None, str | None]:
    if not who:
        return None, None
    words = who.split()
    first = words[0].lower()
    if first in _OWNER_WORDS_EN:
        # "my sister lives in" is about the sister, as "my sister's address" is.
        return (normalize_text(" ".join(words[1:])) or _OWNER_WORDS_EN[first]), None
    if who in _OWNER_WORDS_ZH:
        return _OWNER_WORDS_ZH[who], None
    return normalize_text(who), None


def _owner_en(prefix: str) -> tuple[str | None, str | None]:
    words = re.findall(r"[\w'’-]+", prefix)
    qualifier: list[str] = []
    for word in reversed(words[-4:]):
        low = word.lower().replace("’", "'")
        if low in _OWNER_WORDS_EN:
            return _OWNER_WORDS_EN[low], " ".join(reversed(qualifier)) or None
        if low.endswith("'s") and len(low) > 2:
            return normalize_text(low[:-2]), " ".join(reversed(qualifier)) or None
        if low in ("the", "a", "an", "this", "that") or low in _NOT_QUALIFIERS:
            break
        qualifier.append(low)
        if len(qualifier) == 2:
            break
    return None, " ".join(reversed(qualifier)) or None


def _owner_zh(prefix: str) -> tuple[str | None, str | None]:
    if re.search(r"[\u4e00-\u9fff]$", prefix.strip()):
        prefix = re.sub(r"[\sA-Za-z0-9]+$", "", prefix)
    if "的" in prefix[-10:]:
        before, _, after = prefix.rpartition("的")
        qualifier = _ZH_FILLERS.sub("", after).strip() or None
        for pronoun in ("我们", "他们", "她们", "我", "你", "他", "她"):
            if before.endswith(pronoun):
                return _OWNER_WORDS_ZH[pronoun], qualifier
        owner = _ZH_FILLERS.sub("", before[-4:]).strip()
        return (owner or None), qualifier
    tail = _ZH_FILLERS.sub("", prefix[-6:]).strip()
    for pronoun in ("我们", "他们", "她们", "我", "你", "他", "她"):
        if tail.startswith(pronoun):
            return _OWNER_WORDS_ZH[pronoun], (tail[len(pronoun) :] or None)
    return None, (tail[-4:] or None) if re.fullmatch(r"[\u4e00-\u9fff]+", tail or "-") else None


def _clean_value(raw: str) -> str:
    value = _CUT_VALUE.split(raw, maxsplit=1)[0]
    value = re.split(r"[.;!?\n。；！？]", value, maxsplit=1)[0].strip()
    previous = None
    while previous != value:
        previous = value
        value = _TRAILING_EN.sub("", value).strip()
        value = re.sub(r"(?:了|啦|呢|吧|哦)$", "", value).strip()
    return value.strip(" \"'“”‘’")


def _short_key(text: str) -> str | None:
    words = [w for w in normalize_text(text).split() if w not in ("a", "an", "the", "some")]
    return " ".join(words[:3]) or None


def _belief(text: str, slot: str | None) -> str:
    if slot == "preference":
        return "preference"
    if not _EMOTION_NOW.search(text):  # the cheap test first: most texts stop here
        return "fact"
    sentiment = detect_sentiment(text)
    return "emotion" if sentiment is not None and sentiment.label == "emotional" else "fact"
