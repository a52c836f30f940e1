"""Time-to-live of RippleMemStore items: the expiry kept with each memory, and the background sweep.

An item put with ``ttl=`` minutes carries ``{"minutes": m, "expires_at": iso}`` in its memory's
metadata; a read that refreshes it moves ``expires_at`` to now + m. Expired items are skipped by
every read; ``sweep_ttl`` erases them for good (``RippleMem.erase``: rows, vectors, change log).
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from ripplemem import ClosedError

TTL_KEY = "langgraph_ttl"
DEFAULT_SWEEP_MINUTES = 5.0  # as LangGraph's SqliteStore / PostgresStore when no interval is given

logger = logging.getLogger(__name__)


def ttl_metadata(minutes: float | None, now: datetime) -> dict[str, Any]:
    """The metadata entry of an item that expires ``minutes`` from now ({} for no TTL)."""
    if minutes is None:
        return {}
    return {TTL_KEY: {"minutes": minutes, "expires_at": (now + timedelta(minutes=minutes)).isoformat()}}


def is_expired(metadata: Mapping[str, Any], now: datetime) -> bool:
    """Whether a memory's item has a TTL that has run out."""
    ttl = metadata.get(TTL_KEY)
    return isinstance(ttl, Mapping) and datetime.fromisoformat(ttl["expires_at"]) <= now


def refreshed(metadata: Mapping[str, Any], now: datetime) -> dict[str, Any] | None:
    """The metadata with the TTL restarted from now, or None when the item has no TTL."""
    ttl = metadata.get(TTL_KEY)
    if not isinstance(ttl, Mapping):
        return None
    return {**metadata, **ttl_metadata(float(ttl["minutes"]), now)}


class TTLSweeper:
    """A daemon thread that calls ``sweep`` every interval until stopped (LangGraph's sweeper API)."""

    def __init__(self, sweep: Callable[[], int]) -> None:
        self._sweep = sweep
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._future: concurrent.futures.Future[None] = concurrent.futures.Future()

    def start(self, minutes: float) -> concurrent.futures.Future[None]:
        """Sweep every ``minutes`` in the background; the future ends when the sweeper stops
        (cancelling it stops the sweeper). Already running: the running sweeper's future."""
        if self._thread is not None and self._thread.is_alive():
            return self._future
        self._stop.clear()
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
        self._future = future

        def loop() -> None:
            while not self._stop.wait(minutes * 60):
                try:
                    swept = self._sweep()
                    if swept:
                        logger.info("RippleMemStore swept %d expired items", swept)
                except ClosedError:  # the RippleMem handle was closed: nothing left to sweep
                    break
                except Exception:  # a failed sweep is logged and retried at the next interval
                    logger.exception("RippleMemStore TTL sweep failed")
            if not future.done():
                future.set_result(None)

        self._thread = threading.Thread(target=loop, daemon=True, name="ripplemem-ttl-sweeper")
        self._thread.start()
        return future

    def stop(self, timeout: float | None = None) -> bool:
        """Stop the thread; True when it has stopped (or never ran)."""
        if self._thread is None or not self._thread.is_alive():
            return True
        self._stop.set()
        self._thread.join(timeout)
        stopped = not self._thread.is_alive()
        if stopped:
            self._thread = None
        return stopped
