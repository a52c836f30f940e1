"""What the row store asks of a database connection: the part of DB-API both sqlite3 and the
PostgreSQL connection (store/postgres/connection.py) give, with SQLite's ``?`` placeholders."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol


class Row(Protocol):
    """A result row: its values by position or by column name (sqlite3.Row and the PostgreSQL rows)."""

    def __getitem__(self, key: int | str) -> Any: ...

    def __len__(self) -> int: ...

    def keys(self) -> list[str]:
        """The column names, in order."""
        ...


class Connection(Protocol):
    """A connection of the row store: statements with ``?`` placeholders."""

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on the connection."""
        ...

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Any:
        """Run one statement."""
        ...

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]], /) -> Any:
        """Run one statement for each set of parameters."""
        ...
