"""RippleMem's graph questions (``mem.graph``): neighbours, explained paths and communities."""

from __future__ import annotations

from typing import Any

from ripplemem.api.handle import Namespace
from ripplemem.core.validation import check_k, check_text
from ripplemem.errors import InvalidTypeError
from ripplemem.retrieval.graph_queries import (
    Community,
    Connection,
    Neighbor,
    communities_in,
    connections_in,
    neighbors_in,
)


class Graph(Namespace):
    """``mem.graph``: what the user's memory graph links, how two things connect, its topic clusters."""

    def neighbors(self, node: str, *, limit: int = 20) -> list[Neighbor]:
        """What an entity (by name) or a memory (by id) is linked to, strongest edges first."""
        return neighbors_in(self._engine, self.user_id, _check_node(node), check_k(limit, "limit"))

    def find_connections(
        self, source: str, target: str, *, max_hops: int = 3, limit: int = 5
    ) -> list[Connection]:
        """Explained paths between two entities (by name) or memories (by id), shortest first.

        ``mem.graph.find_connections("Calvin", "Ferrari 488")`` -> paths such as
        [Calvin] -MENTIONS- "Calvin bought a Ferrari 488" -MENTIONS- [Ferrari 488].
        """
        return connections_in(
            self._engine,
            self.user_id,
            _check_node(source, "source"),
            _check_node(target, "target"),
            check_k(max_hops, "max_hops"),
            check_k(limit, "limit"),
        )

    def communities(self, *, min_memories: int = 2) -> list[Community]:
        """Topic clusters of this user's graph (label propagation), biggest first."""
        return communities_in(self._engine, self.user_id, check_k(min_memories, "min_memories"))


def _check_node(value: Any, name: str = "node") -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidTypeError(
            f"{name} must be an entity name or a memory id (a non-empty string), got {value!r}"
        )
    return check_text(name, value)
