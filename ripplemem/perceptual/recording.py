"""Sensor readings into the store: the time series rows, the episodic memories of out-of-range
episodes (joined to the graph through the metric's entity) and the perceptual memory of each
metric's latest reading, which recall finds for "what is my heart rate now?"."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ripplemem.core.clock import in_utc
from ripplemem.core.types import Memory, Scope
from ripplemem.core.validation import check_datetime, check_text
from ripplemem.engine.engine import Engine
from ripplemem.engine.graph_rows import GraphInput
from ripplemem.engine.items import build_memory
from ripplemem.engine.writes import update_memory, write_batch
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.language.entities import ExtractedEntity, canonical_name
from ripplemem.language.timeparse import resolve_time
from ripplemem.rules.perceptual import (
    MetricRule,
    Reading,
    SensorSettings,
    check_metric,
    check_unit,
    check_value,
    episode_text,
    latest_text,
    local_time,
    metric_label,
)
from ripplemem.store.tables.memories import MemoryFilter, to_epoch
from ripplemem.store.tables.readings import (
    ReadingRow,
    insert_readings,
    metric_units,
    readings_of_memory,
    select_readings,
    set_memory,
)

READING_FIELDS = frozenset({"metric", "value", "unit", "at", "source"})


@dataclass
class _Incoming:
    """One checked reading of a record call; id is set once the row is stored."""

    metric: str
    value: float
    unit: str
    at: datetime
    source: str | None
    id: int = 0
    memory_id: str | None = None


@dataclass
class _Episode:
    """A run of out-of-range readings of one metric in one direction (memory_id: a stored run it extends)."""

    direction: str
    readings: list[_Incoming] = field(default_factory=list)
    earlier: list[tuple[datetime, float]] = field(default_factory=list)
    memory_id: str | None = None


def check_readings(engine: Engine, user_id: str, items: Iterable[Mapping[str, Any]]) -> list[_Incoming]:
    """Every item checked (metric, value, unit, time, source) before anything is written."""
    settings, known = engine.settings.sensors, metric_units(engine.store, user_id)
    checked: list[_Incoming] = []
    units: dict[str, str] = {}
    for position, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InvalidTypeError(f"reading {position} must be a dict, got {type(item).__name__}")
        unknown = set(item) - READING_FIELDS
        if unknown:
            raise InvalidInputError(
                f"reading {position} has unknown fields {sorted(unknown)}; allowed: {sorted(READING_FIELDS)}"
            )
        if "metric" not in item or "value" not in item:
            raise InvalidInputError(f"reading {position} needs a 'metric' and a 'value'")
        metric = check_metric(item["metric"])
        stored = units.get(metric) or (known[metric][0] if metric in known else None)
        unit = check_unit(metric, item.get("unit"), settings.rule(metric), stored)
        units[metric] = unit
        at = check_datetime("at", item.get("at")) or engine.clock()
        source = item.get("source")
        if source is not None:
            check_text("source", source)
        aware = at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)
        checked.append(_Incoming(metric, check_value(metric, item["value"]), unit, aware, source))
    return checked


def record_readings(engine: Engine, scope: Scope, incoming: list[_Incoming]) -> list[Reading]:
    """Store checked readings; out-of-range runs become (or extend) episodic memories and each
    metric's latest-reading memory is rewritten when a newer reading arrives."""
    user_id, settings = scope.user_id, engine.settings.sensors
    with engine.unit_of_work(user_id) as work:
        latest_before = {m: _newest(engine, user_id, m) for m in dict.fromkeys(r.metric for r in incoming)}
        with work.transaction() as conn:
            values = [(r.metric, r.value, r.unit, to_epoch(r.at) or 0.0, r.source, None) for r in incoming]
            ids = insert_readings(conn, user_id, values)
        for reading, rid in zip(incoming, ids, strict=True):
            reading.id = rid
        for metric, previous in latest_before.items():
            rows = sorted((r for r in incoming if r.metric == metric), key=lambda r: (r.at, r.id))
            rule = settings.rule(metric)
            if rule is not None:
                episodes = _episodes(engine, user_id, rule, rows, previous, settings)
                _remember_episodes(engine, scope, metric, rule, episodes, settings)
            _refresh_latest(engine, scope, metric, rule, rows[-1], previous)
    return [_public(r, settings) for r in incoming]


def _newest(engine: Engine, user_id: str, metric: str) -> ReadingRow | None:
    found = select_readings(engine.store, user_id, metric, None, None, limit=1, newest_first=True)
    return found[0] if found else None


def _episodes(
    engine: Engine,
    user_id: str,
    rule: MetricRule,
    rows: list[_Incoming],
    previous: ReadingRow | None,
    settings: SensorSettings,
) -> list[_Episode]:
    """Runs of out-of-range readings; the first continues the stored episode the latest stored
    reading belongs to when it is in the same direction and within the gap."""
    gap = timedelta(minutes=settings.episode_gap_minutes)
    episodes: list[_Episode] = []
    current: _Episode | None = None
    last_at: datetime | None = None
    if previous is not None and previous.memory_id and to_epoch(rows[0].at) >= previous.at:
        direction = rule.status(previous.value)
        if direction in ("above", "below"):
            tz = rows[0].at.tzinfo
            earlier = [
                (local_time(r.at, tz), r.value)
                for r in readings_of_memory(engine.store, user_id, previous.memory_id)
            ]
            current = _Episode(direction, [], earlier, previous.memory_id)
            last_at = local_time(previous.at, tz)
    for reading in rows:
        status = rule.status(reading.value)
        if status not in ("above", "below"):
            current = None
            continue
        if current is None or current.direction != status or last_at is None or reading.at - last_at > gap:
            current = _Episode(status)
        if not current.readings:
            episodes.append(current)
        current.readings.append(reading)
        last_at = reading.at
    return episodes


def _remember_episodes(
    engine: Engine,
    scope: Scope,
    metric: str,
    rule: MetricRule,
    episodes: list[_Episode],
    settings: SensorSettings,
) -> None:
    """Write new episodes as episodic memories mentioning the metric; rewrite extended ones."""
    fresh: list[tuple[_Episode, Memory]] = []
    now = engine.clock()
    for episode in episodes:
        values = [*episode.earlier, *((r.at, r.value) for r in episode.readings)]
        metadata = {
            "sensor": "episode",
            "metric": metric,
            "direction": episode.direction,
            "readings": len(values),
            "normal": [rule.low, rule.high],
            "extreme": (max if episode.direction == "above" else min)(v for _, v in values),
            "start": values[0][0].isoformat(),
            "end": values[-1][0].isoformat(),
        }
        text = episode_text(rule, episode.direction, values)
        if episode.memory_id is not None:
            current = engine.store.get(episode.memory_id, scope.user_id)
            if current is not None:
                update_memory(engine, current, {"content": text, "metadata": metadata})
                _link(engine, scope.user_id, episode, episode.memory_id)
                continue
        item = {
            "content": text,
            "type": "episodic",
            "modality": "sensor",
            "event_time": values[0][0],
            "importance": settings.episode_importance,
            "metadata": metadata,
            "source": f"sensor:{metric}",
        }
        fresh.append((episode, build_memory(item, 0, "episodic", now, scope, engine.settings)))
    if fresh:
        entity = _entity(metric, rule)
        stored = write_batch(
            engine, scope.user_id, [m for _, m in fresh], [GraphInput(entities=[entity]) for _ in fresh]
        )
        for (episode, _), memory in zip(fresh, stored, strict=True):
            _link(engine, scope.user_id, episode, memory.id)


def _link(engine: Engine, user_id: str, episode: _Episode, memory_id: str) -> None:
    with engine.store.transaction() as conn:
        set_memory(conn, user_id, [r.id for r in episode.readings], memory_id)
    for reading in episode.readings:
        reading.memory_id = memory_id


def _entity(metric: str, rule: MetricRule | None) -> ExtractedEntity:
    label = metric_label(metric, rule)
    return ExtractedEntity(label, canonical_name(label), "metric")


def latest_memory(engine: Engine, user_id: str, metric: str) -> Memory | None:
    """The perceptual memory holding a metric's latest reading, if the user has one."""
    flt = MemoryFilter(
        user_id=user_id, types=("perceptual",), metadata=(("sensor", "latest"), ("metric", metric))
    )
    found = engine.store.list(flt, 1, 0, True)
    return found[0] if found else None


def _refresh_latest(
    engine: Engine,
    scope: Scope,
    metric: str,
    rule: MetricRule | None,
    newest: _Incoming,
    previous: ReadingRow | None,
) -> None:
    """Create or rewrite the metric's latest-reading memory when this batch holds a newer reading."""
    if previous is not None and to_epoch(newest.at) < previous.at:
        return
    label = metric_label(metric, rule)
    status = rule.status(newest.value) if rule is not None else None
    text = latest_text(label, newest.value, newest.unit, newest.at, status, rule, newest.source)
    metadata = {
        "sensor": "latest",
        "metric": metric,
        "value": newest.value,
        "unit": newest.unit,
        "at": newest.at.isoformat(),
        "status": status,
    }
    current = latest_memory(engine, scope.user_id, metric)
    if current is not None:
        update_memory(
            engine, current, {"content": text, "metadata": metadata, "event_time": to_epoch(newest.at)}
        )
        return
    item = {
        "content": text,
        "type": "perceptual",
        "modality": "sensor",
        "event_time": newest.at,
        "metadata": metadata,
        "source": f"sensor:{metric}",
    }
    memory = build_memory(item, 0, "perceptual", engine.clock(), scope, engine.settings)
    write_batch(engine, scope.user_id, [memory], [GraphInput(entities=[_entity(metric, rule)])])


def _public(reading: _Incoming, settings: SensorSettings) -> Reading:
    rule = settings.rule(reading.metric)
    return Reading(
        reading.metric,
        reading.value,
        reading.unit,
        in_utc(reading.at),
        reading.source,
        rule.status(reading.value) if rule is not None else None,
        reading.memory_id,
    )


def to_reading(row: ReadingRow, settings: SensorSettings) -> Reading:
    """A stored row as the public Reading (time in UTC)."""
    rule = settings.rule(row.metric)
    return Reading(
        row.metric,
        row.value,
        row.unit,
        local_time(row.at, None),
        row.source,
        rule.status(row.value) if rule is not None else None,
        row.memory_id,
    )


def resolve_window(
    period: str | None, since: datetime | str | None, until: datetime | str | None, now: datetime
) -> tuple[datetime | None, datetime | None]:
    """The [start, end) of a query: a time phrase ("today", "last week", "the last 7 days", "上周")
    resolved against now, or explicit since / until (either may be open)."""
    if period is not None:
        if since is not None or until is not None:
            raise InvalidInputError("give either period=... or since/until, not both")
        if not isinstance(period, str):
            raise InvalidTypeError(
                f"period must be a time phrase such as 'last week', got {type(period).__name__}"
            )
        window = resolve_time(period, now)
        if window is None:
            raise InvalidInputError(
                f"period {period!r} is not a time phrase RippleMem understands; try "
                "'today', 'yesterday', 'last week', 'the last 7 days' or '上周'"
            )
        return window.start, window.end
    start, end = check_datetime("since", since), check_datetime("until", until)
    if start is not None and end is not None and to_epoch(start) >= to_epoch(end):
        raise InvalidInputError(f"since ({start.isoformat()}) must be before until ({end.isoformat()})")
    return start, end
