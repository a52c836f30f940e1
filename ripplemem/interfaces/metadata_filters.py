"""Filters on the public metadata keys (those of ``hit_metadata``) as RippleMem.recall's options.

A condition is (key, operator, value) with an operator among "==", "in", ">=" and "<" (the values
of LlamaIndex's FilterOperator EQ, IN, GTE, LT). What recall can express is translated; anything
else is refused with an error naming the key and the operator, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.interfaces.hit_metadata import RIPPLEMEM_KEYS, caller_key

#: The operators at least one key supports.
OPERATORS = ("==", "in", ">=", "<")

# RippleMem's filterable keys: operator -> recall option (and whether the value is a list).
_OWN: dict[str, dict[str, tuple[str, bool]]] = {
    "type": {"==": ("types", True), "in": ("types", False)},
    "session_id": {"==": ("session_id", False)},
    "time": {">=": ("since", False), "<": ("until", False)},
    "importance": {">=": ("min_importance", False)},
}
_SOURCE_HINT = "; ingested chunks can be filtered on file_name, memories on your own metadata keys"
_CAN = (
    "recall filters on type (== or in), session_id (==), time (>= or <), importance (>=), "
    "knowledge_base (==) and your own metadata keys (==)"
)


class Condition(NamedTuple):
    """One filter condition on a public metadata key."""

    key: str
    operator: str
    value: Any


def recall_options(conditions: Iterable[Condition]) -> dict[str, Any]:
    """The recall keyword options (types, session_id, since, until, min_importance, metadata) that
    keep exactly the memories matching all conditions; InvalidInputError for what recall cannot do."""
    options: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for condition in conditions:
        key, operator, value = condition
        if not isinstance(key, str) or not key:
            raise InvalidTypeError(f"a filter key must be a non-empty string, got {key!r}")
        if key in _OWN:
            _set_option(options, key, operator, value)
        elif key in RIPPLEMEM_KEYS and key != "knowledge_base":
            hint = _SOURCE_HINT if key == "source" else ""
            raise InvalidInputError(f"cannot filter on {key!r}: {_CAN}{hint}")
        else:
            _set_metadata(metadata, key, operator, value)
    if metadata:
        options["metadata"] = metadata
    return options


def _set_option(options: dict[str, Any], key: str, operator: str, value: Any) -> None:
    """Translate a condition on one of RippleMem's keys into its recall option."""
    allowed = _OWN[key]
    if operator not in allowed:
        raise InvalidInputError(
            f"filter operator {operator!r} is not supported on {key!r} "
            f"(supported there: {', '.join(allowed)}); {_CAN}"
        )
    option, as_list = allowed[operator]
    if operator == "in" and (isinstance(value, (str, bytes)) or not isinstance(value, Iterable)):
        raise InvalidTypeError(f"filter {key!r} in ...: the value must be a list, got {value!r}")
    if option in options:
        raise InvalidInputError(
            f"filter on {key!r} given twice ({operator!r}); recall takes one value "
            "per option: give one condition (use 'in' for several types)"
        )
    options[option] = [value] if as_list else (list(value) if operator == "in" else value)


def _set_metadata(metadata: dict[str, Any], key: str, operator: str, value: Any) -> None:
    """Translate an equality condition on a caller's metadata key (or knowledge_base)."""
    if operator != "==":
        raise InvalidInputError(
            f"filter operator {operator!r} is not supported on metadata key {key!r} (only == is); {_CAN}"
        )
    name = caller_key(key)
    if name in metadata and metadata[name] != value:
        raise InvalidInputError(
            f"filter on {key!r} given twice with different values "
            f"({metadata[name]!r} and {value!r}): no memory can match both"
        )
    metadata[name] = value
