"""The lifecycle's numbers are checked where they are set: LifecycleSettings
and the forgetting planner refuse infinite, out-of-range and mistyped values, naming the field."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ripplemem.errors import InvalidInputError, InvalidTypeError, RippleMemError
from ripplemem.rules.lifecycle.forgetting import plan_forgetting
from ripplemem.rules.lifecycle.settings import LifecycleSettings


def test_the_planning_functions_check_too() -> None:
    with pytest.raises(InvalidInputError, match="max_age_days must be a finite number >= 0"):
        plan_forgetting(["a"], "time", importance=[0.5], age_days=[0.0], max_age_days=-1)
    with pytest.raises(InvalidInputError, match="threshold"):
        plan_forgetting(["a"], "importance", importance=[0.5], threshold=math.nan)


@pytest.mark.parametrize(
    ("field", "value", "error", "message"),
    [
        ("working_ttl_minutes", math.inf, InvalidInputError, "finite number >= 0, got inf"),
        ("working_ttl_minutes", 1e300, InvalidInputError, r"at most 52560000 \(100 years\)"),
        ("forget_max_age_days", math.inf, InvalidInputError, "finite number >= 0, got inf"),
        ("forget_recency_midpoint_days", math.nan, InvalidInputError, "finite number >= 0, got nan"),
        ("forget_capacity", 10**400, InvalidInputError, "finite number >= 0, got a huge integer"),
        ("working_capacity", -3, InvalidInputError, "finite number >= 0, got -3"),
        ("forget_min_importance", 1.5, InvalidInputError, r"must be in \[0, 1\], got 1.5"),
        ("default_importance", 2.0, InvalidInputError, r"must be in \[0, 1\]"),
        ("hot_to_warm_max_importance", 1.01, InvalidInputError, r"must be in \[0, 1\]"),
        ("tier_warm_access", 3.0, InvalidInputError, r"must be in \[0, 1\]"),
        ("promote_episodic_to_semantic", 7.0, InvalidInputError, r"must be in \[0, 1\]"),
        ("cluster_min_size", 0, InvalidInputError, "must be positive"),
        ("merge_duplicates", 1, InvalidTypeError, "must be True or False"),
        ("forget_grace_days", "7", InvalidTypeError, "must be a number"),
    ],
    ids=lambda value: repr(value)[:20] if isinstance(value, int) else None,
)
def test_lifecycle_settings_are_finite_and_in_range(
    field: str, value: Any, error: type[RippleMemError], message: str
) -> None:
    with pytest.raises(error, match=f"LifecycleSettings.{field} .*{message}"):
        LifecycleSettings(**{field: value})
