"""The one way a test reaches beneath the public API, so every such reach is named and easy to find.

Tests use the public API (`stats()`, `list()`, `get()`, `history()`, `check()`) wherever it shows
what a user would notice; `engine_of` is for the few that inspect storage itself: crash recovery,
the vector and media indexes, the ledger's rows, the cold archive, the caches.
"""

from __future__ import annotations

from ripplemem import RippleMem
from ripplemem.engine.engine import Engine


def engine_of(mem: RippleMem) -> Engine:
    """The engine beneath a handle: its SQLite ledger, vector and media indexes, caches and clock."""
    return mem._engine
