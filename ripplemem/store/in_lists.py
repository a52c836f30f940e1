"""Queries over many values: an ``IN (...)`` list run in chunks small enough for any SQLite build
(older ones accept at most 999 parameters per statement)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from ripplemem.store.connection import Connection

CHUNK = 500  # values per IN (...) list

_T = TypeVar("_T")


def in_chunks(values: Sequence[_T]) -> Iterator[tuple[str, list[_T]]]:
    """(the ``?,?,...`` marks, the values) of each run of at most CHUNK values, in order."""
    for start in range(0, len(values), CHUNK):
        chunk = list(values[start : start + CHUNK])
        yield ",".join("?" * len(chunk)), chunk


def count_in(conn: Connection, sql: str, values: Sequence[Any], before: Sequence[Any] = ()) -> int:
    """The sum of a ``COUNT(*)`` query whose ``{}`` is the IN list, over the values in chunks
    (``before``: the parameters ahead of the list)."""
    return sum(
        int(conn.execute(sql.format(marks), [*before, *chunk]).fetchone()[0])
        for marks, chunk in in_chunks(values)
    )
