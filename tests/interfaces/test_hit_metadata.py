"""The public metadata of a recalled memory (ripplemem.hit_metadata) and filters on its keys
(ripplemem.interfaces.metadata_filters), on a real store: the shape every adapter and the MCP server share."""

from __future__ import annotations

from pathlib import Path

import pytest

from ripplemem import InvalidInputError, RippleMem
from ripplemem.interfaces.hit_metadata import RIPPLEMEM_KEYS, hit_metadata, iso_time, memory_metadata
from ripplemem.interfaces.metadata_filters import Condition, recall_options


def recalled(memory: RippleMem, query: str) -> dict[str, object]:
    """The public metadata of the best hit for a query."""
    return hit_metadata(memory.recall(query, k=1, record_access=False).hits[0])


def test_ripplemem_keys_come_first_in_a_fixed_order_then_the_callers_keys_flat(
    memory_only: RippleMem,
) -> None:
    memory_only.add(
        "Alice started reading The Three-Body Problem",
        session_id="s1",
        importance=0.6,
        event_time="2024-03-01T09:30:00+02:00",
        metadata={"turn": "D1:3", "mood": "curious"},
    )
    meta = recalled(memory_only, "which book is Alice reading?")
    assert list(meta)[: len(RIPPLEMEM_KEYS)] == list(RIPPLEMEM_KEYS)
    assert {key: meta[key] for key in ("turn", "mood")} == {"turn": "D1:3", "mood": "curious"}
    assert "memory_metadata" not in meta and "user_id" not in meta
    assert meta["session_id"] == "s1" and meta["importance"] == 0.6 and meta["source"] == "ripplemem"
    assert isinstance(meta["score"], float) and "matched by" in str(meta["why"])


def test_time_is_the_event_time_in_utc_else_the_stored_time_and_says_which(memory_only: RippleMem) -> None:
    memory_only.add("Alice ran a half marathon in Porto", event_time="2024-03-01T09:30:00+02:00")
    memory_only.add("Alice prefers oat milk in her coffee", type="semantic")
    happened = recalled(memory_only, "half marathon Porto")
    assert happened["time"] == happened["event_time"] == "2024-03-01T07:30:00+00:00"
    assert happened["time_basis"] == "event_time"
    fact = recalled(memory_only, "oat milk coffee")
    assert fact["event_time"] is None and fact["time_basis"] == "created_at"
    assert fact["time"] == fact["created_at"] == iso_time(memory_only.get(str(fact["memory_id"])).created_at)
    assert str(fact["time"]).endswith("+00:00")


def test_a_caller_key_named_like_a_ripplemem_key_is_kept_as_metadata_key(memory_only: RippleMem) -> None:
    memory_only.add(
        "Invoice 1182 from the plumber is due in May",
        type="semantic",
        metadata={"type": "invoice", "score": 7, "metadata_type": "mine", "amount": 180},
    )
    memory_only.add("Invoice 1183 from the electrician", type="semantic", metadata={"type": "invoice"})
    assert recalled(memory_only, "electrician invoice")["metadata_type"] == "invoice"
    meta = recalled(memory_only, "plumber invoice")
    assert meta["type"] == "semantic" and meta["metadata_metadata_type"] == "invoice"
    assert meta["metadata_type"] == "mine"  # a caller's own key of that name keeps it
    assert meta["metadata_score"] == 7 and isinstance(meta["score"], float) and meta["amount"] == 180


def test_source_is_the_origin(memory_only: RippleMem) -> None:
    memory_only.add("The boiler was serviced in October", source="maintenance-log.csv")
    memory_only.add("The roof was repaired after the storm", metadata={"source": "insurance letter"})
    assert recalled(memory_only, "boiler serviced")["source"] == "maintenance-log.csv"
    assert recalled(memory_only, "roof repaired storm")["source"] == "insurance letter"


def test_a_knowledge_base_chunk_shows_its_file_and_base_not_internal_ids(
    memory_only: RippleMem, tmp_path: Path
) -> None:
    handbook = tmp_path / "handbook"
    handbook.mkdir()
    (handbook / "leave.md").write_text("# Leave\n\nEveryone gets 25 days of paid leave a year.\n")
    memory_only.ingest(handbook, knowledge_base="team")
    meta = recalled(memory_only, "how many days of paid leave?")
    assert meta["source"] == str((handbook / "leave.md").resolve())
    assert meta["knowledge_base"] == "team" and meta["file_name"] == "leave.md"
    assert meta["session_id"] is None  # a chunk's per-file session is an internal link id
    assert "kb:team" not in map(str, meta.values()) and "user_id" not in meta
    assert "metadata_source" not in meta and "metadata_knowledge_base" not in meta  # said once


def test_memory_metadata_is_hit_metadata_without_score_relevance_and_why(memory_only: RippleMem) -> None:
    stored = memory_only.add("Alice keeps her passport in the blue drawer", metadata={"room": "study"})
    hit = memory_only.recall("passport", k=1, record_access=False).hits[0]
    plain = memory_metadata(stored)
    public = hit_metadata(hit)
    assert {key: value for key, value in public.items() if key not in ("score", "relevance", "why")} == plain
    assert public["relevance"] == hit.relevance == 1.0  # the one query word is in the memory


def test_filters_on_public_keys_become_recall_options() -> None:
    options = recall_options(
        [
            Condition("type", "in", ["semantic", "episodic"]),
            Condition("time", ">=", "2024-01-01"),
            Condition("time", "<", "2025-01-01"),
            Condition("importance", ">=", 0.5),
            Condition("session_id", "==", "s1"),
            Condition("knowledge_base", "==", "team"),
            Condition("metadata_type", "==", "x"),
            Condition("room", "==", "study"),
        ]
    )
    assert options == {
        "types": ["semantic", "episodic"],
        "since": "2024-01-01",
        "until": "2025-01-01",
        "min_importance": 0.5,
        "session_id": "s1",
        "metadata": {"knowledge_base": "team", "type": "x", "room": "study"},
    }


@pytest.mark.parametrize(
    ("condition", "named"),
    [
        (Condition("room", "!=", "study"), r"operator '!=' is not supported on metadata key 'room'"),
        (Condition("importance", ">", 0.5), r"operator '>' is not supported on 'importance'"),
        (Condition("time", "<=", "2024-01-01"), r"operator '<=' is not supported on 'time'"),
        (Condition("source", "==", "a.md"), r"cannot filter on 'source'.*file_name"),
        (Condition("score", ">=", 0.5), r"cannot filter on 'score'"),
        (Condition("type", "in", "semantic"), r"must be a list"),
    ],
)
def test_what_recall_cannot_filter_is_refused_by_name(condition: Condition, named: str) -> None:
    with pytest.raises((InvalidInputError, TypeError), match=named):
        recall_options([condition])


def test_one_option_given_twice_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="'type' given twice"):
        recall_options([Condition("type", "==", "semantic"), Condition("type", "==", "episodic")])
    with pytest.raises(InvalidInputError, match="'room' given twice with different values"):
        recall_options([Condition("room", "==", "study"), Condition("room", "==", "hall")])
