"""What a user's learning history says, per memory and per concept: questions, notes, study time,
how deeply each concept was studied, and how much of it is probably forgotten (a forgetting curve)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from ripplemem.analysis.graph_snapshot import GraphSnapshot
from ripplemem.store.queries.analysis import MemoryRow

SECONDS_PER_DAY = 86_400.0
# Concepts are named entities; dates, amounts and sensor metrics are not things one studies.
NOT_CONCEPTS = frozenset({"date", "quantity", "metric"})
# Ebbinghaus (1885): retention R = exp(-t / S) after t days with stability S. ours: S starts at two
# days (a third kept after two days; he measured about that after one to two) and doubles with every
# review (the spacing effect).
BASE_STABILITY_DAYS = 2.0


def activity_of(memory: MemoryRow) -> str:
    """ "question", "note", "study" or "document": metadata["activity"] when given, else a question
    by its question mark, a note when it is a semantic memory, study for the rest."""
    if memory.type == "document":
        return "document"
    given = json.loads(memory.metadata or "{}").get("activity")
    if given in ("question", "note", "study"):
        return str(given)
    if memory.content.rstrip().endswith(("?", "？")):
        return "question"
    return "note" if memory.type == "semantic" else "study"


def study_minutes(memories: list[MemoryRow]) -> tuple[float, str]:
    """Total study time in minutes and how it was measured: metadata["minutes"] when the memories
    carry it, else the span of each session (first to last memory)."""
    stated = [json.loads(m.metadata or "{}").get("minutes") for m in memories]
    numbers = [float(v) for v in stated if isinstance(v, int | float) and not isinstance(v, bool) and v > 0]
    if numbers:
        return sum(numbers), "the minutes recorded with study memories"
    spans: dict[str, list[float]] = {}
    for memory in memories:
        if memory.session_id:
            spans.setdefault(memory.session_id, []).append(memory.when)
    total = sum(max(times) - min(times) for times in spans.values()) / 60.0
    return total, "the span of each study session (first to last memory)"


@dataclass
class ConceptStats:
    """How one concept (an entity) figures in the user's learning."""

    entity_id: str
    name: str
    memories: list[str] = field(default_factory=list)
    questions: int = 0
    notes: int = 0
    accesses: int = 0
    last_studied: float = 0.0
    importance: float = 0.0
    contradicted: bool = False

    @property
    def depth(self) -> int:
        """Interactions with the concept: memories about it plus the times they were recalled."""
        return len(self.memories) + self.accesses

    @property
    def reviews(self) -> int:
        """Times the concept came back after it was first studied (later memories and recalls)."""
        return max(0, self.depth - 1)

    def retention(self, now: float) -> float:
        """Ebbinghaus retention exp(-days since last study / stability), stability doubling per review."""
        days = max(0.0, now - self.last_studied) / SECONDS_PER_DAY
        return math.exp(-days / (BASE_STABILITY_DAYS * 2 ** min(self.reviews, 20)))


def concept_stats(
    view: GraphSnapshot, learning: list[MemoryRow], activities: dict[str, str]
) -> list[ConceptStats]:
    """Per concept the user's learning memories mention: counts, recalls, last study time, and
    whether two of its memories contradict each other (a misunderstood concept)."""
    contradicting = {end for e in view.edges if e.type == "CONTRADICTS" for end in (e.src, e.dst)}
    stats: dict[str, ConceptStats] = {}
    for memory in learning:
        for entity in view.mentions.get(memory.id, ()):
            if view.entities[entity].type in NOT_CONCEPTS:
                continue
            concept = stats.setdefault(entity, ConceptStats(entity, view.name(entity)))
            concept.memories.append(memory.id)
            concept.questions += activities[memory.id] == "question"
            concept.notes += activities[memory.id] == "note"
            concept.accesses += memory.access_count
            concept.last_studied = max(concept.last_studied, memory.when, memory.last_accessed or 0.0)
            concept.importance = max(concept.importance, memory.importance)
            concept.contradicted |= memory.id in contradicting
    return sorted(stats.values(), key=lambda c: (-c.depth, c.name))


def central_concepts(view: GraphSnapshot, limit: int = 3) -> tuple[int, list[str]]:
    """(edges, most connected concepts): concepts linked by a relation, an alias or a shared memory."""
    pairs: set[frozenset[str]] = {frozenset((e.src, e.dst)) for e in [*view.relations, *view.aliases]}
    for entities in view.mentions.values():
        concepts = sorted(e for e in entities if view.entities[e].type not in NOT_CONCEPTS)
        pairs.update(frozenset((a, b)) for i, a in enumerate(concepts) for b in concepts[i + 1 :])
    degree: dict[str, int] = {}
    for pair in pairs:
        for node in pair:
            degree[node] = degree.get(node, 0) + 1
    ranked = sorted(degree, key=lambda n: (-degree[n], -len(view.mentioned_by.get(n, ())), view.name(n)))
    return len(pairs), [view.name(n) for n in ranked[:limit]]
