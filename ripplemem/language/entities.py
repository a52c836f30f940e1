"""Entities without an LLM: names, titles, speakers, dates and quantities found by rules.

English uses capitalised spans and quotes; Chinese uses 《》/『』 titles and jieba's proper-noun
tags (nr person, ns place, nt organisation, nz other) when jieba is installed. Names are
normalised so that "Frank Ocean", "frank ocean" and "FRANK OCEAN" (or 三体 and 《三体》) meet.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass
from typing import Any

_CJK = "\u3400-\u4dbf\u4e00-\u9fff"
_HAS_CJK = re.compile(f"[{_CJK}]")
_SPEAKER = re.compile(r"^\s*([A-Z][\w'’.-]{0,30}(?: [A-Z][\w'’.-]{0,30})?)\s*:\s+\S")
_CAP_WORD = r"(?:[A-Z][a-z'’]+(?:-[A-Z]?[a-z]+)*|[A-Z]{2,}|[A-Z]\.)"
_CAP_SPAN = re.compile(
    rf"\b{_CAP_WORD}(?:\s+(?:of|the|de|von|van|and|&)\s+{_CAP_WORD}"
    rf"|\s+{_CAP_WORD}|\s+\d+)*"
)
_QUOTED = re.compile(
    r'"([^"\n]{2,80})"|“([^”\n]{2,80})”|《([^》\n]{1,40})》'
    r"|『([^』\n]{1,40})』|「([^」\n]{1,40})」"
)
_QUANTITY = re.compile(
    r"\b\d+(?:[.,]\d+)?\s?(?:km|kilometers?|kilometres?|miles?|kg|kilos?|lbs?|pounds?|bpm|mg|ml|"
    r"hours?|minutes?|days?|weeks?|months?|years?|%|percent|dollars?|euros?|°[CF]?)\b"
    r"|\$\d+(?:[.,]\d+)?",
    re.IGNORECASE,
)
_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
_DATE = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}} (?:{_MONTHS}),? \d{{4}}\b|"
    rf"\b(?:{_MONTHS}) \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}}\b"
    rf"|\d{{4}}年\d{{1,2}}月(?:\d{{1,2}}日)?"
)

# Capitalised words that start sentences or fill speech but name nothing.
_NOT_NAMES = frozenset(
    """
i i'm i've i'll i'd me my mine we our you your he she it they them their his her this that these
those there here the a an and but or so if then when where what why how who which while because
also just yes no not oh ah hey hi hello wow thanks thank okay ok sure well great good nice cool
awesome really maybe sorry please congrats congratulations haha lol omg yeah yep nope hmm
any anyway anything everything something nothing everyone someone let let's can could would should
will did do does is are was were be been have has had am its as at by for from in into of on to
with about after before during until since today tomorrow yesterday tonight last next this
monday tuesday wednesday thursday friday saturday sunday january february march april may june july
august september october november december
remember remind reminder note don't dont forget also just so then well oh ah okay ok
""".split()
)
_JIEBA_TAGS = {
    "nr": "person",
    "nrfg": "person",
    "nrt": "person",
    "ns": "place",
    "nt": "organisation",
    "nz": "thing",
}


def has_cjk(text: str) -> bool:
    """True when the text contains Chinese (CJK ideographs)."""
    return _HAS_CJK.search(text) is not None


@dataclass(frozen=True)
class ExtractedEntity:
    """One entity found in a text: its surface name, canonical key and coarse type."""

    name: str
    canonical: str
    type: str


def canonical_name(name: str) -> str:
    """The key two mentions of one entity share: NFKC, lower case, no quotes, brackets or 'the '."""
    text = unicodedata.normalize("NFKC", name).strip()
    text = text.strip("\"'“”‘’《》『』「」()[]{}.,;:!?。，；：！？、 ")
    text = re.sub(r"\s+", " ", text).lower()
    text = re.sub(r"^the ", "", text)
    text = re.sub(r"'s$|’s$", "", text)
    return text


def _capitalised_spans(text: str, speaker_end: int) -> list[str]:
    spans = []
    for match in _CAP_SPAN.finditer(text, speaker_end):
        words = match.group(0).split()
        # Drop filler words at either end ("Hey Caroline" -> "Caroline", "The Beatles" keeps both
        # only when more words follow).
        while words and words[0].lower().strip(".") in _NOT_NAMES:
            words = words[1:]
        while words and words[-1].lower() in _NOT_NAMES:
            words = words[:-1]
        if not words:
            continue
        span = " ".join(words)
        if len(span) < 2 or span.isdigit():
            continue
        spans.append(span)
    return spans


class _Jieba:
    """jieba's part-of-speech tagger, imported and initialised once, only for Chinese text."""

    _lock = threading.Lock()
    _posseg: Any = None
    _missing = False

    @classmethod
    def tagger(cls) -> Any:
        if cls._posseg is None and not cls._missing:
            with cls._lock:
                if cls._posseg is None and not cls._missing:
                    try:
                        import jieba
                        import jieba.posseg as posseg

                        jieba.setLogLevel(60)
                        cls._posseg = posseg
                    except ImportError:
                        cls._missing = True
        return cls._posseg


def _chinese_entities(text: str) -> list[tuple[str, str]]:
    posseg = _Jieba.tagger()
    if posseg is None:
        return []
    found = []
    for word, flag in posseg.lcut(text):
        kind = _JIEBA_TAGS.get(flag)
        if kind and len(word) >= 2:
            found.append((word, kind))
    return found


def extract_entities(text: str) -> list[ExtractedEntity]:
    """Entities named in a text, deduplicated by canonical name, in order of first mention."""
    found: dict[str, ExtractedEntity] = {}

    def keep(name: str, kind: str) -> None:
        key = canonical_name(name)
        if key and key not in _NOT_NAMES and key not in found:
            found[key] = ExtractedEntity(name=name.strip(), canonical=key, type=kind)

    speaker = _SPEAKER.match(text)
    speaker_end = 0
    if speaker:
        keep(speaker.group(1), "person")
        speaker_end = speaker.end(1) + 1
    for match in _QUOTED.finditer(text):
        keep(next(g for g in match.groups() if g), "title")
    for match in _DATE.finditer(text):
        keep(match.group(0), "date")
    for match in _QUANTITY.finditer(text):
        keep(match.group(0), "quantity")
    for span in _capitalised_spans(text, speaker_end):
        keep(span, "name")
    if _HAS_CJK.search(text):
        for word, kind in _chinese_entities(text):
            keep(word, kind)
    return list(found.values())


def query_entity_keys(text: str) -> list[str]:
    """Canonical names a query may refer to: its entities plus each word of multi-word names."""
    keys: list[str] = []
    for entity in extract_entities(text):
        keys.append(entity.canonical)
        if " " in entity.canonical:
            keys.extend(part for part in entity.canonical.split() if part not in _NOT_NAMES)
    return list(dict.fromkeys(keys))
