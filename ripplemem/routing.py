"""recall(route=...): which memory types a query should search, the user's own memories or
document memories (seed 000 §10), decided by the rule router from the query and the store."""

from __future__ import annotations

from typing import Any

from ripplemem.engine import Engine
from ripplemem.router import RuleRouter
from ripplemem.types import MemoryType

PERSONAL_TYPES = tuple(t.value for t in MemoryType if t.value != "document")


def routed_types(engine: Engine, user_id: str, query: str,
                 route: str | None) -> tuple[dict[str, Any], tuple[str, ...] | None] | None:
    """(the decision as a dict, the types to search) for a route argument, or None for no routing."""
    if route is None:
        return None
    if route == "auto":
        by_type = engine.store.counts(user_id)["by_type"]
        documents = int(by_type.get("document", 0))
        memories = sum(int(n) for kind, n in by_type.items() if kind != "document")
        decision = RuleRouter().route(query, memory_count=memories, document_count=documents)
        target, described = decision.target, decision.as_dict()
    else:
        target, described = route, {"target": route, "order": [route], "reasons": ["chosen by the caller"],
                                    "query_class": None}
    types = {"memory": PERSONAL_TYPES, "documents": ("document",), "both": None}[target]
    return described, types
