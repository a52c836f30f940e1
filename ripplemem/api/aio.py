"""The async twins of RippleMem's core calls (mixed into the facade): each runs the sync call in a
worker thread, so the event loop never blocks on embedding or disk."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from ripplemem.types import Memory, Recall


class CoreAsyncMethods:
    """aadd, aadd_many, arecall, aget, aupdate, adelete, alist and astats of a RippleMem handle."""

    add: Any
    add_many: Any
    recall: Any
    get: Any
    update: Any
    delete: Any
    stats: Any

    async def aadd(self, content: str, type: str = "episodic", **kwargs: Any) -> Memory:
        """Async twin of add."""
        return await asyncio.to_thread(self.add, content, type, **kwargs)

    async def aadd_many(self, items: Iterable[Mapping[str, Any] | str], **kwargs: Any) -> list[Memory]:
        """Async twin of add_many."""
        return await asyncio.to_thread(self.add_many, list(items), **kwargs)

    async def arecall(self, query: str, k: int = 10, **kwargs: Any) -> Recall:
        """Async twin of recall."""
        return await asyncio.to_thread(self.recall, query, k, **kwargs)

    async def aget(self, memory_id: str) -> Memory | None:
        """Async twin of get."""
        return await asyncio.to_thread(self.get, memory_id)

    async def aupdate(self, memory_id: str, **kwargs: Any) -> Memory:
        """Async twin of update."""
        return await asyncio.to_thread(self.update, memory_id, **kwargs)

    async def adelete(self, memory_id: str) -> bool:
        """Async twin of delete."""
        return await asyncio.to_thread(self.delete, memory_id)

    async def alist(self, *args: Any, **kwargs: Any) -> list[Memory]:
        """Async twin of list."""
        return await asyncio.to_thread(self.list, *args, **kwargs)  # type: ignore[attr-defined]

    async def astats(self) -> dict[str, Any]:
        """Async twin of stats."""
        return await asyncio.to_thread(self.stats)
