"""What `ripplemem viz` draws, as plain data: a user's whole memory graph (capped to the
best-connected nodes) or the subgraph one recall activated, with node kinds, edge types and sizes."""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ripplemem.core.types import Memory, Recall, SubgraphEdge
from ripplemem.core.validation import check_k
from ripplemem.errors import InvalidInputError
from ripplemem.store.tables.graph import EdgeRow, get_entities, is_entity, iter_edges
from ripplemem.store.tables.memories import MemoryFilter

if TYPE_CHECKING:
    from ripplemem.memory import RippleMem

DEFAULT_MAX_NODES = 400
LABEL_CHARS = 32
TITLE_CHARS = 280
_STATUSES = ("active", "superseded", "archived")
_PAGE = 5000
# Size of a node that is on a recall's path but not recalled itself (hits range 0.25..1).
_PATH_NODE_SIZE = 0.15


@dataclass
class GraphView:
    """Nodes and edges ready to draw, and how much of the graph they are."""

    user_id: str
    query: str | None
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    total_nodes: int = 0
    total_edges: int = 0

    @property
    def capped(self) -> bool:
        """True when only the best-connected part of a larger graph is shown."""
        return len(self.nodes) < self.total_nodes

    def as_dict(self) -> dict[str, Any]:
        """The view as JSON-ready data (what the HTML page embeds)."""
        return {
            "user": self.user_id,
            "query": self.query,
            "nodes": self.nodes,
            "edges": self.edges,
            "total_nodes": self.total_nodes,
            "total_edges": self.total_edges,
            "capped": self.capped,
        }


def shorten(text: str, limit: int) -> str:
    """Text on one line, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _memory_node(memory: Memory, size: float) -> dict[str, Any]:
    when = memory.when
    detail = f"{memory.type}, {when:%Y-%m-%d}" if when else memory.type
    if memory.status != "active":
        detail += f", {memory.status}"
    return {
        "id": memory.id,
        "kind": "memory",
        "group": memory.type,
        "label": shorten(memory.content, LABEL_CHARS),
        "title": f"{shorten(memory.content, TITLE_CHARS)} ({detail})",
        "size": round(size, 4),
    }


def _entity_node(node_id: str, name: str, entity_type: str, size: float) -> dict[str, Any]:
    kind = f"entity: {entity_type}" if entity_type else "entity"
    return {
        "id": node_id,
        "kind": "entity",
        "group": "entity",
        "label": shorten(name, LABEL_CHARS),
        "title": f"{shorten(name, TITLE_CHARS)} ({kind})",
        "size": round(size, 4),
    }


def _edge(edge: EdgeRow | SubgraphEdge) -> dict[str, Any]:
    return {
        "src": edge.src,
        "dst": edge.dst,
        "type": edge.type,
        "weight": round(edge.weight, 4),
        "predicate": edge.predicate,
    }


def _all_memories(memory: RippleMem) -> dict[str, Memory]:
    """Every memory row of the user (active, superseded and archived), by id."""
    store = memory._engine.store
    found: dict[str, Memory] = {}
    for status in _STATUSES:
        offset = 0
        while True:
            page = store.list(MemoryFilter(user_id=memory.user_id, status=status), _PAGE, offset, False)
            found.update((m.id, m) for m in page)
            if len(page) < _PAGE:
                break
            offset += _PAGE
    return found


def _best_connected(
    candidates: list[str], edges: list[EdgeRow], degree: Counter[str], order: dict[str, int], limit: int
) -> list[str]:
    """Up to `limit` nodes grown from the highest-degree node through its best-connected
    neighbours (then the next component), so a capped picture keeps its links."""
    if len(candidates) <= limit:
        return candidates
    adjacent: dict[str, set[str]] = {}
    for edge in edges:
        if edge.src in order and edge.dst in order:
            adjacent.setdefault(edge.src, set()).add(edge.dst)
            adjacent.setdefault(edge.dst, set()).add(edge.src)
    by_degree = sorted(candidates, key=lambda node: (-degree[node], order[node]))
    chosen: dict[str, None] = {}
    frontier: list[tuple[int, int, str]] = []
    for start in by_degree:
        if len(chosen) >= limit:
            break
        if start in chosen:
            continue
        heapq.heappush(frontier, (-degree[start], order[start], start))
        while frontier and len(chosen) < limit:
            _, _, node = heapq.heappop(frontier)
            if node in chosen:
                continue
            chosen[node] = None
            for other in adjacent.get(node, ()):
                if other not in chosen:
                    heapq.heappush(frontier, (-degree[other], order[other], other))
    return list(chosen)


def whole_graph(memory: RippleMem, max_nodes: int = DEFAULT_MAX_NODES) -> GraphView:
    """The user's memories and entities with every edge among them; above max_nodes, the
    best-connected part (sizes grow with degree)."""
    max_nodes = check_k(max_nodes, "max_nodes")
    store = memory._engine.store
    memories = _all_memories(memory)
    edges = [edge for batch in iter_edges(store, memory.user_id) for edge in batch]
    degree: Counter[str] = Counter()
    for edge in edges:
        degree.update((edge.src, edge.dst))
    entity_ids = [node for node in degree if is_entity(node)]
    entities = get_entities(store, memory.user_id, entity_ids)
    candidates = list(memories) + [node for node in entity_ids if node in entities]
    order = {node: position for position, node in enumerate(candidates)}
    shown = _best_connected(candidates, edges, degree, order, max_nodes)
    most = max((degree[node] for node in shown), default=0) or 1
    view = GraphView(memory.user_id, None, total_nodes=len(candidates), total_edges=len(edges))
    for node in sorted(shown, key=order.__getitem__):
        size = degree[node] / most
        if node in memories:
            view.nodes.append(_memory_node(memories[node], size))
        else:
            entity = entities[node]
            view.nodes.append(_entity_node(node, entity.name, entity.type, size))
    kept = set(shown)
    view.edges = [_edge(edge) for edge in edges if edge.src in kept and edge.dst in kept]
    return view


def recall_graph(memory: RippleMem, recall: Recall) -> GraphView:
    """The subgraph a recall activated: its hits (sized by score) and the nodes on their paths."""
    store = memory._engine.store
    best = max((hit.score for hit in recall.hits), default=0.0) or 1.0
    sizes = {hit.memory.id: 0.25 + 0.75 * max(hit.score, 0.0) / best for hit in recall.hits}
    memories = {hit.memory.id: hit.memory for hit in recall.hits}
    node_ids = list(dict.fromkeys([*memories, *recall.subgraph.nodes]))
    others = [node for node in node_ids if node not in memories and not is_entity(node)]
    for status in _STATUSES:
        fetched, _ = store.fetch(others, MemoryFilter(user_id=memory.user_id, status=status))
        memories.update((m.id, m) for m in fetched)
    entities = get_entities(store, memory.user_id, [node for node in node_ids if is_entity(node)])
    view = GraphView(memory.user_id, recall.query)
    for node in node_ids:
        size = sizes.get(node, _PATH_NODE_SIZE)
        if node in memories:
            view.nodes.append({**_memory_node(memories[node], size), "hit": node in sizes})
        elif node in entities:
            entity = entities[node]
            view.nodes.append({**_entity_node(node, entity.name, entity.type, size), "hit": False})
    shown = {node["id"] for node in view.nodes}
    view.edges = [_edge(e) for e in recall.subgraph.edges if e.src in shown and e.dst in shown]
    view.total_nodes, view.total_edges = len(view.nodes), len(view.edges)
    return view


def graph_view(
    memory: RippleMem, query: str | None = None, *, k: int = 10, max_nodes: int = DEFAULT_MAX_NODES
) -> GraphView:
    """The whole graph of the handle's user, or with a query, the subgraph of one read-only recall."""
    if query is None:
        return whole_graph(memory, max_nodes)
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query must be a non-empty text; leave it out to draw the whole graph")
    return recall_graph(memory, memory.recall(query, k, record_access=False))
