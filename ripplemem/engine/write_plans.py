"""Before a write: is each new memory a duplicate of, an update of, or a contradiction with one of
the same user's stored memories (its nearest neighbours in the vector index) or an earlier item of
the same batch?

The rules of `ripplemem.rules.lifecycle.conflicts` decide first. A pair is compared only when it is
similar enough to matter (cosine >= `duplicate_similarity` for duplicates, >= `conflict_similarity`
for updates and contradictions, which also need the same attribute read from both texts), so a
write costs the rules a few regex passes, not one per stored memory. Nearly identical wording is
not a duplicate when the two texts differ in a number, a date or time word, or a negation ("I ran
5 km on Monday" / "... on Tuesday" embed at 0.99), or share less than `duplicate_overlap` of their
keyword tokens (MiniLM embeds many Chinese sentences alike). With an LLM judge, pairs the rules leave open
(a contradiction without an update cue, or a similar pair whose attribute the rules cannot read)
are asked, at most `judge_max_pairs` per new memory (under the engine's write lock, so two writes
never decide against each other's half-written state); an unusable reply keeps the rules' verdict.

Duplicates merge only into a memory of the same type and agent whose metadata agrees on every
key both carry (a LangGraph store keeps items apart by metadata keys; a turn by its working_id).
An update between memories whose metadata disagrees (the library's provenance keys working_id,
role and mention_count aside) is kept as a contradiction: both stay current. Documents and
non-text memories are never compared.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache

import numpy as np

from ripplemem.core.text import keyword_tokens
from ripplemem.core.types import Memory
from ripplemem.index.bm25 import stem
from ripplemem.rules.lifecycle._common import normalize_text
from ripplemem.rules.lifecycle.conflict_judge import LLMConflictJudge
from ripplemem.rules.lifecycle.conflicts import ConflictVerdict, clear_text_cache, compare_statements
from ripplemem.rules.lifecycle.settings import LifecycleSettings
from ripplemem.rules.lifecycle.statements import Statement, parse_statement
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.memories import MemoryFilter

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*|[零〇一二两三四五六七八九十百千万]+(?=[月日号点个次岁年天周])")
_TIME_WORDS = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|morning|afternoon|evening|night|week|weekend|month|year|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|"
    r"july|august|september|october|november|december|last|next|ago|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|eleven|twelve|twenty|thirty|hundred|thousand|first|second|third|once|twice)\b"
    r"|今天|今晚|明天|昨天|前天|后天|早上|上午|中午|下午|晚上|上周|下周|本周|周末|星期.|周[一二三四五六日天]|礼拜.",
    re.IGNORECASE,
)
# The library's own provenance keys: they tell turns apart, not facts.
_PROVENANCE_KEYS = frozenset({"working_id", "role", "mention_count"})
# Every text the rules can read an attribute from has one of these (a superset of the nouns and
# verbs of ripplemem.rules.lifecycle.conflicts, or a number with a dose unit's first letters, for "I take
# 20 mg"); texts without one are not parsed.
_ATTRIBUTE_HINT = re.compile(
    r"\d\s*(?:m|g|µ|iu|unit|pill|tablet|capsule|drop|毫克|克|毫升|片|粒|颗|单位)|\b(?:dos|address|deadline|due|phone|mobile|cell|telephone|e-?mail|job|position|occupation|"
    r"profession|employ|salary|wage|weight|birth|appointment|meeting|flight|liv|mov|reloc|resid|stay|work|"
    r"lik|lov|enjoy|prefer|ador|hat|dislik|detest|stand)"
    r"|剂量|用量|药量|地址|住|截止|期限|交稿|电话|手机|邮箱|电子邮件|工作|职位|职业|工资|薪|体重|生日|预约|会议"
    r"|航班|搬|定居|生活|上班|任职|喜欢|爱|讨厌|恨|受不了",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:not|no|never|nothing|without)\b|n't\b|不|没|别|未", re.IGNORECASE)
_UNRELATED = ConflictVerdict("unrelated", reason="no shared attribute read by the rules")


@dataclass(frozen=True)
class Merge:
    """A new memory (batch position) that merges into `target` instead of being stored."""

    position: int
    target: str
    verdict: ConflictVerdict


@dataclass(frozen=True)
class Link:
    """An update (`current` supersedes `other` from `since`) or a contradiction (`current` is the new one)."""

    kind: str
    current: str
    other: str
    verdict: ConflictVerdict
    since: datetime | None = None


@dataclass
class WritePlan:
    """What a batch write does: which items are stored, which merge, and the links between memories."""

    fresh: list[int] = field(default_factory=list)
    merges: list[Merge] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    stored: dict[str, Memory] = field(default_factory=dict)


def _comparable(memory: Memory) -> bool:
    return memory.type != "document" and memory.modality == "text"


def metadata_conflict(a: Memory, b: Memory, ignore: frozenset[str] = frozenset()) -> str | None:
    """A metadata key both memories carry with different values (they are separate records), else None."""
    return next(
        (
            key
            for key in a.metadata.keys() & b.metadata.keys()
            if key not in ignore and a.metadata[key] != b.metadata[key]
        ),
        None,
    )


def may_state_attribute(text: str) -> bool:
    """False when the rules certainly read no attribute (dose, address, preference ...) from the text."""
    return _ATTRIBUTE_HINT.search(text) is not None


@lru_cache(maxsize=50_000)
def read_statement(text: str) -> Statement:
    """The rules' reading of a text, cached across batches: stored memories are read again each time
    they are the neighbours of a new one."""
    return parse_statement(text) if may_state_attribute(text) else Statement(text)


def forget_cached_texts() -> None:
    """Empty every cache of memory texts the write checks keep (statement readings, normalised
    texts, particulars, word stems): called after deletes and content updates, so nothing of an
    erased memory stays in process memory."""
    for cache in (read_statement, text_key, particulars, keyword_stems):
        cache.cache_clear()
    clear_text_cache()
    stem.cache_clear()


@lru_cache(maxsize=50_000)
def text_key(text: str) -> str:
    """The normalised text two phrasings of one statement share, cached across batches."""
    return normalize_text(text)


@lru_cache(maxsize=50_000)
def particulars(text: str) -> tuple[frozenset[str], bool]:
    """The numbers and date or time words of a text, and whether it negates: what similar wording hides."""
    lowered = text.lower()
    marks = frozenset(_NUMBER.findall(lowered)) | frozenset(_TIME_WORDS.findall(lowered))
    return marks, bool(_NEGATION.search(lowered))


@lru_cache(maxsize=50_000)
def keyword_stems(text: str) -> frozenset[str]:
    """A text's keyword stems (character bigrams for Chinese), cached across batches."""
    return frozenset(stem(t) for t in keyword_tokens(text, drop_stopwords=True))


class _Judging:
    """Verdicts for the pairs of one batch."""

    def __init__(self, settings: LifecycleSettings, judge: LLMConflictJudge | None) -> None:
        self.settings = settings
        self.judge = judge

    def overlap(self, a: str, b: str) -> float:
        """Jaccard overlap of two texts' keyword stems (character bigrams for Chinese)."""
        words_a, words_b = keyword_stems(a), keyword_stems(b)
        union = words_a | words_b
        return len(words_a & words_b) / len(union) if union else 1.0

    def alike(self, a: str, b: str) -> bool:
        """Same numbers, date words and negation, and enough shared keyword stems."""
        return particulars(a) == particulars(b) and self.overlap(a, b) >= self.settings.duplicate_overlap

    def rules(self, new: Memory, other: Memory, similarity: float) -> ConflictVerdict:
        s = self.settings
        if text_key(new.content) == text_key(other.content):
            return ConflictVerdict(
                "duplicate", reason="the same text once case, punctuation and spacing are set aside"
            )
        statement = read_statement(new.content)
        slot = statement.slot
        near = similarity >= s.duplicate_similarity
        may_conflict = s.detect_conflicts and similarity >= s.conflict_similarity and slot is not None
        if not near and not may_conflict:
            # Most pairs of a write end here, before the other text is read or compared.
            return _UNRELATED
        other_statement = read_statement(other.content) if slot is not None else None
        # The other text's reading when both state the same attribute, else None.
        paired = other_statement if other_statement is not None and other_statement.slot == slot else None
        alike = near and self.alike(new.content, other.content)
        if alike:
            if paired is None:
                return ConflictVerdict(
                    "duplicate", reason=f"similarity {similarity:.2f} >= {s.duplicate_similarity:g}"
                )
            return compare_statements(
                statement,
                paired,
                new_time=new.when,
                existing_time=other.when,
                similarity=similarity,
                settings=s,
            )
        if not may_conflict or paired is None:
            return _UNRELATED
        verdict = compare_statements(
            statement, paired, new_time=new.when, existing_time=other.when, settings=s
        )
        if verdict.kind == "duplicate" and not self.alike(new.content, other.content):
            # The attribute is restated, but the rest of the text says something else (a new phone
            # number beside the same city): merging would drop it.
            return replace(
                verdict,
                kind="unrelated",
                reason=f"{verdict.reason}, but the texts differ in other words, numbers or dates: both kept",
            )
        return verdict

    def open_question(self, verdict: ConflictVerdict, similarity: float) -> bool:
        """True when the rules leave the pair open and the LLM judge should decide."""
        if self.judge is None or not self.settings.detect_conflicts:
            return False
        return verdict.kind == "contradiction" or (
            verdict.kind == "unrelated" and similarity >= self.settings.judge_similarity
        )

    def ask(self, new: Memory, other: Memory, similarity: float, rules: ConflictVerdict) -> ConflictVerdict:
        assert self.judge is not None
        verdict = self.judge.judge(
            new.content, other.content, new_time=new.when, existing_time=other.when, similarity=similarity
        )
        # An unusable reply gives the judge's own rules verdict; ours also weighs the particulars.
        return verdict if verdict.source == "llm" else replace(rules, reason=verdict.reason)


def plan_writes(
    store: RowStore,
    user_id: str,
    memories: Sequence[Memory],
    vectors: np.ndarray,
    neighbours: Sequence[Sequence[tuple[str, float]]],
    settings: LifecycleSettings,
    judge: LLMConflictJudge | None = None,
) -> WritePlan:
    """Decide for each new memory: store it, or merge it; and which memories it supersedes or contradicts.

    New memories whose update is older than what is stored, or that a later item of the batch
    updates, get status 'superseded' and valid_to here, before they are stored.
    """
    plan = WritePlan()
    if not (settings.merge_duplicates or settings.detect_conflicts):
        plan.fresh = list(range(len(memories)))
        return plan
    floor = settings.duplicate_similarity
    if settings.detect_conflicts:
        floor = min(floor, settings.conflict_similarity)
    wanted = list(dict.fromkeys(i for row in neighbours for i, cos in row if cos >= floor))
    plan.stored = {m.id: m for m in store.fetch(wanted, MemoryFilter(user_id=user_id))[0]}
    vectors = np.asarray(vectors, dtype=np.float32)
    within = vectors @ vectors.T if len(memories) > 1 else np.zeros((1, 1), dtype=np.float32)
    judging = _Judging(settings, judge)
    superseded: set[str] = set()
    fresh: set[int] = set()
    for position, memory in enumerate(memories):
        if not _comparable(memory):
            plan.fresh.append(position)
            fresh.add(position)
            continue
        candidates = [
            (plan.stored[i], cos) for i, cos in neighbours[position] if cos >= floor and i in plan.stored
        ]
        # The nearest earlier items of the batch, as many as stored neighbours are asked for: a
        # batch of near-identical texts must not cost a comparison with every earlier item.
        earlier = [int(j) for j in np.flatnonzero(within[position, :position] >= floor) if j in fresh]
        earlier.sort(key=lambda j: -within[position, j])
        candidates += [
            (memories[j], float(within[position, j])) for j in earlier[: settings.conflict_neighbours]
        ]
        candidates = sorted(
            (
                (other, cos)
                for other, cos in candidates
                if other.id not in superseded and other.agent_id == memory.agent_id and _comparable(other)
            ),
            key=lambda pair: -pair[1],
        )
        verdicts = _verdicts(judging, memory, candidates)
        duplicate = (
            next(
                (
                    other
                    for other, verdict in verdicts
                    if verdict.kind == "duplicate"
                    and other.type == memory.type
                    and metadata_conflict(memory, other) is None
                ),
                None,
            )
            if settings.merge_duplicates
            else None
        )
        if duplicate is not None:
            verdict = next(v for other, v in verdicts if other is duplicate)
            plan.merges.append(Merge(position, duplicate.id, verdict))
            continue
        plan.fresh.append(position)
        fresh.add(position)
        if settings.detect_conflicts:
            _link(plan, memory, verdicts, superseded)
    return plan


def _verdicts(
    judging: _Judging, memory: Memory, candidates: list[tuple[Memory, float]]
) -> list[tuple[Memory, ConflictVerdict]]:
    asked = 0
    found = []
    for other, similarity in candidates:
        verdict = judging.rules(memory, other, similarity)
        if judging.open_question(verdict, similarity) and asked < judging.settings.judge_max_pairs:
            asked += 1
            verdict = judging.ask(memory, other, similarity, verdict)
        if verdict.kind != "unrelated":
            found.append((other, verdict))
    return found


def _link(
    plan: WritePlan, memory: Memory, verdicts: list[tuple[Memory, ConflictVerdict]], superseded: set[str]
) -> None:
    for other, verdict in verdicts:
        key = metadata_conflict(memory, other, _PROVENANCE_KEYS)
        if verdict.kind == "update" and key is not None:
            verdict = replace(
                verdict,
                kind="contradiction",
                current=None,
                reason=f"{verdict.reason}; kept as separate records (metadata {key!r} differs)",
            )
        if verdict.kind == "update" and verdict.current == "existing":
            if memory.id in superseded:
                continue
            superseded.add(memory.id)
            plan.links.append(Link("update", other.id, memory.id, verdict, other.when))
            memory.status, memory.valid_to = "superseded", other.when
        elif verdict.kind == "update":
            superseded.add(other.id)
            plan.links.append(Link("update", memory.id, other.id, verdict, memory.when))
            if other.id not in plan.stored:  # an earlier item of this batch, not stored yet
                other.status, other.valid_to = "superseded", memory.when
        elif verdict.kind == "contradiction":
            plan.links.append(Link("contradiction", memory.id, other.id, verdict))
