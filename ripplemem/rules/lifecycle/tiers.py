"""Hot / warm / cold tiers: planned migrations with reasons, over arrays of memories
(docs/design-notes.md#tiers).

The source's rules, "days idle" being days since the last access (or since creation if never
accessed):

- hot -> warm: 7 days idle and importance < 0.7;
- warm -> cold: 30 days idle and fewer than 3 accesses in all;
- cold -> deleted: 90 days idle and importance < 0.3;
- cold -> hot: an associative query reaches it (`plan_wakeups`).

With `cascade=True` (the default) one run applies the rules until nothing moves, so a memory idle
for 100 days with importance 0.2 and no accesses goes hot -> deleted in one run (the reason says
every step); with `cascade=False` each memory moves one step per run. The source's access score
0.7 x exp(-days_idle / 7) + 0.3 x min(access_count / 10, 1) is reported with each move, and
`tier_by_access_score` is the source's other reading (_evaluate_tier), kept for comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from ripplemem.core.clock import aware
from ripplemem.errors import InvalidInputError
from ripplemem.rules.lifecycle._common import as_float_array, as_ids
from ripplemem.rules.lifecycle.settings import DEFAULT_SETTINGS, LifecycleSettings

TIERS: tuple[str, ...] = ("hot", "warm", "cold")


def days_since(
    now: datetime,
    times: Sequence[datetime | float | None] | np.ndarray,
    fallback: Sequence[datetime | float | None] | np.ndarray | None = None,
) -> np.ndarray:
    """Days from each time to now (datetimes, or Unix seconds); None takes the fallback's time.

    `days_since(now, last_accessed, fallback=created_at)` is the "days idle" the rules read.
    A time missing in both reads as now (0 days).
    """
    reference = aware(now, "now").timestamp()
    values = list(times)
    backup = list(fallback) if fallback is not None else [None] * len(values)
    if len(backup) != len(values):
        raise InvalidInputError(f"fallback has {len(backup)} values, expected {len(values)}")
    seconds = np.empty(len(values))
    for index, (value, other) in enumerate(zip(values, backup, strict=True)):
        chosen = value if value is not None else other
        if chosen is None:
            seconds[index] = reference
        elif isinstance(chosen, datetime):
            seconds[index] = aware(chosen).timestamp()
        else:
            seconds[index] = float(chosen)
    return np.maximum(reference - seconds, 0.0) / 86400.0


def access_score(
    days_since_access: Any, access_count: Any, settings: LifecycleSettings = DEFAULT_SETTINGS
) -> np.ndarray:
    """The access score: 0.7 x exp(-days_idle / 7) + 0.3 x min(access_count / 10, 1), in [0, 1]."""
    idle = np.maximum(as_float_array(days_since_access, "days_since_access"), 0.0)
    count = np.maximum(as_float_array(access_count, "access_count", len(idle)), 0.0)
    scores: np.ndarray = settings.access_time_weight * np.exp(
        -idle / settings.access_decay_days
    ) + settings.access_count_weight * np.minimum(count / settings.access_count_saturation, 1.0)
    return scores


def tier_by_access_score(
    scores: Any, importance: Any, settings: LifecycleSettings = DEFAULT_SETTINGS
) -> np.ndarray:
    """The source's _evaluate_tier: hot if access > 0.7 and importance > 0.7; warm if access > 0.3
    or importance > 0.5; else cold."""
    access = as_float_array(scores, "scores")
    imp = as_float_array(importance, "importance", len(access))
    s = settings
    return np.select(
        [
            (access > s.tier_hot_access) & (imp > s.tier_hot_importance),
            (access > s.tier_warm_access) | (imp > s.tier_warm_importance),
        ],
        ["hot", "warm"],
        default="cold",
    ).astype(object)


@dataclass(frozen=True)
class TierMove:
    """One memory's planned move: from and to tier ("deleted" for the last step), why, access score."""

    id: Any
    from_tier: str
    to_tier: str
    reason: str
    access_score: float


_NAMES = np.array([*TIERS, "deleted"], dtype=object)
_DELETED = 3


class TierPlan:
    """Where each considered memory goes; only `moves()` change anything. Reasons are made on demand."""

    def __init__(
        self,
        ids: list[Any],
        from_codes: np.ndarray,
        to_codes: np.ndarray,
        reason: Callable[[int], str],
        scores: np.ndarray,
    ) -> None:
        self.ids = ids
        self._from = from_codes
        self._to = to_codes
        self._reason = reason
        self.access_scores = scores

    @property
    def from_tiers(self) -> np.ndarray:
        """Each memory's tier before the plan."""
        names: np.ndarray = _NAMES[self._from]
        return names

    @property
    def to_tiers(self) -> np.ndarray:
        """Each memory's tier after the plan ("deleted" included)."""
        names: np.ndarray = _NAMES[self._to]
        return names

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[TierMove]:
        return iter(self.moves())

    def moves(self) -> list[TierMove]:
        """The memories that change tier (or are deleted), in input order."""
        return [
            TierMove(
                self.ids[i],
                str(_NAMES[self._from[i]]),
                str(_NAMES[self._to[i]]),
                self._reason(i),
                float(self.access_scores[i]),
            )
            for i in np.flatnonzero(self._from != self._to).tolist()
        ]

    def ids_to(self, tier: str) -> list[Any]:
        """Ids of the memories moving into a tier ("hot", "warm", "cold" or "deleted")."""
        code = _code(tier)
        return [self.ids[i] for i in np.flatnonzero((self._to == code) & (self._from != code)).tolist()]

    def counts(self) -> dict[str, int]:
        """How many memories end up in each tier, "deleted" included."""
        totals = np.bincount(self._to, minlength=len(_NAMES))
        return {str(name): int(total) for name, total in zip(_NAMES, totals, strict=True)}

    def __repr__(self) -> str:
        moved = int(np.count_nonzero(self._from != self._to))
        return f"TierPlan({moved} moves of {len(self.ids)}, after: {self.counts()})"


def plan_tier_moves(
    ids: Sequence[Any],
    *,
    tiers: Sequence[str] | np.ndarray,
    importance: Any,
    access_count: Any,
    days_since_access: Any,
    cascade: bool = True,
    settings: LifecycleSettings = DEFAULT_SETTINGS,
) -> TierPlan:
    """Tier migrations for arrays of memories; see the module docstring for the rules."""
    id_list = as_ids(ids)
    n = len(id_list)
    current = _tier_codes(tiers, n)
    imp = as_float_array(importance, "importance", n)
    count = as_float_array(access_count, "access_count", n)
    idle = as_float_array(days_since_access, "days_since_access", n)
    s = settings
    rules = (
        (idle >= s.hot_to_warm_idle_days) & (imp < s.hot_to_warm_max_importance),
        (idle >= s.warm_to_cold_idle_days) & (count < s.warm_to_cold_max_accesses),
        (idle >= s.cold_delete_idle_days) & (imp < s.cold_delete_max_importance),
    )
    target = current.copy()
    taken = np.zeros(n, dtype=np.int8)  # bit k: step k (hot->warm, warm->cold, cold->deleted) applied
    for step, rule in enumerate(rules):
        eligible = (target == step) & rule
        if not cascade:
            eligible &= taken == 0
        target[eligible] = step + 1
        taken[eligible] |= np.int8(1 << step)

    def reason(i: int) -> str:
        days, weight, uses = float(idle[i]), float(imp[i]), int(count[i])
        parts = []
        if taken[i] & 1:
            parts.append(
                f"hot -> warm: {days:.0f} d idle >= {s.hot_to_warm_idle_days:g} and importance "
                f"{weight:.2f} < {s.hot_to_warm_max_importance:g}"
            )
        if taken[i] & 2:
            parts.append(
                f"warm -> cold: {days:.0f} d idle >= {s.warm_to_cold_idle_days:g} and "
                f"{uses} accesses < {s.warm_to_cold_max_accesses}"
            )
        if taken[i] & 4:
            parts.append(
                f"cold -> deleted: {days:.0f} d idle >= {s.cold_delete_idle_days:g} and importance "
                f"{weight:.2f} < {s.cold_delete_max_importance:g}"
            )
        return "; ".join(parts)

    return TierPlan(id_list, current, target, reason, access_score(idle, count, settings))


def plan_wakeups(ids: Sequence[Any], *, tiers: Sequence[str] | np.ndarray, touched: Any) -> TierPlan:
    """Cold -> active when an associated query touches it: warm or cold memories a recall reached go
    back to hot.

    `touched` is a boolean per memory (e.g. reached by spreading activation).
    """
    id_list = as_ids(ids)
    n = len(id_list)
    current = _tier_codes(tiers, n)
    hit = np.asarray(touched, dtype=bool)
    if hit.shape != (n,):
        raise InvalidInputError(f"touched must have one boolean per memory ({n}), got shape {hit.shape}")
    target = np.where(hit, 0, current).astype(np.int8)

    def reason(i: int) -> str:
        return f"{_NAMES[current[i]]} -> hot: reached by an associative recall"

    return TierPlan(id_list, current, target, reason, np.full(n, np.nan))


def _code(tier: str) -> int:
    if tier not in (*TIERS, "deleted"):
        raise InvalidInputError(f"unknown tier {tier!r}; tiers are {(*TIERS, 'deleted')}")
    return (*TIERS, "deleted").index(tier)


def _tier_codes(tiers: Sequence[str] | np.ndarray, n: int) -> np.ndarray:
    names = np.asarray(tiers if isinstance(tiers, np.ndarray) else list(tiers), dtype=object)
    if names.shape != (n,):
        raise InvalidInputError(f"tiers has {len(names)} values, expected {n}")
    codes = np.full(n, -1, dtype=np.int8)
    for code, name in enumerate(TIERS):
        codes[names == name] = code
    if (codes < 0).any():
        bad = names[int(np.flatnonzero(codes < 0)[0])]
        raise InvalidInputError(f"unknown tier {bad!r}; tiers are {TIERS}")
    return codes
