"""RippleMem's writes and reads by id (mixed into the facade): add, add_many, import_file, get,
update, delete, list and stats, with their async twins."""

from __future__ import annotations

import asyncio
import builtins
import os
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any

import numpy as np

from ripplemem.api.bulk_import import ImportReport, ImportTarget, import_file
from ripplemem.api.handle import HandleState
from ripplemem.core.choices import ImportFormat, Modality
from ripplemem.core.relations import coerce_relations
from ripplemem.core.types import Memory, MemoryTypeChoice
from ripplemem.core.validation import (
    check_content,
    check_datetime,
    check_identifier,
    check_importance,
    check_items,
    check_k,
    check_metadata,
    check_offset,
    check_text,
    check_type,
    check_types,
)
from ripplemem.engine.graph_rows import GraphInput
from ripplemem.engine.items import build_memory
from ripplemem.engine.writes import delete_memories, embed_batch, update_memory, write_batch
from ripplemem.errors import InvalidTypeError, MemoryNotFoundError
from ripplemem.lifecycle.reembed import ProgressCallback, disk_bytes, progress_reporter
from ripplemem.llm.extraction import LLMExtractor
from ripplemem.store.tables.memories import to_epoch


class CrudMethods(HandleState):
    """add, add_many, import_file, get, update, delete, list and stats of a RippleMem handle."""

    _extractor: LLMExtractor | None

    # -- writes ------------------------------------------------------------------------------
    def add(
        self,
        content: str,
        type: MemoryTypeChoice = "episodic",
        *,
        session_id: str | None = None,
        event_time: datetime | str | None = None,
        importance: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        source: str | None = None,
        modality: Modality = "text",
        relations: Iterable[Any] | None = None,
    ) -> Memory:
        """Store one memory and return it (with its id).

        ``relations`` are facts the memory states, as (subject, predicate, object) tuples or dicts;
        they become entities and RELATES edges of the graph.
        """
        return self.add_many(
            [
                {
                    "content": content,
                    "type": type,
                    "session_id": session_id,
                    "event_time": event_time,
                    "importance": importance,
                    "metadata": metadata,
                    "source": source,
                    "modality": modality,
                    "relations": relations,
                }
            ]
        )[0]

    def add_many(
        self,
        items: Iterable[Mapping[str, Any] | str],
        *,
        type: MemoryTypeChoice = "episodic",
        batch_size: int = 1024,
        progress: bool | ProgressCallback = False,
    ) -> builtins.list[Memory]:
        """Store many memories, embedded in batches; all are validated before any is written.

        Items are dicts with ``content`` and optionally the keyword arguments of ``add``, or plain
        strings. ``progress=True`` shows a progress bar; a callable gets (done, total).
        """
        check_k(batch_size, "batch_size")
        now = self._engine.clock()
        entries: builtins.list[Mapping[str, Any]] = [
            {"content": item} if isinstance(item, str) else item for item in _add_items(items)
        ]
        memories = [
            build_memory(item, position, type, now, self.scope_info, self.settings)
            for position, item in enumerate(entries)
        ]
        inputs = [GraphInput(relations=coerce_relations(item.get("relations") or [])) for item in entries]
        report = progress_reporter(progress, len(memories))
        starts = range(0, len(memories), batch_size)
        stored: list[Memory] = []
        # The model embeds batch n+1 while batch n is written (onnxruntime and the database driver
        # let go of the GIL): the first batch is embedded here, each one after it in the thread.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ripplemem-embed") as embedder:
            upcoming: Future[np.ndarray] | None = None
            for number, start in enumerate(starts):
                batch = memories[start : start + batch_size]
                batch_inputs = inputs[start : start + batch_size]
                if self._extractor is not None:
                    self._extract_into(batch, batch_inputs)
                vectors = upcoming.result() if upcoming is not None else embed_batch(self._engine, batch)
                following = start + batch_size
                upcoming = (
                    embedder.submit(embed_batch, self._engine, memories[following : following + batch_size])
                    if number + 1 < len(starts)
                    else None
                )
                written = write_batch(
                    self._engine, self.user_id, batch, batch_inputs, llm=self.llm, vectors=vectors
                )
                stored.extend(written)
                report(min(following, len(memories)))
        return stored

    def import_file(
        self,
        file: str | os.PathLike[str],
        *,
        format: ImportFormat = "auto",
        batch_size: int = 1024,
        progress: bool | ProgressCallback = False,
    ) -> ImportReport:
        """Import a JSONL or text file, one memory a line, a batch per commit; run it again after an
        interruption and it resumes after the last committed batch (see docs/scale.md)."""
        extract = self._extract_into if self._extractor is not None else None
        target = ImportTarget(self._engine, self.scope_info, self.llm, extract)
        return import_file(target, file, format=format, batch_size=batch_size, progress=progress)

    def _extract_into(self, memories: list[Memory], inputs: list[GraphInput]) -> None:
        assert self._extractor is not None
        for result, target in zip(
            self._extractor.extract_many([m.content for m in memories]), inputs, strict=True
        ):
            target.entities.extend(result.entities)
            target.relations.extend(result.relations)

    def update(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        importance: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        type: MemoryTypeChoice | None = None,
        event_time: datetime | str | None = None,
    ) -> Memory:
        """Change a memory; new content is re-embedded and re-indexed. Returns the new version."""
        current = self._require(memory_id)
        fields: dict[str, Any] = {}
        if content is not None:
            fields["content"] = check_content(content, self.settings.max_content_chars)
        if importance is not None:
            fields["importance"] = check_importance(importance)
        if metadata is not None:
            fields["metadata"] = check_metadata(metadata)
        if type is not None:
            fields["type"] = check_type(type)
        if event_time is not None:
            fields["event_time"] = to_epoch(check_datetime("event_time", event_time))
        if not fields:
            return current
        return update_memory(self._engine, current, fields)

    def delete(self, memory_id: str) -> bool:
        """Delete a memory of this user; True if it existed."""
        _check_memory_id(memory_id)
        return bool(delete_memories(self._engine, self.user_id, [memory_id]))

    def get(self, memory_id: str) -> Memory | None:
        """The memory with this id if it belongs to this user, else None."""
        _check_memory_id(memory_id)
        return self._engine.store.get(memory_id, self.user_id)

    def _require(self, memory_id: str) -> Memory:
        memory = self.get(memory_id)
        if memory is None:
            raise MemoryNotFoundError(f"no memory {memory_id!r} for user {self.user_id!r}")
        return memory

    def list(
        self,
        type: MemoryTypeChoice | Iterable[MemoryTypeChoice] | None = None,
        *,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        limit: int = 100,
        offset: int = 0,
        newest_first: bool = True,
    ) -> builtins.list[Memory]:
        """This user's memories, newest first, optionally of some types, a time range, a session
        or with some metadata values (equality on each given key)."""
        check_offset(offset)
        flt = self._filter(
            types=check_types(type),
            since=to_epoch(check_datetime("since", since)),
            until=to_epoch(check_datetime("until", until)),
            session_id=check_identifier("session_id", session_id, required=False),
            metadata=tuple(check_metadata(metadata).items()),
        )
        return self._engine.store.list(flt, check_k(limit, "limit"), offset, newest_first)

    def stats(self) -> dict[str, Any]:
        """Counts by type, tier and status, the time span, and what the store is built with."""
        engine = self._engine
        counts = engine.store.counts(self.user_id)
        return {
            "user_id": self.user_id,
            "total": sum(counts["by_type"].values()),
            **counts,
            "vectors": engine.index.count(self.user_id),
            "embedding_model": engine.embedder.model_id,
            "vector_index": engine.index.name,
            "path": engine.path,
            "disk_bytes": disk_bytes(engine.path) if engine.path is not None else engine.store.server_bytes(),
        }

    # -- async twins: each runs its sync call in a worker thread, so the event loop never blocks
    async def aadd(
        self,
        content: str,
        type: MemoryTypeChoice = "episodic",
        *,
        session_id: str | None = None,
        event_time: datetime | str | None = None,
        importance: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        source: str | None = None,
        modality: Modality = "text",
        relations: Iterable[Any] | None = None,
    ) -> Memory:
        """Async twin of add."""
        return await asyncio.to_thread(
            self.add,
            content,
            type,
            session_id=session_id,
            event_time=event_time,
            importance=importance,
            metadata=metadata,
            source=source,
            modality=modality,
            relations=relations,
        )

    async def aadd_many(
        self,
        items: Iterable[Mapping[str, Any] | str],
        *,
        type: MemoryTypeChoice = "episodic",
        batch_size: int = 1024,
        progress: bool | ProgressCallback = False,
    ) -> builtins.list[Memory]:
        """Async twin of add_many."""
        return await asyncio.to_thread(
            self.add_many, _add_items(items), type=type, batch_size=batch_size, progress=progress
        )

    async def aget(self, memory_id: str) -> Memory | None:
        """Async twin of get."""
        return await asyncio.to_thread(self.get, memory_id)

    async def aupdate(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        importance: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        type: MemoryTypeChoice | None = None,
        event_time: datetime | str | None = None,
    ) -> Memory:
        """Async twin of update."""
        return await asyncio.to_thread(
            self.update,
            memory_id,
            content=content,
            importance=importance,
            metadata=metadata,
            type=type,
            event_time=event_time,
        )

    async def adelete(self, memory_id: str) -> bool:
        """Async twin of delete."""
        return await asyncio.to_thread(self.delete, memory_id)

    async def alist(
        self,
        type: MemoryTypeChoice | Iterable[MemoryTypeChoice] | None = None,
        *,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        limit: int = 100,
        offset: int = 0,
        newest_first: bool = True,
    ) -> builtins.list[Memory]:
        """Async twin of list."""
        return await asyncio.to_thread(
            self.list,
            type,
            since=since,
            until=until,
            session_id=session_id,
            metadata=metadata,
            limit=limit,
            offset=offset,
            newest_first=newest_first,
        )

    async def astats(self) -> dict[str, Any]:
        """Async twin of stats."""
        return await asyncio.to_thread(self.stats)


def _add_items(items: Any) -> builtins.list[Any]:
    return check_items("items", items, "memories (dicts with 'content', or strings)")


def _check_memory_id(memory_id: Any) -> None:
    if not isinstance(memory_id, str) or not memory_id:
        raise InvalidTypeError(f"memory_id must be a non-empty string, got {memory_id!r}")
    check_text("memory_id", memory_id)
