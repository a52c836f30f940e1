"""Scoping: a handle never sees or touches memories of another user."""

from __future__ import annotations

import pytest

from ripplemem import MemoryNotFoundError, RippleMem
from ripplemem.errors import InvalidInputError


def test_users_never_see_each_other(mem: RippleMem) -> None:
    secret = mem.add("Alice's diagnosis: mild asthma", type="semantic", session_id="s1")
    bob = mem.scope(user_id="bob", session_id="s9")
    bob.add("Bob likes jazz")
    for mode in ("hybrid", "dense", "keyword"):
        assert [h.memory.content for h in bob.recall("asthma diagnosis", mode=mode).hits] == (
            [] if mode == "keyword" else ["Bob likes jazz"]
        )
    assert bob.get(secret.id) is None
    assert bob.delete(secret.id) is False
    with pytest.raises(MemoryNotFoundError):
        bob.update(secret.id, content="overwritten by bob")
    assert [m.content for m in bob.list()] == ["Bob likes jazz"]
    assert bob.stats()["total"] == 1 and bob.stats()["vectors"] == 1
    assert mem.get(secret.id).content == "Alice's diagnosis: mild asthma"  # type: ignore[union-attr]
    assert mem.stats()["total"] == 1


def test_scope_session_is_default_for_writes_not_a_recall_limit(mem: RippleMem) -> None:
    s1 = mem.scope(session_id="s1")
    written = s1.add("Planted tomatoes on the balcony")
    assert written.session_id == "s1"
    other = mem.scope(session_id="s2")
    assert other.recall("tomatoes", k=1).hits[0].memory.id == written.id
    assert other.recall("tomatoes", session_id="s2").hits == []


def test_agents_partition_a_users_memories(mem: RippleMem) -> None:
    coach = mem.scope(agent_id="coach")
    chef = mem.scope(agent_id="chef")
    coach.add("Alice trains for a half marathon")
    chef.add("Alice is allergic to peanuts")
    assert [h.memory.content for h in chef.recall("marathon training allergy").hits] == [
        "Alice is allergic to peanuts"
    ]
    assert {h.memory.content for h in mem.recall("marathon training allergy").hits} == {
        "Alice trains for a half marathon",
        "Alice is allergic to peanuts",
    }


def test_hostile_ids_are_plain_data(mem: RippleMem) -> None:
    hostile = ("../../etc/passwd", "x' OR '1'='1", "MATCH (n) DETACH DELETE n", '"; DROP TABLE memories; --')
    for user in hostile:
        handle = mem.scope(user_id=user)
        handle.add(f"memory of {user}")
        assert [m.content for m in handle.list()] == [f"memory of {user}"]
        assert [h.memory.content for h in handle.recall("memory").hits] == [f"memory of {user}"]
    assert mem.list() == []


def test_an_empty_user_id_for_another_handle_is_refused_not_read_as_the_same_user(
    memory_only: RippleMem,
) -> None:
    with pytest.raises(InvalidInputError, match="user_id"):
        memory_only.scope("")
