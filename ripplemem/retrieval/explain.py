"""Why ripple recall returned each hit: the seed it came from and the path of edges that reached
it, plus the subgraph among the hits (nodes and typed edges) for display and provenance."""

from __future__ import annotations

from ripplemem.config import GRAPH_SUPPORTED
from ripplemem.core.types import GraphNode, Hit, Subgraph, SubgraphEdge
from ripplemem.index.scope_graph import ScopeGraph
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.graph import EntityRow, edges_between, get_entities, is_entity

_SNIPPET_CHARS = 60


def trace_path(
    node: str, seeds: dict[str, float], activation: dict[str, float], graph: ScopeGraph
) -> list[str]:
    """A path seed -> node of at most two edges: the node's strongest link to a seed, directly
    or through one neighbour (found by edge lookups, so hubs cost no more than small nodes)."""
    neighbours = graph.neighbors(node)
    seed_ids = [s for s in seeds if s != node]
    direct = [(seeds[s] * neighbours[s], s) for s in seed_ids if s in neighbours]
    if direct:
        return [max(direct)[1], node]
    best: tuple[float, str, str] | None = None
    for middle, weight in neighbours.items():
        if activation.get(middle, 0.0) <= 0:
            continue
        for seed in seed_ids:
            link = graph.weight(middle, seed)
            if link > 0 and (best is None or seeds[seed] * link * weight > best[0]):
                best = (seeds[seed] * link * weight, seed, middle)
    return [best[1], best[2], node] if best is not None else [node]


def explain_hits(
    hits: list[Hit],
    matched: set[str],
    seeds: dict[str, float],
    activation: dict[str, float],
    graph: ScopeGraph,
    store: RowStore,
    user_id: str,
) -> Subgraph:
    """Fill each hit's path (from a seed; every hit but an unlifted seed) and say it in `why` for
    the hits the graph reached or lifted (`matched` are the first stage's candidates); return the
    subgraph of hits and the nodes on their paths, which groups linked hits in a context."""
    for hit in hits:
        if hit.memory.id not in seeds or hit.components.get("graph", 0.0) >= GRAPH_SUPPORTED:
            path = trace_path(hit.memory.id, seeds, activation, graph)
            hit.path = path if len(path) > 1 else []
    nodes = list(dict.fromkeys([h.memory.id for h in hits] + [n for h in hits for n in h.path]))
    entities = get_entities(store, user_id, [n for n in nodes if is_entity(n)])
    edges = edges_between(store, user_id, nodes)
    kinds = {frozenset((e.src, e.dst)): e.type for e in edges}
    contents = {h.memory.id: h.memory.content for h in hits}
    missing = [n for n in nodes if not is_entity(n) and n not in contents]
    if missing:
        contents.update(store.contents(missing, user_id))
    for hit in hits:
        lifted = hit.memory.id not in matched or hit.components.get("graph", 0.0) >= GRAPH_SUPPORTED
        if lifted and len(hit.path) > 1:
            chain = (
                " ".join(
                    f"{_label(a, entities, contents)} -{kinds.get(frozenset((a, b)), 'LINKED')}->"
                    for a, b in zip(hit.path, hit.path[1:], strict=False)
                )
                + " this memory"
            )
            hit.why = f"{hit.why}; linked: {chain}" if hit.memory.id in matched else f"reached {chain}"
    return Subgraph(
        nodes={
            n: GraphNode(
                id=n, kind="entity" if is_entity(n) else "memory", label=_label(n, entities, contents)
            )
            for n in nodes
        },
        edges=[SubgraphEdge(e.src, e.dst, e.type, e.weight, e.predicate) for e in edges],
    )


def _label(node: str, entities: dict[str, EntityRow], contents: dict[str, str]) -> str:
    if node in entities:
        return f"[{entities[node].name}]"
    text = contents.get(node, node)
    return '"' + (text if len(text) <= _SNIPPET_CHARS else text[: _SNIPPET_CHARS - 1] + "…") + '"'
