"""The first stage of one recall's search in one scope (ripple over the scope's graph, or hybrid,
dense or keyword only), and the settled options and query vectors every search of the recall shares."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ripplemem.core.types import Recall, Subgraph
from ripplemem.embedding.base import Embedder
from ripplemem.engine.engine import Engine
from ripplemem.retrieval.hybrid import hybrid_recall
from ripplemem.retrieval.ripple import RippleParts, ripple_recall
from ripplemem.store.tables.memories import MemoryFilter


@dataclass
class QueryEmbeddings:
    """The query vectors of one recall: each distinct text is embedded once, however many
    searches use it (inside and outside a time window, the user's scope and each knowledge base)."""

    embedder: Embedder
    vectors: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def model_id(self) -> str:
        """The wrapped embedder's model id."""
        return self.embedder.model_id

    def embed_query(self, text: str) -> np.ndarray:
        """The text's query vector, embedded on first use."""
        if text not in self.vectors:
            self.vectors[text] = self.embedder.embed_query(text)
        return self.vectors[text]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Passed through: recall embeds no documents."""
        return self.embedder.embed_documents(texts)


@dataclass(frozen=True)
class SearchSpec:
    """One recall's settled options: how many hits, which mode, what may match, as of when, and
    its query vectors."""

    k: int
    mode: str
    flt: MemoryFilter
    now: float
    queries: QueryEmbeddings


def search_scope(engine: Engine, user_id: str, text: str, spec: SearchSpec) -> Recall:
    """Search one user's memories for one text: ripple over the graph, or a first stage only."""
    keywords = engine.keyword_index(user_id)
    # Its cosine thresholds on the embedder's own scale (recall reads latest_same_topic).
    settings = engine.model_settings()
    if spec.mode == "ripple":
        parts = RippleParts(
            store=engine.store,
            index=engine.index,
            embedder=spec.queries,
            settings=settings,
            keywords=keywords,
            graph=engine.graph(user_id),
        )
        return ripple_recall(text, spec.k, spec.flt, spec.now, parts)
    return hybrid_recall(
        text,
        spec.k,
        spec.flt,
        spec.mode,
        spec.now,
        store=engine.store,
        index=engine.index,
        embedder=spec.queries,
        settings=settings,
        keywords=keywords,
    )


def merge_subgraphs(first: Subgraph, second: Subgraph) -> Subgraph:
    """Both subgraphs' nodes and edges (the first's node wins a clash), each edge once."""
    nodes = {**second.nodes, **first.nodes}
    edges = list(dict.fromkeys([*first.edges, *second.edges]))
    return Subgraph(nodes=nodes, edges=edges)
