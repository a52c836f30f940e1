"""Knowledge-graph quality: completeness, consistency, redundancy, confidence and coverage of one
user's graph, each with a score, and the issues found, each named by the error type of the source's
table (docs/design-notes.md#analyses) with its suggested fix:

| error type (source)        | detected by                               | fix                     |
| entity boundary error      | co-occurrence counts of nested names      | re-segment              |
| relation direction error   | both directions / cycles of a transitive predicate | reverse the relation |
| type conflict              | type consistency within an alias cluster  | multi-type label        |
| redundant relation         | duplicate detection                       | merge relations         |
| spurious association       | confidence threshold                      | filter low confidence   |

plus completeness issues (isolated entities and memories) and alias clusters not merged.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from ripplemem.analysis.graph_snapshot import GraphSnapshot
from ripplemem.store.tables.graph import EdgeRow

# Entity types that say nothing specific (rule extraction's capitalised spans, bare relations).
GENERIC_TYPES = frozenset({"thing", "name"})
# Predicates that read the same both ways: both directions are not a direction error.
SYMMETRIC_PREDICATES = frozenset(
    {
        "married_to",
        "spouse_of",
        "sibling_of",
        "brother_of",
        "sister_of",
        "friend_of",
        "friends_with",
        "related_to",
        "knows",
        "works_with",
        "colleague_of",
        "partner_of",
        "neighbour_of",
        "neighbor_of",
        "similar_to",
        "same_as",
        "connected_to",
        "met",
        "met_with",
        "dating",
        "collaborates_with",
        "与",
        "朋友",
    }
)
# Predicates that chain (A part_of B, B part_of C => A part_of C): a cycle means one edge is reversed.
TRANSITIVE_PREDICATES = frozenset(
    {
        "is_a",
        "subclass_of",
        "type_of",
        "kind_of",
        "part_of",
        "located_in",
        "in",
        "inside",
        "contains",
        "belongs_to",
        "parent_of",
        "ancestor_of",
        "child_of",
        "descendant_of",
        "older_than",
        "larger_than",
        "depends_on",
        "prerequisite_of",
        "属于",
        "位于",
        "包含",
        "是",
    }
)
_AUXILIARY = re.compile(r"^(?:is|are|was|were|has_been|have_been|be)_")
# ours: an entity named once whose name contains a name mentioned this often looks mis-segmented.
BOUNDARY_MIN_MENTIONS = 3

ERROR_TYPES = {
    "isolated_entity": (
        "isolated node",
        "add the relation that links it, or delete it if extraction invented it",
    ),
    "isolated_memory": ("isolated node", "link it: name the entities it is about, or consolidate it"),
    "entity_boundary": ("entity boundary error", "re-segment: merge it into the shorter entity"),
    "relation_direction": ("relation direction error", "reverse the relation that contradicts the others"),
    "type_conflict": ("type conflict", "give the entity a multi-type label, or cut the ALIAS if they differ"),
    "duplicate_relation": (
        "redundant relation",
        "merge the relations into one, keeping the highest confidence",
    ),
    "unmerged_aliases": ("redundant entity", "merge the cluster into one entity with the others as aliases"),
    "low_confidence": ("spurious association", "filter: verify the edge or delete it"),
}


@dataclass(frozen=True)
class GraphIssue:
    """One problem found: its kind, the source's error type, what is wrong, the nodes, the fix."""

    kind: str
    error_type: str
    detail: str
    nodes: tuple[str, ...]
    fix: str


@dataclass
class GraphQualityReport:
    """Scores in [0, 1] per dimension (higher is better), their measurements, and the issues."""

    entities: int
    memories: int
    relations: int
    completeness: dict[str, Any]
    consistency: dict[str, Any]
    redundancy: dict[str, Any]
    confidence: dict[str, Any]
    coverage: dict[str, Any]
    overall: float | None
    issues: list[GraphIssue] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[GraphIssue]:
        """The issues of one kind ("isolated_entity", "duplicate_relation", ...)."""
        return [issue for issue in self.issues if issue.kind == kind]

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready dicts and lists."""
        return asdict(self)


def _issue(kind: str, detail: str, nodes: list[str], fix: str | None = None) -> GraphIssue:
    error_type, default_fix = ERROR_TYPES[kind]
    return GraphIssue(kind, error_type, detail, tuple(nodes), fix or default_fix)


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def _snippet(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _predicate_key(predicate: str) -> str:
    return _AUXILIARY.sub("", predicate)


def check_completeness(view: GraphSnapshot) -> tuple[dict[str, Any], list[GraphIssue]]:
    """Isolation ratio (entities linked to no other entity by a relation, an alias or
    a shared memory), relation density n_rel / (n(n-1)/2), score 1 - isolation x 0.5."""
    linked: set[str] = set()
    for edge in [*view.relations, *view.aliases]:
        linked.update((edge.src, edge.dst))
    for entities in view.mentions.values():
        if len(entities) > 1:
            linked.update(entities)
    isolated = [e for e in view.entities if e not in linked]
    touched = {end for edge in view.edges for end in (edge.src, edge.dst)}
    lonely_memories = [m for m in view.memories if m not in touched]
    n = len(view.entities)
    pairs = {frozenset((e.src, e.dst)) for e in view.relations}
    isolation = _ratio(len(isolated), n)
    section = {
        "isolated_entities": len(isolated),
        "isolation_ratio": isolation,
        "isolated_memories": len(lonely_memories),
        "density": _ratio(len(pairs), n * (n - 1) / 2),
        "score": 1 - isolation * 0.5,
    }
    issues = [
        _issue(
            "isolated_entity",
            f"'{view.name(e)}' shares no relation, alias or memory with another entity",
            [view.name(e)],
        )
        for e in isolated
    ]
    issues += [
        _issue(
            "isolated_memory",
            f"memory '{_snippet(view.memories[m].content)}' ({m}) has no edge: "
            "no entity, no session neighbour, no similar memory",
            [m],
        )
        for m in lonely_memories
    ]
    return section, issues


def check_consistency(view: GraphSnapshot) -> tuple[dict[str, Any], list[GraphIssue]]:
    """Entity type conflicts within alias clusters, and relation direction checks: both directions
    of an asymmetric predicate, and cycles of a transitive one (a transitivity check)."""
    issues: list[GraphIssue] = []
    conflicted: set[str] = set()
    for cluster in view.alias_clusters():
        types = sorted({view.entities[e].type for e in cluster} - GENERIC_TYPES)
        if len(types) > 1:
            conflicted.update(cluster)
            names = [view.name(e) for e in cluster]
            labels = ", ".join(f"'{view.name(e)}' ({view.entities[e].type})" for e in cluster)
            issues.append(
                _issue(
                    "type_conflict",
                    f"aliases of one entity have different types: {labels}",
                    names,
                    f"give '{names[0]}' a multi-type label ({' + '.join(types)}), or cut "
                    "the ALIAS edge if they are different things",
                )
            )
    flagged = _both_directions(view, issues) | _transitive_cycles(view, issues)
    relations = view.relations
    entity_consistency = 1 - _ratio(len(conflicted), len(view.entities))
    relation_validity = 1 - _ratio(len(flagged), len(relations))
    section = {
        "type_conflicts": len(conflicted),
        "entity_consistency": entity_consistency,
        "direction_errors": len(flagged),
        "relation_validity": relation_validity,
        "score": (entity_consistency + relation_validity) / 2,
    }
    return section, issues


def _both_directions(view: GraphSnapshot, issues: list[GraphIssue]) -> set[tuple[str, str, str]]:
    by_key = {(e.src, e.dst, _predicate_key(e.predicate)): e for e in view.relations}
    flagged: set[tuple[str, str, str]] = set()
    for (src, dst, predicate), edge in by_key.items():
        back = by_key.get((dst, src, predicate))
        if back is None or predicate in SYMMETRIC_PREDICATES or (dst, src, predicate) in flagged:
            continue
        flagged.update({(src, dst, predicate), (dst, src, predicate)})
        keep, drop = (edge, back) if edge.confidence >= back.confidence else (back, edge)
        issues.append(
            _issue(
                "relation_direction",
                f"'{view.name(src)}' {predicate} '{view.name(dst)}' and the reverse are both stored",
                [view.name(src), view.name(dst)],
                f"reverse or drop '{view.name(drop.src)}' {predicate} '{view.name(drop.dst)}' (confidence "
                f"{drop.confidence:.2f}); keep '{view.name(keep.src)}' {predicate} '{view.name(keep.dst)}'",
            )
        )
    return flagged


def _transitive_cycles(view: GraphSnapshot, issues: list[GraphIssue]) -> set[tuple[str, str, str]]:
    """Cycles of three or more entities along one transitive predicate (two are caught above)."""
    by_predicate: dict[str, dict[str, list[EdgeRow]]] = defaultdict(lambda: defaultdict(list))
    for edge in view.relations:
        key = _predicate_key(edge.predicate)
        if key in TRANSITIVE_PREDICATES:
            by_predicate[key][edge.src].append(edge)
    flagged: set[tuple[str, str, str]] = set()
    for predicate, out in by_predicate.items():
        for cycle in _cycles(out):
            if len(cycle) < 3 or any((e.src, e.dst, predicate) in flagged for e in cycle):
                continue
            weakest = min(cycle, key=lambda e: e.confidence)
            flagged.update((e.src, e.dst, predicate) for e in cycle)
            chain = " -> ".join([view.name(e.src) for e in cycle] + [view.name(cycle[0].src)])
            issues.append(
                _issue(
                    "relation_direction",
                    f"'{predicate}' is transitive but runs in a cycle: {chain}",
                    [view.name(e.src) for e in cycle],
                    f"reverse '{view.name(weakest.src)}' {predicate} '{view.name(weakest.dst)}' (the least "
                    f"confident, {weakest.confidence:.2f})",
                )
            )
    return flagged


def _cycles(out: dict[str, list[EdgeRow]]) -> list[list[EdgeRow]]:
    """One cycle through each back edge of a depth-first search (enough to point at each loop)."""
    state: dict[str, int] = {}
    found: list[list[EdgeRow]] = []
    for start in list(out):
        if state.get(start):
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        path: list[EdgeRow] = []
        state[start] = 1
        while stack:
            node, index = stack[-1]
            edges = out.get(node, [])
            if index == len(edges):
                stack.pop()
                state[node] = 2
                if path:
                    path.pop()
                continue
            stack[-1] = (node, index + 1)
            edge = edges[index]
            if state.get(edge.dst) == 1:
                begin = next((i for i, e in enumerate(path) if e.src == edge.dst), len(path))
                found.append([*path[begin:], edge])
            elif not state.get(edge.dst):
                state[edge.dst] = 1
                path.append(edge)
                stack.append((edge.dst, 0))
    return found


def check_redundancy(view: GraphSnapshot) -> tuple[dict[str, Any], list[GraphIssue]]:
    """Duplicate relations (one fact stored twice: predicates equal but for an auxiliary, or ends
    that are aliases of each other) and alias clusters still stored as separate entities."""
    clusters = view.alias_clusters()
    root = {member: cluster[0] for cluster in clusters for member in cluster}
    groups: dict[tuple[str, str, str], list[EdgeRow]] = defaultdict(list)
    for edge in view.relations:
        key = (root.get(edge.src, edge.src), root.get(edge.dst, edge.dst), _predicate_key(edge.predicate))
        groups[key].append(edge)
    issues: list[GraphIssue] = []
    extra = 0
    for (src, dst, predicate), edges in groups.items():
        if len(edges) < 2:
            continue
        extra += len(edges) - 1
        stated = "; ".join(f"'{view.name(e.src)}' {e.predicate} '{view.name(e.dst)}'" for e in edges)
        issues.append(
            _issue(
                "duplicate_relation",
                f"one fact stored {len(edges)} times: {stated}",
                sorted({view.name(e.src) for e in edges} | {view.name(e.dst) for e in edges}),
                f"merge into '{view.name(src)}' {predicate} '{view.name(dst)}' with confidence "
                f"{max(e.confidence for e in edges):.2f}",
            )
        )
    for cluster in clusters:
        names = [view.name(e) for e in cluster]
        issues.append(
            _issue(
                "unmerged_aliases",
                f"{len(cluster)} entities name one thing: " + ", ".join(f"'{n}'" for n in names),
                names,
                f"merge into '{names[0]}' with aliases " + ", ".join(f"'{n}'" for n in names[1:]),
            )
        )
    surplus = sum(len(c) - 1 for c in clusters)
    relations = len(view.relations)
    section = {
        "duplicate_relations": extra,
        "alias_clusters": len(clusters),
        "unmerged_entities": surplus,
        "score": 1 - _ratio(extra + surplus, relations + len(view.entities)),
    }
    return section, issues


def check_boundaries(view: GraphSnapshot) -> list[GraphIssue]:
    """Entity boundary errors by co-occurrence counts: a name seen once that is a name seen often
    plus extra words ('Frank Ocean Tonight' beside a much-mentioned 'Frank Ocean')."""
    by_words = {tuple(e.canonical.split()): node for node, e in view.entities.items()}
    issues = []
    for node, entity in view.entities.items():
        words = tuple(entity.canonical.split())
        if len(view.mentioned_by.get(node, ())) != 1 or len(words) < 2:
            continue
        for size in range(len(words) - 1, 0, -1):
            inner = next(
                (
                    by_words[words[i : i + size]]
                    for i in range(len(words) - size + 1)
                    if words[i : i + size] in by_words
                ),
                None,
            )
            if inner is not None and len(view.mentioned_by.get(inner, ())) >= BOUNDARY_MIN_MENTIONS:
                issues.append(
                    _issue(
                        "entity_boundary",
                        f"'{entity.name}' is named once, '{view.name(inner)}' "
                        f"{len(view.mentioned_by[inner])} times: the extra words may not belong to the name",
                        [entity.name, view.name(inner)],
                        f"re-segment '{entity.name}' as '{view.name(inner)}'",
                    )
                )
                break
    return issues


def check_confidence(view: GraphSnapshot, threshold: float) -> tuple[dict[str, Any], list[GraphIssue]]:
    """RELATES and ALIAS edges below the confidence threshold (spurious associations)."""
    knowledge = [*view.relations, *view.aliases]
    low = [e for e in knowledge if e.confidence < threshold]
    issues = [
        _issue(
            "low_confidence",
            f"'{view.name(e.src)}' {e.predicate or e.type.lower()} "
            f"'{view.name(e.dst)}' has confidence {e.confidence:.2f} < {threshold:.2f}",
            [view.name(e.src), view.name(e.dst)],
        )
        for e in low
    ]
    ratio = _ratio(len(low), len(knowledge))
    section = {"threshold": threshold, "low_confidence_edges": len(low), "ratio": ratio, "score": 1 - ratio}
    return section, issues


def check_coverage(view: GraphSnapshot) -> dict[str, Any]:
    """How much of the memory the graph reaches: memories that mention an entity, entities in a relation."""
    with_entities = sum(1 for m in view.memories if view.mentions.get(m))
    related = {end for e in view.relations for end in (e.src, e.dst)}
    memory_coverage = _ratio(with_entities, len(view.memories))
    return {
        "memories_with_entities": with_entities,
        "memory_coverage": memory_coverage,
        "entities_in_relations": len(related),
        "relation_coverage": _ratio(len(related), len(view.entities)),
        "score": memory_coverage,
    }


def assess_graph(view: GraphSnapshot, *, min_confidence: float = 0.5) -> GraphQualityReport:
    """The quality report of one user's graph; overall is the mean of the five scores (ours: the
    seed leaves the weighting open), None for a user without memories."""
    completeness, issues = check_completeness(view)
    consistency, found = check_consistency(view)
    redundancy, duplicates = check_redundancy(view)
    confidence, weak = check_confidence(view, min_confidence)
    coverage = check_coverage(view)
    issues += found + duplicates + check_boundaries(view) + weak
    scores = [section["score"] for section in (completeness, consistency, redundancy, confidence, coverage)]
    overall = sum(scores) / len(scores) if view.memories else None
    return GraphQualityReport(
        len(view.entities),
        len(view.memories),
        len(view.relations),
        completeness,
        consistency,
        redundancy,
        confidence,
        coverage,
        overall,
        issues,
    )
