"""recall(route=...): where a query should search, the user's own memories, the documents (the knowledge
bases granted to the user and the user's own document memories) or both (docs/design-notes.md#routing),
decided by the rule router from the query and how much each side holds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ripplemem.core.choices import MemoryTypeName
from ripplemem.core.types import MemoryType, Recall
from ripplemem.core.validation import check_type
from ripplemem.engine.engine import Engine
from ripplemem.engine.knowledge_bases import chunk_count, readable
from ripplemem.language.entities import query_entity_keys
from ripplemem.retrieval.route_rules import RuleRouter
from ripplemem.store.tables.graph import entity_id, get_entities

PERSONAL_TYPES: tuple[MemoryTypeName, ...] = tuple(check_type(t) for t in MemoryType if t.value != "document")


@dataclass(frozen=True)
class RoutePlan:
    """What one recall searches: the decision (None without routing), the types of the user's own
    memories to search (None: all), and the knowledge bases to search."""

    decision: dict[str, Any] | None
    types: tuple[MemoryTypeName, ...] | None
    knowledge_bases: tuple[str, ...]


def plan_route(
    engine: Engine, user_id: str, query: str, route: str | None, knowledge_bases: Sequence[str] | None = None
) -> RoutePlan:
    """The plan for a route argument: None searches everything the user can read; "memory" only
    their own non-document memories; "documents" knowledge bases and their own document memories;
    "both" everything; "auto" lets the rule router choose. ``knowledge_bases`` narrows (each must
    be shared with the user)."""
    bases = readable(engine, user_id, knowledge_bases)
    if route is None:
        return RoutePlan(None, None, bases)
    if route == "auto":
        by_type = engine.store.counts(user_id)["by_type"]
        documents = int(by_type.get("document", 0)) + sum(chunk_count(engine, kb) for kb in bases)
        memories = sum(int(n) for kind, n in by_type.items() if kind != "document")
        decision = RuleRouter().route(
            query,
            memory_count=memories,
            document_count=documents,
            known_to_memory=_known_to_memory(engine, user_id, query),
        )
        target, described = decision.target, decision.as_dict()
    else:
        target, described = (
            route,
            {"target": route, "order": [route], "reasons": ["chosen by the caller"], "query_class": None},
        )
    types = {"memory": PERSONAL_TYPES, "documents": ("document",), "both": None}[target]
    return RoutePlan(described, types, () if target == "memory" else bases)


def _known_to_memory(engine: Engine, user_id: str, query: str) -> list[str]:
    """Entities the query names that the user's own memories mention ("who is Alice?" when
    Alice is a friend pulls a documents-first query back towards memory)."""
    ids = [entity_id(user_id, key) for key in query_entity_keys(query)]
    found = get_entities(engine.store, user_id, ids)
    return [found[node].name for node in ids if node in found]


def order_by_route(result: Recall, decision: dict[str, Any] | None) -> None:
    """Put the first side's hits first for a memory-first or documents-first decision that searched
    both ("Memory → RAG"); a merged ("hybrid") decision keeps the order by score."""
    if decision is None or decision["target"] != "both" or not decision.get("query_class"):
        return
    first = decision["order"][0]
    if decision["query_class"]["label"] == "hybrid" or first not in ("memory", "documents"):
        return
    result.hits.sort(key=lambda hit: (hit.memory.type == "document") != (first == "documents"))
