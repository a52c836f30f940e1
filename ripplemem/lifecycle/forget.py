"""mem.forget(): plan forgetting over a user's memories (the forgetting score or the importance,
time and capacity strategies; docs/design-notes.md#forgetting) and apply the plan to the store.

Applying: "delete" deletes the memory everywhere (archive included); "deprioritize" lowers its
importance by LifecycleSettings.deprioritize_factor (x 0.9 per run: "lower the priority gradually");
its tier is left to the tier rules (archive()), which protect important memories from
leaving the hot tier; "archive" moves it to the
cold tier (its vector into a compressed archive segment). Memories already cold are kept as they
are when the plan says "archive". A dry run returns the same report and changes nothing.
"""

from __future__ import annotations

import time

from ripplemem.core.choices import ForgetStrategy
from ripplemem.engine.engine import Engine
from ripplemem.engine.writes import delete_memories
from ripplemem.errors import InvalidInputError
from ripplemem.lifecycle.archive import move_to_cold
from ripplemem.lifecycle.report import LifecycleEntry, LifecycleReport
from ripplemem.rules.lifecycle.forgetting import STRATEGIES, ForgetPlan, check_forget_options, plan_forgetting
from ripplemem.store.queries.lifecycle import (
    LifecycleRows,
    link_counts,
    read_lifecycle_rows,
    set_importance,
)
from ripplemem.store.tables.history import HistoryEvent, record_history


def check_strategy(strategy: object) -> ForgetStrategy:
    """The forgetting strategy, or a clear error naming the valid ones."""
    if not isinstance(strategy, str) or strategy not in STRATEGIES:
        raise InvalidInputError(f"strategy must be one of {', '.join(STRATEGIES)}; got {strategy!r}")
    return strategy


def plan_for(
    engine: Engine,
    user_id: str,
    rows: LifecycleRows,
    strategy: str,
    now: float,
    *,
    threshold: float | None,
    max_age_days: float | None,
    capacity: int | None,
) -> ForgetPlan:
    """The forgetting plan of these memories; the score strategy reads each memory's graph degree."""
    degree = link_counts(engine.store, user_id, rows.ids) if strategy == "score" else None
    return plan_forgetting(
        rows.ids,
        strategy,
        importance=rows.importance,
        access_count=rows.access_count,
        days_since_access=rows.days_idle(now),
        age_days=rows.age_days(now),
        degree=degree,
        threshold=threshold,
        max_age_days=max_age_days,
        capacity=capacity,
        settings=engine.settings.lifecycle,
    )


def run_forget(
    engine: Engine,
    user_id: str,
    agent_id: str | None,
    strategy: str,
    dry_run: bool,
    *,
    threshold: float | None = None,
    max_age_days: float | None = None,
    capacity: int | None = None,
) -> LifecycleReport:
    """Plan forgetting over a user's active memories and apply it unless dry_run."""
    check_forget_options(strategy, threshold=threshold, max_age_days=max_age_days, capacity=capacity)
    started = time.perf_counter()
    rows = read_lifecycle_rows(engine.store, user_id, agent_id)
    now = engine.now()
    plan = plan_for(
        engine,
        user_id,
        rows,
        strategy,
        now,
        threshold=threshold,
        max_age_days=max_age_days,
        capacity=capacity,
    )
    position = {memory_id: i for i, memory_id in enumerate(rows.ids)}
    report = LifecycleReport(step="forget", strategy=strategy, dry_run=dry_run, considered=len(rows))
    lowered: dict[str, tuple[float, float]] = {}  # deprioritized: importance before and after
    ages = rows.age_days(now)
    grace = engine.settings.lifecycle.forget_grace_days if strategy == "score" else 0.0
    for change in plan.changes():
        i = position[change.id]
        if ages[i] < grace:
            continue  # too new to judge by use and links
        tier = str(rows.tiers[i])
        if change.action == "archive" and tier == "cold":
            continue  # already archived
        to_tier = {"delete": "deleted", "archive": "cold", "deprioritize": tier}
        report.entries.append(
            LifecycleEntry(
                change.id,
                rows.previews[i],
                change.action,
                change.reason,
                change.score,
                tier,
                to_tier[change.action],
            )
        )
        if change.new_importance is not None:
            lowered[change.id] = (float(rows.importance[i]), change.new_importance)
    if not dry_run:
        _apply(engine, user_id, report, lowered, now)
    report.seconds = time.perf_counter() - started
    return report


def _apply(
    engine: Engine, user_id: str, report: LifecycleReport, lowered: dict[str, tuple[float, float]], now: float
) -> None:
    cause = f"forget: {report.strategy}"
    events: dict[str, dict[str, HistoryEvent]] = {"delete": {}, "deprioritize": {}, "archive": {}}
    for entry in report.entries:
        detail = {"reason": entry.reason, "score": entry.score, "from": entry.from_tier, "to": entry.to_tier}
        if entry.id in lowered:
            detail.update(importance_before=lowered[entry.id][0], importance_after=lowered[entry.id][1])
        events[entry.action][entry.id] = HistoryEvent(entry.id, _EVENTS[entry.action], now, cause, detail)
    delete_memories(engine, user_id, list(events["delete"]), history=list(events["delete"].values()))
    if events["deprioritize"]:
        with engine.unit_of_work(user_id) as work, work.transaction() as conn:
            set_importance(conn, user_id, {i: after for i, (_, after) in lowered.items()})
            record_history(conn, user_id, list(events["deprioritize"].values()))
    move_to_cold(engine, user_id, events["archive"])


_EVENTS = {"delete": "forgotten", "deprioritize": "deprioritized", "archive": "archived"}
