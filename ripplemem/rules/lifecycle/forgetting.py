"""What to forget: the forgetting score and three simple strategies, as plans
(docs/design-notes.md#forgetting).

The score is a *forgetting* score: the higher, the sooner a memory goes
("分数越高越应该遗忘"). Over arrays of memories it is

    score = 0.30 x (1 - importance)
          + 0.25 x (1 / (1 + 0.1 x access_count) + min(0.02 x days_since_last_access, 0.5))
          + 0.25 x 1 / (1 + exp(-0.05 x (age_days - 60)))
          + 0.20 x 1 / (1 + 0.2 x degree)

with actions delete >= 0.8, deprioritize >= 0.6, archive >= 0.4, else keep. The frequency part
is the source's as written: it reaches 1.5 for a memory never used and idle 25+ days, so scores run
from 0 to 1.125. A memory never accessed counts as idle since it was created.

Read the numbers before scheduling it: an unlinked memory (degree 0) of importance 0.5 that is
never recalled scores 0.61 on its first day (deprioritize) and reaches 0.8 (delete) at 44 days;
one linked to 5 others scores 0.51 (archive) at first and reaches 0.8 at 77 days.

Importance guards the two lasting actions (ours; `guarded_actions`): the score deletes only a
memory of importance below 0.3 (one above is deprioritised, so runs walk it down), and a memory of
importance 0.8 or more is kept. Without the guards, a memory of importance 1.0 that
was never recalled scored 0.81 at 120 days and was deleted.

Every strategy only *plans*: a `ForgetPlan` lists each memory's action and the reason, and the
caller applies it (dry-run is the plan itself). "deprioritize" proposes
`new_importance = importance x 0.9` (seed: "逐渐降低优先级", gradually), so repeated runs walk a
neglected memory towards deletion.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ripplemem.core.choices import ForgetStrategy, literal_values
from ripplemem.core.validation import shown_number
from ripplemem.errors import InvalidInputError
from ripplemem.rules.lifecycle._common import as_float_array, as_ids
from ripplemem.rules.lifecycle.settings import DEFAULT_SETTINGS, LifecycleSettings

FORGET_ACTIONS: tuple[str, ...] = ("delete", "deprioritize", "archive", "keep")
STRATEGIES: tuple[ForgetStrategy, ...] = literal_values(ForgetStrategy)


@dataclass(frozen=True)
class ForgetAction:
    """One memory's fate in a plan: action, why, its forgetting score (score strategy only), and the
    importance to write for "deprioritize"."""

    id: Any
    action: str
    reason: str
    score: float | None = None
    new_importance: float | None = None


class ForgetPlan:
    """Every considered memory with its action; built from arrays, entries made on demand."""

    def __init__(
        self,
        strategy: str,
        ids: list[Any],
        actions: np.ndarray,
        reason: Callable[[int], str],
        *,
        scores: np.ndarray | None = None,
        parts: dict[str, np.ndarray] | None = None,
        new_importance: np.ndarray | None = None,
    ) -> None:
        self.strategy = strategy
        self.ids = ids
        self.actions = actions
        self.scores = scores
        self.parts = parts or {}
        self.new_importance = new_importance
        self._reason = reason

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[ForgetAction]:
        return (self.entry(index) for index in range(len(self.ids)))

    def entry(self, index: int) -> ForgetAction:
        """The plan for the index-th memory."""
        action = str(self.actions[index])
        return ForgetAction(
            self.ids[index],
            action,
            self._reason(index),
            None if self.scores is None else float(self.scores[index]),
            float(self.new_importance[index])
            if self.new_importance is not None and action == "deprioritize"
            else None,
        )

    def changes(self) -> list[ForgetAction]:
        """The entries whose action is not "keep", in input order."""
        return [self.entry(int(index)) for index in np.flatnonzero(self.actions != "keep")]

    def ids_for(self, action: str) -> list[Any]:
        """Ids of the memories planned for one action."""
        if action not in FORGET_ACTIONS:
            raise InvalidInputError(f"action must be one of {FORGET_ACTIONS}, got {action!r}")
        return [self.ids[int(index)] for index in np.flatnonzero(self.actions == action)]

    def counts(self) -> dict[str, int]:
        """How many memories each action got (every action present, zeros included)."""
        return {action: int(np.count_nonzero(self.actions == action)) for action in FORGET_ACTIONS}

    def __repr__(self) -> str:
        return f"ForgetPlan(strategy={self.strategy!r}, {self.counts()})"


@dataclass(frozen=True)
class ForgettingScores:
    """The forgetting score of each memory and its four unweighted parts."""

    total: np.ndarray
    importance: np.ndarray
    frequency: np.ndarray
    recency: np.ndarray
    connectivity: np.ndarray


def forgetting_scores(
    *,
    importance: Any,
    access_count: Any,
    days_since_access: Any,
    age_days: Any,
    degree: Any,
    settings: LifecycleSettings = DEFAULT_SETTINGS,
) -> ForgettingScores:
    """The forgetting score for arrays of memories (higher = forget sooner)."""
    s = settings
    imp = np.clip(as_float_array(importance, "importance"), 0.0, 1.0)
    n = len(imp)
    count = np.maximum(as_float_array(access_count, "access_count", n), 0.0)
    idle = np.maximum(as_float_array(days_since_access, "days_since_access", n), 0.0)
    age = np.maximum(as_float_array(age_days, "age_days", n), 0.0)
    links = np.maximum(as_float_array(degree, "degree", n), 0.0)
    importance_part = 1.0 - imp
    frequency_part = 1.0 / (1.0 + count * s.forget_access_rate) + np.minimum(
        idle * s.forget_idle_rate_per_day, s.forget_idle_cap
    )
    recency_part = 1.0 / (1.0 + np.exp(-s.forget_recency_steepness * (age - s.forget_recency_midpoint_days)))
    connectivity_part = 1.0 / (1.0 + links * s.forget_connectivity_rate)
    total = (
        s.forget_weight_importance * importance_part
        + s.forget_weight_frequency * frequency_part
        + s.forget_weight_recency * recency_part
        + s.forget_weight_connectivity * connectivity_part
    )
    return ForgettingScores(total, importance_part, frequency_part, recency_part, connectivity_part)


def forget_actions(scores: Any, settings: LifecycleSettings = DEFAULT_SETTINGS) -> np.ndarray:
    """Forgetting thresholds: delete >= 0.8, deprioritize >= 0.6, archive >= 0.4, else keep."""
    values = as_float_array(scores, "scores")
    return np.select(
        [
            values >= settings.forget_delete_threshold,
            values >= settings.forget_deprioritize_threshold,
            values >= settings.forget_archive_threshold,
        ],
        ["delete", "deprioritize", "archive"],
        default="keep",
    ).astype(object)


def guarded_actions(
    actions: np.ndarray, importance: np.ndarray, settings: LifecycleSettings = DEFAULT_SETTINGS
) -> tuple[np.ndarray, list[str]]:
    """The score's actions with importance guarding them, and per memory the note saying why an
    action changed (empty when it did not): a delete of a memory at or above
    forget_delete_max_importance becomes deprioritize; a memory at or above
    forget_protect_importance is kept (the tier rules keep it hot too)."""
    s = settings
    guarded = actions.copy()
    notes = [""] * len(actions)
    for i, action in enumerate(actions):
        if action != "keep" and importance[i] >= s.forget_protect_importance:
            guarded[i] = "keep"
            notes[i] = f", but importance >= {s.forget_protect_importance:g} protects it: keep"
        elif action == "delete" and importance[i] >= s.forget_delete_max_importance:
            guarded[i] = "deprioritize"
            notes[i] = f", but importance >= {s.forget_delete_max_importance:g}: deprioritize"
    return guarded, notes


def plan_by_score(
    ids: Sequence[Any],
    *,
    importance: Any,
    access_count: Any,
    days_since_access: Any,
    age_days: Any,
    degree: Any,
    settings: LifecycleSettings = DEFAULT_SETTINGS,
) -> ForgetPlan:
    """Each memory's forgetting score and the action its threshold gives."""
    id_list = as_ids(ids)
    n = len(id_list)
    imp = as_float_array(importance, "importance", n)
    count = as_float_array(access_count, "access_count", n)
    idle = as_float_array(days_since_access, "days_since_access", n)
    age = as_float_array(age_days, "age_days", n)
    links = as_float_array(degree, "degree", n)
    scores = forgetting_scores(
        importance=imp,
        access_count=count,
        days_since_access=idle,
        age_days=age,
        degree=links,
        settings=settings,
    )
    by_score = forget_actions(scores.total, settings)
    actions, guard = guarded_actions(by_score, np.clip(imp, 0, 1), settings)
    s = settings
    bars = {
        "delete": f">= {s.forget_delete_threshold:g}",
        "deprioritize": f">= {s.forget_deprioritize_threshold:g}",
        "archive": f">= {s.forget_archive_threshold:g}",
        "keep": f"< {s.forget_archive_threshold:g}",
    }

    def reason(i: int) -> str:
        return (
            f"forget score {scores.total[i]:.2f} {bars[str(by_score[i])]}{guard[i]} (importance "
            f"{imp[i]:.2f}, {int(count[i])} accesses, idle {idle[i]:.0f} d, {age[i]:.0f} d old, "
            f"{int(links[i])} links)"
        )

    return ForgetPlan(
        "score",
        id_list,
        actions,
        reason,
        scores=scores.total,
        parts={
            "importance": scores.importance,
            "frequency": scores.frequency,
            "recency": scores.recency,
            "connectivity": scores.connectivity,
        },
        new_importance=np.clip(imp, 0, 1) * s.deprioritize_factor,
    )


def plan_by_importance(
    ids: Sequence[Any],
    *,
    importance: Any,
    threshold: float | None = None,
    settings: LifecycleSettings = DEFAULT_SETTINGS,
) -> ForgetPlan:
    """Importance-based: delete memories whose importance is below the threshold (0.1)."""
    id_list = as_ids(ids)
    imp = as_float_array(importance, "importance", len(id_list))
    bar = settings.forget_min_importance if threshold is None else check_threshold(threshold)
    actions = np.where(imp < bar, "delete", "keep").astype(object)

    def reason(i: int) -> str:
        sign = "<" if actions[i] == "delete" else ">="
        return f"importance {imp[i]:.2f} {sign} {bar:g}"

    return ForgetPlan("importance", id_list, actions, reason)


def plan_by_age(
    ids: Sequence[Any],
    *,
    age_days: Any,
    max_age_days: float | None = None,
    settings: LifecycleSettings = DEFAULT_SETTINGS,
) -> ForgetPlan:
    """Time-based: delete memories older than max_age_days (30)."""
    id_list = as_ids(ids)
    age = as_float_array(age_days, "age_days", len(id_list))
    limit = settings.forget_max_age_days if max_age_days is None else check_max_age_days(max_age_days)
    actions = np.where(age > limit, "delete", "keep").astype(object)

    def reason(i: int) -> str:
        sign = ">" if actions[i] == "delete" else "<="
        return f"{age[i]:.1f} days old {sign} {limit:g}"

    return ForgetPlan("time", id_list, actions, reason)


def plan_by_capacity(
    ids: Sequence[Any],
    *,
    importance: Any,
    capacity: int | None = None,
    days_since_access: Any = None,
    age_days: Any = None,
    settings: LifecycleSettings = DEFAULT_SETTINGS,
) -> ForgetPlan:
    """Capacity-based: over capacity, delete the least important until capacity is left.

    Ties go to the longest idle, then the oldest (when those arrays are given), then input order.
    """
    id_list = as_ids(ids)
    n = len(id_list)
    imp = as_float_array(importance, "importance", n)
    limit = settings.forget_capacity if capacity is None else check_capacity(capacity)
    idle = (
        np.zeros(n)
        if days_since_access is None
        else as_float_array(days_since_access, "days_since_access", n)
    )
    age = np.zeros(n) if age_days is None else as_float_array(age_days, "age_days", n)
    actions = np.full(n, "keep", dtype=object)
    rank = np.empty(n, dtype=np.int64)
    excess = max(n - limit, 0)
    # lexsort: last key first; least important, then longest idle, then oldest, then input order.
    order = np.lexsort((np.arange(n), -age, -idle, imp))
    rank[order] = np.arange(n)
    actions[order[:excess]] = "delete"

    def reason(i: int) -> str:
        if actions[i] == "delete":
            return (
                f"{n} memories > capacity {limit}: among the {excess} least important "
                f"(importance {imp[i]:.2f})"
            )
        if excess:
            return (
                f"within capacity {limit} (importance {imp[i]:.2f}, "
                f"rank {rank[i] + 1} of {n} from the bottom)"
            )
        return f"{n} memories <= capacity {limit}"

    return ForgetPlan("capacity", id_list, actions, reason)


def plan_forgetting(
    ids: Sequence[Any],
    strategy: str = "score",
    *,
    importance: Any,
    access_count: Any = None,
    days_since_access: Any = None,
    age_days: Any = None,
    degree: Any = None,
    threshold: float | None = None,
    max_age_days: float | None = None,
    capacity: int | None = None,
    settings: LifecycleSettings = DEFAULT_SETTINGS,
) -> ForgetPlan:
    """One entry for the four strategies ("score", "importance", "time", "capacity").

    The score strategy needs every array; "time" needs age_days; the others need importance.
    Missing access counts and degrees read as 0 for the score strategy.
    """
    check_forget_options(strategy, threshold=threshold, max_age_days=max_age_days, capacity=capacity)
    id_list = as_ids(ids)
    n = len(id_list)
    if strategy == "score":
        if days_since_access is None or age_days is None:
            raise InvalidInputError("the score strategy needs days_since_access and age_days")
        return plan_by_score(
            id_list,
            importance=importance,
            access_count=np.zeros(n) if access_count is None else access_count,
            days_since_access=days_since_access,
            age_days=age_days,
            degree=np.zeros(n) if degree is None else degree,
            settings=settings,
        )
    if strategy == "importance":
        return plan_by_importance(id_list, importance=importance, threshold=threshold, settings=settings)
    if strategy == "time":
        if age_days is None:
            raise InvalidInputError("the time strategy needs age_days")
        return plan_by_age(id_list, age_days=age_days, max_age_days=max_age_days, settings=settings)
    return plan_by_capacity(
        id_list,
        importance=importance,
        capacity=capacity,
        days_since_access=days_since_access,
        age_days=age_days,
        settings=settings,
    )


def check_forget_options(strategy: str, *, threshold: Any, max_age_days: Any, capacity: Any) -> None:
    """Each option given is valid and is one its strategy reads (an option another strategy reads
    would be ignored without a word, and the memories forgotten by rules the caller did not ask for)."""
    if strategy not in STRATEGIES:
        raise InvalidInputError(f"strategy must be one of {', '.join(STRATEGIES)}; got {strategy!r}")
    for name, value, check, owner in (
        ("threshold", threshold, check_threshold, "importance"),
        ("max_age_days", max_age_days, check_max_age_days, "time"),
        ("capacity", capacity, check_capacity, "capacity"),
    ):
        if value is None:
            continue
        check(value)
        if strategy != owner:
            raise InvalidInputError(f"{name} is an option of strategy={owner!r}, not of {strategy!r}")


def check_threshold(value: Any) -> float:
    """The importance strategy's bar: a finite number in [0, 1] (importance lives there)."""
    return _number("threshold", value, 1.0)


def check_max_age_days(value: Any) -> float:
    """The time strategy's age limit: a finite number of days >= 0 (-1 would make every memory,
    even one a second old, too old)."""
    return _number("max_age_days", value, math.inf)


def check_capacity(value: Any) -> int:
    """The capacity strategy's limit: an integer >= 0 (how many memories stay)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        shown = shown_number(value) if isinstance(value, int | float) else repr(value)
        raise InvalidInputError(f"capacity must be a non-negative integer, got {shown}")
    return value


def _number(name: str, value: Any, high: float) -> float:
    """A real, finite number in [0, high]; every error is InvalidInputError, as it always was here."""
    limits = f"in [0, {high:g}]" if math.isfinite(high) else ">= 0"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"{name} must be a number {limits}, got {value!r}")
    if not -1e300 < value < 1e300 or not 0.0 <= value <= high:  # NaN fails both; 10**400 has no float
        raise InvalidInputError(f"{name} must be a finite number {limits}, got {shown_number(value)}")
    return float(value)
