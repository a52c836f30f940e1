"""Every number of the memory lifecycle in one frozen object, each with where it comes from.

docs/design-notes.md names the source articles (the agent-memory-and-RAG Q&A, the HelloAgents
memory chapter, the ripple-retrieval article) and gives each number's reason. Numbers marked
"ours" are in no article; each says why it is what it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from ripplemem.core.validation import shown_number
from ripplemem.errors import InvalidInputError, InvalidTypeError


@dataclass(frozen=True)
class LifecycleSettings:
    """Thresholds and weights of working memory, consolidation, forgetting, tiers and conflicts."""

    # --- Working memory -------------------------------------------------------------------------
    # The HelloAgents memory chapter's working memory: capacity 50, TTL 60 minutes, and "remove the
    # lowest-priority item when full". (The agent-memory Q&A's health assistant draws TTL = 5 min;
    # the general-purpose 60 min is the default.)
    working_capacity: int = 50
    working_ttl_minutes: float = 60.0
    # ours: the chapter names "lowest priority" without a formula. priority =
    #   w_importance x importance + w_recency x recency + w_mentions x min(mentions / 3, 1)
    #   (+ remember_bonus for items the user asked to keep), where recency falls linearly from 1
    #   at the last mention to 0 at TTL expiry. Importance weighs most because it is what the
    #   consolidation rules read; mentions saturate at the consolidation threshold of 3.
    working_priority_importance: float = 0.5
    working_priority_recency: float = 0.3
    working_priority_mentions: float = 0.2
    working_remember_bonus: float = 1.0
    # The agent-memory Q&A's forgetting code reads a missing importance as 0.5.
    default_importance: float = 0.5
    # ours: the same default as Recall.context.
    working_context_tokens: int = 500

    # --- Consolidation: working -> long-term (docs/design-notes.md#consolidation) -----------------
    # The agent-memory Q&A's decision matrix: "mentioned >= 3 times -> semantic"; its code adds 0.4.
    mention_threshold: int = 3
    mention_score: float = 0.4
    # "related to existing knowledge -> +0.3" (entity overlap with known entities).
    related_knowledge_score: float = 0.3
    # "emotional marker (important / urgent) -> episodic, high importance"; its code adds 0.5.
    sentiment_score: float = 0.5
    # "time window persists (> 1 hour)": age_seconds > 3600 adds 0.2.
    age_threshold_minutes: float = 60.0
    age_score: float = 0.2
    # "if score >= 0.5: consolidate, target semantic if score > 0.6 else episodic".
    consolidate_threshold: float = 0.5
    semantic_threshold: float = 0.6
    # ours: the matrix says "high importance" without a number. 0.75 clears the working ->
    # episodic promotion bar (0.7) and stays under the episodic -> semantic bar (0.8), so the two
    # rules agree: an urgent one-off event becomes episodic and is not promoted to a fact later.
    signal_importance: float = 0.75
    # ours: the score reported for an explicit "remember this" (the matrix returns no score).
    explicit_score: float = 1.0

    # --- Promotion (the HelloAgents memory chapter's consolidation) ------------------------------
    # "working memory above the importance threshold becomes episodic (default 0.7), episodic
    # becomes semantic (default 0.8)".
    promote_working_to_episodic: float = 0.7
    promote_episodic_to_semantic: float = 0.8

    # --- Summarising clusters of episodic memories (docs/design-notes.md#consolidation) ---------
    # ours: cosine similarity at which two episodic memories are "about the same thing" for
    # MiniLM-like embedders, and the smallest group worth a summary (the agent-memory Q&A's health
    # assistant finds "exercises 3 times a week": three runs make a habit).
    cluster_similarity: float = 0.8
    cluster_min_size: int = 3
    # ours: an entity shared by more than this fraction of the memories (e.g. the user's own
    # name) links nothing; it would chain everything into one cluster.
    cluster_common_entity_fraction: float = 0.5
    # ours: what one summarisation prompt may hold, and the longest summary kept.
    summary_max_texts: int = 30
    summary_max_tokens_in: int = 3000
    summary_max_chars: int = 400
    # ours: consolidate() clusters at most the newest this many episodic memories no summary
    # covers yet, so a run costs one bounded similarity pass however large the store grows.
    summary_window: int = 2000

    # --- Forgetting score (the agent-memory Q&A's IntelligentForgetting) -------------------------
    # weights: importance .30, frequency .25, recency .25, connectivity .20; the score is a
    # *forgetting* score: higher means forget sooner.
    forget_weight_importance: float = 0.30
    forget_weight_frequency: float = 0.25
    forget_weight_recency: float = 0.25
    forget_weight_connectivity: float = 0.20
    # frequency part: 1 / (1 + access_count x 0.1) + min(days_since_last_access x 0.02, 0.5).
    forget_access_rate: float = 0.1
    forget_idle_rate_per_day: float = 0.02
    forget_idle_cap: float = 0.5
    # recency part: 1 / (1 + exp(-0.05 x (age_days - 60))), an S curve centred on 60 days.
    forget_recency_midpoint_days: float = 60.0
    forget_recency_steepness: float = 0.05
    # connectivity part: 1 / (1 + related_count x 0.2).
    forget_connectivity_rate: float = 0.2
    # FORGETTING_THRESHOLDS: immediate 0.8 -> delete, gradual 0.6 -> deprioritize,
    # archive 0.4 -> archive, below -> keep.
    forget_delete_threshold: float = 0.8
    forget_deprioritize_threshold: float = 0.6
    forget_archive_threshold: float = 0.4
    # ours: the Q&A says "lower the priority gradually"; the plan proposes
    # importance x 0.9 per run, so repeated runs walk a neglected memory towards deletion.
    deprioritize_factor: float = 0.9
    # ours: the forgetting score gives every new, unread, unlinked memory about 0.6 (frequency and
    # connectivity count against it before it had a chance), so the score strategy leaves memories
    # younger than this alone; 7 days is the first tier demotion (hot -> warm).
    forget_grace_days: float = 7.0
    # ours: the score deletes only what matters little. A memory it would delete whose importance
    # is at or above this bar (the same 0.3 as cold -> deleted) is deprioritised instead, so runs
    # walk it down gradually; one at or above forget_protect_importance is kept, hot (the tier rules
    # protect it from 0.7). Without them, a memory of importance 1.0 never recalled for four months
    # scored 0.81 and was deleted.
    forget_delete_max_importance: float = 0.3
    forget_protect_importance: float = 0.8

    # --- Simple forgetting strategies (the HelloAgents memory chapter) ---------------------------
    # importance-based (below a threshold), time-based (too old) and capacity-based (the least
    # important past the cap); hello-agents' MemoryManager.forget_memories defaults are
    # threshold=0.1 and max_age_days=30.
    forget_min_importance: float = 0.1
    forget_max_age_days: float = 30.0
    # ours: the chapter gives no capacity; a per-user cap that a laptop store holds comfortably.
    forget_capacity: int = 10_000

    # --- Tiers (the agent-memory Q&A's archiving section; docs/design-notes.md#tiers) ------------
    # "active -> warm: 7 days without access + importance < 0.7"
    hot_to_warm_idle_days: float = 7.0
    hot_to_warm_max_importance: float = 0.7
    # "warm -> cold: 30 days without access + fewer than 3 accesses in all"
    warm_to_cold_idle_days: float = 30.0
    warm_to_cold_max_accesses: int = 3
    # "cold -> deleted: 90 days without access + importance < 0.3"
    cold_delete_idle_days: float = 90.0
    cold_delete_max_importance: float = 0.3
    # _calculate_access_score: exp(-days_since / 7) x 0.7 + min(access_count / 10, 1) x 0.3.
    access_decay_days: float = 7.0
    access_count_saturation: int = 10
    access_time_weight: float = 0.7
    # _evaluate_tier: hot if access > 0.7 and importance > 0.7; warm if access > 0.3 or
    # importance > 0.5; else cold.
    tier_hot_access: float = 0.7
    tier_hot_importance: float = 0.7
    tier_warm_access: float = 0.3
    tier_warm_importance: float = 0.5
    # ours: at most this many cold vectors per compressed archive segment (10k MiniLM vectors are
    # about 13 MB compressed): waking or deleting one cold memory rewrites one segment, so
    # segments stay small enough to rewrite quickly and large enough that files stay few.
    archive_segment_size: int = 10_000

    # --- Duplicates ------------------------------------------------------------------------------
    # A new memory with similarity >= 0.9 to an existing one (or the same normalised text)
    # merges into it instead of duplicating.
    duplicate_similarity: float = 0.9
    # ours: a duplicate by similarity alone must also share this fraction (Jaccard) of its keyword
    # tokens (stems; character bigrams for Chinese). MiniLM embeds many Chinese sentences alike:
    # "我的猫叫咪咪" and "我的狗叫旺财" at 1.0, while their bigrams share 1 in 9; English
    # paraphrases ("I went swimming at the lake" / "I went for a swim in the lake") share all stems.
    duplicate_overlap: float = 0.5
    # Switches for the check on every write (bulk loads and benchmarks may turn them off): merge
    # duplicates, and link updates (SUPERSEDES) and contradictions (CONTRADICTS, with belief states).
    merge_duplicates: bool = True
    detect_conflicts: bool = True
    # ours: how many stored neighbours (and earlier items of the same batch) a new memory is
    # compared with (the write already asks the vector index for its SIMILAR neighbours; this only
    # widens that query a little).
    conflict_neighbours: int = 5
    # ours: neighbours below this cosine are not compared by the rules. True updates measured with
    # MiniLM: "I live in Berlin" / "I live in Paris" 0.60, "我住在北京" / "我搬到上海了" 0.67,
    # "I take 10 mg of lisinopril" / "my lisinopril dose is now 20 mg" 0.89.
    conflict_similarity: float = 0.5
    # ours: pairs the rules leave open (a contradiction without an update cue, or no attribute
    # read in a pair this similar) go to the LLM judge when the handle has one, at most this many
    # per new memory, so an add costs a bounded number of model calls.
    judge_similarity: float = 0.75
    judge_max_pairs: int = 2

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name in _SWITCHES:
                if not isinstance(value, bool):
                    raise InvalidTypeError(
                        f"LifecycleSettings.{item.name} must be True or False, got {type(value).__name__}"
                    )
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidTypeError(
                    f"LifecycleSettings.{item.name} must be a number, got {type(value).__name__}"
                )
            # NaN, infinity and integers past 64 bits (numpy and SQLite hold none of them) too.
            if not (math.isfinite(value) if isinstance(value, float) else value < 2**63) or value < 0:
                raise InvalidInputError(
                    f"LifecycleSettings.{item.name} must be a finite number >= 0, got {shown_number(value)}"
                )
        for name in (
            "working_capacity",
            "mention_threshold",
            "cluster_min_size",
            "summary_max_texts",
            "forget_capacity",
            "access_count_saturation",
            "warm_to_cold_max_accesses",
            "archive_segment_size",
            "conflict_neighbours",
            "judge_max_pairs",
            "summary_window",
        ):
            if not isinstance(getattr(self, name), int):
                raise InvalidTypeError(f"LifecycleSettings.{name} must be an integer")
        for name in (
            "working_capacity",
            "working_ttl_minutes",
            "access_decay_days",
            "access_count_saturation",
            "summary_max_texts",
            "summary_max_chars",
            "summary_max_tokens_in",
            "working_context_tokens",
            "archive_segment_size",
            "summary_window",
            "cluster_min_size",
        ):
            if getattr(self, name) <= 0:
                raise InvalidInputError(f"LifecycleSettings.{name} must be positive")
        # Working-memory times are datetimes plus the TTL: a century keeps every sum a valid date.
        if self.working_ttl_minutes > MAX_TTL_MINUTES:
            raise InvalidInputError(
                f"LifecycleSettings.working_ttl_minutes must be at most "
                f"{MAX_TTL_MINUTES} (100 years), got {self.working_ttl_minutes}"
            )
        if not (
            self.forget_delete_threshold
            >= self.forget_deprioritize_threshold
            >= self.forget_archive_threshold
        ):
            raise InvalidInputError(
                "forget_delete_threshold >= forget_deprioritize_threshold >= "
                "forget_archive_threshold must hold"
            )
        if self.forget_delete_max_importance > self.forget_protect_importance:
            raise InvalidInputError("forget_delete_max_importance <= forget_protect_importance must hold")
        for name in _FRACTIONS:
            if getattr(self, name) > 1:
                raise InvalidInputError(
                    f"LifecycleSettings.{name} must be in [0, 1], got {getattr(self, name)}"
                )

    @property
    def access_count_weight(self) -> float:
        """The access-count share of the access score (0.3 = 1 - 0.7)."""
        return 1.0 - self.access_time_weight


_SWITCHES = frozenset({"merge_duplicates", "detect_conflicts"})
# Similarities, shares, factors and the importance and access-score bars: each compared with a
# value in [0, 1], so a number above 1 would silently mean "never" or "always".
_FRACTIONS = (
    "duplicate_similarity",
    "duplicate_overlap",
    "conflict_similarity",
    "judge_similarity",
    "cluster_similarity",
    "deprioritize_factor",
    "access_time_weight",
    "cluster_common_entity_fraction",
    "default_importance",
    "signal_importance",
    "promote_working_to_episodic",
    "promote_episodic_to_semantic",
    "forget_min_importance",
    "forget_delete_max_importance",
    "forget_protect_importance",
    "hot_to_warm_max_importance",
    "cold_delete_max_importance",
    "tier_hot_access",
    "tier_hot_importance",
    "tier_warm_access",
    "tier_warm_importance",
)
MAX_TTL_MINUTES = 100 * 365 * 24 * 60
DEFAULT_SETTINGS = LifecycleSettings()
