"""add_many embeds the next batch while the current one is written, and stores what it did before."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder

WAIT = 5.0  # seconds a write waits to see the next batch's embedding start


class WatchingEmbedder:
    """The real model, noting when it begins embedding one given text."""

    def __init__(self, model: Embedder, watched: str) -> None:
        self.model_id = model.model_id
        self._model = model
        self._watched = watched
        self.second_started = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if self._watched in texts:
            self.second_started.set()
        return self._model.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._model.embed_query(text)


def _texts(n: int) -> list[str]:
    return [f"Note {i}: the {['red', 'blue', 'green'][i % 3]} bike is in garage {i * 7}." for i in range(n)]


def test_the_next_batch_is_embedded_while_the_first_is_written(tmp_path: Path, embedder: Embedder) -> None:
    texts = _texts(6)
    counting = WatchingEmbedder(embedder, texts[3])  # the second batch's first memory
    mem = RippleMem(path=tmp_path / "store", user_id="alice", embedder=counting)
    index = mem._engine.index
    original_add = index.add
    seen_during_first_write: list[bool] = []

    def add(*args: Any, **kwargs: Any) -> Any:
        if not seen_during_first_write:
            seen_during_first_write.append(counting.second_started.wait(WAIT))
        return original_add(*args, **kwargs)

    index.add = add  # type: ignore[method-assign]
    stored = mem.add_many(texts, batch_size=3)
    assert seen_during_first_write == [True]
    assert sorted(m.content for m in stored) == sorted(texts)
    assert sorted(m.content for m in mem.list(limit=10)) == sorted(texts)
    mem.close()


def test_batches_store_and_recall_as_one_call_does(tmp_path: Path, embedder: Embedder) -> None:
    texts = _texts(25)
    one = RippleMem(path=tmp_path / "one", user_id="alice", embedder=embedder)
    many = RippleMem(path=tmp_path / "many", user_id="alice", embedder=embedder)
    one.add_many(texts)
    many.add_many(texts, batch_size=4)
    for handle in (one, many):
        assert sorted(m.content for m in handle.list(limit=100)) == sorted(texts)
    query = "where is the blue bike?"
    first = [hit.memory.content for hit in one.recall(query, k=5, record_access=False).hits]
    second = [hit.memory.content for hit in many.recall(query, k=5, record_access=False).hits]
    assert first == second
    one.close()
    many.close()
