"""What the row store asks of a database connection: the part of DB-API both sqlite3 and the
PostgreSQL connection (store/postgres/connection.py) give, with SQLite's ``?`` placeholders."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol


class Row(Protocol):
    """A result row: its values by position or by column name (sqlite3.Row and the PostgreSQL rows)."""

    def __getitem__(self, key: int | str) -> Any: ...

    def __len__(self) -> int: ...

    def keys(self) -> list[str]:
        """The column names, in order."""
        ...


class Cursor(Protocol):
    """The result of one statement: its rows, and how many rows it changed."""

    @property
    def rowcount(self) -> int:
        """How many rows the statement inserted, updated or deleted."""
        ...

    def fetchone(self) -> Any:
        """The next row, or None when there is none."""
        ...

    def fetchall(self) -> list[Any]:
        """The remaining rows."""
        ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """A connection of the row store: statements with ``?`` placeholders."""

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on the connection."""
        ...

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor:
        """Run one statement."""
        ...

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]], /) -> Any:
        """Run one statement for each set of parameters."""
        ...
