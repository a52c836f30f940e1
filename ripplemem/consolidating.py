"""mem.consolidate(): working memory -> long-term memory by seed 000 §3's decision, and seed 001's
promotions of stored memories (working -> episodic at importance >= 0.7, episodic -> semantic at
>= 0.8). A dry run returns the same report and changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ripplemem.engine import Engine
from ripplemem.lifecycle.consolidation import plan_promotions
from ripplemem.stores.graph_tables import entity_id, existing_entity_ids
from ripplemem.stores.sqlite import MemoryFilter
from ripplemem.types import Memory


@dataclass(frozen=True)
class ConsolidationStep:
    """What happened (or would happen) to one working item or stored memory, and why."""

    id: str
    action: str  # "stored" (a working item written to long-term memory) or "promoted"
    from_type: str
    to_type: str
    reason: str
    memory_id: str | None = None


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


def consolidate_working(engine: Engine, user_id: str, sessions: list[str | None], dry_run: bool,
                        store: Callable[..., Memory], report: ConsolidationReport) -> None:
    """Write the working items seed 000 §3 says to keep (not those already written)."""
    working = engine.working(user_id)
    for session in sessions:
        memory = working.session(session)
        items = memory.items()
        canonicals = sorted({name for item in items for name in item.entities})
        with engine.store.read() as conn:
            known_ids = existing_entity_ids(conn, user_id, [entity_id(user_id, c) for c in canonicals])
        known = {c for c in canonicals if entity_id(user_id, c) in known_ids}
        for item, decision in memory.decide(known):
            if not decision.consolidates or item.id in engine.consolidated_working_ids:
                continue
            target = decision.target or "episodic"
            stored = None
            if not dry_run:
                engine.consolidated_working_ids.add(item.id)
                stored = store(item.text, type=target, session_id=session, importance=decision.importance,
                               metadata={**dict(item.metadata), "role": item.role, "working_id": item.id,
                                         "mention_count": item.mention_count}).id
            report.steps.append(ConsolidationStep(item.id, "stored", "working", target,
                                                  "; ".join(decision.reasons), stored))


def promote_stored(engine: Engine, user_id: str, dry_run: bool, update: Callable[..., Any],
                   report: ConsolidationReport, batch: int = 5000) -> None:
    """Seed 001 promotions over the user's working and episodic memories."""
    flt = MemoryFilter(user_id=user_id, types=("working", "episodic"))
    candidates: list[Memory] = []
    while page := engine.store.list(flt, batch, len(candidates), newest_first=False):
        candidates += page
    # Planned over everything first: promoting while paging would shift the pages.
    plan = plan_promotions([m.id for m in candidates], [m.type for m in candidates],
                           [m.importance for m in candidates], engine.settings.lifecycle)
    for step in plan:
        if not dry_run:
            update(step.id, type=step.to_type)
        report.steps.append(ConsolidationStep(step.id, "promoted", step.from_type, step.to_type,
                                              step.reason, step.id))
