"""RippleMem's perceptual memory: images and audio (``mem.media``), sensor readings (``mem.sensors``)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ripplemem.api.handle import Namespace
from ripplemem.core.choices import MediaKind
from ripplemem.core.validation import check_datetime, check_items, check_k
from ripplemem.embedding.media_encoders import AudioEncoder, ImageEncoder
from ripplemem.engine.writes import delete_memories
from ripplemem.errors import InvalidInputError
from ripplemem.perceptual.media import MEDIA, add_media, use_encoder
from ripplemem.perceptual.recording import (
    check_readings,
    latest_memory,
    record_readings,
    resolve_window,
    to_reading,
)
from ripplemem.rules.perceptual import MetricStats, Reading, SensorSettings, check_metric
from ripplemem.store.tables.memories import to_epoch
from ripplemem.store.tables.readings import delete_readings, metric_units, reading_stats, select_readings

if TYPE_CHECKING:
    from ripplemem.core.types import Memory


class Media(Namespace):
    """``mem.media``: images and audio as perceptual memories, and the encoders that embed them."""

    def add_image(
        self,
        path: str | os.PathLike[str],
        caption: str | None = None,
        *,
        encoder: ImageEncoder | None = None,
        importance: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        event_time: datetime | str | None = None,
        session_id: str | None = None,
    ) -> Memory:
        """Remember an image: a perceptual memory (modality "image") whose ``metadata["file"]`` is the
        file's absolute path, so a recall hit leads back to it.

        The ``caption`` is embedded as text, as any memory. An ``encoder`` (``embed_image(path)``,
        e.g. ``SentenceTransformerImageEncoder`` for CLIP; default: the one given to
        ``use_encoder``) embeds the image itself into the store's image index, in the encoder's own
        space; with a text side (``embed_text``) recall finds it from a text query. One of the two
        is required.
        """
        return add_media(
            self._engine,
            self.scope_info,
            "image",
            path,
            caption,
            encoder,
            importance=importance,
            metadata=metadata,
            event_time=event_time,
            session_id=session_id,
        )

    def add_audio(
        self,
        path: str | os.PathLike[str],
        transcript: str | None = None,
        *,
        encoder: AudioEncoder | None = None,
        importance: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        event_time: datetime | str | None = None,
        session_id: str | None = None,
    ) -> Memory:
        """Remember an audio file: a perceptual memory (modality "audio") with ``metadata["file"]``;
        the ``transcript`` is embedded as text, and ``encoder.embed_audio(path)`` (e.g.
        ``ClapAudioEncoder``; default: the one given to ``use_encoder``) embeds the sound into the
        store's audio index. One of the two is required."""
        return add_media(
            self._engine,
            self.scope_info,
            "audio",
            path,
            transcript,
            encoder,
            importance=importance,
            metadata=metadata,
            event_time=event_time,
            session_id=session_id,
        )

    def use_encoder(self, modality: MediaKind, encoder: ImageEncoder | AudioEncoder) -> None:
        """Use an encoder for "image" or "audio" on this handle and those made by its ``scope()``:
        add_image / add_audio embed files with it, and recall embeds each query with its text
        side (``embed_text``) to search that modality's index (cross-modal recall). An encoder
        other than the one the store's index was built with is an EmbeddingModelMismatchError.
        Giving ``encoder=`` to add_image / add_audio registers it the same way."""
        if modality not in MEDIA:
            raise InvalidInputError(f"modality must be one of {', '.join(MEDIA)}; got {modality!r}")
        use_encoder(self._engine, modality, encoder)


class Sensors(Namespace):
    """``mem.sensors``: sensor streams (heart rate, steps, SpO2, ...) as exact time series."""

    def record(
        self,
        metric: str,
        value: float,
        *,
        unit: str | None = None,
        at: datetime | str | None = None,
        source: str | None = None,
    ) -> Reading:
        """Store one sensor reading: ``mem.sensors.record("heart_rate", 85, unit="bpm")`` (``at``: now).

        A reading outside the metric's normal range (``Settings.sensors``; heart rate 60-100 bpm,
        SpO2 >= 95 %, body temperature 36.1-37.2 °C, steps none) becomes an episodic memory that
        mentions the metric ("heart rate") in the graph; readings out of range in the same direction
        within ``episode_gap_minutes`` share one memory. The metric's latest reading is kept as a
        perceptual memory, so recall answers "what is my heart rate now?".
        """
        reading = {"metric": metric, "value": value, "unit": unit, "at": at, "source": source}
        return self.record_many([reading])[0]

    def record_many(self, readings: Iterable[Mapping[str, Any]]) -> list[Reading]:
        """Store many readings (dicts with metric, value and optionally unit, at, source); all are
        checked before any is stored. Returns them with their status and episode memory ids."""
        given = check_items("readings", readings, "readings (dicts with metric and value)")
        incoming = check_readings(self._engine, self.user_id, given)
        if not incoming:
            return []
        return record_readings(self._engine, self.scope_info, incoming)

    def readings(
        self,
        metric: str,
        *,
        period: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        limit: int | None = None,
    ) -> list[Reading]:
        """A metric's readings in time order, in a period ("today", "last week") or [since, until)."""
        name = check_metric(metric)
        start, end = resolve_window(period, since, until, self._engine.clock())
        rows = select_readings(
            self._engine.store,
            self.user_id,
            name,
            to_epoch(start),
            to_epoch(end),
            None if limit is None else check_k(limit, "limit"),
        )
        return [to_reading(row, self._sensor_settings) for row in rows]

    def latest(self, metric: str) -> Reading | None:
        """The newest reading of a metric (by its time), or None when none was recorded."""
        rows = select_readings(
            self._engine.store, self.user_id, check_metric(metric), None, None, limit=1, newest_first=True
        )
        return to_reading(rows[0], self._sensor_settings) if rows else None

    def metric_range(
        self,
        metric: str,
        *,
        period: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
    ) -> MetricStats | None:
        """The lowest and highest reading (with their times), count, mean and total of a metric in a
        period or [since, until), computed exactly over the stored readings; None when there are none."""
        name = check_metric(metric)
        start, end = resolve_window(period, since, until, self._engine.clock())
        stats = reading_stats(self._engine.store, self.user_id, name, to_epoch(start), to_epoch(end))
        if stats is None:
            return None
        lowest, highest = (to_reading(row, self._sensor_settings) for row in (stats.lowest, stats.highest))
        return MetricStats(
            name, highest.unit, stats.count, stats.mean, stats.total, lowest, highest, start, end
        )

    def average(
        self,
        metric: str,
        *,
        period: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
    ) -> float | None:
        """The mean of a metric's readings in a period ("last week") or [since, until); None if none."""
        stats = self.metric_range(metric, period=period, since=since, until=until)
        return None if stats is None else stats.mean

    def metrics(self) -> dict[str, dict[str, Any]]:
        """Every metric this user recorded: {metric: {"unit": ..., "readings": count}}."""
        return {
            name: {"unit": unit, "readings": count}
            for name, (unit, count) in metric_units(self._engine.store, self.user_id).items()
        }

    def delete(
        self,
        metric: str | None = None,
        *,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
    ) -> int:
        """Delete this user's readings (of one metric, in [since, until), if given); returns how many.
        Deleting every reading of a metric also deletes its latest-reading memory."""
        name = None if metric is None else check_metric(metric)
        start, end = check_datetime("since", since), check_datetime("until", until)
        if start is not None and end is not None and start >= end:
            raise InvalidInputError("since must be before until")
        engine = self._engine
        with engine.unit_of_work(self.user_id) as work:
            before = metric_units(work.store, self.user_id)
            with work.transaction() as conn:
                deleted = delete_readings(conn, self.user_id, name, to_epoch(start), to_epoch(end))
            emptied = set(before) - set(metric_units(engine.store, self.user_id))
            memories = [latest_memory(engine, self.user_id, gone) for gone in sorted(emptied)]
            delete_memories(engine, self.user_id, [m.id for m in memories if m is not None])
        return deleted

    @property
    def _sensor_settings(self) -> SensorSettings:
        return self._engine.settings.sensors
