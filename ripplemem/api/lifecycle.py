"""RippleMem's forgetting and scheduled maintenance (mixed into the facade), and the tier migrations
(``mem.lifecycle``)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from ripplemem.api.handle import Namespace
from ripplemem.api.working import WorkingMethods
from ripplemem.core.choices import ForgetStrategy
from ripplemem.core.validation import check_flag
from ripplemem.lifecycle.archive import run_tier_moves
from ripplemem.lifecycle.forget import check_strategy, run_forget
from ripplemem.lifecycle.report import LifecycleReport, MaintenanceReport

if TYPE_CHECKING:
    from ripplemem.lifecycle.consolidate import ConsolidationReport


class LifecycleMethods(WorkingMethods):
    """forget and maintain of a RippleMem handle (and their async twins)."""

    def forget(
        self,
        strategy: ForgetStrategy = "score",
        *,
        dry_run: bool = False,
        threshold: float | None = None,
        max_age_days: float | None = None,
        capacity: int | None = None,
    ) -> LifecycleReport:
        """Forget what is no longer worth keeping; returns what happened to which memory and why.

        ``strategy="score"`` is the forgetting score of docs/design-notes.md#forgetting (importance .30,
        frequency .25, recency .25 around 60 days, connectivity .20): delete >= 0.8, deprioritize >= 0.6
        (importance x 0.9; tiers follow archive()'s rules), archive >= 0.4 (to the cold tier), else
        keep; memories younger than ``forget_grace_days`` (7) are left alone. The simple strategies:
        "importance" deletes below ``threshold`` (0.1), "time" deletes older than ``max_age_days`` (30),
        "capacity" deletes the least important beyond ``capacity`` (10 000) memories.
        ``dry_run=True`` returns the same report and changes nothing. Options are checked before
        anything is read (threshold a finite number in [0, 1], max_age_days one >= 0, capacity an
        integer >= 0) and each is refused with a strategy that does not read it.
        """
        return run_forget(
            self._engine,
            self.user_id,
            self.scope_info.agent_id,
            check_strategy(strategy),
            check_flag(dry_run),
            threshold=threshold,
            max_age_days=max_age_days,
            capacity=capacity,
        )

    def maintain(
        self, *, dry_run: bool = False, strategy: ForgetStrategy = "score", session_id: str | None = None
    ) -> MaintenanceReport:
        """The scheduled job: consolidate, then forget (``strategy``), then archive; one report.

        ``session_id`` limits consolidation to one session's working memory (every session by
        default). ``dry_run=True`` reports what each step would do and changes nothing; each step
        then sees the store as it is, not as the earlier steps would leave it.
        """
        dry = check_flag(dry_run)
        strategy = check_strategy(strategy)
        tiers_before = self._tier_counts()
        seconds: dict[str, float] = {}
        started = time.perf_counter()
        consolidation: ConsolidationReport = self.consolidate(session_id, dry_run=dry)
        seconds["consolidate"] = time.perf_counter() - started
        forgotten = self.forget(strategy, dry_run=dry)
        seconds["forget"] = forgotten.seconds
        moved = Lifecycle(self).archive(dry_run=dry)
        seconds["archive"] = moved.seconds
        return MaintenanceReport(
            user_id=self.user_id,
            dry_run=dry,
            consolidation=consolidation,
            forget=forgotten,
            archive=moved,
            seconds=seconds,
            tiers_before=tiers_before,
            tiers_after=self._tier_counts(),
        )

    def _tier_counts(self) -> dict[str, int]:
        return dict(self._engine.store.counts(self.user_id)["by_tier"])

    # -- async twins -------------------------------------------------------------------------
    async def aforget(
        self,
        strategy: ForgetStrategy = "score",
        *,
        dry_run: bool = False,
        threshold: float | None = None,
        max_age_days: float | None = None,
        capacity: int | None = None,
    ) -> LifecycleReport:
        """Async twin of forget."""
        return await asyncio.to_thread(
            self.forget,
            strategy,
            dry_run=dry_run,
            threshold=threshold,
            max_age_days=max_age_days,
            capacity=capacity,
        )

    async def amaintain(
        self, *, dry_run: bool = False, strategy: ForgetStrategy = "score", session_id: str | None = None
    ) -> MaintenanceReport:
        """Async twin of maintain."""
        return await asyncio.to_thread(
            self.maintain, dry_run=dry_run, strategy=strategy, session_id=session_id
        )


class Lifecycle(Namespace):
    """``mem.lifecycle``: the tier migrations that maintain() runs, on their own."""

    def archive(self, *, dry_run: bool = False) -> LifecycleReport:
        """Run the tier migrations (docs/design-notes.md#tiers) and return every move with its reason.

        hot -> warm after 7 days without access and importance < 0.7; warm -> cold after 30 days
        without access and fewer than 3 accesses (the vector leaves the vector index for a compressed
        archive segment; the memory stays listed, counted and keyword-searchable); cold -> deleted
        after 90 days without access and importance < 0.3. A recall that reaches a cold memory
        brings it back to hot. ``dry_run=True`` changes nothing.
        """
        return run_tier_moves(self._engine, self.user_id, self.scope_info.agent_id, check_flag(dry_run))

    async def aarchive(self, *, dry_run: bool = False) -> LifecycleReport:
        """Async twin of archive."""
        return await asyncio.to_thread(self.archive, dry_run=dry_run)
