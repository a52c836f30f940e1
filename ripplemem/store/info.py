"""What a store holds, read without opening a handle: whether there is a store, the embedding
model it was built with, and its users; for a store folder or a PostgreSQL schema."""

from __future__ import annotations

import os

from ripplemem.store.postgres.options import PostgresOptions
from ripplemem.store.postgres.rows import PostgresStore, schema_holds_store
from ripplemem.store.rows import RowStore
from ripplemem.store.sqlite.rows import DB_FILENAME, SQLiteStore
from ripplemem.store.tables.knowledge_bases import kb_name_of

# A store folder, or the PostgreSQL schema of a store wholly on a server.
StoreLocation = str | PostgresOptions


def store_exists(location: StoreLocation) -> bool:
    """Whether a RippleMem store lives in this folder (or this PostgreSQL schema)."""
    if isinstance(location, PostgresOptions):
        return schema_holds_store(location.uri, location.schema)
    return os.path.isfile(os.path.join(location, DB_FILENAME))


def recorded_embedder(location: StoreLocation) -> str | None:
    """The embedding model a store was built with, or None for a new store."""
    if not store_exists(location):
        return None
    store = open_rows(location)
    try:
        return store.get_meta("embedding_model")
    finally:
        store.close()


def store_users(location: StoreLocation) -> list[str]:
    """Every user with memories in the store there (knowledge bases are not users)."""
    store = open_rows(location)
    try:
        return [user for user in store.user_ids() if kb_name_of(user) is None]
    finally:
        store.close()


def open_rows(location: StoreLocation) -> RowStore:
    """The row store of a folder (SQLiteStore) or of a PostgreSQL schema (one pooled connection)."""
    if isinstance(location, PostgresOptions):
        return PostgresStore(location.uri, schema=location.schema, pool_size=1)
    return SQLiteStore(location)
