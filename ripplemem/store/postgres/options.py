"""The settings of a PostgreSQL store, checked before anything connects."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ripplemem.errors import InvalidInputError
from ripplemem.store.postgres.rows import DEFAULT_POOL_SIZE, DEFAULT_SCHEMA
from ripplemem.store.postgres.uri import is_postgres_uri, redacted

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


@dataclass(frozen=True)
class PostgresOptions:
    """Where a PostgreSQL store lives: the server's URI, the schema of its tables, the pool's size."""

    uri: str
    schema: str = DEFAULT_SCHEMA
    pool_size: int = DEFAULT_POOL_SIZE

    def __repr__(self) -> str:
        return (
            f"PostgresOptions(uri={redacted(self.uri)!r}, schema={self.schema!r}, pool_size={self.pool_size})"
        )


def postgres_options(
    backend: str,
    uri: str | None,
    schema: str | None,
    pool_size: int | None,
    *,
    path: object,
    vector_index: str = "auto",
    chroma_url: str | None = None,
) -> PostgresOptions | None:
    """Check RippleMem(store=StoreOptions(backend="postgres", uri=..., schema=..., pool_size=...));
    None for any other backend (which takes neither schema nor pool_size)."""
    if backend != "postgres":
        if schema is not None or pool_size is not None:
            raise InvalidInputError("schema and pool_size are options of backend='postgres'; drop them")
        return None
    if path is not None:
        raise InvalidInputError(
            "backend='postgres' keeps the whole store on the server: drop path (nothing is written locally)"
        )
    if vector_index != "auto" or chroma_url is not None:
        raise InvalidInputError(
            "backend='postgres' keeps the vectors in pgvector beside the rows: "
            "drop vector_index and chroma_url"
        )
    if not isinstance(uri, str) or not is_postgres_uri(uri):
        shown = redacted(uri) if isinstance(uri, str) else repr(uri)
        raise InvalidInputError(
            f"backend='postgres' needs uri='postgresql://user:password@host/db'; got {shown}"
        )
    chosen_schema = DEFAULT_SCHEMA if schema is None else schema
    if not isinstance(chosen_schema, str) or not _SCHEMA_NAME.fullmatch(chosen_schema):
        raise InvalidInputError(
            f"schema must be a lower-case PostgreSQL name (letters, digits, _; at most 63); got {schema!r}"
        )
    size = DEFAULT_POOL_SIZE if pool_size is None else pool_size
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InvalidInputError(f"pool_size must be a whole number >= 1; got {pool_size!r}")
    return PostgresOptions(uri=uri, schema=chosen_schema, pool_size=size)
