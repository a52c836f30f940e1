"""Bulk import of a file of memories (JSONL or plain text, one memory a line), batch by batch, with
RAM that stays flat however long the file is, and resumable: each batch commits together with the
byte offset it reached, so a run killed part-way continues after the last committed batch.

A JSONL line is a string (the content) or an object with ``content`` and optionally ``type``,
``metadata``, ``event_time``, ``session_id``, ``importance``, ``source`` and ``relations`` (the
fields of ``RippleMem.add``). A text line is the content itself. Blank lines are skipped.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ripplemem.core.choices import ImportFormat, literal_values
from ripplemem.core.relations import coerce_relations
from ripplemem.core.types import Memory, Scope
from ripplemem.core.validation import MAX_METADATA_DEPTH, check_k
from ripplemem.engine.graph_rows import GraphInput
from ripplemem.engine.items import build_memory
from ripplemem.engine.writes import write_batch
from ripplemem.errors import InvalidInputError, InvalidTypeError, StoreError
from ripplemem.lifecycle.reembed import ProgressCallback, progress_reporter
from ripplemem.store.connection import Connection
from ripplemem.store.rows import read_meta, write_meta

if TYPE_CHECKING:
    from ripplemem.engine.engine import Engine

FORMATS = literal_values(ImportFormat)
_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
_META_PREFIX = "import:"


@dataclass
class ImportReport:
    """What one run of an import did; ``skipped`` lines were stored by an earlier, interrupted run."""

    file: str
    user_id: str
    format: str
    lines: int  # non-blank lines of the file (each one memory), this run's and earlier runs'
    stored: int
    merged: int
    skipped: int
    batches: int
    seconds: float
    resumed: bool

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values."""
        return asdict(self)

    def summary(self) -> str:
        """One line for a person."""
        if self.lines and self.skipped == self.lines:
            return (
                f"{self.file} was already imported for {self.user_id!r} ({self.lines} lines); nothing to do"
            )
        done = (
            f"imported {self.stored} memories from {self.file} for {self.user_id!r} in {self.seconds:.1f} s"
        )
        if self.merged:
            done += f"; {self.merged} lines repeated a stored memory and were merged into it"
        if self.resumed:
            done += f"; resumed after {self.skipped} lines an earlier run had stored"
        return done


@dataclass
class _Line:
    number: int
    end: int
    item: dict[str, Any]


@dataclass
class _Progress:
    """How far the import of one file into one scope has come (kept in the store's meta table)."""

    offset: int = 0
    line: int = 0
    items: int = 0
    done: bool = False


def resolve_format(file: str, fmt: str) -> str:
    """'jsonl' or 'text': the given format, or for 'auto' the one the file name suggests."""
    if fmt not in FORMATS:
        raise InvalidInputError(f"format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    if fmt != "auto":
        return fmt
    return "jsonl" if file.lower().endswith(_JSONL_SUFFIXES) else "text"


def read_lines(file: str, fmt: str, offset: int = 0, line: int = 0) -> Iterator[_Line]:
    """The file's items from a byte offset on (``line`` lines precede it), each with its line number
    and the offset just after it; a line that is not a valid item raises an error naming it."""
    with open(file, "rb") as handle:
        handle.seek(offset)
        position = offset
        for raw in handle:
            position += len(raw)
            line += 1
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInputError(
                    f"{file}, line {line}: not UTF-8 text ({exc.reason} at byte {exc.start})"
                ) from None
            text = text.lstrip("\ufeff") if line == 1 else text
            if not text.strip():
                continue
            yield _Line(line, position, _item(file, line, text, fmt))


def _item(file: str, line: int, text: str, fmt: str) -> dict[str, Any]:
    if fmt == "text":
        return {"content": text.strip()}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"{file}, line {line}: not valid JSON ({exc.msg} at column {exc.colno}); "
            "each line must be a JSON string or object (or use --format text)"
        ) from None
    except RecursionError:
        raise InvalidInputError(
            f"{file}, line {line}: JSON nested too deeply to read (metadata may "
            f"nest at most {MAX_METADATA_DEPTH} levels)"
        ) from None
    if isinstance(value, str):
        return {"content": value}
    if not isinstance(value, dict):
        raise InvalidInputError(
            f"{file}, line {line}: expected a JSON string or an object with "
            f"'content', got a JSON {type(value).__name__}"
        )
    return value


@dataclass(frozen=True)
class ImportTarget:
    """Where an import writes: a handle's engine and scope, its chat model, and its LLM extraction
    (``extract(memories, inputs)`` adds the entities and relations it finds to the inputs)."""

    engine: Engine
    scope: Scope
    llm: Any = None
    extract: Callable[[list[Memory], list[GraphInput]], None] | None = None


def import_file(
    mem: ImportTarget,
    file: str | os.PathLike[str],
    *,
    format: str = "auto",
    batch_size: int = 1024,
    progress: bool | ProgressCallback = False,
) -> ImportReport:
    """Import a JSONL or text file into ``mem``'s scope, one memory a line, committing per batch.

    Every remaining line is checked before anything is written (an error names the line). Run it
    again after an interruption and it continues after the last committed batch; a finished file
    is not imported twice (a changed file, by size or time, is a new import).
    """
    start = time.perf_counter()
    path = os.path.realpath(os.fspath(file))
    if not os.path.isfile(path):
        raise InvalidInputError(f"no file to import at {os.fspath(file)!r}")
    check_k(batch_size, "batch_size")
    fmt = resolve_format(path, format)
    scope = mem.scope
    key = _progress_key(path, scope.user_id, scope.agent_id)
    found = mem.engine.store.get_meta(key)
    state = _Progress(**json.loads(found)) if found else _Progress()
    skipped = state.items
    stored = merged = batches = 0
    if not state.done:
        report_done = progress_reporter(progress, _check_lines(mem, path, fmt, state))
        pending: list[_Line] = []
        for line in read_lines(path, fmt, state.offset, state.line):
            pending.append(line)
            if len(pending) == batch_size:
                stored, merged = _add(_write(mem, path, key, state, pending, last=False), stored, merged)
                batches += 1
                report_done(state.items - skipped)
                pending = []
        # The last batch (possibly empty) also marks the file done.
        stored, merged = _add(_write(mem, path, key, state, pending, last=True), stored, merged)
        batches += bool(pending)
        report_done(state.items - skipped)
    return ImportReport(
        file=path,
        user_id=scope.user_id,
        format=fmt,
        lines=state.items,
        stored=stored,
        merged=merged,
        skipped=skipped,
        batches=batches,
        seconds=time.perf_counter() - start,
        resumed=skipped > 0,
    )


def _add(counts: tuple[int, int], stored: int, merged: int) -> tuple[int, int]:
    return stored + counts[0], merged + counts[1]


def _progress_key(path: str, user_id: str, agent_id: str | None) -> str:
    """The meta key of one file's import into one scope: path, size and modification time."""
    stat = os.stat(path)
    identity = "\0".join([path, str(stat.st_size), str(stat.st_mtime_ns), user_id, agent_id or ""])
    return _META_PREFIX + hashlib.sha256(identity.encode("utf-8")).hexdigest()[:32]


def _check_lines(mem: ImportTarget, path: str, fmt: str, state: _Progress) -> int:
    """Validate every line still to import (nothing is kept); returns how many items there are."""
    now = mem.engine.clock()
    count = 0
    for line in read_lines(path, fmt, state.offset, state.line):
        _memory(mem, path, line, now)
        count += 1
    return count


def _memory(mem: ImportTarget, file: str, line: _Line, now: datetime) -> Memory:
    where = f"{file}, line {line.number}"
    memory = build_memory(line.item, 0, "episodic", now, mem.scope, mem.engine.settings, label=where)
    try:
        coerce_relations(line.item.get("relations") or [])
    except (InvalidInputError, InvalidTypeError) as exc:
        raise type(exc)(f"{where}: {exc}") from None
    return memory


def _write(
    mem: ImportTarget, path: str, key: str, state: _Progress, lines: list[_Line], *, last: bool
) -> tuple[int, int]:
    """Store one batch, its progress record committing in the same transaction; returns how many
    lines were stored as new memories and how many merged into a memory they repeat."""
    engine = mem.engine
    before = state.offset
    after = _Progress(
        offset=lines[-1].end if lines else state.offset,
        line=lines[-1].number if lines else state.line,
        items=state.items + len(lines),
        done=last,
    )

    def record(conn: Connection) -> None:
        recorded = read_meta(conn, key)
        if (json.loads(recorded)["offset"] if recorded else 0) != before:
            raise StoreError(
                "another import of this file into this store is running (its progress "
                "moved under this one); let it finish, then run this import again"
            )
        write_meta(conn, key, json.dumps(asdict(after)))

    merged = 0
    if lines:
        now = engine.clock()
        memories = [_memory(mem, path, line, now) for line in lines]
        inputs = [GraphInput(relations=coerce_relations(line.item.get("relations") or [])) for line in lines]
        if mem.extract is not None:
            mem.extract(memories, inputs)
        results = write_batch(engine, mem.scope.user_id, memories, inputs, llm=mem.llm, on_commit=record)
        merged = sum(result.id != memory.id for result, memory in zip(results, memories, strict=True))
    else:
        with engine.unit_of_work(mem.scope.user_id) as work, work.transaction() as conn:
            record(conn)
    state.offset, state.line, state.items, state.done = after.offset, after.line, after.items, after.done
    return len(lines) - merged, merged
