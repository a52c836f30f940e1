"""The write checks keep what they read of stored texts across batches (normalised keys,
particulars, keyword stems), so a bulk ingest reads each neighbour once; a delete empties them
like the statement cache, so nothing of a deleted memory stays in process memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ripplemem import RippleMem
from ripplemem.engine.write_plans import keyword_stems, particulars, text_key


def test_a_delete_empties_the_caches_that_batches_share(tmp_path: Path, embedder: Any) -> None:
    caches = (text_key, particulars, keyword_stems)
    with RippleMem(tmp_path / "db", user_id="ana", embedder=embedder) as mem:
        # Near-identical wording: the duplicate check reads particulars and stems (the last merges).
        first = mem.add("I went swimming at the lake on Monday")
        mem.add_many(["I went swimming at the lake on Tuesday", "I went swimming in the lake on Monday"])
        assert all(cache.cache_info().currsize > 0 for cache in caches)
        assert mem.delete(first.id)
        assert all(cache.cache_info().currsize == 0 for cache in caches)
        assert [m.content for m in mem.list()] == ["I went swimming at the lake on Tuesday"]
