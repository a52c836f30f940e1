"""One id key, one time rule, one provenance field: a memory recalled through the LangChain retriever,
the LlamaIndex retriever and the MCP server's recall_memory carries the same metadata."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from langchain_ripplemem import RippleMemRetriever as LangChainRetriever
from llamaindex_ripplemem import RippleMemRetriever as LlamaIndexRetriever
from ripplemem import RippleMem
from ripplemem.interfaces.hit_metadata import RIPPLEMEM_KEYS

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install 'ripplemem[mcp]')")


def mcp_recall(memory: RippleMem, query: str, k: int) -> list[dict[str, Any]]:
    """recall_memory's structured memories, through the mcp package's in-process client."""
    from ripplemem.interfaces.mcp_server import build_server

    async def run() -> Any:
        async with mcp.Client(build_server(memory)) as client:
            return await client.call_tool("recall_memory", {"query": query, "k": k})

    return asyncio.run(run()).structured_content["memories"]


def test_the_three_surfaces_agree_on_every_key(alice: RippleMem, tmp_path: Path) -> None:
    handbook = tmp_path / "handbook"
    handbook.mkdir()
    (handbook / "travel.md").write_text("# Travel\n\nTrain tickets to Lisbon are booked through Ana.\n")
    alice.ingest(handbook, knowledge_base="team")
    alice.add(
        "Alice took the night train to Lisbon",
        event_time="2024-05-02T22:10:00+01:00",
        session_id="trip",
        metadata={"type": "rail", "seat": "42B"},
    )
    alice.add("Alice prefers the window seat on trains", type="semantic")
    query = "train to Lisbon"
    langchain = {
        d.page_content: d.metadata
        for d in LangChainRetriever(memory=alice, k=3, record_access=False).invoke(query)
    }
    llamaindex = {
        n.node.get_content(): n.node.metadata
        for n in LlamaIndexRetriever(alice, 3, record_access=False).retrieve(query)
    }
    served = {m["content"]: m["metadata"] for m in mcp_recall(alice, query, 3)}
    assert set(langchain) == set(llamaindex) == set(served) and len(served) == 3
    for content, metadata in langchain.items():
        # The score may move once MCP's recall has counted as an access; every other key is the same.
        for other in (llamaindex[content], served[content]):
            assert {k: v for k, v in other.items() if k != "score"} == {
                k: v for k, v in metadata.items() if k != "score"
            }
        assert list(metadata)[: len(RIPPLEMEM_KEYS)] == list(RIPPLEMEM_KEYS)
    night = langchain["Alice took the night train to Lisbon"]
    assert night["time"] == "2024-05-02T21:10:00+00:00" and night["time_basis"] == "event_time"
    assert night["type"] == "episodic" and night["metadata_type"] == "rail" and night["seat"] == "42B"
