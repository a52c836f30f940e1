"""A hundred thousand memories for one user, built through the bulk import: recall finds a single
memory among them in both modes, the store reopens, and its counts are right.

It takes 3-6 minutes on 2 cores, so the default run leaves it out: `pytest -m scale` runs it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ripplemem import RippleMem

N = 100_000
PEOPLE = ["Asha", "Bruno", "Chen", "Dara", "Emil", "Fatima", "Goran", "Hana", "Ivo", "Jun"]
THINGS = [
    "the pottery class",
    "a trip to Porto",
    "the garden",
    "a chess match",
    "the choir",
    "a bike repair",
    "the book swap",
    "a sourdough starter",
    "the tax forms",
    "a jazz night",
]
PLACES = ["at the library", "in the park", "at home", "at the office", "by the river"]
# The 384 dimensions of MiniLM, without the model: the vector index is as big as MiniLM's.
EMBEDDER = "hashing-v1-384"


def memory_text(i: int) -> str:
    """The i-th memory; each carries its own ticket number, so none repeats another."""
    return f"{PEOPLE[i % 10]} talked about {THINGS[(i // 10) % 10]} {PLACES[(i // 100) % 5]}, ticket {i}"


@pytest.mark.slow
@pytest.mark.scale
def test_a_hundred_thousand_memories_recall_reopen_and_count(tmp_path: Path) -> None:
    source = tmp_path / "memories.jsonl"
    with source.open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(memory_text(i)) + "\n" for i in range(N))
    path = tmp_path / "db"
    wanted = 73_512
    with RippleMem(path, user_id="scale", embedder=EMBEDDER) as mem:
        report = mem.import_file(source)
        assert (report.lines, report.stored, report.merged) == (N, N, 0)
        for mode in ("hybrid", "ripple"):
            question = f"What did {PEOPLE[wanted % 10]} talk about on ticket {wanted}?"
            hits = mem.recall(question, k=5, mode=mode).hits
            assert hits[0].memory.content == memory_text(wanted), mode

    with RippleMem(path, user_id="scale", embedder=EMBEDDER) as mem:
        stats = mem.stats()
        assert (stats["total"], stats["vectors"], stats["by_status"]) == (N, N, {"active": N})
        hits = mem.recall(f"ticket {wanted + 1}", k=3, mode="ripple").hits
        assert hits[0].memory.content == memory_text(wanted + 1)
        assert mem.scope("someone-else").recall(f"ticket {wanted}", k=3).hits == []
