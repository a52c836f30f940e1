"""Per-type score profiles: how relevance, recency, importance and access combine."""

from __future__ import annotations

import math

from ripplemem.config import ScoreProfile, Settings
from ripplemem.types import Memory

SECONDS_PER_DAY = 86_400.0


def recency(age_seconds: float, settings: Settings) -> float:
    """seed 001: exp(-0.1 x age_days), never below the floor 0.1; future events count as now."""
    age_days = max(0.0, age_seconds) / SECONDS_PER_DAY
    return max(settings.recency_floor, math.exp(-settings.recency_rate_per_day * age_days))


def access_heat(memory: Memory, now: float, settings: Settings) -> float:
    """seed 000 §8: exp(-days since last access / 7) x 0.7 + min(access_count / 10, 1) x 0.3."""
    count_part = min(memory.access_count / settings.access_count_saturation, 1.0)
    if memory.last_accessed is None:
        time_part = 0.0
    else:
        days = max(0.0, now - memory.last_accessed.timestamp()) / SECONDS_PER_DAY
        time_part = math.exp(-days / settings.access_half_days)
    weight = settings.access_time_weight
    return time_part * weight + count_part * (1.0 - weight)


def profile_score(profile: ScoreProfile, *, relevance: float, recency_value: float,
                  graph: float | None, access: float, importance: float) -> float:
    """Weighted sum of the parts, times the profile's importance multiplier.

    Without a graph signal (graph=None, any mode but ripple) the graph weight goes to relevance,
    so semantic memories are not penalised for a signal nobody computed.
    """
    relevance_weight = profile.relevance + (profile.graph if graph is None else 0.0)
    additive = (relevance_weight * relevance + profile.recency * recency_value
                + profile.graph * (graph or 0.0) + profile.access * access
                + profile.importance * importance)
    return additive * (profile.importance_base + profile.importance_gain * importance)
