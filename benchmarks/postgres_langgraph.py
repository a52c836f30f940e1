"""LangGraph's own PostgresStore (langgraph-checkpoint-postgres) for benchmarks/postgres.py: the same
texts, put in batches with semantic search on (index={"dims": 384, "embed": ..., "fields": ["text"]}),
searched with the same precomputed query vectors.

Its embed function answers from the benchmark's cache (the chunk being put, the known queries), so
ingest/s is the store's own rate, as for RippleMem's store-only column; LangGraph embeds each put
batch and then writes it, one after the other, so with the model its rate is 1 / (1/store + 1/model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

NAMESPACE = ("bench",)
DIMS = 384
PUT_BATCH = 1000  # items per store.batch(): one INSERT of the rows, one of their vectors


class LookupEmbed:
    """LangGraph's embed function: vectors of known texts (a cache chunk, the queries), no model."""

    def __init__(self, known: dict[str, np.ndarray] | None = None) -> None:
        self.known: dict[str, np.ndarray] = dict(known or {})

    def load(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Answer for these texts too (the chunk about to be put)."""
        self.known.update(zip(texts, vectors, strict=True))

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        """The texts' vectors as lists (what LangGraph sends with %s::vector)."""
        return [self.known[text].tolist() for text in texts]


def open_store(uri: str, embed: LookupEmbed) -> AbstractContextManager[Any]:
    """LangGraph's PostgresStore on one connection, semantic search over the "text" field."""
    from langgraph.store.postgres import PostgresStore

    return PostgresStore.from_conn_string(  # type: ignore[return-value]
        uri, index={"dims": DIMS, "embed": embed, "fields": ["text"]}
    )


def reset(uri: str) -> None:
    """Drop LangGraph's tables (one store per database: it has no schema option)."""
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        for table in ("store_vectors", "store", "store_migrations", "vector_migrations"):
            conn.execute(f"DROP TABLE IF EXISTS {table} CASCADE")


def ingest_langgraph(
    uri: str, chunks: Any, timer: Callable[[], float], queries: dict[str, np.ndarray]
) -> float:
    """Store-only put rate (texts/s) of the cached chunks, PUT_BATCH items per batch()."""
    from langgraph.store.base import PutOp

    reset(uri)
    embed = LookupEmbed(queries)
    seconds, total = 0.0, 0
    with open_store(uri, embed) as store:
        store.setup()
        for texts, vectors in chunks:
            embed.load(texts, vectors)
            started = timer()
            for start in range(0, len(texts), PUT_BATCH):
                ops = [
                    PutOp(NAMESPACE, str(total + start + i), {"text": text})
                    for i, text in enumerate(texts[start : start + PUT_BATCH])
                ]
                store.batch(ops)
            seconds += timer() - started
            total += len(texts)
            embed.known = dict(queries)  # the next chunk only
    return total / seconds


class LangGraphSearch:
    """search(query) -> LangGraph's top 10, on one open store (kept open until close())."""

    def __init__(self, uri: str, queries: dict[str, np.ndarray]) -> None:
        self._context = open_store(uri, LookupEmbed(queries))
        self._store = self._context.__enter__()

    def __call__(self, query: str) -> Any:
        return self._store.search(NAMESPACE, query=query, limit=10)

    def close(self) -> None:
        """Close the store's connection."""
        self._context.__exit__(None, None, None)
