"""Is a new statement a duplicate, an update, a contradiction of an existing one, or unrelated?

Rules, English and Chinese (no LLM needed): a statement is read (statements.py) as (owner, slot,
qualifier, value, negated), where a slot is a single-valued attribute such as dose, address, residence
("lives in"), deadline, phone, email, job, employer, salary, weight, birthday, appointment, or a
preference (like / hate X, 喜欢 / 讨厌 X). "My metformin dose is now 10 mg" reads as
(user, dose, metformin, "10 mg"); "妈妈的剂量改成了10毫克" as (妈妈, dose, -, "10mg").
Two statements are about the same thing when slot and qualifier agree (a missing qualifier or
owner agrees with any). Then:

- same value and polarity -> duplicate (the fact restated);
- for factual slots, a different value is an update when the new text says so ("now",
  "changed to", "moved to", "no longer", 改成, 换成, 搬到, 现在, 不再 ...) or is dated later;
  the later statement holds the current value (`current`). Without a cue or dates it is a
  contradiction;
- for preferences and plain negations ("I like apples" / "I hate apples"), only an update cue
  makes it an update; otherwise it is a contradiction, both are kept, and each side's belief
  state (preference, fact or emotion; docs/design-notes.md#duplicates-and-conflicts) is reported.

Duplicates also come from text: the same normalised text, or an embedding similarity >= 0.9
given by the caller, unless the slot reading shows different values ("dose 5 mg" and "dose
10 mg" embed alike but are an update). `LLMConflictJudge` (conflict_judge.py) asks a chat model the
same question and falls back to these rules when the reply is unusable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from ripplemem.core.clock import aware
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.rules.lifecycle._common import normalize_text
from ripplemem.rules.lifecycle.settings import DEFAULT_SETTINGS, LifecycleSettings
from ripplemem.rules.lifecycle.statements import Statement, parse_statement

VERDICTS: tuple[str, ...] = ("duplicate", "update", "contradiction", "unrelated")


@dataclass(frozen=True)
class ConflictVerdict:
    """How a new statement relates to an existing one.

    kind: "duplicate", "update", "contradiction" or "unrelated". For an update, `current` says which
    statement holds the current value ("new", or "existing" when the new one is older). Beliefs
    are "preference", "fact" or "emotion". source is "rules" or "llm".
    """

    kind: str
    slot: str | None = None
    subject: str | None = None
    old_value: str | None = None
    new_value: str | None = None
    current: str | None = None
    reason: str = ""
    belief_new: str = "fact"
    belief_existing: str = "fact"
    source: str = "rules"


# --- comparing two statements --------------------------------------------------------------------

_UNIT_ALIASES = (
    ("毫克", "mg"),
    ("milligrams", "mg"),
    ("milligram", "mg"),
    ("毫升", "ml"),
    ("grams", "g"),
    ("gram", "g"),
    ("克", "g"),
)


# Batch writes compare each stored neighbour with several new texts.
_normalized = lru_cache(maxsize=20_000)(normalize_text)


def clear_text_cache() -> None:
    """Forget the normalised texts cached for comparisons (a deleted memory's words leave RAM)."""
    _normalized.cache_clear()


def _value_key(value: str | None) -> str:
    text = normalize_text(value or "")
    for alias, unit in _UNIT_ALIASES:
        text = text.replace(alias, unit)
    text = re.sub(r"\b(?:a|an|the)\b", " ", text)
    text = re.sub(r"(\d)\s+(?=[a-z\u4e00-\u9fff])", r"\1", text)
    return " ".join(text.split())


def _compatible(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b


def _subject(owner: str | None, qualifier: str | None) -> str | None:
    if owner and qualifier:
        return f"{owner}: {qualifier}"
    return owner or qualifier


def is_duplicate(
    new_text: str,
    existing_text: str,
    similarity: float | None = None,
    settings: LifecycleSettings = DEFAULT_SETTINGS,
) -> bool:
    """Same normalised text, or similarity >= 0.9, unless the slot reading shows different values."""
    verdict = judge_conflict(new_text, existing_text, similarity=similarity, settings=settings)
    return verdict.kind == "duplicate"


def find_duplicate(
    text: str,
    candidates: Sequence[str],
    similarities: Sequence[float] | None = None,
    settings: LifecycleSettings = DEFAULT_SETTINGS,
) -> int | None:
    """The index of the candidate the text duplicates (the most similar if several), or None."""
    if isinstance(candidates, str):
        raise InvalidTypeError("candidates must be a list of strings, not one string")
    if similarities is not None and len(similarities) != len(candidates):
        raise InvalidInputError(f"similarities has {len(similarities)} values, expected {len(candidates)}")
    best: tuple[float, int] | None = None
    for index, candidate in enumerate(candidates):
        similarity = None if similarities is None else float(similarities[index])
        if is_duplicate(text, candidate, similarity, settings):
            rank = 2.0 if normalize_text(text) == normalize_text(candidate) else (similarity or 0.0)
            if best is None or rank > best[0]:
                best = (rank, index)
    return None if best is None else best[1]


def judge_conflict(
    new_text: str,
    existing_text: str,
    *,
    new_time: datetime | None = None,
    existing_time: datetime | None = None,
    similarity: float | None = None,
    settings: LifecycleSettings = DEFAULT_SETTINGS,
) -> ConflictVerdict:
    """The rules' verdict on a new statement against an existing one (see the module docstring)."""
    for name, value in (("new_text", new_text), ("existing_text", existing_text)):
        if not isinstance(value, str):
            raise InvalidTypeError(f"{name} must be a string, got {type(value).__name__}")
    if similarity is not None and (isinstance(similarity, bool) or not isinstance(similarity, int | float)):
        raise InvalidTypeError(f"similarity must be a number or None, got {type(similarity).__name__}")
    return compare_statements(
        parse_statement(new_text),
        parse_statement(existing_text),
        new_time=new_time,
        existing_time=existing_time,
        similarity=similarity,
        settings=settings,
    )


def compare_statements(
    new: Statement,
    old: Statement,
    *,
    new_time: datetime | None = None,
    existing_time: datetime | None = None,
    similarity: float | None = None,
    settings: LifecycleSettings = DEFAULT_SETTINGS,
) -> ConflictVerdict:
    """`judge_conflict` on statements already read (a batch write reads each text once)."""
    key = _normalized(new.text)
    if key and key == _normalized(old.text):
        return ConflictVerdict(
            "duplicate",
            new.slot,
            _subject(new.owner, new.qualifier),
            old.value,
            new.value,
            reason="the same text once case, punctuation and spacing are set aside",
            belief_new=new.belief,
            belief_existing=old.belief,
        )
    same_slot = (
        new.slot is not None
        and new.slot == old.slot
        and _compatible(new.owner, old.owner)
        and _compatible(new.qualifier, old.qualifier)
    )
    if not same_slot:
        if similarity is not None and similarity >= settings.duplicate_similarity:
            return ConflictVerdict(
                "duplicate",
                reason=f"similarity {similarity:.2f} >= {settings.duplicate_similarity:g}",
                belief_new=new.belief,
                belief_existing=old.belief,
            )
        why = (
            "no single-valued attribute in both"
            if new.slot is None or old.slot is None
            else f"different attributes ({old.slot} / {new.slot})"
            if new.slot != old.slot
            else "the same attribute of different subjects"
        )
        return ConflictVerdict("unrelated", reason=why, belief_new=new.belief, belief_existing=old.belief)

    slot = new.slot
    subject = _subject(new.owner or old.owner, new.qualifier or old.qualifier)

    def found(kind: str, reason: str, current: str | None = None) -> ConflictVerdict:
        return ConflictVerdict(
            kind, slot, subject, old.value, new.value, current, reason, new.belief, old.belief
        )

    same_value = _value_key(new.value) == _value_key(old.value)
    if same_value and new.negated == old.negated:
        return found("duplicate", f"the same {slot} restated")
    order = time_order(new_time, existing_time)
    what = (
        f"{slot} {new.value!r} {'denied' if new.negated else 'affirmed'}, "
        f"was {'denied' if old.negated else 'affirmed'}"
        if same_value
        else f"{slot} {old.value!r} -> {new.value!r}"
    )
    if new.update_cue:
        current = "existing" if order == "older" else "new"
        return found("update", f"{what}; the new text says {new.update_cue!r}", current)
    if slot != "preference" and not same_value and order is not None and order != "same":
        current = "new" if order == "newer" else "existing"
        return found("update", f"{what}; the {current} statement is later", current)
    why = (
        "opposite preferences"
        if slot == "preference"
        else "one affirms what the other denies"
        if same_value
        else "different values with nothing saying which is current"
    )
    return found("contradiction", f"{what}: {why}")


def time_order(new_time: datetime | None, existing_time: datetime | None) -> str | None:
    """ "newer", "older" or "same" for the new statement's time against the existing one (None: unknown)."""
    if new_time is None or existing_time is None:
        return None
    new, old = aware(new_time, "new_time"), aware(existing_time, "existing_time")
    return "newer" if new > old else "older" if new < old else "same"
