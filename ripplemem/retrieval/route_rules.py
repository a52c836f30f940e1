"""Route a query to the user's memories, to the documents, or to both (docs/design-notes.md#routing).

`classify_query` reads four signals from the wording, in English and Chinese: a personal
reference (I, my, "you told me", 我的, 我们), a relative time (yesterday, two months ago, 上周,
三个月前), a named entity, and a factual form ("what is X", "who wrote", 什么是, 是谁). The routing
source's decision tree turns them into a label: personal -> memory first; entity + factual -> documents
first; temporal -> memory first; otherwise both. `route` then weighs what is stored: no documents
or no memories settle it, and a sparse memory (few memories) is topped up from the documents.
`route_llm.LLMRouter` asks a chat model for the same signals and falls back to these rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ripplemem.core.choices import RouteTarget, literal_values
from ripplemem.core.validation import check_count, check_nonblank_text
from ripplemem.errors import InvalidInputError, InvalidTypeError

__all__ = [
    "QUERY_LABELS",
    "ROUTE_TARGETS",
    "SPARSE_MEMORY_BELOW",
    "QueryClass",
    "RouteDecision",
    "Router",
    "RuleRouter",
    "check_route",
    "classify_query",
    "decide",
    "route",
]

ROUTE_TARGETS = literal_values(RouteTarget)
QUERY_LABELS = ("memory_primary", "documents_primary", "hybrid")
# Below this many memories a user's memory is "sparse" and memory-first queries also search the
# documents. Not from the routing source (it only says "context richness high / low"): about a
# week of light use, past which personal answers are usually in memory.
SPARSE_MEMORY_BELOW = 20

_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday"
_NOT_NAMES = frozenset(
    f"""
i i'm i've i'll i'd a an the and or but if of at by for with to in on my me we our you your what who
when where why how which is are was were do does did can could should would will tell please ok
{_MONTHS} {_WEEKDAYS}
""".split()
)

# -- personal references ---------------------------------------------------------------------------
# Request idioms and how-to frames name the asker without referring to their own life:
# "tell me about X", "how do I configure Y", 告诉我什么是X, 我该如何配置Y. They are removed before
# pronouns are looked for; other pronouns in the query still count ("how do I fix MY printer").
_EN_IDIOMS = re.compile(
    r"\b(?:tell|show|give|explain to|help|let|teach|find|get)\s+me\b"
    r"|\b(?:how|where|what|when|why|which)\s+(?:do|can|could|should|would|might|must|may)\s+(?:i|we)\b"
    r"|^\s*(?:can|could|should|may|must)\s+(?:i|we)\b",
    re.IGNORECASE,
)
_ZH_IDIOMS = re.compile(
    r"(?:请|麻烦)?(?:告诉|给|帮|替|为|教|跟|向)我(?![们的])"
    r"(?:讲讲|讲|说说|解释一下|解释|介绍一下|介绍|查一下|查查|查|找找|找|看看|推荐)?"
    r"|我(?:该|应该|应当|要|需要|得|能)?(?:如何|怎么|怎样)"
)
_PERSONAL_STRONG = re.compile(
    r"\b(?:my|mine|myself|our|ours|ourselves)\b|我的|我们|咱们|自己的", re.IGNORECASE
)
_PERSONAL_WEAK = re.compile(
    r"\b(?:me|we|i'm|i've|i'd|i'll)\b"
    r"|\bi\b(?!/o|\.e\.)(?<!\bwar i)(?<!\bpart i)(?<!\bchapter i)(?<!\bphase i)(?<!\btype i)(?<!\bclass i)"
    r"|(?<![自忘唯本])我(?![国军省市校院司厂方])|咱|俺",
    re.IGNORECASE,
)
_PERSONAL_US = re.compile(r"\bus\b")  # case-sensitive: "US" is a country
_CONVERSATION = re.compile(
    r"\byou\s+(?:once\s+|earlier\s+|previously\s+)?(?:said|told|mentioned|suggested|recommended|promised|"
    r"asked|reminded|noted|wrote|gave)\b"
    r"|\b(?:remind me|do you remember|did we|last time we|our (?:conversation|chat|discussion|talk))\b"
    r"|你(?:之前|上次|刚才|以前)?(?:说过|提过|提到过?|告诉过|建议过?|推荐过?|讲过|答应过?)"
    r"|(?:之前|上次|以前)(?:说|提|聊|讨论|谈)过?|还记得|记不记得|记得.{0,20}吗",
    re.IGNORECASE,
)

# -- relative time -----------------------------------------------------------------------------------
_EN_NUMBER = (
    r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|a few|few|several|a couple of|couple of)"
)
_TEMPORAL = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|recently|lately|earlier today|the other day|"
    r"this (?:morning|afternoon|evening|week|weekend|month|year)|"
    rf"(?:last|next|past) (?:night|week|weekend|month|year|time|spring|summer|autumn|fall|winter|"
    rf"{_WEEKDAYS.replace(' ', '|')}|few (?:days|weeks|months|years)|couple of (?:days|weeks|months))|"
    rf"{_EN_NUMBER}\s+(?:minutes?|hours?|days?|weeks?|months?|years?)\s+ago|ago|"
    r"in the (?:past|last) (?:\d+ |few |couple of )?(?:days?|weeks?|months?|years?))\b"
    r"|昨天|昨晚|昨日|前天|今天|今早|今晚|今日|明天|后天|刚才|刚刚|最近|近期|近来|上周|上星期|上个?礼拜|上个?月"
    r"|去年|前年|今年|这周|本周|这个?星期|这个月|本月|下周|下个?月|上次|前几天|这几天"
    r"|(?:[一二两三四五六七八九十几半\d]+|数|好几)个?多?(?:分钟|小时|天|日|周|星期|礼拜|月|年)(?:之前|以前|前)"
    r"|周[一二三四五六日]|星期[一二三四五六日天]|礼拜[一二三四五六日天]",
    re.IGNORECASE,
)

# -- factual forms -------------------------------------------------------------------------------------
_FACTUAL = re.compile(
    r"\b(?:what|which)\s+(?:is|are|was|were)\b|\bwhat's\b|\b(?:in\s+)?(?:what|which)\s+year\b"
    r"|\bwho\s+(?:is|are|was|were|wrote|invented|founded|discovered|created|directed|painted|composed|"
    r"designed|developed|built|owns|runs|leads|won|made|started)\b"
    r"|\bwhen\s+(?:was|were|did|is)\b.*\b(?:born|founded|built|invented|released|published|written|created|"
    r"die|died|start|started|end|ended|happen|established|discovered|launched)\b"
    r"|\bwhere\s+(?:is|are|was|were)\b|\bhow\s+(?:does|do|did|is|are)\b.*\bwork\b"
    r"|\bhow\s+(?:many|much|long|old|tall|big|far|to)\b|\bhow\s+(?:do|can|should)\s+(?:i|you|we|one)\b"
    r"|^\s*(?:define|explain|describe|summari[sz]e|compare|list)\b"
    r"|\b(?:definition|meaning|capital|author) of\b"
    r"|\bwhat does\b.*\b(?:mean|stand for|do)\b|\bdifferences? between\b|\btell me about\b"
    r"|什么是|是什么|是谁|谁(?:写|发明|提出|创立|创建|发现|导演|设计|开发|建立|创作|主演)|由谁|哪一?年|在哪|哪里|哪儿"
    r"|多少|如何|怎么|怎样|为什么|为何|介绍一下|定义|含义|意思|原理|区别|有什么不同|是指|讲了什么|讲的是什么"
    r"|是关于什么|作者|首都|总结|概括|摘要",
    re.IGNORECASE,
)
# Who-questions ask about a named person or a work even when the name carries no capital.
_WHO = re.compile(
    r"\bwho\s+(?:is|are|was|were|wrote|invented|founded|discovered|created|directed|painted|"
    r"composed|designed|developed|built)\b|是谁|谁(?:写|发明|提出|创立|创建|发现|导演|设计|开发|创作)|由谁",
    re.IGNORECASE,
)

# -- named entities -------------------------------------------------------------------------------------
_QUOTED = re.compile(r'"[^"\n]{2,80}"|“[^”\n]{2,80}”|《[^》\n]{1,40}》|『[^』\n]{1,40}』|「[^」\n]{1,40}」')
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’.+#-]*")
_HAS_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_SENTENCE_START = re.compile(r"(?:^|[.!?。！？]\s*)$")


@dataclass(frozen=True)
class QueryClass:
    """What a query's wording says about where its answer lives, and how sure the reading is."""

    label: str
    personal: bool = False
    temporal: bool = False
    named_entity: bool = False
    factual: bool = False
    confidence: float = 0.5
    cues: tuple[str, ...] = ()
    source: str = "rules"

    def as_dict(self) -> dict[str, Any]:
        """The class as plain JSON-ready values."""
        return {
            "label": self.label,
            "personal": self.personal,
            "temporal": self.temporal,
            "named_entity": self.named_entity,
            "factual": self.factual,
            "confidence": round(self.confidence, 3),
            "cues": list(self.cues),
            "source": self.source,
        }


@dataclass(frozen=True)
class RouteDecision:
    """Where to search: `target` is memory, documents or both; `order` says which goes first."""

    target: str
    order: tuple[str, ...]
    reasons: list[str] = field(default_factory=list)
    query_class: QueryClass | None = None

    @property
    def uses_memory(self) -> bool:
        """True when the user's memories are searched."""
        return self.target in ("memory", "both")

    @property
    def uses_documents(self) -> bool:
        """True when the documents are searched."""
        return self.target in ("documents", "both")

    def as_dict(self) -> dict[str, Any]:
        """The decision as plain JSON-ready values, for a recall result or a log line."""
        return {
            "target": self.target,
            "order": list(self.order),
            "reasons": list(self.reasons),
            "query_class": self.query_class.as_dict() if self.query_class else None,
        }


def classify_query(query: str) -> QueryClass:
    """Read the personal, temporal, named-entity and factual signals from a query (no model)."""
    text = check_nonblank_text("query", query)
    cues: list[str] = []
    stripped = _ZH_IDIOMS.sub("", _EN_IDIOMS.sub(" ", text))

    strong = (
        _first(_PERSONAL_STRONG, stripped) or _first(_CONVERSATION, text) or _first(_CONVERSATION, stripped)
    )
    weak = None if strong else (_first(_PERSONAL_WEAK, stripped) or _first(_PERSONAL_US, stripped))
    personal = strong or weak
    if personal:
        cues.append(f"personal reference {personal!r}")
    temporal = _first(_TEMPORAL, text)
    if temporal:
        cues.append(f"relative time {temporal!r}")
    factual = _first(_FACTUAL, text)
    if factual:
        cues.append(f"factual form {factual.strip()!r}")
    entity = _named_entity(text)
    if entity is None and _WHO.search(text):
        entity = "(the person or work asked about)"
    if entity:
        cues.append(f"named entity {entity!r}")

    knowledge = bool(entity and factual)
    if personal:
        label = "memory_primary"
        confidence = (0.9 if strong else 0.75) + (0.05 if temporal else 0.0) - (0.2 if knowledge else 0.0)
    elif knowledge:
        label = "documents_primary"
        confidence = 0.85 - (0.15 if temporal else 0.0)
    elif temporal:
        label, confidence = "memory_primary", 0.7
    else:
        label, confidence = "hybrid", 0.6 if factual else 0.5
    return QueryClass(
        label=label,
        personal=bool(personal),
        temporal=bool(temporal),
        named_entity=bool(entity),
        factual=bool(factual),
        confidence=round(min(max(confidence, 0.0), 1.0), 3),
        cues=tuple(cues),
    )


def decide(
    query_class: QueryClass,
    *,
    memory_count: int,
    document_count: int,
    known_to_memory: Sequence[str] = (),
    sparse_below: int = SPARSE_MEMORY_BELOW,
) -> RouteDecision:
    """Turn a query class and the store's contents into a route.

    `memory_count` counts the user's own memories, `document_count` the document chunks they can
    read; `known_to_memory` lists entities of the query that the user's memories mention, which
    pull a documents-first query back towards memory ("who is Alice?" when Alice is a friend).
    """
    check_count("memory_count", memory_count, minimum=0)
    check_count("document_count", document_count, minimum=0)
    check_count("sparse_below", sparse_below, minimum=0)
    if isinstance(known_to_memory, str) or not isinstance(known_to_memory, Sequence):
        raise InvalidTypeError(
            f"known_to_memory must be a list of names, got {type(known_to_memory).__name__}"
        )
    if query_class.label not in QUERY_LABELS:
        raise InvalidInputError(f"query_class.label must be one of {QUERY_LABELS}, got {query_class.label!r}")
    reasons = [_class_reason(query_class)]

    def made(target: str, order: tuple[str, ...], *why: str) -> RouteDecision:
        return RouteDecision(target=target, order=order, reasons=[*reasons, *why], query_class=query_class)

    if memory_count == 0 and document_count == 0:
        return made("memory", ("memory",), "nothing is stored yet; memories are searched as they arrive")
    if document_count == 0:
        return made("memory", ("memory",), "no documents are ingested, so only memories are searched")
    if memory_count == 0:
        return made(
            "documents", ("documents",), "the user has no memories yet, so only documents are searched"
        )
    sparse = memory_count < sparse_below
    richness = (
        f"memory is sparse ({memory_count} memories, under {sparse_below})"
        if sparse
        else f"memory is rich ({memory_count} memories)"
    )
    if query_class.label == "memory_primary":
        if query_class.named_entity and query_class.factual:
            return made(
                "both",
                ("memory", "documents"),
                "it also asks a factual question about a named entity, so documents follow",
            )
        if sparse:
            return made("both", ("memory", "documents"), richness + ", so documents follow")
        return made("memory", ("memory",), richness)
    if query_class.label == "documents_primary":
        if known_to_memory:
            names = ", ".join(repr(name) for name in list(known_to_memory)[:3])
            return made("both", ("memory", "documents"), f"the user's memories mention {names}")
        return made("documents", ("documents",), "documents hold general knowledge")
    return made("both", ("documents", "memory"), richness + "; both are searched and merged")


def route(
    query: str,
    *,
    memory_count: int,
    document_count: int,
    known_to_memory: Sequence[str] = (),
    sparse_below: int = SPARSE_MEMORY_BELOW,
    query_class: QueryClass | None = None,
) -> RouteDecision:
    """Classify a query by rules (unless a class is given) and decide where to search."""
    if query_class is None:
        query_class = classify_query(query)
    return decide(
        query_class,
        memory_count=memory_count,
        document_count=document_count,
        known_to_memory=known_to_memory,
        sparse_below=sparse_below,
    )


def check_route(route_arg: Any) -> str | None:
    """Validate a recall(route=...) argument: "auto", a target, or None (memory only, no routing)."""
    if route_arg is None:
        return None
    if route_arg == "auto" or route_arg in ROUTE_TARGETS:
        return str(route_arg)
    raise InvalidInputError(f"route must be 'auto', 'memory', 'documents', 'both' or None, got {route_arg!r}")


class Router(Protocol):
    """What the facade needs from a router: a decision, sync or async."""

    def route(
        self, query: str, *, memory_count: int, document_count: int, known_to_memory: Sequence[str] = ()
    ) -> RouteDecision:
        """Decide where to search for a query."""
        ...

    async def aroute(
        self, query: str, *, memory_count: int, document_count: int, known_to_memory: Sequence[str] = ()
    ) -> RouteDecision:
        """Async route."""
        ...


class RuleRouter:
    """The default router: `classify_query` rules, no model."""

    def __init__(self, *, sparse_below: int = SPARSE_MEMORY_BELOW) -> None:
        check_count("sparse_below", sparse_below, minimum=0)
        self.sparse_below = sparse_below

    def classify(self, query: str) -> QueryClass:
        """The rule-based class of a query."""
        return classify_query(query)

    def route(
        self, query: str, *, memory_count: int, document_count: int, known_to_memory: Sequence[str] = ()
    ) -> RouteDecision:
        """Decide where to search for a query."""
        return route(
            query,
            memory_count=memory_count,
            document_count=document_count,
            known_to_memory=known_to_memory,
            sparse_below=self.sparse_below,
        )

    async def aroute(
        self, query: str, *, memory_count: int, document_count: int, known_to_memory: Sequence[str] = ()
    ) -> RouteDecision:
        """Async route (the rules take microseconds, so this does not yield)."""
        return self.route(
            query, memory_count=memory_count, document_count=document_count, known_to_memory=known_to_memory
        )


def _class_reason(query_class: QueryClass) -> str:
    what = {
        "memory_primary": "memory first",
        "documents_primary": "documents first",
        "hybrid": "no clear signal, both",
    }[query_class.label]
    because = "; ".join(query_class.cues) if query_class.cues else "no personal, time or factual cue"
    return f"{what} ({query_class.source}: {because})"


def _first(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(0) if match else None


def _named_entity(text: str) -> str | None:
    """The first name-like span: a quoted title, an acronym, CamelCase, a model number, a capitalised
    word that does not start a sentence, or Latin-script words inside Chinese."""
    quoted = _QUOTED.search(text)
    if quoted:
        return quoted.group(0)
    cjk = bool(_HAS_CJK.search(text))
    for match in _WORD.finditer(text):
        word = match.group(0).rstrip(".'’-")
        letters = [c for c in word if c.isalpha()]
        if len(letters) < 1 or word.lower() in _NOT_NAMES:
            continue
        if cjk and len(word) >= 2:
            return word
        shaped = (
            (len(letters) >= 2 and all(c.isupper() for c in letters))
            or any(c.isdigit() for c in word)
            or re.search(r"[a-z][A-Z]", word) is not None
        )
        starts_sentence = _SENTENCE_START.search(text[: match.start()]) is not None
        if shaped or (word[0].isupper() and not starts_sentence):
            return word
    return None
