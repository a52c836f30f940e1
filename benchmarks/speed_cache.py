"""Embedding cache for the speed benchmark: texts embedded once, in resumable chunk files.

A folder holds ``NNNNN.npy`` (the vectors of texts[N*CHUNK:(N+1)*CHUNK]) and ``NNNNN.json``
(how many texts, their sha1, the seconds the model took and the CPU other processes used
meanwhile). A chunk counts only when its .npy exists and its sha1 matches the texts asked for,
so a killed run resumes at the first missing chunk and changed texts are embedded again.
The seconds recorded are the raw embedding throughput of the model on those texts.

Systems that accept vectors ingest through ``ReplayEmbedder``: the document vectors of the
chunk being ingested come from the cache; anything else (queries, entity names a system embeds
on its own) goes to the live model and is counted.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

CHUNK = 10_000


def _sha1(texts: Sequence[str]) -> str:
    return hashlib.sha1("\n".join(texts).encode()).hexdigest()


class EmbedCache:
    """The vectors of one list of texts under `folder`, one chunk file per CHUNK texts."""

    def __init__(self, folder: str | os.PathLike[str], texts: Sequence[str]) -> None:
        self.folder = Path(folder)
        self.texts = texts

    def _slices(self) -> Iterator[tuple[int, Sequence[str]]]:
        for number, start in enumerate(range(0, len(self.texts), CHUNK)):
            yield number, self.texts[start : start + CHUNK]

    def _meta(self, number: int, texts: Sequence[str]) -> dict[str, Any] | None:
        vectors, meta = self.folder / f"{number:05d}.npy", self.folder / f"{number:05d}.json"
        if not vectors.exists() or not meta.exists():
            return None
        info: dict[str, Any] = json.loads(meta.read_text())
        return info if info.get("sha1") == _sha1(texts) and info.get("n") == len(texts) else None

    def build(
        self,
        embed: Callable[[Sequence[str]], np.ndarray],
        contention: Callable[[], Callable[[], float]],
        report: Callable[[int, int], None] | None = None,
    ) -> dict[str, float]:
        """Embed every chunk not cached yet; returns texts/s and other-procs cores over all chunks."""
        self.folder.mkdir(parents=True, exist_ok=True)
        seconds = others = 0.0
        for number, texts in self._slices():
            info = self._meta(number, texts)
            if info is None:
                stop = contention()
                started = time.perf_counter()
                vectors = np.asarray(embed(list(texts)), dtype=np.float32)
                info = {
                    "n": len(texts),
                    "sha1": _sha1(texts),
                    "seconds": time.perf_counter() - started,
                    "other_cores": stop(),
                }
                partial = self.folder / f"{number:05d}.partial.npy"
                np.save(partial, vectors)
                (self.folder / f"{number:05d}.json").write_text(json.dumps(info))
                os.replace(partial, self.folder / f"{number:05d}.npy")  # the chunk counts from here on
            seconds += info["seconds"]
            others += info["other_cores"] * info["seconds"]
            if report:
                report(min((number + 1) * CHUNK, len(self.texts)), len(self.texts))
        return {
            "per_s": len(self.texts) / seconds if seconds else 0.0,
            "other_cores": others / seconds if seconds else 0.0,
        }

    def chunks(self) -> Iterator[tuple[Sequence[str], np.ndarray]]:
        """(texts, vectors) one chunk at a time, so a reader holds one chunk in memory."""
        for number, texts in self._slices():
            if self._meta(number, texts) is None:
                raise FileNotFoundError(f"chunk {number} of {self.folder} is missing: build the cache first")
            yield texts, np.load(self.folder / f"{number:05d}.npy")


class ReplayEmbedder:
    """A RippleMem-style embedder answering from the loaded chunk; the rest goes to `live`."""

    def __init__(self, live: Any) -> None:
        self.model_id = live.model_id
        self._live = live
        self._table: dict[str, np.ndarray] = {}
        self.live_texts = 0

    def load(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Replay these vectors for these texts (the chunk about to be ingested)."""
        self._table = dict(zip(texts, vectors, strict=True))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Cached vectors for cached texts, the live model's for the others."""
        texts = list(texts)
        if not texts:
            return self._live.embed_documents(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self._table))
        if missing:
            self.live_texts += len(missing)
            found = dict(zip(missing, self._live.embed_documents(missing), strict=True))
        else:
            found = {}
        return np.stack([self._table[t] if t in self._table else found[t] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        """Queries are always embedded live: recall latency includes the model."""
        return self._live.embed_query(text)
