"""Sensor streams as perceptual memory (heart rate, steps, SpO2, body temperature):
metric names and units, the normal range of each metric with its source, and the sentences an
out-of-range episode and a metric's latest reading are remembered as. Storage-free.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo

from ripplemem.core.clock import READABLE_EPOCHS, from_epoch
from ripplemem.core.validation import check_number, check_text, shown_number
from ripplemem.errors import InvalidInputError, InvalidTypeError


@dataclass(frozen=True)
class MetricRule:
    """What a metric is measured in and its normal range (None: no bound on that side)."""

    unit: str
    label: str
    low: float | None = None
    high: float | None = None
    source: str = ""
    # Other spellings of the unit that mean the same ("beats/min" for "bpm").
    unit_aliases: tuple[str, ...] = ()

    def status(self, value: float) -> str | None:
        """ "below" or "above" the normal range, "normal" inside it, None when the metric has none."""
        if self.low is None and self.high is None:
            return None
        if self.low is not None and value < self.low:
            return "below"
        if self.high is not None and value > self.high:
            return "above"
        return "normal"

    def normal_text(self) -> str:
        """The normal range as words: '60-100 bpm', '>= 95 %'."""
        unit = f" {self.unit}" if self.unit else ""
        if self.low is not None and self.high is not None:
            return f"{_number(self.low)}-{_number(self.high)}{unit}"
        if self.low is not None:
            return f">= {_number(self.low)}{unit}"
        return f"<= {_number(self.high)}{unit}" if self.high is not None else "none"


# The normal ranges are for resting adults; readings taken during exercise are out of them by design.
DEFAULT_METRICS: dict[str, MetricRule] = {
    "heart_rate": MetricRule(
        "bpm",
        "heart rate",
        60,
        100,
        "American Heart Association, adults at rest",
        ("beats/min", "beats per minute", "/min"),
    ),
    "spo2": MetricRule(
        "%", "blood oxygen (SpO2)", 95, None, "WHO Pulse Oximetry Training Manual, 2011", ("percent", "pct")
    ),
    "body_temperature": MetricRule(
        "°C",
        "body temperature",
        36.1,
        37.2,
        "MedlinePlus, adults: 97-99 °F",
        ("c", "celsius", "degc", "deg c"),
    ),
    "steps": MetricRule(
        "steps",
        "steps",
        source="no normal range: a step count is a total, not a vital sign",
        unit_aliases=("step",),
    ),
}

# Spellings of the known metrics users write ("heart rate", "HR", "SpO2").
METRIC_ALIASES: dict[str, str] = {
    "heart_rate": "heart_rate",
    "heartrate": "heart_rate",
    "hr": "heart_rate",
    "pulse": "heart_rate",
    "spo2": "spo2",
    "sp_o2": "spo2",
    "blood_oxygen": "spo2",
    "oxygen_saturation": "spo2",
    "body_temperature": "body_temperature",
    "body_temp": "body_temperature",
    "steps": "steps",
    "step_count": "steps",
}

_METRIC_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


@dataclass(frozen=True)
class Reading:
    """One sensor reading as stored, with where it stands against the metric's normal range."""

    metric: str
    value: float
    unit: str
    at: datetime
    source: str | None = None
    # "normal", "above" or "below" the metric's range; None for a metric without one (steps).
    status: str | None = None
    # The episodic memory an out-of-range reading became part of.
    memory_id: str | None = None


@dataclass(frozen=True)
class MetricStats:
    """Exact aggregates of one metric over a window: count, mean, total, lowest and highest reading."""

    metric: str
    unit: str
    count: int
    mean: float
    total: float
    lowest: Reading
    highest: Reading
    start: datetime | None
    end: datetime | None


@dataclass(frozen=True)
class SensorSettings:
    """Normal ranges per metric and how out-of-range readings become episodic memories."""

    metrics: Mapping[str, MetricRule] = field(default_factory=lambda: dict(DEFAULT_METRICS))
    # ours: out-of-range readings of one metric, in the same direction, no further apart than
    # this, are one episode (one memory), so a 20-minute run at 130 bpm is one event, not 40.
    episode_gap_minutes: float = 30.0
    # ours: an out-of-range episode is worth remembering (working memory is promoted at 0.7).
    episode_importance: float = 0.7

    def __post_init__(self) -> None:
        # The gap is added to reading times: a finite span up to a century keeps every sum a date.
        for name, high in (("episode_gap_minutes", 100 * 365 * 24 * 60), ("episode_importance", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidTypeError(f"SensorSettings.{name} must be a number, got {type(value).__name__}")
            if not 0 <= value <= high:  # NaN fails too
                raise InvalidInputError(
                    f"SensorSettings.{name} must be in [0, {high}], got {shown_number(value)}"
                )

    def rule(self, metric: str) -> MetricRule | None:
        """The rule of a metric, or None for a metric without one (any unit, no range)."""
        return self.metrics.get(metric)


def check_metric(value: object) -> str:
    """The metric's stored name: lower case, spaces to underscores, known spellings unified."""
    if not isinstance(value, str):
        raise InvalidTypeError(f"metric must be a string such as 'heart_rate', got {type(value).__name__}")
    name = re.sub(r"[\s\-]+", "_", value.strip().lower())
    name = METRIC_ALIASES.get(name, name)
    if not _METRIC_NAME.match(name):
        raise InvalidInputError(
            f"metric must be a name like 'heart_rate' or 'steps' (letters, digits, "
            f"underscores, up to 64), got {value!r}"
        )
    return name


def check_value(metric: str, value: object) -> float:
    """A reading's value as a finite float."""
    return check_number(f"the value of a {metric} reading", value, "a number (finite)")


def check_unit(metric: str, unit: object, rule: MetricRule | None, stored: str | None) -> str:
    """The unit to store: the rule's (its spellings accepted), else the metric's earlier unit."""
    if unit is not None and not isinstance(unit, str):
        raise InvalidTypeError(f"unit must be a string such as 'bpm', got {type(unit).__name__}")
    given = None if unit is None else check_text("unit", unit, max_chars=64).strip()
    expected = rule.unit if rule is not None else stored
    if given is None:
        return expected or ""
    if expected is None:
        return given
    spellings = {expected.lower(), *(alias.lower() for alias in (rule.unit_aliases if rule else ()))}
    if given.lower() not in spellings:
        raise InvalidInputError(
            f"{metric} is recorded in {expected!r}, got unit {given!r}; convert the "
            "value first (a metric keeps one unit so its averages stay exact)"
        )
    return expected


def _number(value: float) -> str:
    return f"{value:g}"


def local_time(at: float, tz: tzinfo | None) -> datetime:
    """An epoch time as a datetime in the reading's own time zone (UTC when it had none); a stored
    time no datetime can hold (recorded before times were checked) is clamped to the nearest one."""
    utc = from_epoch(min(max(at, READABLE_EPOCHS[0]), READABLE_EPOCHS[1]))
    assert utc is not None
    return utc.astimezone(tz or timezone.utc)


def _clock(when: datetime) -> str:
    zone = when.strftime("%Z") or "UTC"
    return f"{when:%H:%M} on {when:%Y-%m-%d} ({zone})"


def episode_text(rule: MetricRule, direction: str, values: list[tuple[datetime, float]]) -> str:
    """The episodic memory of out-of-range readings: 'Heart rate 128 bpm at 14:05 on 2024-01-20 (UTC),
    above the normal 60-100 bpm (...)'; a run of readings gives its span, count and extreme."""
    label = rule.label[0].upper() + rule.label[1:]
    unit = f" {rule.unit}" if rule.unit else ""
    normal = (
        f"the normal {rule.normal_text()} ({rule.source})"
        if rule.source
        else f"the normal {rule.normal_text()}"
    )
    if len(values) == 1:
        when, value = values[0]
        return f"{label} {_number(value)}{unit} at {_clock(when)}, {direction} {normal}."
    pick = max if direction == "above" else min
    peak_at, peak = pick(values, key=lambda item: item[1])
    word = "peak" if direction == "above" else "lowest"
    start, end = values[0][0], values[-1][0]
    return (
        f"{label} {direction} {normal} from {start:%H:%M} to {_clock(end)}: {len(values)} readings, "
        f"{word} {_number(peak)}{unit} at {peak_at:%H:%M}."
    )


def latest_text(
    label: str,
    value: float,
    unit: str,
    when: datetime,
    status: str | None,
    rule: MetricRule | None,
    source: str | None,
) -> str:
    """The memory of a metric's latest reading, rewritten as readings arrive: 'Latest heart rate
    reading: 85 bpm at 14:05 on 2024-01-20 (UTC), within the normal 60-100 bpm.'"""
    unit_text = f" {unit}" if unit else ""
    text = f"Latest {label} reading (current {label}): {_number(value)}{unit_text} at {_clock(when)}"
    if source:
        text += f" from {source}"
    if status is not None and rule is not None:
        where = "within" if status == "normal" else status
        text += f", {where} the normal {rule.normal_text()}"
    return text + "."


def metric_label(metric: str, rule: MetricRule | None) -> str:
    """How a metric is named in sentences and in the graph: the rule's label, else 'blood glucose'."""
    return rule.label if rule is not None else metric.replace("_", " ")
