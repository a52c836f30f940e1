"""User B probes every public call, the CLI, the LangChain / LlamaIndex adapters and the MCP server
with user A's ids, entity names and knowledge-base names; every probe gets nothing, not found or a
permission error. Runs with per-user Chroma collections, one shared filtered collection, and numpy."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from doc_fixtures import write_md

from ripplemem import RippleMem, RippleMemError, StoreOptions
from ripplemem.embedding.embedders import Embedder
from ripplemem.interfaces.cli.main import main as cli_main

SECRETS = (
    "Alice's oncologist Dr Varkhelm confirmed the Thessaly tumour is benign",
    "Alice hides the spare key under the blue Ostrander flowerpot",
)
KB_TEXT = "Project Nightjar budget is four million euros"
NAMES = ("Varkhelm", "Thessaly", "Ostrander")


class Probes:
    """Counts probes and leaks: a leak is any of A's text, names or ids in what B got back."""

    def __init__(self, forbidden: list[str]) -> None:
        self.forbidden = forbidden
        self.count = 0
        self.leaks: list[str] = []

    def check(self, label: str, call: Callable[[], Any]) -> None:
        """Run one probe; refusals by a RippleMem (or tool) error count as nothing returned."""
        self.count += 1
        try:
            seen = repr(call())
        except (RippleMemError, PermissionError, KeyError, LookupError) as error:
            seen = str(error)
        except Exception as error:  # adapters wrap errors in their own types
            if "ToolError" not in type(error).__name__ and "ToolException" not in type(error).__name__:
                raise
            seen = str(error)
        leaked = [word for word in self.forbidden if word in seen and not _echo(word, label)]
        if leaked:
            self.leaks.append(f"{label}: {leaked}")


def _echo(word: str, label: str) -> bool:
    # An error naming the id or knowledge base B itself asked for is an echo of B's input, not a leak.
    return word in label


@pytest.fixture(
    params=[("chroma", "collection"), ("chroma", "filter"), ("numpy", None)],
    ids=["chroma", "chroma-filter", "numpy"],
)
def alice(request: pytest.FixtureRequest, tmp_path: Path, embedder: Embedder) -> Iterator[RippleMem]:
    """Alice's store with secrets, a graph, history, readings and a private knowledge base."""
    index, isolation = request.param
    mem = RippleMem(
        tmp_path / "store",
        user_id="alice",
        embedder=embedder,
        store=StoreOptions(vector_index=index, isolation=isolation),
    )
    first = mem.add(SECRETS[0], type="semantic", relations=[("Varkhelm", "treats", "Alice")])
    mem.add(SECRETS[1])
    mem.update(first.id, importance=0.95)
    mem.sensors.record("heart_rate", 188)
    mem.observe("user", "Remember that Varkhelm calls on Fridays")
    (tmp_path / "docs").mkdir()
    write_md(tmp_path / "docs" / "nightjar.md", heading="Nightjar", sentence=KB_TEXT)
    mem.ingest(tmp_path / "docs", "alice-private-kb")
    mem.scope("bob").add("Bob is learning the cello")
    yield mem
    mem.close()


def secret_ids(alice: RippleMem) -> list[str]:
    return [m.id for m in alice.list()]


def test_user_b_gets_nothing_from_any_public_call(alice: RippleMem) -> None:
    ids = secret_ids(alice)
    bob = alice.scope("bob")
    probes = Probes([*SECRETS, *NAMES, KB_TEXT, *ids, "Nightjar"])
    probes.check(
        "alice's own recall (the probe sees a leak when there is one)",
        lambda: alice.recall("oncologist tumour Varkhelm").hits,
    )
    assert probes.leaks != []
    probes.leaks.clear()
    for query in ("oncologist tumour Varkhelm", "spare key flowerpot", "Nightjar budget", "heart rate"):
        for mode in ("ripple", "hybrid", "dense", "keyword"):
            probes.check(f"recall {mode}", lambda q=query, m=mode: bob.recall(q, mode=m).hits)
        probes.check("context", lambda q=query: bob.recall(q).context(2000))
        probes.check("recall documents", lambda q=query: bob.recall(q, route="documents").hits)
    probes.check(
        "recall kb alice-private-kb", lambda: bob.recall("budget", knowledge_bases=["alice-private-kb"])
    )
    for memory_id in ids:
        probes.check(f"get {memory_id}", lambda i=memory_id: bob.get(i))
        probes.check(f"update {memory_id}", lambda i=memory_id: bob.update(i, content="mine now"))
        probes.check(f"delete {memory_id}", lambda i=memory_id: bob.delete(i))
        probes.check(f"history {memory_id}", lambda i=memory_id: bob.history(i))
        probes.check(f"erase {memory_id}", lambda i=memory_id: bob.erase(i))
        probes.check(f"neighbors {memory_id}", lambda i=memory_id: bob.graph.neighbors(i))
        probes.check(
            f"connections {memory_id}", lambda i=memory_id: bob.graph.find_connections(i, "Varkhelm")
        )
    for name in NAMES:
        probes.check(f"neighbors {name}", lambda n=name: bob.graph.neighbors(n))
        probes.check(f"connections {name}", lambda n=name: bob.graph.find_connections(n, "Alice"))
    probes.check("list", lambda: bob.list(limit=1000))
    probes.check("stats", bob.stats)
    probes.check("communities", lambda: bob.graph.communities(min_memories=1))
    probes.check("erase matching", lambda: bob.erase(matching="Varkhelm tumour", dry_run=True).memory_ids)
    probes.check("erase alice", lambda: bob.erase(user_id="alice"))
    probes.check("working", lambda: bob.working().items())
    probes.check("readings", lambda: bob.sensors.readings("heart_rate"))
    probes.check("latest", lambda: bob.sensors.latest("heart_rate"))
    probes.check("metrics", bob.sensors.metrics)
    probes.check("knowledge_bases", bob.kb.list)
    probes.check("chunks alice-private-kb", lambda: bob.kb.chunks("alice-private-kb"))
    probes.check("grant alice-private-kb", lambda: bob.kb.grant("alice-private-kb", "bob"))
    probes.check("revoke alice-private-kb", lambda: bob.kb.revoke("alice-private-kb", "alice"))
    probes.check(
        "forget_source alice-private-kb", lambda: bob.kb.forget_source("nightjar.md", "alice-private-kb")
    )
    probes.check("delete_knowledge_base alice-private-kb", lambda: bob.kb.delete("alice-private-kb"))
    probes.check("graph_quality", bob.analysis.graph_quality)
    assert probes.leaks == []
    assert probes.count >= 60
    assert len(alice.list()) == len(ids) and alice.kb.chunks("alice-private-kb") != []
    assert [kb.name for kb in bob.kb.list()] == []


def test_user_b_gets_nothing_through_the_cli(alice: RippleMem) -> None:
    ids = secret_ids(alice)
    path = str(alice.path)
    probes = Probes([*SECRETS, *NAMES, KB_TEXT, *ids])
    commands = [
        ["recall", "tumour oncologist Varkhelm"],
        ["recall", "spare key", "--json"],
        ["list", "--json"],
        ["stats", "--json"],
        ["erase", "--id", ids[0]],
        ["erase", "--matching", "Varkhelm", "--dry-run", "--json"],
    ]
    for command in commands:
        probes.check(" ".join(command), lambda c=command: _run_cli([*c, "--path", path, "--user", "bob"]))
    assert probes.leaks == [] and probes.count == len(commands)
    assert len(alice.list()) == len(ids)


def _run_cli(argv: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        cli_main(argv)
    return out.getvalue() + err.getvalue()


def test_user_b_gets_nothing_through_the_adapters(alice: RippleMem) -> None:
    from langchain_ripplemem import RippleMemRetriever, RippleMemToolkit
    from llamaindex_ripplemem import RippleMemRetriever as LlamaRetriever
    from llamaindex_ripplemem import RippleMemToolSpec

    ids = secret_ids(alice)
    bob = alice.scope("bob")
    probes = Probes([*SECRETS, *NAMES, KB_TEXT, *ids])
    probes.check("langchain retriever", lambda: RippleMemRetriever(memory=bob).invoke("Varkhelm tumour"))
    tools = {tool.name: tool for tool in RippleMemToolkit(memory=bob).get_tools()}
    probes.check("lc recall_memory", lambda: tools["recall_memory"].invoke({"query": "spare key flowerpot"}))
    spec = RippleMemToolSpec(memory=bob)
    probes.check("llamaindex retriever", lambda: LlamaRetriever(memory=bob).retrieve("oncologist tumour"))
    probes.check("li recall_memory", lambda: spec.recall_memory("spare key flowerpot"))
    for memory_id in ids:
        probes.check(
            f"lc forget_memory {memory_id}",
            lambda i=memory_id: tools["forget_memory"].invoke({"memory_id": i}),
        )
        probes.check(
            f"lc find_connections {memory_id}",
            lambda i=memory_id: tools["find_connections"].invoke({"source": i, "target": "Alice"}),
        )
        probes.check(f"li forget_memory {memory_id}", lambda i=memory_id: spec.forget_memory(i))
        probes.check(
            f"li find_connections {memory_id}", lambda i=memory_id: spec.find_connections(i, "Alice")
        )
    calls = [
        ("recall_memory", {"query": "Varkhelm tumour spare key"}),
        ("find_connections", {"source": "Varkhelm", "target": "Thessaly"}),
        *[("forget_memory", {"memory_id": i}) for i in ids],
    ]
    for name, arguments in calls:
        probes.check(f"mcp {name} {arguments}", lambda n=name, a=arguments: _mcp_call(bob, n, a))
    assert probes.leaks == [] and probes.count == 4 + 4 * len(ids) + len(calls)
    assert len(alice.list()) == len(ids)


def _mcp_call(bob: RippleMem, name: str, arguments: dict[str, str]) -> Any:
    pytest.importorskip("mcp.server.mcpserver")
    from ripplemem.interfaces.mcp_server import build_server

    return asyncio.run(build_server(bob).call_tool(name, arguments))
