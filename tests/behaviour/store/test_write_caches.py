"""The write checks cache what they read of stored texts; a delete or a new content empties those
caches, so nothing of a deleted (or erased) memory stays in process memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ripplemem import HashingEmbedder, RippleMem
from ripplemem.engine.write_plans import read_statement
from ripplemem.index.bm25 import stem


def test_deleting_or_rewriting_a_memory_empties_the_text_caches(tmp_path: Path) -> None:
    with RippleMem(tmp_path / "db", user_id="ana", embedder="hashing") as mem:
        secret = mem.add("My phone number is 555 0199")
        mem.add("My phone number is now 555 0123")  # read beside its stored neighbour, an update
        mem.recall("phone number", k=2, mode="keyword")  # the BM25 index stems every word
        assert read_statement.cache_info().currsize > 0 and stem.cache_info().currsize > 0
        assert mem.delete(secret.id)
        assert read_statement.cache_info().currsize == 0 and stem.cache_info().currsize == 0

        kept = mem.add("I like green tea in the morning")
        mem.add("I like green tea in the mornings")
        assert read_statement.cache_info().currsize > 0
        mem.update(kept.id, content="I like black coffee in the morning")
        assert read_statement.cache_info().currsize == 0
        assert [h.memory.content for h in mem.recall("phone number", k=3, mode="keyword").hits] == [
            "My phone number is now 555 0123"
        ]


class _NamesFail(HashingEmbedder):
    """Embeds memories, then fails on the entity names a write embeds after its commit."""

    fail = False

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if self.fail and texts and all(len(t.split()) == 1 for t in texts):
            raise RuntimeError("embedding service went away")
        return super().embed_documents(texts)


def test_a_write_that_fails_after_its_commit_leaves_the_memory_findable(tmp_path: Path) -> None:
    """The batch committed, then a later step of the same write raised: the caches the write was
    going to update are dropped and reloaded, so keyword and graph recall find what was stored."""
    embedder = _NamesFail()
    with RippleMem(tmp_path / "db", user_id="ana", embedder=embedder) as mem:
        mem.add("Ana walks her dog in the park")
        mem.recall("dog", k=1, mode="keyword")  # the BM25 index and graph are loaded now
        embedder.fail = True
        with pytest.raises(RuntimeError, match="went away"):
            mem.add("Ana met Jonas at the Louvre")  # new entities: their names are embedded last
        embedder.fail = False
        assert [h.memory.content for h in mem.recall("Louvre", k=1, mode="keyword").hits] == [
            "Ana met Jonas at the Louvre"
        ]
