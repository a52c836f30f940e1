"""Looking documents up by the id a caller gave them, in the LangChain and LlamaIndex vector stores.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/metadata_ids.py --n 20000 --keep /tmp/ids-store

One user holds n memories: half LangChain documents (ids doc-0 ...), half LlamaIndex nodes (five
per source document). Prints the median time of: LangChain get_by_ids for one id and for 100 ids,
an add_texts that replaces 100 existing documents, LlamaIndex get_nodes for one node id, and
the nodes of one source document (ref_doc_id filter). The hashing embedder keeps the build fast;
lookups do not embed. ``--keep`` reuses a store built by an earlier run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

from langchain_ripplemem import RippleMemVectorStore as LangChainStore
from llamaindex_ripplemem import RippleMemVectorStore as LlamaIndexStore
from ripplemem import RippleMem, StoreOptions

USER = "bench"
EMBEDDER = "hashing"
NODES_PER_DOC = 5


def build(path: Path, n: int) -> None:
    """Fill a new store with n // 2 LangChain documents and n // 2 LlamaIndex nodes."""
    half = n // 2
    with RippleMem(path, user_id=USER, embedder=EMBEDDER, store=StoreOptions(vector_index="numpy")) as mem:
        texts = [f"Note {i}: the user filed ticket {i} about topic {i % 97}." for i in range(half)]
        LangChainStore(mem).add_texts(texts, ids=[f"doc-{i}" for i in range(half)])
        nodes = [
            TextNode(
                id_=f"node-{i}",
                text=f"Chunk {i} of manual {i // NODES_PER_DOC}.",
                relationships={
                    NodeRelationship.SOURCE: RelatedNodeInfo(node_id=f"manual-{i // NODES_PER_DOC}")
                },
            )
            for i in range(half)
        ]
        LlamaIndexStore(mem).add(nodes)


def median_ms(work: Callable[[], object], runs: int) -> float:
    """The median wall time of work(), in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(path: Path, n: int, runs: int) -> dict[str, float]:
    """The median milliseconds of each lookup on the built store."""
    half, pick = n // 2, random.Random(7)
    with RippleMem(path, user_id=USER, embedder=EMBEDDER, store=StoreOptions(vector_index="numpy")) as mem:
        chain, llama = LangChainStore(mem), LlamaIndexStore(mem)
        some = [f"doc-{pick.randrange(half)}" for _ in range(100)]
        texts = [document.page_content for document in chain.get_by_ids(some)]
        by_ref = MetadataFilters(filters=[MetadataFilter(key="ref_doc_id", value="manual-42")])
        return {
            "langchain get_by_ids, 1 id": median_ms(
                lambda: chain.get_by_ids([f"doc-{pick.randrange(half)}"]), runs
            ),
            "langchain get_by_ids, 100 ids": median_ms(lambda: chain.get_by_ids(some), max(3, runs // 10)),
            "langchain add_texts replacing 100": median_ms(
                lambda: chain.add_texts(texts, ids=some), max(3, runs // 10)
            ),
            "llamaindex get_nodes, 1 node id": median_ms(
                lambda: llama.get_nodes(node_ids=[f"node-{pick.randrange(half)}"]), runs
            ),
            "llamaindex get_nodes, 1 ref_doc_id": median_ms(lambda: llama.get_nodes(filters=by_ref), runs),
        }


def main() -> None:
    """Build (or reuse) the store, then print each lookup's median time."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000, help="memories in the store (default 20000)")
    parser.add_argument("--runs", type=int, default=50, help="timed runs of each one-id lookup")
    parser.add_argument("--keep", type=Path, help="store directory to build once and reuse")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = args.keep or Path(scratch) / "store"
        if not path.exists():
            start = time.perf_counter()
            build(path, args.n)
            print(f"built {args.n} memories in {time.perf_counter() - start:.0f} s")
        for name, ms in measure(path, args.n, args.runs).items():
            print(f"{name:38s} {ms:9.2f} ms")


if __name__ == "__main__":
    main()
