"""What RippleMemStore needs of a RippleMem handle beyond its public API, in one place: the embedder
it embeds with, the clock it dates memories by, and the users of the store it is open on."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ripplemem import RippleMem
from ripplemem.store.kb_tables import kb_name_of


def handle_embedder(memory: RippleMem) -> Any:
    """The embedder behind a RippleMem handle (the store embeds every value with it)."""
    return memory._engine.embedder


def handle_now(memory: RippleMem) -> datetime:
    """The handle's clock (``RippleMem(clock=...)``): the time memories are dated by, and TTLs run on."""
    return memory._engine.clock()


def store_users(memory: RippleMem) -> list[str]:
    """Every user with memories in the handle's store (knowledge bases are not users)."""
    return [user for user in memory._engine.store.user_ids() if kb_name_of(user) is None]
