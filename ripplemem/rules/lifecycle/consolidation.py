"""When a working-memory item becomes long-term memory, and which kind
(docs/design-notes.md#consolidation).

`decide_consolidation` is the consolidation decision matrix as a pure function, checked in its
source's order:

1. an explicit request ("remember this", 记住, `remember=True`) -> episodic, immediately;
2. mentioned >= 3 times -> semantic (a fact the user keeps coming back to);
3. related to existing knowledge (its entities overlap known ones) -> +0.3;
4. urgent / important / emotional (rule-based cues, English and Chinese) -> episodic,
   immediately, with high importance;
5. in working memory for more than an hour -> +0.2;

and otherwise consolidates when the score reaches 0.5 (semantic above 0.6, else episodic). With
the source's weights only rules 3 and 5 reach the final sum, so it is 0, 0.2, 0.3 or 0.5: an old item
about known things becomes episodic. `promotion_target` is the simpler promotion rule (working ->
episodic at importance >= 0.7, episodic -> semantic at >= 0.8). Grouping related episodic
memories and summarising them is in `clusters`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from ripplemem.core.choices import MemoryTypeName
from ripplemem.core.clock import aware
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.rules.lifecycle._common import as_float_array, as_ids
from ripplemem.rules.lifecycle.settings import DEFAULT_SETTINGS, LifecycleSettings

# --- Cues ---------------------------------------------------------------------------------------

# "remember" only as a request: after can you / I want you to (polite requests may end in "?"), or
# at the start of a clause or after please when no question follows; "do you remember",
# "I remember", "remember when" are recollections, not requests.
_REMEMBER_EN = re.compile(
    r"\b(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|i\s+(?:want|need)\s+you\s+to\s+"
    r"|try\s+to\s+|make\s+sure\s+(?:you\s+|to\s+)*)(?:remember|memori[sz]e)\b"
    r"|(?:^|[.!?;:,\n]\s*|\b(?:please|pls|plz|and|also|just|so|ok|okay|hey|now)\s+)"
    r"(?:remember|memori[sz]e)\b(?!\s+when\b)(?![^.!?\n]*\?)"
    r"|\b(?:don'?t|do\s+not|dont)\s+forget\b"
    r"|\b(?:note|jot|write)\s+(?:that|this|it)?\s*down\b|\bnote\s+that\b|\b(?:make|take)\s+(?:a\s+)?note\b"
    r"|\bkeep\s+(?:that|this|it)?\s*in\s+mind\b|\bfor\s+(?:future\s+)?reference\b|\bfor\s+the\s+record\b"
    r"|\bsave\s+(?:this|that|it)\s+(?:to|in)\s+(?:your\s+)?memory\b",
    re.IGNORECASE,
)
_REMEMBER_ZH = re.compile(
    r"(?<![还我他她])记住(?!了?吗|没有)|(?:请|要|一定|务必)记得|记得要|别忘|不要忘"
    r"|记一下|记下|帮我记|备忘|记好"
)
_REMEMBER_QUESTION_ZH = re.compile(r"(?:还|你)记得.*[吗？?]|记住了吗")

# Negated importance ("not important", "no rush", 不重要, 别担心) is removed before cue matching.
_NEGATED = re.compile(
    r"\b(?:not|isn'?t|wasn'?t|aren'?t|nothing|no|never)\s+(?:\w+\s+)?"
    r"(?:important|urgent|crucial|critical|serious|worried|a\s+big\s+deal)\b"
    r"|\bunimportant\b|\bno\s+(?:rush|hurry)\b|\bdon'?t\s+(?:worry|panic)\b"
    r"|(?:不|没|并不|不是很|不太|没那么|没有那么)(?:重要|紧急|急|着急|要紧|担心|难过|生气)"
    r"|(?:别|不用|不必)(?:担心|着急|急|难过|生气|害怕)",
    re.IGNORECASE,
)
_SENTIMENT_CUES: dict[str, re.Pattern[str]] = {
    "urgent": re.compile(
        r"\burgent(?:ly)?\b|\basap\b|\bemergency\b|\bimmediately\b|\bright\s+away\b"
        r"|\bas\s+soon\s+as\s+possible\b|\bhurry\b|\btime[- ]sensitive\b"
        r"|\bdeadline\s+is\s+(?:today|tomorrow|tonight)\b"
        r"|紧急|急事|很急|着急|马上|立刻|立即|尽快|赶紧|火速|刻不容缓|十万火急|急诊",
        re.IGNORECASE,
    ),
    "important": re.compile(
        r"\bimportant\b|\bcrucial\b|\bcritical\b|\bessential\b|\bvital\b|\bmust\s+not\b|\bmustn'?t\b"
        r"|\bnever\s+(?:give|let|eat|take)\b|\ballergic\b|\ballergy\b|\bdiagnosed\b|\blife[- ]threatening\b"
        r"|重要|关键|千万|务必|一定要|必须|过敏|确诊|要命",
        re.IGNORECASE,
    ),
    "emotional": re.compile(
        r"\b(?:love|loved|hate|hated|scared|afraid|terrified|anxious|worried|nervous|sad|depressed"
        r"|heartbroken|devastated|upset|angry|furious|frustrated|excited|thrilled|overjoyed|ecstatic"
        r"|so\s+happy|cried|crying|tears|grief|grieving|lonely|miserable|proud|ashamed|embarrassed"
        r"|passed\s+away|died|broke\s+up|divorced?|panic(?:ked)?)\b"
        r"|开心|高兴|激动|兴奋|难过|伤心|悲伤|害怕|担心|焦虑|紧张|生气|愤怒|哭|崩溃|失望|沮丧|孤独|感动"
        r"|委屈|心碎|去世|分手|离婚|抑郁|绝望|幸福",
        re.IGNORECASE,
    ),
}
SENTIMENT_LABELS: tuple[str, ...] = tuple(_SENTIMENT_CUES)


def remember_cue(text: str) -> str | None:
    """The words of an explicit request to remember in a text ("remember", 别忘了 ...), else None."""
    if not isinstance(text, str):
        raise InvalidTypeError(f"text must be a string, got {type(text).__name__}")
    match = _REMEMBER_EN.search(text)
    if match:
        return match.group(0).strip(" .!?;:,\n")
    if _REMEMBER_QUESTION_ZH.search(text):
        return None
    match = _REMEMBER_ZH.search(text)
    return match.group(0) if match else None


@dataclass(frozen=True)
class SentimentCue:
    """A sentiment mark found by rules: urgent, important or emotional, and the words that showed it."""

    label: str
    cue: str


def detect_sentiment(text: str) -> SentimentCue | None:
    """The first of urgent / important / emotional whose cue appears un-negated in text, else None."""
    if not isinstance(text, str):
        raise InvalidTypeError(f"text must be a string, got {type(text).__name__}")
    cleaned = _NEGATED.sub(" ", text)
    for label, pattern in _SENTIMENT_CUES.items():
        match = pattern.search(cleaned)
        if match:
            return SentimentCue(label, match.group(0))
    return None


# --- The consolidation decision matrix -----------------------------------------------------------


class ConsolidationCandidate(Protocol):
    """What the decision reads from a working item (WorkingItem has all of it)."""

    @property
    def text(self) -> str: ...  # noqa: D102
    @property
    def importance(self) -> float: ...  # noqa: D102
    @property
    def mention_count(self) -> int: ...  # noqa: D102
    @property
    def created_at(self) -> datetime: ...  # noqa: D102
    @property
    def entities(self) -> tuple[str, ...]: ...  # noqa: D102
    @property
    def remember(self) -> bool: ...  # noqa: D102


@dataclass(frozen=True)
class ConsolidationContext:
    """What the decision needs beyond the item: now, and the entities long-term memory knows.

    `known_entities` are canonical names (`ripplemem.language.entities.canonical_name`) already in the
    user's long-term memory; `sentiment` overrides the rule-based cues (e.g. an LLM's label:
    "urgent", "important", "emotional", or "" for none).
    """

    now: datetime
    known_entities: Collection[str] = frozenset()
    sentiment: str | None = None


@dataclass(frozen=True)
class ConsolidationDecision:
    """Whether and where a working item goes: action, target type, importance, score and why.

    action is "immediate" (explicit request or sentiment: write it now), "consolidate" (the
    score or mention rule says so) or "keep" (stay in working memory); target is "episodic",
    "semantic" or None for keep.
    """

    action: str
    target: MemoryTypeName | None
    importance: float
    score: float
    reasons: tuple[str, ...]

    @property
    def consolidates(self) -> bool:
        """True when the item should become long-term memory."""
        return self.action != "keep"


def decide_consolidation(
    item: ConsolidationCandidate,
    context: ConsolidationContext,
    settings: LifecycleSettings = DEFAULT_SETTINGS,
) -> ConsolidationDecision:
    """Consolidate a working item now, later or not at all, and into which type."""
    s = settings
    now = aware(context.now, "context.now")
    importance = float(item.importance)
    reasons: list[str] = []
    score = 0.0

    cue = remember_cue(item.text)
    if item.remember or cue:
        why = f"explicit request to remember ({cue!r})" if cue else "explicit request to remember"
        return ConsolidationDecision(
            "immediate", "episodic", max(importance, s.signal_importance), s.explicit_score, (why,)
        )

    if item.mention_count >= s.mention_threshold:
        score += s.mention_score
        reasons.append(
            f"mentioned {item.mention_count} times (>= {s.mention_threshold}, +{s.mention_score:g})"
        )
        return ConsolidationDecision("consolidate", "semantic", importance, round(score, 6), tuple(reasons))

    known = set(context.known_entities)
    overlap = [entity for entity in item.entities if entity in known]
    if overlap:
        score += s.related_knowledge_score
        reasons.append(f"related to known {', '.join(overlap[:5])} (+{s.related_knowledge_score:g})")

    sentiment = _sentiment(item.text, context.sentiment)
    if sentiment is not None:
        score += s.sentiment_score
        label = f"{sentiment.label} ({sentiment.cue!r})" if sentiment.cue else sentiment.label
        reasons.append(f"{label} (+{s.sentiment_score:g})")
        return ConsolidationDecision(
            "immediate", "episodic", max(importance, s.signal_importance), round(score, 6), tuple(reasons)
        )

    age_minutes = (now - aware(item.created_at, "item.created_at")).total_seconds() / 60
    if age_minutes > s.age_threshold_minutes:
        score += s.age_score
        reasons.append(
            f"in working memory for {age_minutes:.0f} min (> {s.age_threshold_minutes:g}, +{s.age_score:g})"
        )

    score = round(score, 6)
    if score >= s.consolidate_threshold:
        target: MemoryTypeName = "semantic" if score > s.semantic_threshold else "episodic"
        reasons.append(f"score {score:g} >= {s.consolidate_threshold:g}")
        return ConsolidationDecision("consolidate", target, importance, score, tuple(reasons))
    reasons.append(f"score {score:g} < {s.consolidate_threshold:g}")
    return ConsolidationDecision("keep", None, importance, score, tuple(reasons))


def _sentiment(text: str, override: str | None) -> SentimentCue | None:
    if override is None:
        return detect_sentiment(text)
    if override == "":
        return None
    if override not in SENTIMENT_LABELS:
        raise InvalidInputError(f"sentiment must be one of {SENTIMENT_LABELS} or '', got {override!r}")
    return SentimentCue(override, "")


# --- Promotion ---------------------------------------------------------------------------------


def promotion_target(
    memory_type: str, importance: float, settings: LifecycleSettings = DEFAULT_SETTINGS
) -> str | None:
    """Working -> episodic at importance >= 0.7, episodic -> semantic at >= 0.8, else None."""
    if memory_type == "working" and importance >= settings.promote_working_to_episodic:
        return "episodic"
    if memory_type == "episodic" and importance >= settings.promote_episodic_to_semantic:
        return "semantic"
    return None


@dataclass(frozen=True)
class Promotion:
    """One planned promotion: memory id, from and to type, and why."""

    id: Any
    from_type: str
    to_type: str
    reason: str


def plan_promotions(
    ids: Sequence[Any], types: Sequence[str], importance: Any, settings: LifecycleSettings = DEFAULT_SETTINGS
) -> list[Promotion]:
    """Promotions over many memories at once; memories that stay put are left out."""
    id_list = as_ids(ids)
    type_array = np.asarray(list(types), dtype=object)
    if len(type_array) != len(id_list):
        raise InvalidInputError(f"types has {len(type_array)} values, expected {len(id_list)}")
    values = as_float_array(importance, "importance", len(id_list))
    to_episodic = (type_array == "working") & (values >= settings.promote_working_to_episodic)
    to_semantic = (type_array == "episodic") & (values >= settings.promote_episodic_to_semantic)
    planned: list[Promotion] = []
    for index in np.flatnonzero(to_episodic | to_semantic):
        source, target, bar = (
            ("working", "episodic", settings.promote_working_to_episodic)
            if to_episodic[index]
            else ("episodic", "semantic", settings.promote_episodic_to_semantic)
        )
        planned.append(
            Promotion(
                id_list[index], source, target, f"importance {values[index]:.2f} >= {bar:g} (promotion rule)"
            )
        )
    return planned
