"""The report of a consistency check of a store (what was found and repaired), apart from the
check itself (reconcile.py), so the indexes that fill it in need not import the check."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from ripplemem.store.vectors.base import VectorIndex


@dataclass
class CheckReport:
    """What a consistency check found (and repaired, when ``repaired``)."""

    path: str | None
    vector_index: str
    repaired: bool
    users: int = 0
    memories: int = 0
    vectors: int = 0
    interrupted_writes: int = 0
    missing_vectors: int = 0
    stray_vectors: int = 0
    dangling_edges: int = 0
    orphan_entities: int = 0
    missing_keywords: int = 0
    stray_keywords: int = 0
    # Broken vector-index files (a crash inside Chroma): the collection was rebuilt from SQLite when
    # repaired, so its vectors also count as missing vectors.
    index_damage: list[str] = field(default_factory=list)
    seconds: float = 0.0

    PROBLEMS = (
        "missing_vectors",
        "stray_vectors",
        "dangling_edges",
        "orphan_entities",
        "missing_keywords",
        "stray_keywords",
    )

    @property
    def problems(self) -> int:
        """How many inconsistencies were found (interrupted-write markers are not counted)."""
        counts: list[int] = [getattr(self, name) for name in self.PROBLEMS]
        return sum(counts) + len(self.index_damage)

    @property
    def consistent(self) -> bool:
        """True when SQLite, the keyword index, the graph and the vector index agree."""
        return self.problems == 0

    def as_dict(self) -> dict[str, Any]:
        """The report as plain data (for JSON)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["consistent"] = self.consistent
        return data

    def lines(self) -> list[str]:
        """A human-readable summary, one finding per line."""
        verb = "repaired" if self.repaired else "found"
        found = [
            f"{name.replace('_', ' ')}: {getattr(self, name)} {verb}"
            for name in self.PROBLEMS
            if getattr(self, name)
        ]
        fix = "rebuilt from SQLite" if self.repaired else "found"
        found += [f"vector index damage ({fix}): {damage}" for damage in self.index_damage]
        state = "consistent" if self.consistent else ("repaired" if self.repaired else "INCONSISTENT")
        return [
            f"store {self.path}: {state} ({self.seconds:.2f} s)",
            f"checked {self.memories} memories with vectors and {self.vectors} vectors of "
            f"{self.users} users ({self.vector_index} index)",
            f"interrupted writes: {self.interrupted_writes}",
            *found,
        ]


def take_damage(report: CheckReport, index: VectorIndex, repair: bool) -> None:
    """Add the broken parts an index found on opening to `report`; when repairing, the check
    that follows refills them from SQLite, so the index forgets them."""
    damage = index.damage()
    if damage:
        report.index_damage += damage
        if repair:
            index.clear_damage()


def take_foreign(report: CheckReport, index: VectorIndex, users: Sequence[str], repair: bool) -> None:
    """Count the vectors an index holds for anyone outside `users` (e.g. a writer killed while
    deleting a user's last memories) as stray, and drop them when repairing."""
    for part, count in index.foreign(users).items():
        report.stray_vectors += count
        report.vectors += count
        if repair:
            index.drop_foreign(part)
