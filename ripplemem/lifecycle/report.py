"""What forget(), archive() and maintain() did (or would do, for a dry run) to which memory, and why."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ripplemem.lifecycle.consolidate import ConsolidationReport


@dataclass(frozen=True)
class LifecycleEntry:
    """One memory's change: its id, the start of its text, the action, the score and the reason."""

    id: str
    preview: str
    action: str
    reason: str
    score: float | None = None
    from_tier: str | None = None
    to_tier: str | None = None


@dataclass
class LifecycleReport:
    """One forget or archive run: every changed memory, and how many were looked at.

    ``step`` is "forget" or "archive"; ``strategy`` is the forgetting strategy or "tiers".
    Memories that keep their place are counted in ``considered`` but not listed.
    """

    step: str
    strategy: str
    dry_run: bool
    considered: int = 0
    entries: list[LifecycleEntry] = field(default_factory=list)
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        """How many memories each action got, plus "keep" for the rest."""
        found: dict[str, int] = {}
        for entry in self.entries:
            found[entry.action] = found.get(entry.action, 0) + 1
        found["keep"] = self.considered - len(self.entries)
        return found

    def ids(self, action: str) -> list[str]:
        """Ids of the memories that got one action."""
        return [entry.id for entry in self.entries if entry.action == action]

    def summary(self, examples: int = 3) -> str:
        """A few readable lines: the counts, then some example entries with their reasons."""
        verb = "would" if self.dry_run else "did"
        counts = ", ".join(f"{action} {total}" for action, total in self.counts().items() if total)
        lines = [
            f"{self.step} ({self.strategy}) {verb}: {counts or 'nothing'} "
            f"of {self.considered} memories in {self.seconds:.2f} s"
        ]
        for entry in self.entries[:examples]:
            lines.append(f"  {entry.action:<12} {entry.id[:8]}  {entry.preview!r}: {entry.reason}")
        if len(self.entries) > examples:
            lines.append(f"  ... and {len(self.entries) - examples} more")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON: the counts and every entry."""
        return {
            "step": self.step,
            "strategy": self.strategy,
            "dry_run": self.dry_run,
            "considered": self.considered,
            "counts": self.counts(),
            "seconds": self.seconds,
            "entries": [dataclasses.asdict(entry) for entry in self.entries],
        }


@dataclass
class MaintenanceReport:
    """One maintain() run: consolidation, forgetting and tier migration, with times and tier counts."""

    user_id: str
    dry_run: bool
    consolidation: ConsolidationReport
    forget: LifecycleReport
    archive: LifecycleReport
    seconds: dict[str, float] = field(default_factory=dict)
    tiers_before: dict[str, int] = field(default_factory=dict)
    tiers_after: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        """Readable lines: what each step did and the tiers before and after."""
        verb = "would" if self.dry_run else "did"
        consolidated = ", ".join(f"{k} {v}" for k, v in self.consolidation.counts().items()) or "nothing"
        lines = [
            f"maintain {self.user_id!r}" + (" (dry run)" if self.dry_run else ""),
            f"consolidate {verb}: {consolidated} in {self.seconds.get('consolidate', 0.0):.2f} s",
            self.forget.summary(),
            self.archive.summary(),
            f"tiers before: {_tiers(self.tiers_before)}; after: {_tiers(self.tiers_after)}",
        ]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "user_id": self.user_id,
            "dry_run": self.dry_run,
            "consolidation": {
                "counts": self.consolidation.counts(),
                "steps": [dataclasses.asdict(s) for s in self.consolidation.steps],
            },
            "forget": self.forget.as_dict(),
            "archive": self.archive.as_dict(),
            "seconds": self.seconds,
            "tiers_before": self.tiers_before,
            "tiers_after": self.tiers_after,
        }


def _tiers(counts: dict[str, int]) -> str:
    return ", ".join(f"{tier} {counts.get(tier, 0)}" for tier in ("hot", "warm", "cold"))
