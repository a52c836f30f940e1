"""One settings object; every number's source and reason: docs/design-notes.md."""

from __future__ import annotations

from dataclasses import dataclass, field

from ripplemem.core.deprecation import warn_renamed
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.rules.lifecycle.settings import LifecycleSettings
from ripplemem.rules.perceptual import SensorSettings


@dataclass(frozen=True)
class ScoreProfile:
    """How one memory type turns relevance, recency, importance and access into a score."""

    relevance: float
    recency: float
    graph: float = 0.0
    access: float = 0.0
    importance: float = 0.0
    # Multiplicative importance boost: score *= importance_base + importance * importance_gain.
    importance_base: float = 1.0
    importance_gain: float = 0.0


# The HelloAgents memory chapter: episodic (sim x 0.8 + recency x 0.2) x (0.8 + importance x 0.4);
# semantic (vec x 0.7 + graph x 0.3) x (0.8 + importance x 0.4); perceptual as episodic.
RELEVANCE_FIRST_PROFILES: dict[str, ScoreProfile] = {
    "working": ScoreProfile(relevance=0.8, recency=0.2, importance_base=0.8, importance_gain=0.4),
    "episodic": ScoreProfile(relevance=0.8, recency=0.2, importance_base=0.8, importance_gain=0.4),
    "semantic": ScoreProfile(relevance=0.7, recency=0.0, graph=0.3, importance_base=0.8, importance_gain=0.4),
    "perceptual": ScoreProfile(relevance=0.8, recency=0.2, importance_base=0.8, importance_gain=0.4),
    "document": ScoreProfile(relevance=0.7, recency=0.0, graph=0.3, importance_base=0.8, importance_gain=0.4),
}

# The agent-memory Q&A's scoring comparison: episodic 0.4 recency + 0.3 importance + 0.2 access
# + 0.1 embedding; semantic 0.3 graph + 0.25 embedding + 0.25 access + 0.2 importance (additive,
# no multiplier). Recent, important, often used memories outrank relevant ones.
RECENCY_FIRST_PROFILES: dict[str, ScoreProfile] = {
    "working": ScoreProfile(relevance=0.1, recency=0.4, access=0.2, importance=0.3),
    "episodic": ScoreProfile(relevance=0.1, recency=0.4, access=0.2, importance=0.3),
    "semantic": ScoreProfile(relevance=0.25, recency=0.0, graph=0.3, access=0.25, importance=0.2),
    "perceptual": ScoreProfile(relevance=0.1, recency=0.4, access=0.2, importance=0.3),
    "document": ScoreProfile(relevance=0.25, recency=0.0, graph=0.3, access=0.25, importance=0.2),
}

SCORE_PRESETS: dict[str, dict[str, ScoreProfile]] = {
    "relevance_first": RELEVANCE_FIRST_PROFILES,
    "recency_first": RECENCY_FIRST_PROFILES,
}
# The presets' first names (after the seed articles), kept one release with a DeprecationWarning.
RENAMED_PRESETS = {"seed001": "relevance_first", "seed000": "recency_first"}


# A ripple hit whose graph support is at least this was lifted by the graph: its why shows the
# path, and recall reinforces that path's edges.
GRAPH_SUPPORTED = 0.1

# How much one edge of each type passes on when activation spreads (× its own weight).
DEFAULT_EDGE_TYPE_WEIGHTS: dict[str, float] = {
    "MENTIONS": 0.3,
    "RELATES": 1.0,
    "NEXT": 1.0,
    "SIMILAR": 0.5,
    "ALIAS": 1.0,
    "SUMMARIZES": 0.8,
    "SUPERSEDES": 0.5,
    "CONTRADICTS": 0.3,
}


@dataclass(frozen=True)
class GraphSettings:
    """How the memory graph is built on add and how ripple recall spreads over it."""

    edge_type_weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_EDGE_TYPE_WEIGHTS))
    # SIMILAR: link each new memory to its nearest stored memories at or above this cosine.
    similar_k: int = 3
    similar_threshold: float = 0.75
    # ALIAS by normalisation (a one-word entity meets the multi-word names containing it) and by
    # name embeddings at or above alias_similarity (MiniLM: NYC / New York City 0.92,
    # USA / United States 0.89, Jon / John 0.60, Paris / Rome 0.55).
    alias_weight: float = 0.5
    alias_similarity: float = 0.88
    # Spreading (docs/design-notes.md#ripple; HippoRAG 2: damping ~0.5 keeps mass local).
    damping: float = 0.5
    max_hops: int = 3
    prune_below: float = 1e-3
    max_frontier: int = 1000
    # Seeds: the best first-stage candidates, and the entities the query names (weighted by
    # inverse frequency: an entity half the memories mention says little).
    seed_memories: int = 10
    entity_seed_weight: float = 0.3
    # Memories reached by spreading that join the candidates, per requested hit.
    reached_per_hit: int = 2
    # Graph evidence supports first-stage relevance and never replaces it (ripple.graph_support):
    #   support = min(1, ripple_weight × inflow² + entity_weight × entity match)
    #   relevance = 1 - (1 - first-stage relevance) × (1 - support)
    # where inflow is the activation a memory received from the seeds, relative to the strongest.
    # Squared, so a neighbour of one seed (the next turn of the best match, inflow ~0.3-0.5) gains
    # 0.15-0.4 and reaches the top only when it matched too, while activation converging from
    # several seeds counts fully. Tuned on LoCoMo, LongMemEval_S, MuSiQue and the Chinese sets
    # together (benchmarks/quality.py; what was tried: docs/recall.md).
    ripple_weight: float = 1.5
    entity_weight: float = 0.1
    # Conversation cues (retrieval/cues): a short question turn hands its relevance to the turn that
    # answers it (the next in its session) and keeps 1 - question_discount of it; a "when" query
    # multiplies the relevance of turns (memories with a session) that name a time by
    # 1 + time_answer_boost (capped at 1).
    answer_handoff: bool = True
    question_discount: float = 0.15
    time_answer_boost: float = 0.3
    # Weights decay with time since last activation and are reinforced, capped (docs/design-notes.md#graph).
    decay_half_life_days: float = 90.0
    decay_floor: float = 0.2
    reinforce_step: float = 0.1
    weight_cap: float = 3.0


@dataclass(frozen=True)
class Settings:
    """Tunable numbers of retrieval and storage, with their defaults (docs/design-notes.md)."""

    # How each memory type's score weighs relevance, recency, importance and access: SCORE_PRESETS.
    score_preset: str = "relevance_first"
    # HelloAgents' perceptual recency: exp(-0.1 x age_hours / 24), floor 0.1; used for every type.
    recency_rate_per_day: float = 0.1
    recency_floor: float = 0.1
    # Recency counts in full for a memory at least this relevant (relevance is in [0, 1] over the
    # candidates), in proportion below it: a fresh memory the query barely matches cannot outrank
    # a real match (docs/design-notes.md#scoring).
    recency_full_relevance: float = 0.5
    # Access heat (docs/design-notes.md#scoring):
    #   exp(-days_since_access / 7) x 0.7 + min(access_count / 10, 1) x 0.3.
    access_half_days: float = 7.0
    access_count_saturation: int = 10
    access_time_weight: float = 0.7
    # Hybrid first stage: each retriever returns this many candidates per requested hit.
    candidate_multiplier: int = 4
    min_candidates: int = 40
    # Linear fusion of min-max normalised dense and BM25 scores (shared/bench README: 0.644 R@10
    # on LoCoMo against 0.563 for reciprocal-rank fusion).
    dense_weight: float = 0.5
    keyword_weight: float = 0.5
    # recall(time_phrases="boost"): memories from the time a query names score x (1 + time_boost).
    time_boost: float = 0.5
    # A question about the present ("now", "currently", 现在; retrieval/latest): among the candidates
    # within latest_margin of the best relevance, those at least latest_same_topic alike (cosine,
    # written on MiniLM's scale) are one changing fact, and the latest of them ranks first.
    latest_margin: float = 0.25
    latest_same_topic: float = 0.45
    default_importance: float = 0.5
    embed_batch_size: int = 64
    max_content_chars: int = 100_000
    profiles: dict[str, ScoreProfile] = field(default_factory=dict)
    graph: GraphSettings = field(default_factory=GraphSettings)
    lifecycle: LifecycleSettings = field(default_factory=LifecycleSettings)
    # Sensor metrics: units, normal ranges (with their sources) and out-of-range episodes.
    sensors: SensorSettings = field(default_factory=SensorSettings)

    def __post_init__(self) -> None:
        if self.score_preset in RENAMED_PRESETS:
            new = RENAMED_PRESETS[self.score_preset]
            warn_renamed(
                f'Settings(score_preset="{self.score_preset}")',
                f'Settings(score_preset="{new}")',
                stacklevel=4,
            )
            object.__setattr__(self, "score_preset", new)
        if self.score_preset not in SCORE_PRESETS:
            raise InvalidInputError(
                f"Settings.score_preset must be one of {', '.join(map(repr, SCORE_PRESETS))}, "
                f"got {self.score_preset!r}"
            )
        for name, kind in (
            ("graph", GraphSettings),
            ("lifecycle", LifecycleSettings),
            ("sensors", SensorSettings),
        ):
            if not isinstance(getattr(self, name), kind):
                raise InvalidTypeError(
                    f"Settings.{name} must be a {kind.__name__}, got {type(getattr(self, name)).__name__}"
                )

    def profile(self, memory_type: str) -> ScoreProfile:
        """The score profile of a memory type: an explicit override, else the preset's."""
        if memory_type in self.profiles:
            return self.profiles[memory_type]
        return SCORE_PRESETS[self.score_preset][memory_type]


def check_settings(value: object) -> Settings:
    """The settings a store is opened with: a Settings object, or None for the defaults."""
    if value is None:
        return Settings()
    if not isinstance(value, Settings):
        raise InvalidTypeError(
            f"settings must be a ripplemem.Settings, e.g. Settings(max_content_chars="
            f"50_000), got {type(value).__name__}"
        )
    return value
