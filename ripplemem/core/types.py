"""Plain data objects the public API hands out: Memory, Scope, Hit, Recall."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ripplemem.core.choices import MemoryTypeName
from ripplemem.core.text import estimate_tokens


class MemoryType(str, enum.Enum):
    """The five kinds of memory; the value is the string stored on disk."""

    WORKING = "working"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PERCEPTUAL = "perceptual"
    DOCUMENT = "document"


MEMORY_TYPES: tuple[str, ...] = tuple(t.value for t in MemoryType)

MemoryTypeChoice = MemoryTypeName | MemoryType
"""A memory type as the API takes it: its name ("episodic") or the MemoryType member."""


@dataclass(frozen=True)
class Scope:
    """Who a memory belongs to: always a user, optionally an agent and a session."""

    user_id: str
    agent_id: str | None = None
    session_id: str | None = None


@dataclass
class Memory:
    """One stored memory, as read from the store."""

    id: str
    user_id: str
    type: str
    content: str
    agent_id: str | None = None
    session_id: str | None = None
    modality: str = "text"
    importance: float = 0.5
    created_at: datetime | None = None
    event_time: datetime | None = None
    last_accessed: datetime | None = None
    access_count: int = 0
    mention_count: int = 1
    tier: str = "hot"
    status: str = "active"
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    source: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def when(self) -> datetime | None:
        """When the memory happened: its event time, else when it was stored."""
        return self.event_time or self.created_at


@dataclass
class Hit:
    """One recalled memory with its final score and the parts the score was built from."""

    memory: Memory
    score: float
    components: dict[str, float] = field(default_factory=dict)
    why: str = ""
    # Node ids from the seed that led here to this memory (empty when the hit is a seed itself).
    path: list[str] = field(default_factory=list)
    # How well the memory matches the query, in [0, 1], comparable across queries and stores of the
    # same embedder: 0 = unrelated, 1 = a paraphrase or every query word present (score ranks).
    relevance: float = 0.0


@dataclass(frozen=True)
class GraphNode:
    """A memory or entity of the graph, with a readable label (an entity's name, a memory's text)."""

    id: str
    kind: str
    label: str


@dataclass(frozen=True)
class SubgraphEdge:
    """A typed edge between two subgraph nodes."""

    src: str
    dst: str
    type: str
    weight: float = 1.0
    predicate: str = ""


@dataclass
class Subgraph:
    """The nodes and edges among a recall's hits and the paths that reached them."""

    nodes: dict[str, GraphNode] = field(default_factory=dict)
    edges: list[SubgraphEdge] = field(default_factory=list)


@dataclass
class Recall:
    """The answer to one recall: ranked hits and a prompt-ready context."""

    query: str
    hits: list[Hit]
    mode: str = "hybrid"
    subgraph: Subgraph = field(default_factory=Subgraph)
    # With recall(route=...): where it searched and why (target, order, reasons, query class).
    route: dict[str, Any] | None = None
    # The time phrase the query named and how it was applied (phrase, start, end, how).
    time: dict[str, Any] | None = None
    # With recall(expand=...): the texts searched and any expansion problems.
    expansion: dict[str, Any] | None = None

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    @property
    def memories(self) -> list[Memory]:
        """The recalled memories, best first."""
        return [hit.memory for hit in self.hits]

    def context(self, token_budget: int = 500, *, header: str = "Relevant memories:") -> str:
        """Text for a prompt within token_budget: one dated line per hit, best first, with the
        memories the graph links to a hit grouped under it (indented, in time order)."""
        if token_budget <= 0:
            raise ValueError(f"token_budget must be positive, got {token_budget}")
        lines = [header] if header else []
        used = estimate_tokens(header) if header else 0
        for group in self.groups():
            for position, hit in enumerate(group):
                line = ("  " if position else "") + format_memory_line(hit.memory)
                cost = estimate_tokens(line)
                if used + cost > token_budget:
                    return "\n".join(lines) if len(lines) > (1 if header else 0) else ""
                lines.append(line)
                used += cost
        return "\n".join(lines) if len(lines) > (1 if header else 0) else ""

    def groups(self) -> list[list[Hit]]:
        """Hits grouped by the subgraph (linked directly or through an entity on a path): each
        group led by its best hit, the rest in time order."""
        ids = [hit.memory.id for hit in self.hits]
        parent = {memory_id: memory_id for memory_id in ids}

        def root(node: str) -> str:
            while parent[node] != node:
                parent[node] = parent[parent[node]]
                node = parent[node]
            return node

        through: dict[str, list[str]] = {}
        for edge in self.subgraph.edges:
            ends = [end for end in (edge.src, edge.dst) if end in parent]
            if len(ends) == 2:
                parent[root(ends[0])] = root(ends[1])
            elif len(ends) == 1:
                other = edge.dst if ends[0] == edge.src else edge.src
                through.setdefault(other, []).append(ends[0])
        for members in through.values():
            for member in members[1:]:
                parent[root(member)] = root(members[0])
        grouped: dict[str, list[Hit]] = {}
        for hit in self.hits:
            grouped.setdefault(root(hit.memory.id), []).append(hit)
        ordered = []
        for group in grouped.values():
            rest = sorted(group[1:], key=lambda h: h.memory.when.timestamp() if h.memory.when else 0.0)
            ordered.append([group[0], *rest])
        return ordered


def format_hit_line(number: int, hit: Hit) -> str:
    """A recalled memory as a numbered line for a tool reply: '1. [id=3f2a...] (2024-03-01, episodic,
    score 0.82) text' (the id lets a model pass it back to other tools)."""
    memory = hit.memory
    when = memory.when
    date = when.strftime("%Y-%m-%d") if when else "undated"
    return f"{number}. [id={memory.id}] ({date}, {memory.type}, score {hit.score:.2f}) {memory.content}"


def format_memory_line(memory: Memory) -> str:
    """One memory as a prompt line with its date and type: '- [2024-03-01, episodic] ...'."""
    when = memory.when
    date = when.strftime("%Y-%m-%d %H:%M") if when else "undated"
    return f"- [{date}, {memory.type}] {memory.content}"
