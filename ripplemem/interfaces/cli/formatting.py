"""How the command line shows memories, recalls and stats: aligned lines for people, JSON for tools."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import unicodedata
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ripplemem.core.types import Hit, Memory, Recall

_TYPE_WIDTH = len("perceptual")


def to_json(value: Any) -> str:
    """Pretty JSON with dataclasses as objects, datetimes as ISO-8601 and CJK kept readable."""
    return json.dumps(_plain(value), ensure_ascii=False, indent=2)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def add_progress_option(parser: argparse.ArgumentParser) -> None:
    """Give a long-running command --progress / --no-progress (default: a bar only on a terminal)."""
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on stderr (default: only when stderr is a terminal and not --json)",
    )


def wants_progress(args: argparse.Namespace) -> bool:
    """Whether to draw the bar: as --progress / --no-progress say, else on a terminal without --json."""
    if args.progress is not None:
        return bool(args.progress)
    return not args.json and sys.stderr.isatty()


def print_error(kind: str, message: str, *, as_json: bool) -> None:
    """Report a failed command: `error: ...` on stderr, or with --json
    {"error": {"type": ..., "message": ...}} on stdout, where the JSON reader looks."""
    if as_json:
        print(json.dumps({"error": {"type": kind, "message": message}}, ensure_ascii=False))
    else:
        print(f"error: {message}", file=sys.stderr)


def recall_json(result: Recall, context: str | None) -> str:
    """A recall as JSON: query, mode, hits (score, why, components, memory) and the context if asked."""
    payload: dict[str, Any] = {"query": result.query, "mode": result.mode, "hits": result.hits}
    if context is not None:
        payload["context"] = context
    return to_json(payload)


def date_of(memory: Memory) -> str:
    """The day a memory happened, YYYY-MM-DD, or 'undated'."""
    when = memory.when
    return when.strftime("%Y-%m-%d") if when else "undated"


def hit_lines(hits: list[Hit], indent: str = "") -> list[str]:
    """One aligned line per hit: rank, score, date, type, content."""
    rank_width = len(str(len(hits)))
    lines = []
    for rank, hit in enumerate(hits, 1):
        memory = hit.memory
        prefix = (
            f"{indent}{rank:>{rank_width}}. {hit.score:.3f}  {date_of(memory)}  "
            f"{memory.type:<{_TYPE_WIDTH}}  "
        )
        lines.append(prefix + _fit(memory.content, len(prefix)))
    return lines


def memory_lines(memories: list[Memory]) -> list[str]:
    """One aligned line per memory: short id, date, type, importance, content."""
    lines = []
    for memory in memories:
        prefix = (
            f"{memory.id[:8]}  {date_of(memory)}  {memory.type:<{_TYPE_WIDTH}}  {memory.importance:.2f}  "
        )
        lines.append(prefix + _fit(memory.content, len(prefix)))
    return lines


def added_line(memory: Memory) -> str:
    """What `add` reports: the new id, its type and date."""
    return f"added {memory.id} ({memory.type}, {date_of(memory)})"


def _span(stats: Mapping[str, Any]) -> str:
    oldest, newest = stats.get("oldest"), stats.get("newest")
    if oldest is None or newest is None:
        return "-"
    return f"{oldest:%Y-%m-%d} .. {newest:%Y-%m-%d}"


def _by_type(stats: Mapping[str, Any]) -> str:
    counts = stats.get("by_type") or {}
    return ", ".join(f"{name} {count}" for name, count in sorted(counts.items())) or "none"


def _size(n_bytes: int) -> str:
    size = float(n_bytes)
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def stats_lines(stats: Mapping[str, Any]) -> list[str]:
    """The `stats` report: one labelled line per fact."""
    rows = [
        ("user", stats["user_id"]),
        ("memories", f"{stats['total']} ({_by_type(stats)})"),
        ("sessions", stats.get("sessions", 0)),
        ("time span", _span(stats)),
        ("vectors", f"{stats.get('vectors', 0)} in {stats.get('vector_index', '?')}"),
        ("embedder", stats.get("embedding_model", "?")),
        ("store", f"{stats.get('path') or 'in memory'} ({_size(stats.get('disk_bytes', 0))})"),
    ]
    return [f"{label:<10} {value}" for label, value in rows]


def stats_summary(stats: Mapping[str, Any]) -> str:
    """The stats on one line, for the demo."""
    return (
        f"{stats['total']} memories ({_by_type(stats)}) · {stats.get('sessions', 0)} sessions · "
        f"{_span(stats)} · {stats.get('vectors', 0)} vectors in {stats.get('vector_index', '?')} · "
        f"{_size(stats.get('disk_bytes', 0))} on disk"
    )


def _fit(text: str, used: int) -> str:
    """Text on one line; on a terminal, cut to the columns left (CJK characters count two)."""
    text = " ".join(text.split())
    if not sys.stdout.isatty():
        return text
    room = max(20, shutil.get_terminal_size().columns - used)
    widths = [2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text]
    if sum(widths) <= room:
        return text
    used_columns = 0
    for position, width in enumerate(widths):
        used_columns += width
        if used_columns > room - 1:
            return text[:position] + "…"
    return text
