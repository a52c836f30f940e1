"""Rows behind merges, updates and contradictions: merged duplicates, superseded memories, belief
states and the SUPERSEDES / SUMMARIZES links, always scoped to a user.

Writers pass the connection of their own transaction; readers take the store.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ripplemem.store.connection import Connection
from ripplemem.store.in_lists import in_chunks
from ripplemem.store.rows import RowStore


@dataclass
class MergeUpdate:
    """What merging duplicates into one stored memory changes: mentions, importance, time, metadata."""

    mentions: int = 0
    importance: float = 0.0
    when: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)


def _chunks(ids: Sequence[str], size: int = 400) -> Iterable[list[str]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def merge_rows(conn: Connection, user_id: str, merges: Mapping[str, MergeUpdate]) -> None:
    """Apply merges: mention_count + n, the larger importance, the latest time, the merged metadata."""
    conn.executemany(
        "UPDATE memories SET mention_count = mention_count + ?, importance = MAX(importance, ?), "
        "event_time = MAX(COALESCE(event_time, created_at), ?), metadata = ? "
        "WHERE id = ? AND user_id = ? AND status = 'active'",
        [
            (m.mentions, m.importance, m.when, json.dumps(m.metadata, ensure_ascii=False), memory_id, user_id)
            for memory_id, m in merges.items()
        ],
    )


def supersede_rows(conn: Connection, user_id: str, valid_to: Mapping[str, float]) -> None:
    """Mark active memories superseded, valid until the given time (epoch seconds)."""
    conn.executemany(
        "UPDATE memories SET status = 'superseded', valid_to = ? WHERE id = ? AND user_id = ? "
        "AND status = 'active'",
        [(until, memory_id, user_id) for memory_id, until in valid_to.items()],
    )


def set_beliefs(conn: Connection, user_id: str, beliefs: Mapping[str, str]) -> None:
    """Record a belief state ("preference", "fact", "emotion") in metadata["belief"] unless one is set."""
    conn.executemany(
        "UPDATE memories SET metadata = json_set(metadata, '$.belief', ?) WHERE id = ? AND user_id = ? "
        "AND json_extract(metadata, '$.belief') IS NULL",
        [(belief, memory_id, user_id) for memory_id, belief in beliefs.items()],
    )


def linked_pairs(store: RowStore, user_id: str, ids: Sequence[str], edge_type: str) -> list[tuple[str, str]]:
    """(src, dst) of the user's edges of one type that start or end at one of the ids."""
    found: list[tuple[str, str]] = []
    with store.read() as conn:
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            found.extend(
                (r[0], r[1])
                for r in conn.execute(
                    f"SELECT src, dst FROM edges WHERE user_id = ? AND type = ? AND (src IN ({marks}) "
                    f"OR dst IN ({marks}))",
                    [user_id, edge_type, *chunk, *chunk],
                )
            )
    return found


def summaries_of(store: RowStore, user_id: str, ids: Sequence[str]) -> list[str]:
    """Ids of the user's summaries of any of these memories (sources of SUMMARIZES edges to them)."""
    with store.read() as conn:
        return [
            r[0]
            for marks, chunk in in_chunks(ids)
            for r in conn.execute(
                "SELECT src FROM edges INDEXED BY ix_edges_user_dst "
                f"WHERE user_id = ? AND type = 'SUMMARIZES' AND dst IN ({marks})",
                [user_id, *chunk],
            )
        ]


def summarized_ids(store: RowStore, user_id: str) -> set[str]:
    """Ids of the user's memories a stored summary already covers (targets of SUMMARIZES edges)."""
    with store.read() as conn:
        return {
            r[0]
            for r in conn.execute(
                "SELECT dst FROM edges WHERE user_id = ? AND type = 'SUMMARIZES'", (user_id,)
            )
        }


def entity_keys(store: RowStore, user_id: str, ids: Sequence[str]) -> dict[str, list[str]]:
    """The canonical names of the entities each memory mentions."""
    found: dict[str, list[str]] = {memory_id: [] for memory_id in ids}
    with store.read() as conn:
        for chunk in _chunks(list(ids)):
            for memory_id, canonical in conn.execute(
                "SELECT e.src, n.canonical FROM edges e "
                "JOIN entities n ON n.id = e.dst AND n.user_id = e.user_id "
                "WHERE e.user_id = ? AND e.type = 'MENTIONS' "
                f"AND e.src IN ({','.join('?' * len(chunk))})",
                [user_id, *chunk],
            ):
                found[memory_id].append(canonical)
    return found
