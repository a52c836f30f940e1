"""Store-wide maintenance outside any handle: re-embedding with another model, disk usage, and
the progress reporting long jobs share."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

from ripplemem.core.progress import progress_bar
from ripplemem.core.validation import check_k
from ripplemem.embedding.embedders import CheckedEmbedder, resolve_embedder
from ripplemem.embedding.framework import TargetEmbedder, as_embedder
from ripplemem.engine.engine import open_vector_index, rebuild_index
from ripplemem.lifecycle.archive import rearchive_store
from ripplemem.store.info import open_rows
from ripplemem.store.postgres.options import PostgresOptions

ProgressCallback = Callable[[int, int], None]


def progress_reporter(
    progress: bool | ProgressCallback, total: int, unit: str = "mem"
) -> Callable[[int], None]:
    """A function taking 'done so far': a tqdm bar (counting `unit`s) for True, the caller's
    (done, total) callable, or nothing."""
    if callable(progress):
        return lambda done: progress(done, total)
    if not progress:
        return lambda done: None
    bar = progress_bar(total, unit)

    def report(done: int) -> None:
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return report


def disk_bytes(path: str | None) -> int:
    """Bytes of every file under a store directory (0 for an in-memory store)."""
    if path is None:
        return 0
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(folder, name))
    return total


def reembed_store(
    location: str | os.PathLike[str] | PostgresOptions,
    embedder: TargetEmbedder,
    *,
    vector_index: str = "auto",
    batch_size: int = 256,
    progress: bool | ProgressCallback = False,
) -> int:
    """Re-embed every memory of a store (a folder, or a PostgreSQL schema) with another model and
    rebuild its vector index."""
    check_k(batch_size, "batch_size")
    target = CheckedEmbedder(resolve_embedder(as_embedder(embedder)))
    store = open_rows(location if isinstance(location, PostgresOptions) else os.fspath(location))
    try:
        report = progress_reporter(progress, store.counts_all())
        done = 0
        for batch in store.iter_contents(batch=batch_size):
            vectors = target.embed_documents([content for _, _, content in batch])
            store.set_embeddings(
                [(user_id, memory_id, v) for (user_id, memory_id, _), v in zip(batch, vectors, strict=True)]
            )
            done += len(batch)
            report(done)
        store.set_meta("embedding_model", target.model_id)
        rearchive_store(store)
        if store.get_meta("vector_index") == "chroma-server":
            # The server is not known here: the next open with its chroma_url rebuilds from SQLite.
            store.set_meta("vector_index", "chroma-server (stale)")
            return done
        index = store.open_vector_index() or open_vector_index(vector_index, store.path)
        try:
            rebuild_index(index, store)
            store.set_meta("vector_index", index.name)
        finally:
            index.close()
    finally:
        store.close()
    return done
