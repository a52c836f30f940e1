"""mem.consolidate(): working memory -> long-term memory by the consolidation decision, the
promotions of stored memories (working -> episodic at importance >= 0.7, episodic -> semantic at
>= 0.8), and with a chat model, summaries of clusters of related episodic memories (e.g.
many runs -> "the user runs three times a week") stored as semantic memories with SUMMARIZES
edges to their sources (docs/design-notes.md#consolidation). A dry run returns the same report
and changes nothing (and asks no model).

Working items that leave working memory by expiry or eviction are consolidated on the way out
when the same decision says they should be (`consolidate_dropped`, the engine's on_drop hook).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from ripplemem.core.clock import time_key
from ripplemem.core.types import Memory, Scope
from ripplemem.engine.engine import Engine
from ripplemem.engine.graph_rows import GraphInput
from ripplemem.engine.items import build_memory
from ripplemem.engine.writes import retype_memories, write_batch
from ripplemem.rules.lifecycle.clusters import cluster_related, summarize_cluster
from ripplemem.rules.lifecycle.consolidation import (
    ConsolidationContext,
    decide_consolidation,
    plan_promotions,
)
from ripplemem.rules.lifecycle.working import WorkingItem
from ripplemem.store.queries.revisions import entity_keys, summarized_ids
from ripplemem.store.tables.graph import EdgeRow, entity_id, existing_entity_ids, insert_edges
from ripplemem.store.tables.history import HistoryEvent, record_history
from ripplemem.store.tables.memories import MemoryFilter

logger = logging.getLogger("ripplemem.lifecycle.rules")


@dataclass(frozen=True)
class ConsolidationStep:
    """What happened (or would happen) to one working item, stored memory or cluster, and why.

    For a summary, `sources` are the summarised memories, `text` the summary and `memory_id` the
    semantic memory holding it (None in a dry run, or when the model gave no usable summary).
    """

    id: str
    action: str  # "stored" (a working item written), "promoted", "summarized" or "not summarized"
    from_type: str
    to_type: str
    reason: str
    memory_id: str | None = None
    sources: tuple[str, ...] = ()
    text: str = ""


@dataclass
class ConsolidationReport:
    """Every step of one consolidation run; dry_run says whether anything changed."""

    dry_run: bool
    steps: list[ConsolidationStep] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """How many steps of each action."""
        found: dict[str, int] = {}
        for step in self.steps:
            found[step.action] = found.get(step.action, 0) + 1
        return found


def known_entities(engine: Engine, user_id: str, canonicals: Collection[str]) -> set[str]:
    """The canonical names among these that the user's long-term memory already knows."""
    with engine.store.read() as conn:
        known_ids = existing_entity_ids(conn, user_id, [entity_id(user_id, c) for c in canonicals])
    return {c for c in canonicals if entity_id(user_id, c) in known_ids}


def consolidate_working(
    engine: Engine,
    user_id: str,
    sessions: list[str | None],
    dry_run: bool,
    store: Callable[..., Memory],
    report: ConsolidationReport,
) -> None:
    """Write the working items the consolidation decision says to keep (not those already written)."""
    working = engine.working(user_id)
    for session in sessions:
        memory = working.session(session)
        items = memory.items()
        known = known_entities(engine, user_id, sorted({name for item in items for name in item.entities}))
        for item, decision in memory.decide(known):
            if not decision.consolidates or item.id in engine.consolidated_working_ids:
                continue
            target = decision.target or "episodic"
            stored = None
            if not dry_run:
                engine.consolidated_working_ids.add(item.id)
                stored = store(
                    item.text,
                    type=target,
                    session_id=session,
                    importance=decision.importance,
                    metadata={
                        **dict(item.metadata),
                        "role": item.role,
                        "working_id": item.id,
                        "mention_count": item.mention_count,
                    },
                ).id
            report.steps.append(
                ConsolidationStep(item.id, "stored", "working", target, "; ".join(decision.reasons), stored)
            )


def consolidate_dropped(engine: Engine, user_id: str, item: WorkingItem, reason: str) -> None:
    """on_drop hook: a working item leaving by expiry or eviction ("expired" / "evicted") is written
    to long-term memory when the consolidation decision would keep it now; otherwise it is let go.

    The item has no agent, so it is stored for the user without one. A failure to write is logged,
    not raised: it must not break the observe() or read that noticed the expiry.
    """
    if item.id in engine.consolidated_working_ids:
        return
    known = known_entities(engine, user_id, item.entities)
    context = ConsolidationContext(now=engine.clock(), known_entities=known)
    decision = decide_consolidation(item, context, engine.settings.lifecycle)
    if not decision.consolidates:
        return
    engine.consolidated_working_ids.add(item.id)
    memory = Memory(
        id=uuid.uuid4().hex,
        user_id=user_id,
        type=decision.target or "episodic",
        content=item.text,
        session_id=item.session_id,
        importance=decision.importance,
        created_at=engine.clock(),
        event_time=item.created_at,
        metadata={
            **dict(item.metadata),
            "role": item.role,
            "working_id": item.id,
            "mention_count": item.mention_count,
        },
    )
    try:
        write_batch(
            engine,
            user_id,
            [memory],
            [GraphInput()],
            cause=f"working memory item {reason}: " + "; ".join(decision.reasons),
        )
    except Exception:  # any store or embedder failure: the drop itself must go on
        logger.exception("could not consolidate the %s working memory item %s", reason, item.id)


def promote_stored(
    engine: Engine, user_id: str, dry_run: bool, report: ConsolidationReport, batch: int = 5000
) -> None:
    """Promotions over the user's working and episodic memories."""
    flt = MemoryFilter(user_id=user_id, types=("working", "episodic"))
    candidates: list[Memory] = []
    while page := engine.store.list(flt, batch, len(candidates), newest_first=False):
        candidates += page
    # Planned over everything first: promoting while paging would shift the pages.
    plan = plan_promotions(
        [m.id for m in candidates],
        [m.type for m in candidates],
        [m.importance for m in candidates],
        engine.settings.lifecycle,
    )
    by_id = {m.id: m for m in candidates}
    if not dry_run:
        retype_memories(engine, user_id, [(by_id[step.id], step.to_type, step.reason) for step in plan])
    for step in plan:
        report.steps.append(
            ConsolidationStep(step.id, "promoted", step.from_type, step.to_type, step.reason, step.id)
        )


def summarize_episodic(
    engine: Engine, scope: Scope, llm: Any, dry_run: bool, report: ConsolidationReport
) -> None:
    """Summarise each cluster of related episodic memories no summary covers yet into a semantic
    memory (SUMMARIZES edges summary -> each source); the newest `summary_window` are considered."""
    settings = engine.model_settings().lifecycle
    user_id = scope.user_id
    covered = summarized_ids(engine.store, user_id)
    flt = MemoryFilter(user_id=user_id, types=("episodic",))
    newest = engine.store.list(flt, settings.summary_window, 0, newest_first=True)
    recent = [m for m in newest if m.id not in covered]
    if len(recent) < settings.cluster_min_size:
        return
    memories, vectors = engine.store.fetch([m.id for m in recent], flt, with_embeddings=True)
    entities = entity_keys(engine.store, user_id, [m.id for m in memories])
    by_id = {m.id: m for m in memories}
    for cluster in cluster_related(
        [m.id for m in memories],
        entities=[entities[m.id] for m in memories],
        embeddings=vectors,
        settings=settings,
    ):
        sources = sorted((by_id[i] for i in cluster.ids), key=lambda m: time_key(m.when))
        ids = tuple(m.id for m in sources)
        why = f"{len(ids)} related episodic memories" + (
            f" about {', '.join(cluster.shared_entities[:3])}" if cluster.shared_entities else ""
        )
        if dry_run:
            report.steps.append(
                ConsolidationStep(ids[0], "summarized", "episodic", "semantic", why, None, ids)
            )
            continue
        text = summarize_cluster(llm, [m.content for m in sources], settings=settings)
        if text is None:
            report.steps.append(
                ConsolidationStep(
                    ids[0],
                    "not summarized",
                    "episodic",
                    "semantic",
                    f"{why}; the model gave no usable summary",
                    None,
                    ids,
                )
            )
            continue
        item = {
            "content": text,
            "importance": max(m.importance for m in sources),
            "event_time": sources[-1].when,
            "metadata": {"summarizes": list(ids)},
        }
        memory = build_memory(item, 0, "semantic", engine.clock(), scope, engine.settings)
        summary = write_batch(engine, user_id, [memory], [GraphInput()], cause=f"summary of {why}")[0]
        _link_summary(engine, user_id, summary.id, ids, why)
        report.steps.append(
            ConsolidationStep(ids[0], "summarized", "episodic", "semantic", why, summary.id, ids, text)
        )


def _link_summary(engine: Engine, user_id: str, summary_id: str, sources: tuple[str, ...], why: str) -> None:
    """SUMMARIZES edges from a summary to its sources, and "summarized" events on all of them."""
    now = engine.now()
    edges = [EdgeRow(summary_id, source, "SUMMARIZES", created_at=now) for source in sources]
    events = [HistoryEvent(summary_id, "summarized", now, f"summary of {why}", {"sources": list(sources)})]
    events += [
        HistoryEvent(
            source,
            "summarized",
            now,
            f"summarised with {len(sources) - 1} related memories",
            {"into": summary_id},
        )
        for source in sources
    ]
    with engine.unit_of_work(user_id) as work:
        with work.transaction() as conn:
            insert_edges(conn, user_id, edges)
            record_history(conn, user_id, events)
        work.added([], edges)
