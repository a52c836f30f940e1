"""Where a RippleMem recall's time goes on PostgreSQL, for benchmarks/postgres.py.

The product has no tracing: this wraps the functions that do each stage (their module attributes,
put back afterwards) and adds up each one's own seconds (a stage called inside another, such as a
row fetch inside scoring's latest-first step, counts to the inner one). Run as a separate pass, so
the wrappers' own cost stays out of the p50 the main table reports.
"""

from __future__ import annotations

import functools
import importlib
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

# (module, attribute path, stage). A function imported into several modules is wrapped in each.
TARGETS: tuple[tuple[str, str, str], ...] = (
    ("ripplemem.store.postgres.vectors", "PgVectorIndex.query", "vector query (pgvector)"),
    ("ripplemem.retrieval.hybrid", "keyword_search", "keyword BM25"),
    ("ripplemem.store.postgres.rows", "PostgresStore.fetch_rows", "row fetch (candidates, vectors)"),
    ("ripplemem.store.postgres.rows", "PostgresStore.changed_elsewhere", "content-version check"),
    ("ripplemem.index.scope_graph", "ScopeGraph.spread", "graph spread"),
    ("ripplemem.retrieval.ripple", "explain_hits", "explain (ripple paths)"),
    ("ripplemem.retrieval.hybrid", "score_pool", "scoring"),
    ("ripplemem.retrieval.ripple", "score_pool", "scoring"),
    ("ripplemem.api.recall", "with_relevance", "relevance of hits"),
)
OTHER = "other (checks, fusion, routing, caches)"


class StageClock:
    """Own seconds per stage, summed over every call while installed."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._inner: list[float] = []  # seconds spent in nested stages, per open stage

    def _wrap(self, stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._inner.append(0.0)
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - started
                inner = self._inner.pop()
                self.seconds[stage] += elapsed - inner
                if self._inner:
                    self._inner[-1] += elapsed

        return timed

    @contextmanager
    def installed(self) -> Iterator[StageClock]:
        """Every target wrapped inside the block, the originals back after it."""
        undo: list[Callable[[], None]] = []
        try:
            for module_name, path, stage in TARGETS:
                owner: Any = importlib.import_module(module_name)
                *parents, name = path.split(".")
                for parent in parents:
                    owner = getattr(owner, parent)
                had = name in vars(owner)
                original = vars(owner)[name] if had else getattr(owner, name)
                setattr(owner, name, self._wrap(stage, original))
                undo.append(
                    functools.partial(setattr, owner, name, original)
                    if had
                    else functools.partial(delattr, owner, name)
                )
            yield self
        finally:
            for step in reversed(undo):
                step()


def breakdown(recall: Callable[[str], Any], queries: list[str]) -> list[tuple[str, float, float]]:
    """(stage, mean ms per recall, share of the mean) for these queries, the rest as OTHER."""
    clock = StageClock()
    total = 0.0
    with clock.installed():
        for query in queries:
            started = time.perf_counter()
            recall(query)
            total += time.perf_counter() - started
    staged = dict(clock.seconds)
    staged[OTHER] = total - sum(staged.values())
    n = len(queries)
    return [(stage, seconds / n * 1000, seconds / total) for stage, seconds in staged.items()]
