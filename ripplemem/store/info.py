"""What a store directory holds, read without opening a handle: whether there is a store, the
embedding model it was built with, and its users."""

from __future__ import annotations

import os

from ripplemem.store.kb_tables import kb_name_of
from ripplemem.store.sqlite import DB_FILENAME, SQLiteStore


def store_exists(path: str) -> bool:
    """Whether a RippleMem store lives in this directory."""
    return os.path.isfile(os.path.join(path, DB_FILENAME))


def recorded_embedder(path: str) -> str | None:
    """The embedding model a store was built with, or None for a new store."""
    if not store_exists(path):
        return None
    store = SQLiteStore(path)
    try:
        return store.get_meta("embedding_model")
    finally:
        store.close()


def store_users(path: str) -> list[str]:
    """Every user with memories in the store at this path (knowledge bases are not users)."""
    store = SQLiteStore(path)
    try:
        return [user for user in store.user_ids() if kb_name_of(user) is None]
    finally:
        store.close()
