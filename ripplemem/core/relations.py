"""Relations between entities ("Calvin" -bought-> "Ferrari 488"), from users or an LLM.

Plain data with no framework import, so callers can pass triples they extracted themselves.
Predicates are normalised to lower snake case so that "Lives in", "livesIn" and "lives_in" meet.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ripplemem.core.validation import check_items, check_number, check_text
from ripplemem.errors import InvalidInputError, InvalidTypeError

_FIELDS = ("subject", "predicate", "object")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class Relation:
    """A directed fact between two named entities, with the extractor's confidence in [0, 1]."""

    subject: str
    predicate: str
    object: str
    confidence: float = 1.0


def normalise_predicate(predicate: str) -> str:
    """Lower snake case: "Lives in", "livesIn" and "LIVES-IN" all become "lives_in"; CJK is kept."""
    text = unicodedata.normalize("NFKC", predicate).strip()
    text = _CAMEL_BOUNDARY.sub("_", text)
    return _NOT_WORD.sub("_", text.lower()).strip("_")


def make_relation(
    subject: Any, predicate: Any, object: Any, confidence: Any = 1.0, *, where: str = "relation"
) -> Relation:
    """A checked Relation: non-empty string ends and predicate, confidence a number in [0, 1]."""
    parts = {"subject": subject, "predicate": predicate, "object": object}
    for field, value in parts.items():
        check_text(f"{where}: {field}", value)
        if not value.strip():
            raise InvalidInputError(f"{where}: {field} must not be empty or whitespace")
    number = check_number(f"{where}: confidence", confidence, "a number in [0, 1]")
    if not 0.0 <= number <= 1.0:
        raise InvalidInputError(f"{where}: confidence must be in [0, 1], got {confidence}")
    normalised = normalise_predicate(predicate)
    if not normalised:
        raise InvalidInputError(f"{where}: predicate {predicate!r} has no letters or digits")
    return Relation(subject.strip(), normalised, object.strip(), number)


def _from_item(item: Any, where: str) -> Relation:
    if isinstance(item, Relation):
        return make_relation(item.subject, item.predicate, item.object, item.confidence, where=where)
    if isinstance(item, Mapping):
        missing = [field for field in _FIELDS if field not in item]
        if missing:
            raise InvalidInputError(f"{where}: missing key(s) {', '.join(missing)} in {_short(item)}")
        unknown = sorted(set(map(str, item)) - {*_FIELDS, "confidence"})
        if unknown:
            raise InvalidInputError(
                f"{where}: unknown key(s) {', '.join(unknown)} in {_short(item)}; "
                "use subject, predicate, object and optional confidence"
            )
        return make_relation(
            item["subject"], item["predicate"], item["object"], item.get("confidence", 1.0), where=where
        )
    if isinstance(item, (tuple, list)):
        if len(item) not in (3, 4):
            raise InvalidInputError(
                f"{where}: expected (subject, predicate, object[, confidence]), "
                f"got {len(item)} item(s): {_short(item)}"
            )
        return make_relation(*item, where=where)
    raise InvalidTypeError(
        f"{where}: expected a Relation, a (subject, predicate, object) tuple or a "
        f"dict with those keys, got {type(item).__name__}: {_short(item)}"
    )


def coerce_relations(value: Any) -> list[Relation]:
    """Relations from Relation objects, 3- or 4-tuples (with confidence) or dicts; None gives []."""
    if value is None:
        return []
    items = check_items("relations", value, "relations")
    return [_from_item(item, f"relations[{index}]") for index, item in enumerate(items)]


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
