"""Async twins give the same answers and never block the event loop."""

from __future__ import annotations

import asyncio
import threading

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder


async def test_async_twins_round_trip(mem: RippleMem) -> None:
    m = await mem.aadd("I keep my bike in the basement", type="episodic")
    await mem.aadd_many(["the bike lock code is 4821", "I cycle to work on Mondays"])
    result = await mem.arecall("where is my bike?", k=1)
    assert result.hits[0].memory.id == m.id
    assert (await mem.aget(m.id)).content == m.content  # type: ignore[union-attr]
    assert (await mem.aupdate(m.id, importance=0.9)).importance == 0.9
    assert len(await mem.alist()) == 3
    assert (await mem.astats())["total"] == 3
    assert await mem.adelete(m.id) is True


class GatedEmbedder:
    """Wraps a real embedder; embed_query waits until the event loop opens the gate."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.gate = threading.Event()
        self.opened_in_time: list[bool] = []

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str):  # type: ignore[no-untyped-def]
        self.opened_in_time.append(self.gate.wait(timeout=10))
        return self.inner.embed_query(text)


async def test_recall_runs_off_the_event_loop(embedder: Embedder) -> None:
    gated = GatedEmbedder(embedder)
    mem = RippleMem(path=None, user_id="alice", embedder=gated)
    await mem.aadd("the spare key is under the flowerpot")
    task = asyncio.create_task(mem.arecall("where is the spare key?", k=1))
    # If arecall blocked the loop, this line would only run after embed_query timed out.
    await asyncio.sleep(0.05)
    gated.gate.set()
    result = await task
    assert gated.opened_in_time == [True]
    assert result.hits[0].memory.content == "the spare key is under the flowerpot"


async def test_hundreds_of_concurrent_tasks(mem: RippleMem) -> None:
    stored = await asyncio.gather(
        *(mem.aadd(f"reading log entry {i}: chapter {i} of the novel") for i in range(200))
    )
    assert len({m.id for m in stored}) == 200
    results = await asyncio.gather(*(mem.arecall(f"chapter {i}", k=3) for i in range(100)))
    assert all(len(r.hits) == 3 for r in results)
    assert (await mem.astats())["total"] == 200
