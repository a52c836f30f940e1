"""The memory lifecycle as storage-free rules: working memory, consolidation, forgetting, tiers,
conflicts and time phrases. Every number, its source and its reason: docs/design-notes.md.

Nothing here reads or writes the store. Each rule takes plain values (items, texts, numpy arrays
of importance, access counts, days idle, graph degrees) and returns a decision or a plan with a
reason per memory; the facade applies plans to the store, so a dry run is the plan itself. Every
threshold lives in `LifecycleSettings` with where it comes from, and every function that
needs "now" takes it (or a clock), so tests drive time.

- `WorkingMemory` / `WorkingMemories`: per-session turns with capacity, TTL, priority eviction,
  mention counts and a token-budgeted context (docs/design-notes.md#working-memory).
- `decide_consolidation`, `promotion_target`, `plan_promotions`, `cluster_related`,
  `summarize_cluster`: when working items become episodic or semantic memories, and which
  episodic memories a chat model could summarise into one fact
  (docs/design-notes.md#consolidation).
- `plan_forgetting` and friends: the forgetting score and the importance, time and capacity
  strategies (docs/design-notes.md#forgetting).
- `plan_tier_moves`, `plan_wakeups`, `access_score`: hot / warm / cold migrations
  (docs/design-notes.md#tiers).
- `judge_conflict`, `find_duplicate`, `LLMConflictJudge`: duplicates, updates and contradictions.
- `resolve_time`, `find_times`: "yesterday", "上周", "三个月前" ... as time ranges.
"""

from ripplemem.language.timeparse import TimeRange, find_times, resolve_time
from ripplemem.rules.lifecycle.clusters import (
    MemoryCluster,
    asummarize_cluster,
    cluster_related,
    summarize_cluster,
)
from ripplemem.rules.lifecycle.conflict_judge import LLMConflictJudge
from ripplemem.rules.lifecycle.conflicts import ConflictVerdict, find_duplicate, is_duplicate, judge_conflict
from ripplemem.rules.lifecycle.consolidation import (
    ConsolidationContext,
    ConsolidationDecision,
    Promotion,
    SentimentCue,
    decide_consolidation,
    detect_sentiment,
    plan_promotions,
    promotion_target,
    remember_cue,
)
from ripplemem.rules.lifecycle.forgetting import (
    ForgetAction,
    ForgetPlan,
    ForgettingScores,
    forget_actions,
    forgetting_scores,
    plan_by_age,
    plan_by_capacity,
    plan_by_importance,
    plan_by_score,
    plan_forgetting,
)
from ripplemem.rules.lifecycle.settings import DEFAULT_SETTINGS, LifecycleSettings
from ripplemem.rules.lifecycle.statements import Statement, parse_statement
from ripplemem.rules.lifecycle.tiers import (
    TierMove,
    TierPlan,
    access_score,
    days_since,
    plan_tier_moves,
    plan_wakeups,
    tier_by_access_score,
)
from ripplemem.rules.lifecycle.working import WorkingItem, WorkingMemories, WorkingMemory

__all__ = [
    "DEFAULT_SETTINGS",
    "ConflictVerdict",
    "ConsolidationContext",
    "ConsolidationDecision",
    "ForgetAction",
    "ForgetPlan",
    "ForgettingScores",
    "LLMConflictJudge",
    "LifecycleSettings",
    "MemoryCluster",
    "Promotion",
    "SentimentCue",
    "Statement",
    "TierMove",
    "TierPlan",
    "TimeRange",
    "WorkingItem",
    "WorkingMemories",
    "WorkingMemory",
    "access_score",
    "asummarize_cluster",
    "cluster_related",
    "days_since",
    "decide_consolidation",
    "detect_sentiment",
    "find_duplicate",
    "find_times",
    "forget_actions",
    "forgetting_scores",
    "is_duplicate",
    "judge_conflict",
    "parse_statement",
    "plan_by_age",
    "plan_by_capacity",
    "plan_by_importance",
    "plan_by_score",
    "plan_forgetting",
    "plan_promotions",
    "plan_tier_moves",
    "plan_wakeups",
    "promotion_target",
    "remember_cue",
    "resolve_time",
    "summarize_cluster",
    "tier_by_access_score",
]
