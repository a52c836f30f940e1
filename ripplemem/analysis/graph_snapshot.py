"""One user's knowledge graph read whole for analysis: entities, edges by type, what each memory
mentions, and alias clusters (entities joined by ALIAS edges)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ripplemem.store.queries.analysis import MemoryRow, active_memories, all_entities
from ripplemem.store.rows import RowStore
from ripplemem.store.tables.graph import EdgeRow, EntityRow, is_entity, iter_edges


@dataclass
class GraphSnapshot:
    """A read-only snapshot of one user's graph."""

    entities: dict[str, EntityRow]
    memories: dict[str, MemoryRow]
    edges: list[EdgeRow]
    mentions: dict[str, set[str]] = field(default_factory=dict)  # memory id -> entity ids
    mentioned_by: dict[str, set[str]] = field(default_factory=dict)  # entity id -> active memory ids

    @property
    def relations(self) -> list[EdgeRow]:
        """RELATES edges between two entities (subject -> object)."""
        return [e for e in self.edges if e.type == "RELATES" and self._between_entities(e)]

    @property
    def aliases(self) -> list[EdgeRow]:
        """ALIAS edges between two entities."""
        return [e for e in self.edges if e.type == "ALIAS" and self._between_entities(e)]

    def _between_entities(self, edge: EdgeRow) -> bool:
        return edge.src in self.entities and edge.dst in self.entities

    def name(self, entity_id: str) -> str:
        """An entity's name as first written."""
        return self.entities[entity_id].name

    def alias_clusters(self) -> list[list[str]]:
        """Groups of two or more entities joined by ALIAS edges, biggest first, members by mentions."""
        parent = {node: node for node in self.entities}

        def root(node: str) -> str:
            while parent[node] != node:
                parent[node] = parent[parent[node]]
                node = parent[node]
            return node

        for edge in self.aliases:
            parent[root(edge.src)] = root(edge.dst)
        groups: dict[str, list[str]] = defaultdict(list)
        for node in self.entities:
            groups[root(node)].append(node)
        clusters = [
            sorted(g, key=lambda n: (-len(self.mentioned_by.get(n, ())), self.name(n)))
            for g in groups.values()
            if len(g) > 1
        ]
        return sorted(clusters, key=lambda g: (-len(g), self.name(g[0])))

    def degree(self) -> Counter[str]:
        """How many edges of any type touch each entity."""
        counts: Counter[str] = Counter()
        for edge in self.edges:
            for end in (edge.src, edge.dst):
                if end in self.entities:
                    counts[end] += 1
        return counts


def load_graph(store: RowStore, user_id: str) -> GraphSnapshot:
    """Read every entity, active memory and edge of a user (edges of inactive memories left out)."""
    entities = {e.id: e for e in all_entities(store, user_id)}
    memories = {m.id: m for m in active_memories(store, user_id)}

    def live(node: str) -> bool:
        return node in entities if is_entity(node) else node in memories

    edges = [e for batch in iter_edges(store, user_id) for e in batch if live(e.src) and live(e.dst)]
    view = GraphSnapshot(entities, memories, edges)
    for edge in edges:
        if edge.type == "MENTIONS" and edge.src in memories and edge.dst in entities:
            view.mentions.setdefault(edge.src, set()).add(edge.dst)
            view.mentioned_by.setdefault(edge.dst, set()).add(edge.src)
    return view
