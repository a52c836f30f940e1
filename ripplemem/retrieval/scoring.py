"""Per-type score profiles: how relevance, recency, importance and access combine.

Every function works on numpy arrays (one entry per candidate memory), so a recall scores its
whole candidate pool in a few vector operations.
"""

from __future__ import annotations

import numpy as np

from ripplemem.config import ScoreProfile, Settings

SECONDS_PER_DAY = 86_400.0


def recency(age_seconds: np.ndarray, settings: Settings) -> np.ndarray:
    """Recency exp(-0.1 x age_days) (docs/design-notes.md#scoring), never below the floor 0.1; future
    events count as now."""
    age_days = np.maximum(0.0, age_seconds) / SECONDS_PER_DAY
    values: np.ndarray = np.maximum(settings.recency_floor, np.exp(-settings.recency_rate_per_day * age_days))
    return values


def gated_recency(recency_values: np.ndarray, relevance: np.ndarray, settings: Settings) -> np.ndarray:
    """Recency as it counts in a score: in full from `recency_full_relevance` up, in proportion to
    relevance below it, so an unmatched fresh memory gets no lift from being fresh."""
    full_at = settings.recency_full_relevance
    gate = np.minimum(1.0, relevance / full_at) if full_at > 0 else np.ones_like(relevance)
    return recency_values * gate


def access_heat(idle_seconds: np.ndarray, access_count: np.ndarray, settings: Settings) -> np.ndarray:
    """Access heat: exp(-days since last access / 7) x 0.7 + min(access_count / 10, 1) x 0.3.

    `idle_seconds` is NaN for memories never accessed (their time part is 0).
    """
    idle_days = np.maximum(0.0, np.nan_to_num(idle_seconds, nan=0.0)) / SECONDS_PER_DAY
    time_part = np.where(np.isnan(idle_seconds), 0.0, np.exp(-idle_days / settings.access_half_days))
    count_part = np.minimum(access_count / settings.access_count_saturation, 1.0)
    weight = settings.access_time_weight
    return time_part * weight + count_part * (1.0 - weight)


def profile_weights(profile: ScoreProfile, has_graph: bool) -> tuple[float, ...]:
    """(relevance, recency, graph, access, importance, importance_base, importance_gain) weights.

    Without a graph signal (any mode but ripple) the graph weight goes to relevance, so semantic
    memories are not penalised for a signal nobody computed.
    """
    relevance = profile.relevance + (0.0 if has_graph else profile.graph)
    graph = profile.graph if has_graph else 0.0
    return (
        relevance,
        profile.recency,
        graph,
        profile.access,
        profile.importance,
        profile.importance_base,
        profile.importance_gain,
    )


def profile_scores(
    weights: np.ndarray,
    *,
    relevance: np.ndarray,
    recency_values: np.ndarray,
    graph: np.ndarray,
    access: np.ndarray,
    importance: np.ndarray,
) -> np.ndarray:
    """Weighted sum of the parts, times the importance multiplier; one weights row per memory.

    `recency_values` arrive gated by relevance (`gated_recency`), so recency tilts the order among
    matches and cannot lift a memory the query does not match over one it does.
    """
    additive = (
        weights[:, 0] * relevance
        + weights[:, 1] * recency_values
        + weights[:, 2] * graph
        + weights[:, 3] * access
        + weights[:, 4] * importance
    )
    scores: np.ndarray = additive * (weights[:, 5] + weights[:, 6] * importance)
    return scores
