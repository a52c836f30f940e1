"""When a working-memory item becomes long-term memory, and which kind (seed 000 §3; seed 001).

`decide_consolidation` is seed 000 §3's decision matrix as a pure function, checked in the seed's
order:

1. an explicit request ("remember this", 记住, `remember=True`) -> episodic, immediately;
2. mentioned >= 3 times -> semantic (a fact the user keeps coming back to);
3. related to existing knowledge (its entities overlap known ones) -> +0.3;
4. urgent / important / emotional (rule-based cues, English and Chinese) -> episodic,
   immediately, with high importance;
5. in working memory for more than an hour -> +0.2;

and otherwise consolidates when the score reaches 0.5 (semantic above 0.6, else episodic). With
the seed's weights only rules 3 and 5 reach the final sum, so it is 0, 0.2, 0.3 or 0.5: an old item
about known things becomes episodic. `promotion_target` is seed 001's simpler rule (working ->
episodic at importance >= 0.7, episodic -> semantic at >= 0.8). `cluster_related` groups episodic
memories about one thing, and `summarize_cluster` asks a chat model for the fact they share
(seed 000 §2: many runs -> "the user runs three times a week").
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.lifecycle._common import (
    as_float_array,
    as_ids,
    aware,
    check_chat_model,
    reply_text,
    unfence,
)
from ripplemem.lifecycle.settings import DEFAULT_SETTINGS, LifecycleSettings
from ripplemem.text import estimate_tokens

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

logger = logging.getLogger("ripplemem.lifecycle")

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
    re.IGNORECASE)
_REMEMBER_ZH = re.compile(r"(?<![还我他她])记住(?!了?吗|没有)|(?:请|要|一定|务必)记得|记得要|别忘|不要忘"
                          r"|记一下|记下|帮我记|备忘|记好")
_REMEMBER_QUESTION_ZH = re.compile(r"(?:还|你)记得.*[吗？?]|记住了吗")

# Negated importance ("not important", "no rush", 不重要, 别担心) is removed before cue matching.
_NEGATED = re.compile(
    r"\b(?:not|isn'?t|wasn'?t|aren'?t|nothing|no|never)\s+(?:\w+\s+)?"
    r"(?:important|urgent|crucial|critical|serious|worried|a\s+big\s+deal)\b"
    r"|\bunimportant\b|\bno\s+(?:rush|hurry)\b|\bdon'?t\s+(?:worry|panic)\b"
    r"|(?:不|没|并不|不是很|不太|没那么|没有那么)(?:重要|紧急|急|着急|要紧|担心|难过|生气)"
    r"|(?:别|不用|不必)(?:担心|着急|急|难过|生气|害怕)",
    re.IGNORECASE)
_SENTIMENT_CUES: dict[str, re.Pattern[str]] = {
    "urgent": re.compile(
        r"\burgent(?:ly)?\b|\basap\b|\bemergency\b|\bimmediately\b|\bright\s+away\b"
        r"|\bas\s+soon\s+as\s+possible\b|\bhurry\b|\btime[- ]sensitive\b"
        r"|\bdeadline\s+is\s+(?:today|tomorrow|tonight)\b"
        r"|紧急|急事|很急|着急|马上|立刻|立即|尽快|赶紧|火速|刻不容缓|十万火急|急诊",
        re.IGNORECASE),
    "important": re.compile(
        r"\bimportant\b|\bcrucial\b|\bcritical\b|\bessential\b|\bvital\b|\bmust\s+not\b|\bmustn'?t\b"
        r"|\bnever\s+(?:give|let|eat|take)\b|\ballergic\b|\ballergy\b|\bdiagnosed\b|\blife[- ]threatening\b"
        r"|重要|关键|千万|务必|一定要|必须|过敏|确诊|要命",
        re.IGNORECASE),
    "emotional": re.compile(
        r"\b(?:love|loved|hate|hated|scared|afraid|terrified|anxious|worried|nervous|sad|depressed"
        r"|heartbroken|devastated|upset|angry|furious|frustrated|excited|thrilled|overjoyed|ecstatic"
        r"|so\s+happy|cried|crying|tears|grief|grieving|lonely|miserable|proud|ashamed|embarrassed"
        r"|passed\s+away|died|broke\s+up|divorced?|panic(?:ked)?)\b"
        r"|开心|高兴|激动|兴奋|难过|伤心|悲伤|害怕|担心|焦虑|紧张|生气|愤怒|哭|崩溃|失望|沮丧|孤独|感动"
        r"|委屈|心碎|去世|分手|离婚|抑郁|绝望|幸福",
        re.IGNORECASE),
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


# --- The seed 000 §3 decision -------------------------------------------------------------------

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

    `known_entities` are canonical names (`ripplemem.extraction.canonical_name`) already in the
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
    target: str | None
    importance: float
    score: float
    reasons: tuple[str, ...]

    @property
    def consolidates(self) -> bool:
        """True when the item should become long-term memory."""
        return self.action != "keep"


def decide_consolidation(item: ConsolidationCandidate, context: ConsolidationContext,
                         settings: LifecycleSettings = DEFAULT_SETTINGS) -> ConsolidationDecision:
    """Seed 000 §3: consolidate a working item now, later or not at all, and into which type."""
    s = settings
    now = aware(context.now, "context.now")
    importance = float(item.importance)
    reasons: list[str] = []
    score = 0.0

    cue = remember_cue(item.text)
    if item.remember or cue:
        why = f"explicit request to remember ({cue!r})" if cue else "explicit request to remember"
        return ConsolidationDecision("immediate", "episodic", max(importance, s.signal_importance),
                                     s.explicit_score, (why,))

    if item.mention_count >= s.mention_threshold:
        score += s.mention_score
        reasons.append(f"mentioned {item.mention_count} times (>= {s.mention_threshold}, "
                       f"+{s.mention_score:g})")
        return ConsolidationDecision("consolidate", "semantic", importance, round(score, 6),
                                     tuple(reasons))

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
        return ConsolidationDecision("immediate", "episodic", max(importance, s.signal_importance),
                                     round(score, 6), tuple(reasons))

    age_minutes = (now - aware(item.created_at, "item.created_at")).total_seconds() / 60
    if age_minutes > s.age_threshold_minutes:
        score += s.age_score
        reasons.append(f"in working memory for {age_minutes:.0f} min "
                       f"(> {s.age_threshold_minutes:g}, +{s.age_score:g})")

    score = round(score, 6)
    if score >= s.consolidate_threshold:
        target = "semantic" if score > s.semantic_threshold else "episodic"
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


# --- Seed 001 promotion -------------------------------------------------------------------------

def promotion_target(memory_type: str, importance: float,
                     settings: LifecycleSettings = DEFAULT_SETTINGS) -> str | None:
    """Seed 001: working -> episodic at importance >= 0.7, episodic -> semantic at >= 0.8, else None."""
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


def plan_promotions(ids: Sequence[Any], types: Sequence[str], importance: Any,
                    settings: LifecycleSettings = DEFAULT_SETTINGS) -> list[Promotion]:
    """Seed 001 promotions over many memories at once; memories that stay put are left out."""
    id_list = as_ids(ids)
    type_array = np.asarray(list(types), dtype=object)
    if len(type_array) != len(id_list):
        raise InvalidInputError(f"types has {len(type_array)} values, expected {len(id_list)}")
    values = as_float_array(importance, "importance", len(id_list))
    to_episodic = (type_array == "working") & (values >= settings.promote_working_to_episodic)
    to_semantic = (type_array == "episodic") & (values >= settings.promote_episodic_to_semantic)
    planned: list[Promotion] = []
    for index in np.flatnonzero(to_episodic | to_semantic):
        source, target, bar = (("working", "episodic", settings.promote_working_to_episodic)
                               if to_episodic[index] else
                               ("episodic", "semantic", settings.promote_episodic_to_semantic))
        planned.append(Promotion(id_list[index], source, target,
                                 f"importance {values[index]:.2f} >= {bar:g} (seed 001)"))
    return planned


# --- Clusters of related episodic memories ------------------------------------------------------

@dataclass(frozen=True)
class MemoryCluster:
    """Memories about one thing, in input order, and the entities at least two of them share."""

    ids: tuple[Any, ...]
    shared_entities: tuple[str, ...]


def cluster_related(ids: Sequence[Any], *, entities: Sequence[Iterable[str]] | None = None,
                    embeddings: Any = None, ignore_entities: Collection[str] = (),
                    settings: LifecycleSettings = DEFAULT_SETTINGS) -> list[MemoryCluster]:
    """Groups of at least `cluster_min_size` memories linked by a shared entity or similar embeddings.

    Two memories are linked when they share an entity key (canonical name) or their embeddings
    have cosine similarity >= `cluster_similarity`; groups are the connected components. Entities
    in `ignore_entities`, or in more than `cluster_common_entity_fraction` of the memories (and
    more than `cluster_min_size` of them), link nothing: the user's own name would chain
    everything. Biggest clusters first.
    """
    id_list = as_ids(ids)
    n = len(id_list)
    parent = np.arange(n)

    def find(i: int) -> int:
        root = i
        while parent[root] != root:
            root = parent[root]
        while parent[i] != root:
            parent[i], i = root, parent[i]
        return int(root)

    def union(i: int, j: int) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    entity_sets: list[set[str]] = [set() for _ in range(n)]
    if entities is not None:
        if len(entities) != n:
            raise InvalidInputError(f"entities has {len(entities)} rows, expected {n}")
        ignored = set(ignore_entities)
        raw = [set(row) - ignored for row in entities]
        frequency = Counter(key for row in raw for key in row)
        too_common = {key for key, count in frequency.items()
                      if count > settings.cluster_common_entity_fraction * n
                      and count > settings.cluster_min_size}
        first_holder: dict[str, int] = {}
        for index, row in enumerate(raw):
            entity_sets[index] = row - too_common
            for key in entity_sets[index]:
                if key in first_holder:
                    union(first_holder[key], index)
                else:
                    first_holder[key] = index
    if embeddings is not None:
        for i, j in _similar_pairs(embeddings, n, settings.cluster_similarity):
            union(i, j)

    groups: dict[int, list[int]] = {}
    for index in range(n):
        groups.setdefault(find(index), []).append(index)
    clusters = []
    for members in groups.values():
        if len(members) < settings.cluster_min_size:
            continue
        counts = Counter(key for index in members for key in entity_sets[index])
        shared = tuple(key for key, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
                       if count >= 2)
        clusters.append((members, MemoryCluster(tuple(id_list[i] for i in members), shared)))
    clusters.sort(key=lambda pair: (-len(pair[0]), pair[0][0]))
    return [cluster for _, cluster in clusters]


def _similar_pairs(embeddings: Any, n: int, threshold: float, block: int = 1024) -> list[tuple[int, int]]:
    raw = np.asarray(embeddings, dtype=np.float32)
    if raw.ndim != 2 or raw.shape[0] != n:
        raise InvalidInputError(f"embeddings must have shape ({n}, dim), got {raw.shape}")
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    matrix = (raw / np.where(norms == 0, 1, norms)).astype(np.float32)
    pairs: list[tuple[int, int]] = []
    for start in range(0, n, block):
        sims = matrix[start:start + block] @ matrix.T
        rows, cols = np.nonzero(sims >= threshold)
        keep = cols > rows + start
        pairs.extend(zip((rows[keep] + start).tolist(), cols[keep].tolist(), strict=True))
    return pairs


# --- Summaries of clusters with a chat model ----------------------------------------------------

SUMMARY_PROMPT = """\
Below are separate memories of one user, oldest first. State in one short sentence the general, \
lasting fact they support together (a habit, preference, relationship or recurring plan), e.g. \
"The user goes running about three times a week." Write it in the language of the memories. \
Reply with only that sentence. If they support no general fact, reply exactly NONE.\
"""
_NO_SUMMARY = {"none", "null", "n/a", "na", "no", "nothing", "无", "没有", "无。", "none."}
_LABEL = re.compile(r"^\s*(?:[-*•]\s*)?(?:\*\*)?(?:summary|fact|answer|result|总结|摘要|结论|事实)"
                    r"(?:\*\*)?\s*[:：]\s*", re.IGNORECASE)
_REFUSAL = re.compile(r"^(?:i'?m sorry|sorry|i cannot|i can'?t|as an ai|抱歉|对不起|我无法|作为一个?AI)",
                      re.IGNORECASE)


def _summary_messages(texts: Sequence[str], settings: LifecycleSettings) -> list[Any]:
    from langchain_core.messages import HumanMessage, SystemMessage

    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise InvalidTypeError(f"texts must be a list of strings, got {type(texts).__name__}")
    lines: list[str] = []
    used = 0
    for index, text in enumerate(texts[: settings.summary_max_texts]):
        if not isinstance(text, str):
            raise InvalidTypeError(f"texts[{index}] must be a string, got {type(text).__name__}")
        line = f"{len(lines) + 1}. {' '.join(text.split())}"
        cost = estimate_tokens(line)
        if lines and used + cost > settings.summary_max_tokens_in:
            break
        lines.append(line)
        used += cost
    return [SystemMessage(SUMMARY_PROMPT), HumanMessage("Memories:\n" + "\n".join(lines))]


def parse_summary(reply: Any, settings: LifecycleSettings = DEFAULT_SETTINGS) -> str | None:
    """The one-sentence summary in a chat model reply, or None if the reply is not a usable summary."""
    text = reply_text(reply)
    if not text:
        return None
    text = unfence(text)
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return None
        value = data.get("summary") or data.get("fact") if isinstance(data, dict) else None
        if not isinstance(value, str):
            return None
        text = value
    lines = [_LABEL.sub("", line).strip() for line in text.splitlines()]
    text = " ".join(line.lstrip("-*• ").strip() for line in lines if line.strip())
    text = text.strip().strip('"“”\'「」').strip()
    if not text or text.lower().rstrip(".。") in _NO_SUMMARY or _REFUSAL.match(text):
        return None
    if len(text) > settings.summary_max_chars or text.startswith(("{", "[")):
        return None
    return text


def summarize_cluster(llm: BaseChatModel, texts: Sequence[str], *,
                      settings: LifecycleSettings = DEFAULT_SETTINGS) -> str | None:
    """The general fact a group of memories supports, from a chat model; None when there is none.

    Never raises for what the model does: a failed call, junk, a refusal, JSON without a summary
    or "NONE" all give None (and a warning for failures). Texts beyond `summary_max_texts` or the
    `summary_max_tokens_in` budget are left out of the prompt.
    """
    check_chat_model(llm, "summarize_cluster")
    if not [text for text in texts if isinstance(text, str) and text.strip()]:
        return None
    messages = _summary_messages(texts, settings)
    try:
        reply = llm.invoke(messages)
    except Exception as exc:  # any model or network failure
        logger.warning("cluster summary failed: %s: %s", type(exc).__name__, exc)
        return None
    return parse_summary(reply, settings)


async def asummarize_cluster(llm: BaseChatModel, texts: Sequence[str], *,
                             settings: LifecycleSettings = DEFAULT_SETTINGS) -> str | None:
    """Async summarize_cluster: the same answer without blocking the event loop."""
    check_chat_model(llm, "asummarize_cluster")
    if not [text for text in texts if isinstance(text, str) and text.strip()]:
        return None
    messages = _summary_messages(texts, settings)
    try:
        reply = await llm.ainvoke(messages)
    except Exception as exc:  # any model or network failure
        logger.warning("cluster summary failed: %s: %s", type(exc).__name__, exc)
        return None
    return parse_summary(reply, settings)
