"""RippleMemStore: LangGraph store semantics (against InMemoryStore), scopes, ripple search, agents."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from langchain_ripplemem import RippleMemStore
from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError, InvalidTypeError

OPS = [
    PutOp(("alice", "memories"), "food", {"content": "Alice loves sushi", "n": 1}),
    PutOp(("alice", "memories"), "drink", {"content": "Alice drinks green tea", "n": 2}),
    PutOp(("alice", "profile"), "name", {"name": "Alice Smith", "age": 31}),
    PutOp(("bob", "memories"), "food", {"content": "Bob hates sushi", "n": 1}),
    PutOp(("bob", "memories", "work"), "job", {"content": "Bob is a nurse", "n": 5}),
    PutOp(("alice", "memories"), "drink", {"content": "Alice drinks black coffee", "n": 3}),
    PutOp(("alice", "memories"), "food", None),
    PutOp(("alice", "memories"), "never-stored", None),
]
READS = [
    GetOp(("alice", "memories"), "drink"),
    GetOp(("alice", "memories"), "food"),
    GetOp(("bob", "memories"), "drink"),
    SearchOp(("alice",)),
    SearchOp(("bob",), filter={"n": 5}),
    SearchOp(("bob", "memories"), filter={"content": {"$ne": "Bob hates sushi"}}),
    SearchOp(("alice", "memories"), limit=1, offset=5),
    ListNamespacesOp(),
    ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("bob",)),)),
    ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("memories",)),)),
    ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("*", "memories")),), max_depth=2),
    ListNamespacesOp(limit=2, offset=1),
]


def comparable(result: Any) -> Any:
    """What both stores must agree on: namespaces, keys and values (not timestamps, not order of hits)."""
    if result is None:
        return None
    if isinstance(result, list):
        if result and isinstance(result[0], tuple):
            return result
        return sorted((item.namespace, item.key, repr(item.value)) for item in result)
    return (result.namespace, result.key, result.value)


def test_same_answers_as_langgraphs_in_memory_store(alice: RippleMem) -> None:
    ours, reference = RippleMemStore(memory=alice), InMemoryStore()
    assert ours.batch(OPS) == reference.batch(OPS)
    for op in READS:
        assert comparable(ours.batch([op])[0]) == comparable(reference.batch([op])[0]), op


async def test_async_batch(alice: RippleMem) -> None:
    store = RippleMemStore(memory=alice)
    await store.abatch(OPS)
    drink, missing, listed = await store.abatch(
        [GetOp(("alice", "memories"), "drink"), GetOp(("alice", "memories"), "food"), ListNamespacesOp()]
    )
    assert drink.value == {"content": "Alice drinks black coffee", "n": 3}
    assert drink.updated_at > drink.created_at
    assert missing is None
    assert ("bob", "memories", "work") in listed
    found = await store.asearch(("alice", "memories"), query="what does she drink")
    assert [item.key for item in found] == ["drink"]


def test_items_are_memories_of_the_namespace_user(alice: RippleMem) -> None:
    store = RippleMemStore(memory=alice)
    store.put(("bob", "memories"), "pet", {"content": "Bob has a parrot named Kiwi", "since": 2019})
    bob = alice.scope("bob")
    [memory] = bob.list()
    assert (memory.content, memory.type) == ("Bob has a parrot named Kiwi", "semantic")
    assert bob.recall("bird", k=1).hits[0].memory.id == memory.id
    assert alice.list() == []


def test_search_with_a_query_is_a_ripple_recall(alice: RippleMem) -> None:
    store = RippleMemStore(memory=alice)
    for key, text in [
        ("a", "Calvin bought a Ferrari 488 in March"),
        ("b", "The weather in Oslo was cold"),
        ("c", "Calvin's Ferrari 488 was repainted red in Maranello"),
        ("d", "Alice plays chess"),
    ]:
        store.put(("alice", "notes"), key, {"content": text})
    query = "What colour is Calvin's car?"
    expected = alice.recall(query, k=2, mode="ripple", record_access=False)
    found = store.search(("alice",), query=query, limit=2)
    assert [item.key for item in found] == [hit.memory.metadata["langgraph_key"] for hit in expected.hits]
    assert {item.key for item in found} == {"a", "c"}
    assert [item.score for item in found] == pytest.approx([hit.score for hit in expected.hits])
    no_chess = store.search(
        ("alice",), query="Alice plays chess", filter={"content": {"$ne": "Alice plays chess"}}
    )
    assert "d" not in [item.key for item in no_chess] and len(no_chess) == 3
    assert store.search(("alice", "other"), query="Calvin") == []


def test_memories_written_another_way_are_items_too(alice: RippleMem) -> None:
    store = RippleMemStore(memory=alice)
    memory = alice.add("Alice's passport expires in May 2027.", importance=0.9)
    item = store.get(("alice",), memory.id)
    assert item.value["content"] == "Alice's passport expires in May 2027."
    assert (item.value["type"], item.value["importance"]) == ("episodic", 0.9)
    assert [i.key for i in store.search(("alice",), query="travel documents", limit=1)] == [memory.id]
    assert store.get(("alice", "elsewhere"), memory.id) is None
    store.delete(("alice",), memory.id)
    assert alice.get(memory.id) is None


def test_index_fields_choose_the_recalled_text(alice: RippleMem) -> None:
    store = RippleMemStore(memory=alice, index=["summary"])
    store.put(("alice",), "trip", {"summary": "Trip to Kyoto in April", "cost": 1200})
    store.put(("alice",), "raw", {"cost": 80, "kind": "book"})
    store.put(("alice",), "nested", {"detail": {"text": "Allergic to shellfish"}}, index=["detail.text"])
    contents = {m.metadata["langgraph_key"]: m.content for m in alice.list()}
    assert contents == {
        "trip": "Trip to Kyoto in April",
        "raw": "cost: 80\nkind: book",
        "nested": "Allergic to shellfish",
    }


def test_layouts_map_namespace_parts_onto_the_scope(alice: RippleMem) -> None:
    store = RippleMemStore(memory=alice, layout=("memories", "{user_id}", "{session_id}"))
    store.put(("memories", "dana", "s1"), "k1", {"content": "Dana moved to Lisbon"})
    store.put(("memories", "dana", "s2"), "k2", {"content": "Dana adopted a dog"})
    dana = alice.scope("dana")
    assert sorted((m.session_id, m.content) for m in dana.list()) == [
        ("s1", "Dana moved to Lisbon"),
        ("s2", "Dana adopted a dog"),
    ]
    assert [i.key for i in store.search(("memories", "dana"))] == ["k2", "k1"]
    assert [i.key for i in store.search(("memories", "dana", "s1"), query="pets")] == ["k1"]
    with pytest.raises(InvalidInputError, match=r"namespace \('notes', 'dana', 's1'\) has 'notes' where"):
        store.put(("notes", "dana", "s1"), "k", {"content": "x"})
    with pytest.raises(InvalidInputError, match="too short to name the user"):
        store.search(("memories",), query="Lisbon")


def test_bad_arguments_are_named(alice: RippleMem) -> None:
    with pytest.raises(InvalidTypeError, match="memory must be a RippleMem handle"):
        RippleMemStore(memory="alice")
    with pytest.raises(InvalidInputError, match="must hold '{user_id}' once"):
        RippleMemStore(memory=alice, layout=("{agent_id}",))
    with pytest.raises(InvalidInputError, match="type must be one of"):
        RippleMemStore(memory=alice, memory_type="fact")
    store = RippleMemStore(memory=alice)
    with pytest.raises(InvalidTypeError, match="value must be a dict"):
        store.batch([PutOp(("alice",), "k", "just text")])


def test_a_string_where_a_namespace_tuple_is_expected_is_refused(alice: RippleMem) -> None:
    store = RippleMemStore(memory=alice)
    store.put(("alice", "prefs"), "theme", {"content": "Prefers dark mode"})
    assert store.list_namespaces(prefix=("alice",)) == [("alice", "prefs")]
    # prefix="alice" once matched letter by letter and listed nothing.
    with pytest.raises(InvalidTypeError, match="prefix must be a tuple of namespace labels.*'alice'"):
        store.list_namespaces(prefix="alice")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="suffix must be a tuple"):
        store.list_namespaces(suffix="prefs")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="namespace_prefix must be a tuple"):
        store.search("alice")  # type: ignore[arg-type]


def test_items_survive_a_restart(store_dir: Path, embedder: Embedder) -> None:
    with RippleMem(path=store_dir, user_id="alice", embedder=embedder) as first:
        RippleMemStore(memory=first).put(("alice", "prefs"), "theme", {"content": "Prefers dark mode"})
    with RippleMem(path=store_dir, user_id="alice", embedder=embedder) as second:
        store = RippleMemStore(memory=second)
        assert store.get(("alice", "prefs"), "theme").value == {"content": "Prefers dark mode"}
        assert store.list_namespaces() == [("alice", "prefs")]


def test_agent_remembers_through_the_store(alice: RippleMem, script: Any, call: Any) -> None:
    @tool
    def save_fact(fact: str, runtime: ToolRuntime) -> str:
        """Save a fact about the user."""
        user = runtime.config["configurable"]["user_id"]
        runtime.store.put((user, "facts"), uuid.uuid4().hex, {"content": fact})
        return "saved"

    @tool
    def search_facts(query: str, runtime: ToolRuntime) -> str:
        """Search saved facts about the user."""
        user = runtime.config["configurable"]["user_id"]
        found = runtime.store.search((user, "facts"), query=query, limit=2)
        return "\n".join(item.value["content"] for item in found)

    model = script(
        call("save_fact", "c1", fact="Erin's favourite band is Radiohead"),
        AIMessage("Saved."),
        call("search_facts", "c2", query="music taste"),
        AIMessage("You like Radiohead."),
    )
    agent = create_agent(model, [save_fact, search_facts], store=RippleMemStore(memory=alice))
    erin = {"configurable": {"user_id": "erin"}}
    agent.invoke({"messages": [HumanMessage("I love Radiohead.")]}, config=erin)
    out = agent.invoke({"messages": [HumanMessage("Recommend me a concert.")]}, config=erin)
    assert out["messages"][-1].text == "You like Radiohead."
    assert model.seen[3][-1].text.splitlines()[0] == "Erin's favourite band is Radiohead"
    assert [m.content for m in alice.scope("erin").list()] == ["Erin's favourite band is Radiohead"]
