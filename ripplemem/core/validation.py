"""Checks on user input; each failure names the field and how to fix it."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from typing import Any, Literal, TypeVar, cast, overload

from ripplemem.core.choices import MemoryTypeName
from ripplemem.core.types import MEMORY_TYPES, MemoryType
from ripplemem.errors import InvalidInputError, InvalidTypeError

Mode = TypeVar("Mode", bound=str)

MAX_ID_LENGTH = 128
MAX_METADATA_CHARS = 1_000_000
MAX_METADATA_DEPTH = 64
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Bidirectional overrides and isolates make one id display as another ("alice" vs "ecila").
_BIDI_RE = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")
# SQLite keeps integers in 64 bits: a larger Python int can be neither bound nor compared there.
SQLITE_INT_MAX = 2**63 - 1
SQLITE_INT_MIN = -(2**63)
# Short text fields (a source, a name, a role, a unit, a memory id): far longer than any real one.
MAX_TEXT_CHARS = 10_000
# The times RippleMem accepts (UTC): Python's datetime stops at years 1 and 9999, and a time must
# read back after every conversion (a UTC offset moves it up to a day) and every sum the lifecycle
# makes (working-memory TTL, time phrases such as "the last 50 years", recency windows). A thousand
# years of margin either side covers them all, and historical dates (year 1000 on) still fit.
EARLIEST_TIME = datetime(1000, 1, 1, tzinfo=timezone.utc)
LATEST_TIME = datetime(8999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc)


@overload
def check_identifier(name: str, value: Any, *, required: Literal[True]) -> str: ...
@overload
def check_identifier(name: str, value: Any, *, required: Literal[False]) -> str | None: ...
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
        raise InvalidInputError(
            f"{name} must not contain bidirectional override characters "
            "(U+202A-U+202E, U+2066-U+2069): they make one id look like another"
        )
    return value


def check_content(value: Any, max_chars: int, field: str = "content") -> str:
    """Memory text: a non-blank string within the size limit."""
    if not isinstance(value, str):
        raise InvalidTypeError(f"{field} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InvalidInputError(f"{field} must not be empty or whitespace")
    if len(value) > max_chars:
        raise InvalidInputError(
            f"{field} is {len(value)} characters; the limit is {max_chars} "
            "(split long text, or ingest it as a document)"
        )
    return check_text(field, value, max_chars=max_chars)


def check_text(name: str, value: Any, *, max_chars: int = MAX_TEXT_CHARS) -> str:
    """A text field other than memory content (a source, an entity or node name, a role, a unit, a
    memory id): valid Unicode that SQLite can store, no NUL characters, at most ``max_chars``."""
    if not isinstance(value, str):
        raise InvalidTypeError(f"{name} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise InvalidInputError(f"{name} must not contain NUL characters")
    surrogate = _SURROGATE_RE.search(value)
    if surrogate:
        raise InvalidInputError(
            f"{name} contains a lone surrogate at character {surrogate.start()} "
            "(not valid Unicode text; decode the source with errors='replace')"
        )
    if len(value) > max_chars:
        raise InvalidInputError(f"{name} is {len(value)} characters long; the limit is {max_chars}")
    return value


def check_items(name: str, value: Any, what: str) -> list[Any]:
    """A list of items from any iterable except a string, bytes or a dict, which would be taken
    apart into letters, bytes or keys; ``what`` names one item in the error."""
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
        raise InvalidTypeError(
            f"{name} must be a list of {what}, got {type(value).__name__}: {shown} "
            "(wrap a single one in a list)"
        )
    return list(value)


def check_number(name: str, value: Any, what: str = "a number") -> float:
    """A finite real number (int or float, not bool) as a float; ``what`` says what is expected."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidTypeError(f"{name} must be {what}, got {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError:  # an int beyond a float's range (its digits are not printed: maybe 10**400)
        raise InvalidInputError(f"{name} must be {what}, got an integer too large for a float") from None
    if not math.isfinite(number):
        raise InvalidInputError(f"{name} must be {what}, got {value}")
    return number


def check_importance(value: Any) -> float:
    """Importance: a real number in [0, 1]."""
    number = check_number("importance", value, "a number in [0, 1]")
    if not 0.0 <= number <= 1.0:
        raise InvalidInputError(f"importance must be in [0, 1], got {value}")
    return number


def check_type(value: Any) -> MemoryTypeName:
    """A memory type name (or MemoryType)."""
    if isinstance(value, MemoryType):
        value = value.value
    if not isinstance(value, str) or value not in MEMORY_TYPES:
        raise InvalidInputError(f"type must be one of {', '.join(MEMORY_TYPES)}; got {value!r}")
    return cast(MemoryTypeName, value)


def check_types(value: Any) -> tuple[MemoryTypeName, ...] | None:
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
    if value > SQLITE_INT_MAX:
        raise InvalidInputError(
            f"{name} must be at most 2**63 - 1 (SQLite's largest integer), "
            f"got an integer of {value.bit_length()} bits"
        )
    return value


def check_offset(value: Any, name: str = "offset") -> int:
    """How many results to skip: a non-negative integer SQLite can hold."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= SQLITE_INT_MAX:
        shown = f"an integer of {value.bit_length()} bits" if isinstance(value, int) else repr(value)
        raise InvalidInputError(f"{name} must be a non-negative integer below 2**63, got {shown}")
    return value


def check_datetime(name: str, value: Any) -> datetime | None:
    """A datetime or an ISO-8601 string within the accepted range (see check_time_range), or None.

    Every time a caller hands RippleMem (event_time, recall's now/since/until, record's at, import
    lines, CLI options) passes here, so none can be stored that a later read could not convert.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        return check_time_range(name, value)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError as exc:
            raise InvalidInputError(f"{name} {value!r} is not an ISO-8601 date/time") from exc
        return check_time_range(name, parsed)
    raise InvalidTypeError(f"{name} must be a datetime or an ISO-8601 string, got {type(value).__name__}")


def check_time_range(name: str, value: datetime) -> datetime:
    """The datetime itself if, read in UTC (naive = UTC), it lies in EARLIEST_TIME..LATEST_TIME."""
    try:
        utc = value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
        inside = EARLIEST_TIME <= utc <= LATEST_TIME
    except (OverflowError, ValueError):  # the offset pushes it past year 1 or 9999
        inside = False
    if not inside:
        raise InvalidInputError(
            f"{name} {value.isoformat()} is outside the accepted range "
            f"{EARLIEST_TIME:%Y-%m-%d} to {LATEST_TIME:%Y-%m-%d} (UTC)"
        )
    return value


def checked_clock(clock: Callable[[], Any]) -> Callable[[], datetime]:
    """A caller's clock whose every reading must be a datetime in the accepted range (it stamps
    created_at, last_accessed and working-memory times)."""
    if not callable(clock):
        raise InvalidTypeError(f"clock must be a callable returning a datetime, got {type(clock).__name__}")

    def read() -> datetime:
        value = clock()
        if not isinstance(value, datetime):
            raise InvalidTypeError(f"clock() must return a datetime, got {type(value).__name__}")
        return check_time_range("clock()", value)

    return read


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
        raise InvalidInputError(
            f"metadata is {len(text)} characters as JSON; the limit is {MAX_METADATA_CHARS}"
        )
    if _depth(value) > MAX_METADATA_DEPTH:
        raise InvalidInputError(
            f"metadata is nested more than {MAX_METADATA_DEPTH} levels deep "
            "(SQLite's JSON functions could not filter on it)"
        )
    if _has_huge_int(value):
        raise InvalidInputError(
            "metadata holds an integer outside -2**63 .. 2**63 - 1, which SQLite's "
            "JSON functions read as an inexact float; store it as a string"
        )
    return dict(value)


def _has_huge_int(value: Any) -> bool:
    """Whether a JSON value holds an int that does not fit SQLite's 64 bits."""
    level = [value]
    while level:
        item = level.pop()
        if isinstance(item, int) and not isinstance(item, bool):
            if not SQLITE_INT_MIN <= item <= SQLITE_INT_MAX:
                return True
        elif isinstance(item, dict):
            level.extend(item.values())
        elif isinstance(item, (list, tuple)):
            level.extend(item)
    return False


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


def check_mode(value: Any, modes: tuple[Mode, ...]) -> Mode:
    """A recall mode name, one of ``modes``."""
    if value not in modes:
        raise InvalidInputError(f"mode must be one of {', '.join(modes)}; got {value!r}")
    return cast(Mode, str(value))


def check_flag(value: Any, name: str = "dry_run") -> bool:
    """A switch such as dry_run: True or False only (bool("no") is True, and a dry run taken for a
    real one would change the store)."""
    if not isinstance(value, bool):
        raise InvalidTypeError(f"{name} must be True or False, got {value!r}")
    return value


def shown_number(value: float) -> str:
    """A number as an error message shows it: itself, or "a huge integer" (an int of thousands of
    digits is unreadable, and str() refuses one past 4300 digits)."""
    return repr(value) if isinstance(value, float) or abs(value) < 10**30 else "a huge integer"


def check_count(name: str, value: Any, *, minimum: int) -> None:
    """Raise unless value is an int (not a bool) of at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise InvalidInputError(f"{name} must be >= {minimum}, got {value}")


def check_nonblank_text(name: str, value: Any) -> str:
    """The stripped string, or InvalidTypeError / InvalidInputError for a non-string or a blank one."""
    if not isinstance(value, str):
        raise InvalidTypeError(f"{name} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InvalidInputError(f"{name} must not be empty")
    return value.strip()
