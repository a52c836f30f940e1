"""Tier migrations applied to the store (docs/design-notes.md#tiers): hot -> warm is a label,
warm -> cold moves a memory's vector out of the vector index and SQLite into a compressed archive
segment, cold -> deleted deletes, and a recall that reaches a cold memory wakes it (segment ->
SQLite + index, hot).

Cold memories stay active: listed, counted, found by keywords and reachable through the graph,
only dense search no longer sees them. Every applied change writes a history event in the same
SQLite transaction as the change.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ripplemem.engine.engine import Engine
from ripplemem.engine.writes import delete_memories
from ripplemem.lifecycle.report import LifecycleEntry, LifecycleReport
from ripplemem.rules.lifecycle.settings import DEFAULT_SETTINGS
from ripplemem.rules.lifecycle.tiers import plan_tier_moves, plan_wakeups
from ripplemem.store.cold_segments import archive_of
from ripplemem.store.queries.lifecycle import (
    archive_locations,
    archived_with_vectors,
    index_metadatas,
    mark_archived,
    mark_woken,
    read_lifecycle_rows,
    set_tier,
    stored_vectors,
)
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.history import HistoryEvent, record_history

TIER_CAUSE = "tiers"


def move_to_cold(engine: Engine, user_id: str, events: dict[str, HistoryEvent]) -> list[str]:
    """Archive the vectors of these memories (the keys of `events`) and mark them cold.

    The segment is written first, then SQLite drops its copy in one transaction (with the history
    events), then the vector index forgets them; if SQLite fails, the new segments are removed.
    Memories without a stored vector (already cold) are skipped. Returns the ids moved.
    """
    with engine.unit_of_work(user_id) as work:
        with work.read() as conn:
            ids, vectors = stored_vectors(conn, user_id, list(events))
        if not ids:
            return []
        where = work.archive.write(user_id, ids, vectors, engine.settings.lifecycle.archive_segment_size)
        try:
            with work.transaction() as conn:
                mark_archived(conn, user_id, where)
                record_history(conn, user_id, [events[i] for i in ids])
        except BaseException:
            work.archive.remove(user_id, where)
            raise
        work.index.delete(user_id, ids)
        work.media.remove(user_id, ids)  # modality vectors stay in SQLite, out of their index
    return ids


def wake(engine: Engine, user_id: str, events: dict[str, HistoryEvent]) -> list[str]:
    """Bring cold memories (the keys of `events`) back to hot: vector from its segment into SQLite
    and the vector index, then out of the segment. Returns the ids woken."""
    with engine.unit_of_work(user_id) as work:
        with work.read() as conn:
            where = archive_locations(conn, user_id, list(events))
            metas = index_metadatas(conn, user_id, list(where))
        vectors = work.archive.vectors(user_id, where)
        if not vectors:
            return []
        woken = list(vectors)
        with work.transaction() as conn:
            mark_woken(conn, user_id, vectors)
            record_history(conn, user_id, [events[i] for i in woken])
        work.index.add(user_id, woken, np.stack([vectors[i] for i in woken]), [metas[i] for i in woken])
        work.media.restore(user_id, woken)
        work.archive.remove(user_id, {i: where[i] for i in woken})
    return woken


def relabel(engine: Engine, user_id: str, events: dict[str, HistoryEvent], tier: str) -> None:
    """Set the tier label of memories whose vectors stay where they are (hot <-> warm)."""
    if not events:
        return
    with engine.unit_of_work(user_id) as work, work.transaction() as conn:
        set_tier(conn, user_id, list(events), tier)
        record_history(conn, user_id, list(events.values()))


def run_tier_moves(engine: Engine, user_id: str, agent_id: str | None, dry_run: bool) -> LifecycleReport:
    """Plan the tier migrations over a user's memories and apply them unless dry_run."""
    started = time.perf_counter()
    rows = read_lifecycle_rows(engine.store, user_id, agent_id)
    now = engine.now()
    plan = plan_tier_moves(
        rows.ids,
        tiers=rows.tiers,
        importance=rows.importance,
        access_count=rows.access_count,
        days_since_access=rows.days_idle(now),
        settings=engine.settings.lifecycle,
    )
    preview = dict(zip(rows.ids, rows.previews, strict=True))
    report = LifecycleReport(step="archive", strategy="tiers", dry_run=dry_run, considered=len(rows))
    moves = plan.moves()
    report.entries = [
        LifecycleEntry(
            m.id,
            preview[m.id],
            "delete" if m.to_tier == "deleted" else m.to_tier,
            m.reason,
            m.access_score,
            m.from_tier,
            m.to_tier,
        )
        for m in moves
    ]
    if not dry_run:
        events = {
            m.id: HistoryEvent(
                m.id,
                _EVENTS[m.to_tier],
                now,
                TIER_CAUSE,
                {
                    "from": m.from_tier,
                    "to": m.to_tier,
                    "reason": m.reason,
                    "access_score": round(m.access_score, 4),
                },
            )
            for m in moves
        }
        by_target = {
            tier: {m.id: events[m.id] for m in moves if m.to_tier == tier}
            for tier in ("warm", "cold", "deleted")
        }
        relabel(engine, user_id, by_target["warm"], "warm")
        move_to_cold(engine, user_id, by_target["cold"])
        going = by_target["deleted"]
        delete_memories(engine, user_id, list(going), history=list(going.values()))
    report.seconds = time.perf_counter() - started
    return report


def rearchive_store(store: RowStore) -> int:
    """After re-embedding a store: cold memories' new vectors (now in SQLite) go into new segments
    and their old-model segments are removed. Returns how many were re-archived."""
    archive = archive_of(store)
    total = 0
    for user_id in store.user_ids():
        with store.read() as conn:
            old = archived_with_vectors(conn, user_id)
            ids, vectors = stored_vectors(conn, user_id, list(old))
        if not ids:
            continue
        where = archive.write(user_id, ids, vectors, DEFAULT_SETTINGS.archive_segment_size)
        with store.transaction() as conn:
            mark_archived(conn, user_id, where)
        archive.remove(user_id, old)
        total += len(ids)
    return total


_EVENTS = {"hot": "woken", "warm": "cooled", "cold": "archived", "deleted": "forgotten"}


def wake_memories(
    engine: Engine, user_id: str, ids: Sequence[str], tiers: Sequence[str], now: float, cause: str
) -> list[str]:
    """Move the warm and cold memories among `ids` back to hot (plan_wakeups); returns
    the ids that moved."""
    plan = plan_wakeups(list(ids), tiers=list(tiers), touched=np.ones(len(ids), dtype=bool))
    events = {
        m.id: HistoryEvent(m.id, "woken", now, cause, {"from": m.from_tier, "to": "hot", "reason": m.reason})
        for m in plan.moves()
    }
    warm = {i: event for i, event in events.items() if event.detail["from"] == "warm"}
    cold = {i: event for i, event in events.items() if event.detail["from"] == "cold"}
    relabel(engine, user_id, warm, "hot")
    return [*warm, *wake(engine, user_id, cold)] if cold else list(warm)
