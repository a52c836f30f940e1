"""SensorSettings refuses infinite, out-of-range and mistyped values, naming the field."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ripplemem.errors import InvalidInputError, InvalidTypeError, RippleMemError
from ripplemem.rules.perceptual import SensorSettings


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("episode_gap_minutes", math.inf, InvalidInputError),
        ("episode_gap_minutes", -5, InvalidInputError),
        ("episode_importance", math.nan, InvalidInputError),
        ("episode_importance", 1.5, InvalidInputError),
        ("episode_gap_minutes", "30", InvalidTypeError),
    ],
)
def test_sensor_settings_are_finite_and_in_range(field: str, value: Any, error: type[RippleMemError]) -> None:
    with pytest.raises(error, match=f"SensorSettings.{field}"):
        SensorSettings(**{field: value})
