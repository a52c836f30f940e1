"""A psycopg connection dressed as the row store's ``Connection``: SQLite-dialect statements
(store/postgres/sql.py), rows readable by position and by name, and errors that name the server
without its password."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ripplemem.errors import StoreError
from ripplemem.store.postgres.sql import postgres_sql
from ripplemem.store.postgres.uri import redacted, scrubbed


class PgRow:
    """One result row: values by position (or slice) and by column name, like sqlite3.Row."""

    __slots__ = ("_values", "_names")

    def __init__(self, values: Sequence[Any], names: dict[str, int]) -> None:
        self._values = tuple(values)
        self._names = names

    def __getitem__(self, key: int | str | slice) -> Any:
        if isinstance(key, str):
            return self._values[self._names[key]]
        return self._values[key]

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Any:
        return iter(self._values)

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, (PgRow, tuple)) else other)

    def __hash__(self) -> int:
        return hash(self._values)

    def __repr__(self) -> str:
        return f"PgRow{self._values!r}"

    def keys(self) -> list[str]:
        """The column names, in order."""
        return list(self._names)


def pg_row_factory(cursor: Any) -> Any:
    """psycopg's row factory for PgRow: the column names are read once per result."""
    names = {column.name: i for i, column in enumerate(cursor.description or ())}
    return lambda values: PgRow(values, names)


class PgConnection:
    """The row store's statements on one psycopg connection (autocommit: BEGIN/COMMIT are explicit)."""

    def __init__(self, raw: Any, uri: str) -> None:
        self.raw = raw
        self._uri = uri

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on the connection."""
        import psycopg

        return bool(self.raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE)

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Any:
        """Run one statement."""
        try:
            return self.raw.execute(postgres_sql(sql), tuple(parameters))
        except Exception as exc:
            raise server_error(exc, self._uri) from exc

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]], /) -> Any:
        """Run one statement for each set of parameters."""
        rows = [tuple(p) for p in seq_of_parameters]
        if not rows:
            return None
        try:
            cursor = self.raw.cursor()
            cursor.executemany(postgres_sql(sql), rows)
            return cursor
        except Exception as exc:
            raise server_error(exc, self._uri) from exc


def server_error(exc: BaseException, uri: str) -> BaseException:
    """A lost connection or an unreachable server as a StoreError naming the server (never its
    password); any other error as it is, so the caller's handling of it is unchanged."""
    import psycopg

    if isinstance(exc, psycopg.OperationalError):
        return StoreError(
            f"the PostgreSQL store at {redacted(uri)} failed: {scrubbed(first_line(exc), uri)}; the call "
            "was not completed (a write in it was rolled back); the next call reconnects"
        )
    return exc


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (psycopg's carry the server's detail below it)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
