"""Questions about a user's memory graph: neighbours of a node, explained paths between two
entities or memories, and topic communities."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ripplemem.core.types import GraphNode
from ripplemem.engine.engine import Engine
from ripplemem.index.scope_graph import ScopeGraph
from ripplemem.language.entities import canonical_name
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.graph import EdgeRow, edges_between, edges_of, entity_id, get_entities, is_entity

_MAX_VISITED = 50_000


@dataclass(frozen=True)
class Neighbor:
    """One neighbour of a node and the edge that links them."""

    node: GraphNode
    edge_type: str
    weight: float
    predicate: str = ""


@dataclass(frozen=True)
class PathStep:
    """One edge of a path: from a node to the next, of this type."""

    source: GraphNode
    target: GraphNode
    edge_type: str
    predicate: str = ""


@dataclass
class Connection:
    """A path between two nodes, with its steps and a strength (the product of edge weights)."""

    steps: list[PathStep] = field(default_factory=list)
    strength: float = 0.0

    @property
    def hops(self) -> int:
        """How many edges the path has."""
        return len(self.steps)

    def explain(self) -> str:
        """The path as text: [Calvin] -MENTIONS- "Calvin bought ..." -MENTIONS- [Ferrari 488]."""
        if not self.steps:
            return ""
        parts = [self.steps[0].source.label]
        for step in self.steps:
            label = f"{step.edge_type}:{step.predicate}" if step.predicate else step.edge_type
            parts += [f"-{label}-", step.target.label]
        return " ".join(parts)


@dataclass
class Community:
    """A cluster of densely linked memories and entities: a topic."""

    entities: list[GraphNode]
    memory_ids: list[str]

    @property
    def label(self) -> str:
        """The community's best-connected entity names."""
        return ", ".join(node.label for node in self.entities[:3]) or "(no named entities)"


def resolve_node(store: RowStore, user_id: str, graph: ScopeGraph, name_or_id: str) -> str | None:
    """A node id for a memory id or an entity name ('Frank Ocean', '《三体》'), if the user has it."""
    if not is_entity(name_or_id) and store.contents([name_or_id], user_id):
        return name_or_id
    candidate = name_or_id if is_entity(name_or_id) else entity_id(user_id, canonical_name(name_or_id))
    return candidate if candidate in graph or get_entities(store, user_id, [candidate]) else None


def describe(store: RowStore, user_id: str, nodes: list[str]) -> dict[str, GraphNode]:
    """Readable GraphNodes for node ids."""
    entities = get_entities(store, user_id, [n for n in nodes if is_entity(n)])
    contents = store.contents([n for n in nodes if not is_entity(n)], user_id)
    described = {}
    for node in nodes:
        if node in entities:
            described[node] = GraphNode(node, "entity", entities[node].name)
        elif node in contents:
            described[node] = GraphNode(node, "memory", contents[node])
    return described


def neighbors_of(store: RowStore, user_id: str, node: str, limit: int) -> list[Neighbor]:
    """The node's neighbours, strongest edges first."""
    edges = sorted(edges_of(store, user_id, node), key=lambda e: -e.weight)
    others = [e.dst if e.src == node else e.src for e in edges]
    described = describe(store, user_id, others)
    found = []
    for edge, other in zip(edges, others, strict=True):
        if other in described:
            found.append(Neighbor(described[other], edge.type, edge.weight, edge.predicate))
    return found[:limit]


def shortest_paths(graph: ScopeGraph, start: str, goal: str, max_hops: int, limit: int) -> list[list[str]]:
    """Up to `limit` shortest paths (at most max_hops edges) from start to goal, strongest first."""
    if start == goal:
        return [[start]]
    parents: dict[str, list[str]] = {start: []}
    depth = {start: 0}
    queue = deque([start])
    while queue and len(depth) < _MAX_VISITED:
        node = queue.popleft()
        if depth[node] >= max_hops or (goal in depth and depth[node] >= depth[goal]):
            continue
        for other in graph.neighbors(node):
            if other not in depth:
                depth[other] = depth[node] + 1
                parents[other] = [node]
                queue.append(other)
            elif depth[other] == depth[node] + 1:
                parents[other].append(node)
    if goal not in depth:
        return []
    paths: list[list[str]] = []

    def unwind(node: str, suffix: list[str]) -> None:
        if len(paths) >= limit * 4:
            return
        if node == start:
            paths.append([start, *suffix])
            return
        for parent in parents[node]:
            unwind(parent, [node, *suffix])

    unwind(goal, [])

    def strength(path: list[str]) -> float:
        return float(np.prod([graph.neighbors(a).get(b, 0.0) for a, b in zip(path, path[1:], strict=False)]))

    return sorted(paths, key=strength, reverse=True)[:limit]


def to_connection(store: RowStore, user_id: str, graph: ScopeGraph, path: list[str]) -> Connection:
    """A path of node ids as a Connection with edge types and labels."""
    described = describe(store, user_id, path)
    edges: dict[frozenset[str], EdgeRow] = {}
    for row in edges_between(store, user_id, path):
        edges.setdefault(frozenset((row.src, row.dst)), row)
    steps, strength = [], 1.0
    for a, b in zip(path, path[1:], strict=False):
        edge = edges.get(frozenset((a, b)))
        steps.append(
            PathStep(
                described.get(a, GraphNode(a, "unknown", a)),
                described.get(b, GraphNode(b, "unknown", b)),
                edge.type if edge else "LINKED",
                edge.predicate if edge else "",
            )
        )
        strength *= graph.neighbors(a).get(b, 0.0)
    return Connection(steps=steps, strength=strength)


def find_communities(
    graph: ScopeGraph, rounds: int = 10, min_memories: int = 2
) -> list[tuple[list[str], list[str]]]:
    """Label propagation over the graph: (entity ids by degree, memory ids) per community, biggest first."""
    labels = {node: node for node in graph.nodes()}
    order = sorted(labels)
    for _ in range(rounds):
        changed = 0
        for node in order:
            votes: dict[str, float] = {}
            for other, weight in graph.neighbors(node).items():
                votes[labels[other]] = votes.get(labels[other], 0.0) + weight
            if votes:
                best = max(votes.items(), key=lambda item: (item[1], item[0]))[0]
                if best != labels[node]:
                    labels[node], changed = best, changed + 1
        if not changed:
            break
    groups: dict[str, list[str]] = {}
    for node, label in labels.items():
        groups.setdefault(label, []).append(node)
    found = []
    for members in groups.values():
        memories = [n for n in members if not is_entity(n)]
        if len(memories) >= min_memories:
            entities = sorted((n for n in members if is_entity(n)), key=lambda n: -graph.degree(n))
            found.append((entities, memories))
    return sorted(found, key=lambda group: -len(group[1]))


def neighbors_in(engine: Engine, user_id: str, node: str, limit: int) -> list[Neighbor]:
    """A user's node (entity name or memory id) and its neighbours, or [] if the user has no such node."""
    found = resolve_node(engine.store, user_id, engine.graph(user_id), node)
    return [] if found is None else neighbors_of(engine.store, user_id, found, limit)


def connections_in(
    engine: Engine, user_id: str, source: str, target: str, max_hops: int, limit: int
) -> list[Connection]:
    """Explained shortest paths between two of a user's nodes."""
    graph = engine.graph(user_id)
    start = resolve_node(engine.store, user_id, graph, source)
    goal = resolve_node(engine.store, user_id, graph, target)
    if start is None or goal is None:
        return []
    return [
        to_connection(engine.store, user_id, graph, path)
        for path in shortest_paths(graph, start, goal, max_hops, limit)
    ]


def communities_in(engine: Engine, user_id: str, min_memories: int) -> list[Community]:
    """A user's topic clusters with their best-connected entities described."""
    groups = find_communities(engine.graph(user_id), min_memories=min_memories)
    described = describe(engine.store, user_id, [e for entities, _ in groups for e in entities[:10]])
    return [
        Community(entities=[described[e] for e in entities[:10] if e in described], memory_ids=memories)
        for entities, memories in groups
    ]
