"""Move a store between backends: ``ripplemem.migrate("./memories", "postgresql://...")`` copies an
embedded store into a PostgreSQL schema (or back, or into a new folder), every row and vector as it
was (ripplemem.store.transfer); the target's vector index is rebuilt on its first open."""

from __future__ import annotations

import os

from ripplemem.engine.engine import prepare_directory
from ripplemem.errors import InvalidInputError, StoreError
from ripplemem.lifecycle.reembed import ProgressCallback, progress_reporter
from ripplemem.store.info import store_exists
from ripplemem.store.postgres.options import postgres_options
from ripplemem.store.postgres.rows import PostgresStore
from ripplemem.store.postgres.uri import is_postgres_uri, redacted
from ripplemem.store.rows import RowStore
from ripplemem.store.sqlite.rows import SQLiteStore
from ripplemem.store.transfer import MigrationReport, copy_store, table_counts

StoreLocation = str | os.PathLike[str]


def migrate(
    source: StoreLocation,
    target: StoreLocation,
    *,
    schema: str | None = None,
    replace: bool = False,
    progress: bool | ProgressCallback = False,
) -> MigrationReport:
    """Copy the store at ``source`` into ``target``, each a store folder or a ``postgresql://`` URI
    (``schema``: the PostgreSQL schema, default "ripplemem"). A target holding rows is refused
    unless ``replace=True``; ``progress``: a bar on the terminal, or a (done, total) callable."""
    src, dst = _where(source, schema), _where(target, schema)
    if src == dst:
        raise InvalidInputError(f"the source and the target are the same store ({_shown(src)}); name another")
    if isinstance(src, str) and not store_exists(src):
        raise StoreError(f"no RippleMem store at {src!r} to migrate from; pass the folder of a store")
    source_store = _open(src)
    try:
        target_store = _open(dst)
        try:
            report = progress_reporter(progress, sum(table_counts(source_store).values()), unit="row")
            return copy_store(source_store, target_store, replace=replace, progress=report)
        finally:
            target_store.close()
    finally:
        source_store.close()


def _where(location: StoreLocation, schema: str | None) -> str | tuple[str, str]:
    """A folder's absolute path, or a PostgreSQL (URI, schema) checked before anything connects."""
    text = os.fspath(location)
    if isinstance(text, bytes) or not text:
        raise InvalidInputError(f"a store is a folder or a postgresql:// URI; got {location!r}")
    if is_postgres_uri(text):
        options = postgres_options("postgres", text, schema, None, path=None)
        assert options is not None
        return options.uri, options.schema
    return os.path.abspath(os.path.expanduser(text))


def _shown(where: str | tuple[str, str]) -> str:
    return where if isinstance(where, str) else f"{redacted(where[0])} (schema {where[1]})"


def _open(where: str | tuple[str, str]) -> RowStore:
    if isinstance(where, str):
        return SQLiteStore(prepare_directory(where))
    uri, schema = where
    return PostgresStore(uri, schema=schema)
