"""A memory's versions and their history: the chain of versions linked by updates (what it superseded
and what superseded it) with every change to them, and, for ``recall(..., history=True)``, each
recalled memory's superseded versions listed right after it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ripplemem.core.clock import time_key
from ripplemem.core.types import Hit, Memory, Recall
from ripplemem.engine.engine import Engine
from ripplemem.errors import MemoryNotFoundError
from ripplemem.retrieval.pipeline import SearchSpec
from ripplemem.retrieval.relevance import with_relevance
from ripplemem.store.queries.revisions import linked_pairs
from ripplemem.store.tables.history import HistoryEvent, read_history
from ripplemem.store.tables.memories import MemoryFilter


def memory_history(engine: Engine, user_id: str, memory_id: str) -> list[HistoryEvent]:
    """Every change to the memory and to the versions linked to it, oldest first; MemoryNotFoundError
    when the user has no such memory."""
    if engine.store.get(memory_id, user_id) is None:
        raise MemoryNotFoundError(f"no memory {memory_id!r} for user {user_id!r}")
    return read_history(engine.store, user_id, version_chain(engine, user_id, memory_id))


def version_chain(engine: Engine, user_id: str, memory_id: str) -> list[str]:
    """The memory and every version linked to it through SUPERSEDES edges, in either direction."""
    chain = [memory_id]
    frontier = [memory_id]
    while frontier:
        pairs = linked_pairs(engine.store, user_id, frontier, "SUPERSEDES")
        frontier = [node for pair in pairs for node in pair if node not in chain]
        chain.extend(dict.fromkeys(frontier))
    return chain


@dataclass(frozen=True)
class Predecessor:
    """A superseded version of a recalled memory, and the id of the version that replaced it."""

    memory: Memory
    superseded_by: str


def superseded_history(engine: Engine, user_id: str, hits: Sequence[Hit]) -> dict[str, list[Predecessor]]:
    """For each recalled memory, the versions it superseded, directly or down the chain, newest first
    (10 mg <- 20 mg <- 40 mg gives [20 mg, 10 mg] for the 40 mg hit); hits that superseded nothing
    are left out."""
    found: dict[str, list[Predecessor]] = {}
    for hit in hits:
        successor: dict[str, str] = {}
        frontier = [hit.memory.id]
        while frontier:
            pairs = linked_pairs(engine.store, user_id, frontier, "SUPERSEDES")
            step = [
                (new, old)
                for new, old in pairs
                if new in frontier and old not in successor and old != hit.memory.id
            ]
            successor.update((old, new) for new, old in step)
            frontier = list(dict.fromkeys(old for _, old in step))
        if successor:
            rows, _ = engine.store.fetch(list(successor), MemoryFilter(user_id=user_id, status="superseded"))
            rows.sort(key=lambda m: time_key(m.valid_to or m.when), reverse=True)
            found[hit.memory.id] = [Predecessor(m, successor[m.id]) for m in rows]
    return found


def with_superseded(hits: Sequence[Hit], history: dict[str, list[Predecessor]]) -> list[Hit]:
    """The hits with each one's superseded versions right after it, scored like it, each saying
    "superseded by <id> on <date>"."""
    merged: list[Hit] = []
    for hit in hits:
        merged.append(hit)
        for old in history.get(hit.memory.id, []):
            until = old.memory.valid_to
            on = until.date().isoformat() if until is not None else "an unknown date"
            merged.append(
                Hit(memory=old.memory, score=hit.score, why=f"superseded by {old.superseded_by} on {on}")
            )
    return merged


def add_history(engine: Engine, query: str, result: Recall, spec: SearchSpec) -> None:
    """recall(history=True): each hit's superseded versions right after it, every hit's relevance
    read again (an earlier version's from its stored vector)."""
    earlier = superseded_history(engine, spec.flt.user_id, result.hits)
    result.hits = with_relevance(engine, query, with_superseded(result.hits, earlier), spec)
