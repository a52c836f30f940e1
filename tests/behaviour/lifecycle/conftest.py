"""Fixtures of the lifecycle tests: a manual clock and Alice's store on it, on each backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from manual_clock import ManualClock

from ripplemem import RippleMem, StoreOptions
from ripplemem.embedding.embedders import Embedder


@pytest.fixture
def clock() -> ManualClock:
    """Time starts on 2025-01-01 and moves only when a test says so."""
    return ManualClock()


@pytest.fixture
def mem(
    backend: dict[str, Any], store_dir: Path | None, embedder: Embedder, clock: ManualClock
) -> Iterator[RippleMem]:
    """Alice's store on the manual clock, on each backend (conftest.BACKENDS)."""
    handle = RippleMem(
        store_dir, user_id="alice", embedder=embedder, clock=clock, store=StoreOptions(**backend)
    )
    yield handle
    handle.close()
