"""How LangGraph namespaces map onto RippleMem scopes, and how stored values become memory text.

A layout such as ``("{user_id}",)`` or ``("memories", "{user_id}", "{session_id}")`` names, position by
position, a literal or a scope field. A namespace must start with the layout; what follows is a
free label kept with the item. ``("alice", "memories")`` under the default layout is user alice's
"memories" namespace.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import get_text_at_path

from ripplemem import InvalidInputError, InvalidTypeError

SCOPE_FIELDS = ("user_id", "agent_id", "session_id")
DEFAULT_LAYOUT: tuple[str, ...] = ("{user_id}",)
_TEXT_FIELDS = ("content", "text", "memory", "data")
_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a is not None and a > b,
    "$gte": lambda a, b: a is not None and a >= b,
    "$lt": lambda a, b: a is not None and a < b,
    "$lte": lambda a, b: a is not None and a <= b,
}


@dataclass(frozen=True)
class Layout:
    """A checked namespace layout: literals and scope placeholders by position."""

    parts: tuple[str, ...]

    @classmethod
    def parse(cls, layout: Sequence[str]) -> Layout:
        """Check a layout: strings, ``{user_id}`` exactly once, other placeholders at most once."""
        if isinstance(layout, str) or not isinstance(layout, Sequence) or not layout:
            raise InvalidTypeError(
                f"layout must be a non-empty tuple of strings such as ('{{user_id}}',), got {layout!r}"
            )
        if not all(isinstance(part, str) and part for part in layout):
            raise InvalidInputError(f"layout parts must be non-empty strings, got {layout!r}")
        fields = [part[1:-1] for part in layout if part.startswith("{") and part.endswith("}")]
        unknown = [name for name in fields if name not in SCOPE_FIELDS]
        if unknown or fields.count("user_id") != 1 or len(set(fields)) != len(fields):
            raise InvalidInputError(
                f"layout {tuple(layout)!r} must hold '{{user_id}}' once and may hold "
                "'{agent_id}' and '{session_id}' once each; other parts are literals"
            )
        return cls(tuple(layout))

    def _field(self, position: int) -> str | None:
        part = self.parts[position]
        return part[1:-1] if part.startswith("{") and part.endswith("}") else None

    def scope_of(self, namespace: tuple[str, ...], *, prefix: bool = False) -> dict[str, str]:
        """The scope fields a namespace (or a search prefix) names; raises if it does not fit the layout."""
        needed = self.parts.index("{user_id}") + 1 if prefix else len(self.parts)
        if len(namespace) < needed:
            raise InvalidInputError(self._misfit(namespace, "is too short to name the user"))
        scope: dict[str, str] = {}
        for position, value in enumerate(namespace[: len(self.parts)]):
            field = self._field(position)
            if field is not None:
                scope[field] = value
            elif value != self.parts[position]:
                raise InvalidInputError(
                    self._misfit(namespace, f"has {value!r} where the layout has {self.parts[position]!r}")
                )
        return scope

    def base_of(self, scope: Mapping[str, str | None]) -> tuple[str, ...] | None:
        """The namespace of a memory stored outside the store (None if a field the layout needs is unset)."""
        namespace = []
        for position, part in enumerate(self.parts):
            field = self._field(position)
            value = part if field is None else scope.get(field)
            if value is None:
                return None
            namespace.append(value)
        return tuple(namespace)

    def _misfit(self, namespace: tuple[str, ...], problem: str) -> str:
        return (
            f"namespace {namespace!r} {problem}; this RippleMemStore's layout is {self.parts!r} "
            "(pass layout= to RippleMemStore to map namespaces differently)"
        )


def check_namespace(namespace: Any, name: str = "namespace") -> tuple[str, ...]:
    """A namespace: a tuple of non-empty strings."""
    if not isinstance(namespace, tuple) or not all(isinstance(part, str) and part for part in namespace):
        raise InvalidTypeError(f"{name} must be a tuple of non-empty strings, got {namespace!r}")
    return namespace


def value_text(value: Mapping[str, Any], paths: Sequence[tuple[str, str | list[str]]] | None) -> str:
    """The text a value is recalled by: the texts at the index paths (LangGraph's path syntax, e.g.
    ``sections[*].text``; several are joined, one per line), else content/text/memory/data, else
    every field as ``key: value`` lines."""
    if paths:
        parts = [text for _, tokens in paths for text in get_text_at_path(value, tokens) if text.strip()]
        if parts:
            return "\n".join(parts)
    for name in _TEXT_FIELDS:
        text = value.get(name)
        if isinstance(text, str) and text.strip():
            return text
    lines = [f"{key}: {_text(item)}" for key, item in value.items()]
    return "\n".join(lines) or "{}"


def matches_filter(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """LangGraph's filter semantics: equality per key, nested dicts, and $eq/$ne/$gt/$gte/$lt/$lte."""
    return all(_compare(value.get(key), wanted) for key, wanted in (conditions or {}).items())


def _compare(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(str(key).startswith("$") for key in wanted):
            try:
                return all(_OPERATORS[op](actual, operand) for op, operand in wanted.items())
            except KeyError as error:
                raise InvalidInputError(
                    f"filter operator {error.args[0]!r} is not one of {', '.join(_OPERATORS)}"
                ) from None
            except TypeError:
                return False
        return isinstance(actual, Mapping) and all(_compare(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(wanted)
            and all(_compare(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return bool(actual == wanted)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def namespace_matches(namespace: tuple[str, ...], match_type: str, path: tuple[str, ...]) -> bool:
    """A ListNamespaces match condition: prefix or suffix, where "*" matches any one part."""
    if len(namespace) < len(path):
        return False
    if match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise InvalidInputError(f"match_type must be 'prefix' or 'suffix', got {match_type!r}")
    return all(want == "*" or got == want for got, want in pairs)
