"""An on-disk embedding cache for the quality benchmarks, so a rerun embeds nothing new.

Document vectors are kept in one SQLite file per model under a cache folder, keyed by the sha1
of the text; queries always go to the live model, so recall latency still includes embedding
the question (as in speed_cache.ReplayEmbedder).
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from minilm_int8 import INT8_NAMES, int8_embedder

from ripplemem.embedding.embedders import Embedder, resolve_embedder

DEFAULT_CACHE = Path("~/.cache/ripplemem/bench")


def _key(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()


class DiskCachedEmbedder:
    """Wraps an embedder: document vectors come from the cache file, or are embedded and saved."""

    def __init__(self, inner: Embedder, folder: str | os.PathLike[str] = DEFAULT_CACHE) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        root = Path(folder).expanduser()
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / (re.sub(r"[^A-Za-z0-9._-]+", "_", inner.model_id) + ".sqlite")
        # add_many embeds its next batch in a worker thread while it writes the current one.
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        self._lock = threading.Lock()
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB)")
        self.embedded = 0

    def _lookup(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            batch = keys[start : start + 500]
            marks = ",".join("?" * len(batch))
            query = f"SELECT key, vector FROM vectors WHERE key IN ({marks})"
            for key, blob in self._db.execute(query, batch):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Cached vectors where known; the rest embedded by the inner model in one batch and saved."""
        texts = list(texts)
        if not texts:
            return self.inner.embed_documents(texts)
        keys = [_key(t) for t in texts]
        with self._lock:
            return self._cached(texts, keys)

    def _cached(self, texts: list[str], keys: list[bytes]) -> np.ndarray:
        found = self._lookup(list(dict.fromkeys(keys)))
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        if missing:
            vectors = np.asarray(self.inner.embed_documents(list(missing.values())), dtype=np.float32)
            fresh = dict(zip(missing, vectors, strict=True))
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                    [(key, vector.tobytes()) for key, vector in fresh.items()],
                )
            found.update(fresh)
            self.embedded += len(fresh)
        return np.stack([found[key] for key in keys])

    def embed_query(self, text: str) -> np.ndarray:
        """Queries are embedded live: recall latency includes the model."""
        return self.inner.embed_query(text)


def cached_embedder(spec: str | None, folder: str | os.PathLike[str] = DEFAULT_CACHE) -> DiskCachedEmbedder:
    """The named embedder (None: the default MiniLM; 'minilm-int8': its int8 graph, minilm_int8.py)
    behind the disk cache in `folder`."""
    if spec is not None and spec.strip().lower() in INT8_NAMES:
        return DiskCachedEmbedder(int8_embedder(), folder)
    return DiskCachedEmbedder(resolve_embedder(spec), folder)
