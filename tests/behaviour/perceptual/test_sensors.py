"""Sensor streams: exact latest / range / average, out-of-range episodes in the graph, recall of
the current value, errors that store nothing, and per-user isolation, on real stores."""

from __future__ import annotations

import sqlite3
import statistics
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from manual_clock import ManualClock

from ripplemem import InvalidInputError, InvalidTypeError, RippleMem, Settings, StoreOptions
from ripplemem.embedding.embedders import Embedder
from ripplemem.rules.perceptual import MetricRule, SensorSettings

MONDAY = datetime(2024, 1, 15, 8, 0, tzinfo=timezone.utc)
MIDNIGHT = MONDAY.replace(hour=0)
# A week of resting heart rates, one every 6 hours from Monday 00:00: 28 readings, all within 60-100 bpm.
WEEK = [62 + (i * 7) % 31 for i in range(28)]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(MONDAY + timedelta(days=7, hours=2))  # Monday of the next week, 10:00


@pytest.fixture(params=["chroma", "numpy"])
def health(
    request: pytest.FixtureRequest, tmp_path: Path, embedder: Embedder, clock: ManualClock
) -> Iterator[RippleMem]:
    handle = RippleMem(
        path=tmp_path / "store",
        user_id="alice",
        embedder=embedder,
        store=StoreOptions(vector_index=request.param),
        clock=clock,
    )
    yield handle
    handle.close()


def _record_week(mem: RippleMem) -> None:
    mem.sensors.record_many(
        [
            {
                "metric": "heart_rate",
                "value": v,
                "unit": "bpm",
                "source": "wristband",
                "at": MIDNIGHT + timedelta(hours=6 * i),
            }
            for i, v in enumerate(WEEK)
        ]
    )


def test_latest_range_and_average_are_exact(health: RippleMem) -> None:
    _record_week(health)
    health.sensors.record("heart_rate", 77, at=MONDAY + timedelta(days=7, hours=1))  # this week, 09:00

    latest = health.sensors.latest("heart rate")
    assert latest is not None and latest.value == 77 and latest.at == MONDAY + timedelta(days=7, hours=1)
    assert latest.unit == "bpm" and latest.status == "normal"

    last_week = health.sensors.metric_range("heart_rate", period="last week")
    assert last_week is not None and last_week.count == len(WEEK)
    assert last_week.lowest.value == min(WEEK) and last_week.highest.value == max(WEEK)
    assert last_week.lowest.at == MIDNIGHT + timedelta(hours=6 * WEEK.index(min(WEEK)))
    assert last_week.total == sum(WEEK)
    assert health.sensors.average("heart_rate", period="last week") == pytest.approx(
        statistics.fmean(WEEK), abs=1e-12
    )
    assert last_week.start == MIDNIGHT and last_week.end == MIDNIGHT + timedelta(days=7)

    # since / until is half-open: the reading at `until` is left out.
    tuesday = MIDNIGHT + timedelta(days=1)
    window = health.sensors.readings("hr", since=tuesday, until=tuesday + timedelta(hours=12))
    assert [r.value for r in window] == WEEK[4:6]
    assert health.sensors.average(
        "heart_rate", since=tuesday, until=tuesday + timedelta(hours=12)
    ) == pytest.approx(statistics.fmean(WEEK[4:6]))
    assert health.sensors.average("heart_rate", period="today") == 77
    assert health.sensors.metric_range("heart_rate", period="last year") is None
    assert health.sensors.metrics() == {"heart_rate": {"unit": "bpm", "readings": len(WEEK) + 1}}


def test_out_of_range_run_becomes_one_episodic_memory_in_the_graph(health: RippleMem) -> None:
    start = MONDAY + timedelta(hours=6)
    values = [72, 128, 135, 131, 88, 70]
    readings = health.sensors.record_many(
        [
            {"metric": "heart_rate", "value": v, "at": start + timedelta(minutes=5 * i)}
            for i, v in enumerate(values)
        ]
    )
    assert [r.status for r in readings] == ["normal", "above", "above", "above", "normal", "normal"]
    episode_ids = {r.memory_id for r in readings if r.memory_id}
    assert len(episode_ids) == 1 and all(r.memory_id is None for r in readings if r.status == "normal")

    episode = health.get(episode_ids.pop())
    assert episode is not None and episode.type == "episodic" and episode.modality == "sensor"
    assert "above the normal 60-100 bpm" in episode.content and "3 readings" in episode.content
    assert "peak 135 bpm at 14:10" in episode.content and "from 14:05" in episode.content
    assert episode.event_time == start + timedelta(minutes=5)
    linked = {n.node.id for n in health.graph.neighbors("heart rate")}
    assert episode.id in linked
    assert health.list("episodic") == [episode]


def test_an_episode_continues_across_calls_within_the_gap_and_not_after(health: RippleMem) -> None:
    start = MONDAY + timedelta(hours=6)
    first = health.sensors.record("heart_rate", 120, at=start)
    second = health.sensors.record("heart_rate", 140, at=start + timedelta(minutes=10))
    assert first.memory_id is not None and second.memory_id == first.memory_id
    merged = health.get(first.memory_id)
    assert merged is not None and "2 readings, peak 140 bpm at 14:10" in merged.content

    later = health.sensors.record("heart_rate", 125, at=start + timedelta(hours=2))  # past the 30-minute gap
    below = health.sensors.record("heart_rate", 48, at=start + timedelta(hours=2, minutes=5))  # other way
    assert len({first.memory_id, later.memory_id, below.memory_id}) == 3
    low = health.get(below.memory_id or "")
    assert (
        low is not None
        and "Heart rate 48 bpm at 16:05 on 2024-01-15 (UTC), below the normal 60-100 bpm" in low.content
    )


def test_metrics_with_and_without_ranges(health: RippleMem) -> None:
    at = MONDAY + timedelta(hours=3)
    spo2 = health.sensors.record("SpO2", 91, unit="%", at=at)
    fever = health.sensors.record("body_temperature", 38.4, unit="°C", at=at)
    steps = health.sensors.record("steps", 25_000, at=at)
    glucose = health.sensors.record("blood_glucose", 12.5, unit="mmol/L", at=at)
    assert spo2.status == "below" and spo2.memory_id is not None
    assert fever.status == "above" and fever.memory_id is not None
    assert steps.status is None and steps.memory_id is None
    assert glucose.status is None and glucose.unit == "mmol/L"
    texts = [m.content for m in health.list("episodic")]
    assert any("Blood oxygen (SpO2) 91 % at" in t and "below the normal >= 95 %" in t for t in texts)
    assert any("Body temperature 38.4 °C" in t and "above the normal 36.1-37.2 °C" in t for t in texts)
    assert len(texts) == 2


def test_custom_normal_range_from_settings(tmp_path: Path, embedder: Embedder, clock: ManualClock) -> None:
    rules = {
        **SensorSettings().metrics,
        "blood_glucose": MetricRule("mmol/L", "blood glucose", 3.9, 7.8, "example clinic range"),
    }
    settings = Settings(sensors=SensorSettings(metrics=rules, episode_gap_minutes=5))
    with RippleMem(
        path=tmp_path / "s",
        user_id="ann",
        embedder=embedder,
        store=StoreOptions(vector_index="numpy"),
        settings=settings,
        clock=clock,
    ) as mem:
        first = mem.sensors.record("blood_glucose", 9.1, unit="mmol/l", at=MONDAY)
        # past the 5-minute gap
        second = mem.sensors.record("blood_glucose", 9.4, at=MONDAY + timedelta(minutes=10))
        assert first.status == "above" and first.unit == "mmol/L"
        assert first.memory_id and second.memory_id and first.memory_id != second.memory_id


def test_recall_what_is_my_heart_rate_now_finds_the_latest_reading(
    health: RippleMem, clock: ManualClock
) -> None:
    _record_week(health)
    health.add("I ran 5 km along the river on Wednesday.", event_time=MONDAY + timedelta(days=2))
    health.add("Vegetarians often lack vitamin B12 and iron.", type="semantic")
    for minutes, value in ((0, 81), (5, 84), (10, 79)):
        health.sensors.record("heart_rate", value, at=clock.now - timedelta(minutes=30 - minutes))

    top = health.recall("what is my heart rate now?", 3).hits[0].memory
    assert top.type == "perceptual" and top.modality == "sensor"
    assert "79 bpm" in top.content and top.metadata["value"] == 79
    assert "81 bpm" not in top.content and "84 bpm" not in top.content
    assert len([m for m in health.list("perceptual") if m.metadata.get("sensor") == "latest"]) == 1


def test_an_older_reading_does_not_replace_the_latest(health: RippleMem) -> None:
    health.sensors.record("heart_rate", 70, at=MONDAY + timedelta(days=1))
    health.sensors.record("heart_rate", 95, at=MONDAY)  # backfilled
    assert health.sensors.latest("heart_rate").value == 70  # type: ignore[union-attr]
    [memory] = [m for m in health.list("perceptual") if m.metadata.get("metric") == "heart_rate"]
    assert "70 bpm" in memory.content


@pytest.mark.parametrize(
    ("reading", "error", "says"),
    [
        ({"metric": "heart_rate", "value": 80, "unit": "bps"}, InvalidInputError, "recorded in 'bpm'"),
        ({"metric": "heart_rate", "value": "80"}, InvalidTypeError, "must be a number"),
        ({"metric": "heart_rate", "value": float("nan")}, InvalidInputError, "finite"),
        ({"metric": "heart rate!", "value": 80}, InvalidInputError, "metric must be a name"),
        ({"metric": "heart_rate"}, InvalidInputError, "needs a 'metric' and a 'value'"),
        ({"metric": "heart_rate", "value": 80, "at": "yesterday"}, InvalidInputError, "ISO-8601"),
        ({"metric": "heart_rate", "value": 80, "bpm": 1}, InvalidInputError, "unknown fields"),
    ],
)
def test_a_bad_reading_stores_nothing_of_its_batch(
    health: RippleMem, reading: dict, error: type, says: str
) -> None:
    good = {"metric": "heart_rate", "value": 130, "at": MONDAY}
    with pytest.raises(error, match=says):
        health.sensors.record_many([good, reading])
    assert health.sensors.latest("heart_rate") is None and health.list() == []


def test_query_errors_name_the_problem(health: RippleMem) -> None:
    health.sensors.record("weight", 70.5, unit="kg", at=MONDAY)
    with pytest.raises(InvalidInputError, match="recorded in 'kg'"):
        health.sensors.record("weight", 155, unit="lb")
    with pytest.raises(InvalidInputError, match="not a time phrase"):
        health.sensors.average("weight", period="whenever")
    with pytest.raises(InvalidInputError, match="either period"):
        health.sensors.average("weight", period="today", since=MONDAY)
    with pytest.raises(InvalidInputError, match="must be before until"):
        health.sensors.readings("weight", since=MONDAY, until=MONDAY)


def test_readings_are_isolated_per_user(health: RippleMem) -> None:
    _record_week(health)
    health.sensors.record("heart_rate", 140, at=MIDNIGHT + timedelta(days=6, hours=23))
    bob = health.scope("bob")
    bob.sensors.record("heart_rate", 66, at=MONDAY)
    assert bob.sensors.latest("heart_rate").value == 66  # type: ignore[union-attr]
    assert bob.sensors.readings("heart_rate", period="last week") == bob.sensors.readings("heart_rate")
    assert [r.value for r in bob.sensors.readings("heart_rate")] == [66]
    assert bob.sensors.metric_range("heart_rate").count == 1  # type: ignore[union-attr]
    assert bob.list("episodic") == [] and all(
        "140" not in h.memory.content for h in bob.recall("heart rate above normal", 5).hits
    )
    assert health.sensors.latest("heart_rate").value == 140  # type: ignore[union-attr]
    assert bob.sensors.delete() == 1
    assert health.sensors.metric_range("heart_rate").count == len(WEEK) + 1  # type: ignore[union-attr]


def test_delete_readings_drops_the_latest_memory_with_the_last_reading(health: RippleMem) -> None:
    health.sensors.record("steps", 4000, at=MONDAY)
    health.sensors.record("steps", 9000, at=MONDAY + timedelta(days=1))
    assert health.sensors.delete("steps", until=MONDAY + timedelta(hours=1)) == 1
    assert any(m.metadata.get("metric") == "steps" for m in health.list("perceptual"))
    assert health.sensors.delete("steps") == 1
    assert health.sensors.latest("steps") is None
    assert not any(m.metadata.get("metric") == "steps" for m in health.list("perceptual"))


def test_readings_survive_reopening_and_the_migration_is_idempotent(
    tmp_path: Path, embedder: Embedder
) -> None:
    path = tmp_path / "store"
    with RippleMem(
        path=path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="numpy")
    ) as mem:
        mem.sensors.record("heart_rate", 64, at=MONDAY)
    # As if the v5 step had crashed after creating the table but before its version was saved.
    with sqlite3.connect(path / "ripplemem.db") as conn:
        conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    with RippleMem(
        path=path, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="numpy")
    ) as mem:
        assert mem.sensors.latest("heart_rate").value == 64  # type: ignore[union-attr]
