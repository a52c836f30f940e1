"""Checks on user input; each failure names the field and how to fix it."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from typing import Any

from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.types import MEMORY_TYPES, MemoryType

MAX_ID_LENGTH = 128
MAX_METADATA_CHARS = 1_000_000
MAX_METADATA_DEPTH = 64
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Bidirectional overrides and isolates make one id display as another ("alice" vs "ecila").
_BIDI_RE = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")


def check_identifier(name: str, value: Any, *, required: bool) -> str | None:
    """A user, agent or session id: a non-empty string of at most 128 printable characters.

    Ids are stored as bound parameters only, so quotes, slashes or SQL in them are harmless data.
    """
    if value is None:
        if required:
            raise InvalidInputError(f"{name} is required: pass {name}='...' (any non-empty string)")
        return None
    if not isinstance(value, str):
        raise InvalidTypeError(f"{name} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InvalidInputError(f"{name} must not be empty or whitespace")
    if len(value) > MAX_ID_LENGTH:
        raise InvalidInputError(f"{name} is {len(value)} characters long; the limit is {MAX_ID_LENGTH}")
    if _CONTROL_RE.search(value):
        raise InvalidInputError(f"{name} must not contain control characters (newlines, NUL, ...)")
    if _SURROGATE_RE.search(value):
        raise InvalidInputError(f"{name} contains a lone surrogate (not valid Unicode text)")
    if _BIDI_RE.search(value):
        raise InvalidInputError(f"{name} must not contain bidirectional override characters "
                                "(U+202A-U+202E, U+2066-U+2069): they make one id look like another")
    return value


def check_content(value: Any, max_chars: int, field: str = "content") -> str:
    """Memory text: a non-blank string within the size limit."""
    if not isinstance(value, str):
        raise InvalidTypeError(f"{field} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InvalidInputError(f"{field} must not be empty or whitespace")
    if "\x00" in value:
        raise InvalidInputError(f"{field} must not contain NUL characters")
    surrogate = _SURROGATE_RE.search(value)
    if surrogate:
        raise InvalidInputError(f"{field} contains a lone surrogate at character {surrogate.start()} "
                                "(not valid Unicode text; decode the source with errors='replace')")
    if len(value) > max_chars:
        raise InvalidInputError(
            f"{field} is {len(value)} characters; the limit is {max_chars} "
            "(split long text, or ingest it as a document)"
        )
    return value


def check_importance(value: Any) -> float:
    """Importance: a real number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidTypeError(f"importance must be a number in [0, 1], got {type(value).__name__}")
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise InvalidInputError(f"importance must be in [0, 1], got {value}")
    return float(value)


def check_type(value: Any) -> str:
    """A memory type name (or MemoryType)."""
    if isinstance(value, MemoryType):
        return value.value
    if not isinstance(value, str) or value not in MEMORY_TYPES:
        raise InvalidInputError(f"type must be one of {', '.join(MEMORY_TYPES)}; got {value!r}")
    return value


def check_types(value: Any) -> tuple[str, ...] | None:
    """One type, several, or None for all."""
    if value is None:
        return None
    if isinstance(value, (str, MemoryType)):
        return (check_type(value),)
    if isinstance(value, (list, tuple, set, frozenset)):
        if not value:
            raise InvalidInputError("types must not be an empty list; pass None for every type")
        return tuple(check_type(v) for v in value)
    raise InvalidTypeError(f"types must be a type name or a list of them, got {type(value).__name__}")


def check_k(value: Any, name: str = "k") -> int:
    """How many results to return: a positive integer (named `name` in errors)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"{name} must be a positive integer, got {type(value).__name__}")
    if value <= 0:
        raise InvalidInputError(f"{name} must be positive, got {value}")
    return value


def check_datetime(name: str, value: Any) -> datetime | None:
    """A datetime, an ISO-8601 string, or None."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError as exc:
            raise InvalidInputError(f"{name} {value!r} is not an ISO-8601 date/time") from exc
    raise InvalidTypeError(f"{name} must be a datetime or an ISO-8601 string, got {type(value).__name__}")


def check_metadata(value: Any) -> dict[str, Any]:
    """Metadata: a JSON-serialisable dict with string keys."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidTypeError(f"metadata must be a dict, got {type(value).__name__}")
    for key in value:
        if not isinstance(key, str):
            raise InvalidTypeError(f"metadata keys must be strings, got {key!r}")
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata must be JSON-serialisable: {exc}") from exc
    except RecursionError as exc:
        raise InvalidInputError(f"metadata is nested more than {MAX_METADATA_DEPTH} levels deep") from exc
    if _SURROGATE_RE.search(text):
        raise InvalidInputError("metadata contains a lone surrogate (not valid Unicode text)")
    if len(text) > MAX_METADATA_CHARS:
        raise InvalidInputError(f"metadata is {len(text)} characters as JSON; "
                                f"the limit is {MAX_METADATA_CHARS}")
    if _depth(value) > MAX_METADATA_DEPTH:
        raise InvalidInputError(f"metadata is nested more than {MAX_METADATA_DEPTH} levels deep "
                                "(SQLite's JSON functions could not filter on it)")
    return dict(value)


def _depth(value: Any) -> int:
    """How deeply dicts and lists nest in a JSON value (a scalar is 0)."""
    deepest, level = 0, [(value, 1)]
    while level:
        item, depth = level.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, depth)
            level.extend((child, depth + 1) for child in children)
    return deepest


def check_mode(value: Any, modes: tuple[str, ...]) -> str:
    """A recall mode name."""
    if value not in modes:
        raise InvalidInputError(f"mode must be one of {', '.join(modes)}; got {value!r}")
    return str(value)
