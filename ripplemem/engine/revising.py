"""Carry out a WritePlan (ripplemem.engine.write_plans) inside the write's transaction: merged duplicates,
superseded memories with valid_to, SUPERSEDES and CONTRADICTS edges, belief states, and the
change log ("added", "merged", "superseded" / "supersedes", "contradicted").

Belief states (preference, stated fact or passing emotion;
docs/design-notes.md#duplicates-and-conflicts) are kept in each contradicting memory's metadata
under "belief", unless the caller set that key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ripplemem.core.types import Memory
from ripplemem.engine.write_plans import Link, WritePlan
from ripplemem.store.connection import Connection
from ripplemem.store.queries.revisions import MergeUpdate, merge_rows, set_beliefs, supersede_rows
from ripplemem.store.tables.graph import EdgeRow, insert_edges
from ripplemem.store.tables.history import HistoryEvent, record_history
from ripplemem.store.tables.memories import to_epoch


@dataclass
class Revisions:
    """What applying a plan changed beyond the new rows: edges, and stored memories touched."""

    edges: list[EdgeRow] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)


def merge_within_batch(plan: WritePlan, memories: Sequence[Memory]) -> None:
    """Fold duplicates into the earlier batch items they repeat (before those are stored)."""
    by_id = {memories[i].id: memories[i] for i in plan.fresh}
    for merge in plan.merges:
        target = by_id.get(merge.target)
        if target is None:
            continue
        source = memories[merge.position]
        target.mention_count += 1
        target.importance = max(target.importance, source.importance)
        if _epoch(source) > _epoch(target):
            target.event_time = source.when
        target.metadata = {**source.metadata, **target.metadata}
    for link in plan.links:
        if link.kind == "contradiction":
            for memory_id, belief in _beliefs(link).items():
                if memory_id in by_id:
                    by_id[memory_id].metadata.setdefault("belief", belief)


def apply_revisions(
    conn: Connection,
    user_id: str,
    plan: WritePlan,
    memories: Sequence[Memory],
    now: float,
    cause: str,
) -> Revisions:
    """Write the plan's effects on stored memories, its edges and every history event."""
    done = Revisions()
    merges: dict[str, MergeUpdate] = {}
    events = [
        HistoryEvent(memories[i].id, "added", now, cause, {"type": memories[i].type}) for i in plan.fresh
    ]
    for merge in plan.merges:
        source = memories[merge.position]
        stored = plan.stored.get(merge.target)
        if stored is not None:
            update = merges.setdefault(
                merge.target,
                MergeUpdate(
                    when=_epoch(stored), importance=stored.importance, metadata=dict(stored.metadata)
                ),
            )
            update.mentions += 1
            update.importance = max(update.importance, source.importance)
            update.when = max(update.when, _epoch(source))
            update.metadata = {**source.metadata, **update.metadata}
        events.append(
            HistoryEvent(
                merge.target, "merged", now, merge.verdict.reason, {"text": source.content, "cause": cause}
            )
        )
    merge_rows(conn, user_id, merges)
    done.merged = list(merges)

    until = {
        link.other: to_epoch(link.since) or now
        for link in plan.links
        if link.kind == "update" and link.other in plan.stored
    }
    supersede_rows(conn, user_id, until)
    done.superseded = list(until)
    beliefs: dict[str, str] = {}
    for link in plan.links:
        done.edges.append(_edge(link, now))
        events.extend(_link_events(link, now))
        if link.kind == "contradiction":
            beliefs.update({k: v for k, v in _beliefs(link).items() if k in plan.stored})
    set_beliefs(conn, user_id, beliefs)
    insert_edges(conn, user_id, done.edges)
    record_history(conn, user_id, events)
    return done


def _epoch(memory: Memory) -> float:
    return to_epoch(memory.when) or 0.0


def _beliefs(link: Link) -> dict[str, str]:
    return {link.current: link.verdict.belief_new, link.other: link.verdict.belief_existing}


def _edge(link: Link, now: float) -> EdgeRow:
    kind = "SUPERSEDES" if link.kind == "update" else "CONTRADICTS"
    return EdgeRow(link.current, link.other, kind, predicate=link.verdict.slot or "", created_at=now)


def _link_events(link: Link, now: float) -> list[HistoryEvent]:
    verdict = link.verdict
    values: dict[str, Any] = {"slot": verdict.slot, "subject": verdict.subject, "judged_by": verdict.source}
    if link.kind == "contradiction":
        return [
            HistoryEvent(
                link.current,
                "contradicted",
                now,
                verdict.reason,
                {**values, "with": link.other, "belief": verdict.belief_new},
            ),
            HistoryEvent(
                link.other,
                "contradicted",
                now,
                verdict.reason,
                {**values, "with": link.current, "belief": verdict.belief_existing},
            ),
        ]
    since = link.since.isoformat() if link.since is not None else None
    return [
        HistoryEvent(
            link.other, "superseded", now, verdict.reason, {**values, "by": link.current, "valid_to": since}
        ),
        HistoryEvent(link.current, "supersedes", now, verdict.reason, {**values, "of": link.other}),
    ]
