"""A time phrase in a recall's query ("yesterday", "last week", "上周"): the window it names, the
search spec narrowed to it, and the two searches of "boost" merged, what happened in the window lifted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from ripplemem.core.choices import TimePhraseMode, literal_values
from ripplemem.core.types import Hit, Recall
from ripplemem.errors import InvalidInputError
from ripplemem.language.timeparse import TimeRange, resolve_time
from ripplemem.retrieval.pipeline import SearchSpec, merge_subgraphs
from ripplemem.store.tables.memories import to_epoch

TIME_PHRASE_MODES = literal_values(TimePhraseMode)


def check_time_phrases(value: object) -> str:
    """Validate recall(time_phrases=...): "boost" (default), "filter" or "off"."""
    if value not in TIME_PHRASE_MODES:
        raise InvalidInputError(f"time_phrases must be one of {', '.join(TIME_PHRASE_MODES)}; got {value!r}")
    return str(value)


def time_window(
    query: str, texts: Sequence[str], reference: datetime, time_phrases: str
) -> tuple[TimeRange | None, list[str]]:
    """The time range the query's first time phrase names ("yesterday", "上周"; None when it names
    none or time phrases are off), and each text to search with that phrase taken out."""
    window = None if time_phrases == "off" else resolve_time(query, reference)
    if window is None:
        return None, list(texts)
    return window, [window.strip_from(text) or text for text in texts]


def within(spec: SearchSpec, window: TimeRange) -> SearchSpec:
    """The spec narrowed to memories that happened in the window (and in the caller's own range)."""
    start, end = to_epoch(window.start), to_epoch(window.end)
    since = start if spec.flt.since is None else max(start, spec.flt.since)
    until = end if spec.flt.until is None else min(end, spec.flt.until)
    return replace(spec, flt=replace(spec.flt, since=since, until=until))


def lift_window(
    query: str, inside: Recall, everywhere: Recall, window: TimeRange, boost: float, spec: SearchSpec
) -> Recall:
    """ "boost": the search everywhere with what the search inside the window found lifted by ``boost``,
    best k first."""
    # Scores are comparable within one search only: a memory both searches found keeps the score
    # it got among everything, and only then is lifted.
    scored = {hit.memory.id: hit for hit in everywhere.hits}
    lifted = {
        hit.memory.id: _lift(scored.get(hit.memory.id, hit), boost, window.phrase) for hit in inside.hits
    }
    hits = [*lifted.values(), *(hit for hit in everywhere.hits if hit.memory.id not in lifted)]
    hits.sort(key=lambda hit: -hit.score)
    return Recall(
        query=query,
        hits=hits[: spec.k],
        mode=spec.mode,
        subgraph=merge_subgraphs(inside.subgraph, everywhere.subgraph),
    )


def described(window: TimeRange, time_phrases: str) -> dict[str, Any]:
    """``Recall.time``: the phrase understood, its window and how it was applied."""
    return {"phrase": window.phrase, "start": window.start, "end": window.end, "how": time_phrases}


def _lift(hit: Hit, boost: float, phrase: str) -> Hit:
    why = f"{hit.why}; happened {phrase!r}" if hit.why else f"happened {phrase!r}"
    return replace(
        hit, score=hit.score * (1.0 + boost), components={**hit.components, "time_boost": boost}, why=why
    )
