"""Recall on PostgreSQL ranks as on the embedded store: the same LoCoMo conversation and
LongMemEval haystack, the same MiniLM vectors and the same clock, in SQLite + Chroma and in
PostgreSQL + pgvector, give the same top 10 for every question in every mode."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from manual_clock import ManualClock

from ripplemem import RippleMem, StoreOptions
from ripplemem.embedding.embedders import Embedder
from ripplemem.engine import items

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT.parent / "shared" / "bench"
sys.path.insert(0, str(ROOT / "benchmarks"))

import locomo  # noqa: E402
import longmemeval  # noqa: E402

MODES = ("keyword", "dense", "hybrid", "ripple")


def _require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"benchmark data not found at {path} (the shared/bench folder beside the repository)")
    return path


class SameVectors:
    """MiniLM behind a memo: both stores get bit-identical vectors for a text (onnxruntime's threads
    may differ in the last bits between two runs), and each text is embedded once."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self._seen: dict[tuple[str, str], np.ndarray] = {}

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """The document vectors, each embedded once."""
        missing = [t for t in dict.fromkeys(texts) if ("doc", t) not in self._seen]
        if missing:
            for text, vector in zip(missing, self.inner.embed_documents(missing), strict=True):
                self._seen[("doc", text)] = vector
        return np.stack([self._seen[("doc", t)] for t in texts]) if texts else self.inner.embed_documents([])

    def embed_query(self, text: str) -> np.ndarray:
        """The query vector, embedded once."""
        if ("query", text) not in self._seen:
            self._seen[("query", text)] = self.inner.embed_query(text)
        return self._seen[("query", text)]


class SequentialIds:
    """uuid4 for ripplemem.engine.items that counts from 1 again at each ``restart()``: the two stores
    give their memories the same ids in the same order, so ties (equal cosines of equal texts in
    the kNN edges, equal scores) break alike, and any ranking difference left is the backend's."""

    def __init__(self) -> None:
        self.restart()

    def restart(self) -> None:
        """Count from 1 again."""
        self._next = 0

    def uuid4(self) -> uuid.UUID:
        """The next id."""
        self._next += 1
        return uuid.UUID(int=self._next)


@pytest.fixture
def ids(monkeypatch: pytest.MonkeyPatch) -> SequentialIds:
    """Memory ids that repeat from store to store."""
    sequence = SequentialIds()
    monkeypatch.setattr(items, "uuid", sequence)
    return sequence


@pytest.fixture
def both(
    ids: SequentialIds, tmp_path: Path, pg_uri: str, pg_schema: str, embedder: Embedder
) -> Iterator[tuple[RippleMem, RippleMem, SequentialIds]]:
    """One handle on each backend, on one clock (recency weighs in every ranking)."""
    clock = ManualClock()
    embedder = SameVectors(embedder)  # type: ignore[assignment]
    embedded = RippleMem(tmp_path / "store", user_id="u", embedder=embedder, clock=clock)
    server = RippleMem(
        user_id="u",
        embedder=embedder,
        clock=clock,
        store=StoreOptions(backend="postgres", uri=pg_uri, schema=pg_schema),
    )
    yield embedded, server, ids
    embedded.close()
    server.close()


# Cosines from pgvector and from the embedded index agree to about 1e-7, not to the bit.
CLOSE = 1e-5


def _ranking(hits: list[Any], label: Any) -> list[tuple[float, frozenset[Any]]]:
    """The top 10 as runs of equal score (within CLOSE), best first. Memories that tie keep the
    order of their ids, which differ between two stores, so a run is compared as a set; the last
    run may go on past the tenth hit, so only its score counts."""
    groups: list[tuple[float, set[Any]]] = []
    previous = None
    for hit in hits:
        if previous is not None and previous - hit.score < CLOSE:
            groups[-1][1].add(label(hit.memory))
        else:
            groups.append((round(hit.score, 4), {label(hit.memory)}))
        previous = hit.score
    last = len(groups) - 1
    return [
        (score, frozenset(members) if n < last else frozenset()) for n, (score, members) in enumerate(groups)
    ]


def _rankings(mem: RippleMem, questions: list[str], label: Any) -> dict[tuple[str, str], list[Any]]:
    return {
        (mode, question): _ranking(mem.recall(question, k=10, mode=mode, record_access=False).hits, label)
        for mode in MODES
        for question in questions
    }


def test_a_locomo_conversation_ranks_alike_on_both_backends(
    both: tuple[RippleMem, RippleMem, SequentialIds],
) -> None:
    name, sample = locomo.load_conversations([str(_require(BENCH / "locomo" / "conv-26.json"))])[0]
    questions = [str(qa["question"]) for qa in sample["qa"][:40]]
    rankings = []
    *stores, ids = both
    for mem in stores:
        ids.restart()
        mem.add_many(locomo.turns(sample), progress=False)
        rankings.append(_rankings(mem, questions, lambda m: m.metadata["dia_id"]))
    differing = [key for key in rankings[0] if rankings[0][key] != rankings[1][key]]
    first = differing[0] if differing else None
    assert differing == [], (
        f"{len(differing)} differ, first {first}: {rankings[0].get(first)} | {rankings[1].get(first)}"
    )


def test_a_longmemeval_haystack_ranks_alike_on_both_backends(
    both: tuple[RippleMem, RippleMem, SequentialIds],
) -> None:
    data = _require(BENCH / "longmemeval" / "longmemeval_s_dev.jsonl.gz")
    question = next(q for q in longmemeval.load_questions(data) if not q["question_id"].endswith("_abs"))
    turns, where = longmemeval.turn_items(question)
    # The haystack up to its last answer turn, at most 300 turns of it: seconds, not minutes.
    gold = {session for session, _, has_answer in where if has_answer}
    kept = sorted({i for i, (session, _, _) in enumerate(where) if session in gold})
    turns = turns[: max(kept) + 1][-300:]
    rankings = []
    *stores, ids = both
    for mem in stores:
        ids.restart()
        mem.add_many(turns, progress=False)
        rankings.append(_rankings(mem, [str(question["question"])], lambda m: m.content))
    assert rankings[0] == rankings[1]
