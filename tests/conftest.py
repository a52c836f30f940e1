"""Shared fixtures: one real MiniLM embedder per test session, real stores in tmp_path."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from ripplemem import RippleMem  # noqa: E402
from ripplemem.embeddings import Embedder, resolve_embedder  # noqa: E402


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The default local MiniLM model, loaded once for the whole run."""
    return resolve_embedder(None)


@pytest.fixture(params=["chroma", "numpy"])
def mem(request: pytest.FixtureRequest, tmp_path: Path, embedder: Embedder) -> Iterator[RippleMem]:
    """Alice's handle on a fresh on-disk store, once with each vector index."""
    handle = RippleMem(path=tmp_path / "store", user_id="alice", embedder=embedder,
                       vector_index=request.param)
    yield handle
    handle.close()


@pytest.fixture
def memory_only(embedder: Embedder) -> Iterator[RippleMem]:
    """Alice's handle on an in-memory store (path=None)."""
    handle = RippleMem(path=None, user_id="alice", embedder=embedder)
    yield handle
    handle.close()
