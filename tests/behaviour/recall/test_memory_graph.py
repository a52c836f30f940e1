"""The memory graph through the facade: edges built on add, kept exact under writes, walked by
ripple recall, find_connections, neighbors and communities, isolated per user."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from internals import engine_of, stored_rows
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from ripplemem import InvalidInputError, InvalidTypeError, RippleMem
from ripplemem.embedding.embedders import Embedder

FILLER = [
    "I watched Dune in the cinema with Marco.",
    "Foundation by Asimov is next on my reading list.",
    "I think science fiction books are best read slowly.",
    "My book club is reading Project Hail Mary.",
    "What I think about most at work is the quarterly report.",
    "The problem with my bike is a flat tyre.",
    "I gave up on reading Neuromancer halfway through.",
    "Marco thinks The Martian is overrated.",
    "The library near the office has a great sci-fi section.",
    "I bought a Kindle to read on the train.",
    "Anna lent me her copy of Hyperion.",
    "I fell asleep reading on the sofa again.",
    "We argued about whether Star Wars counts as science fiction.",
    "The three-body problem in physics has no general closed-form solution.",
    "My sister gave me a body lotion for my birthday.",
    "I should stop reading the news before bed.",
    "Our team started a new project on Monday.",
    "I keep a notebook of quotes from books I love.",
]
BOOK = "I started reading The Three-Body Problem by Liu Cixin."
FOLLOW_UP = "His dark forest idea keeps me up at night."


def _edges(mem: RippleMem) -> list[tuple[object, ...]]:
    return stored_rows(mem, "SELECT src, dst, type, predicate FROM edges WHERE user_id = ?", (mem.user_id,))


def test_add_builds_mentions_next_alias_and_relates_edges(mem: RippleMem) -> None:
    first = mem.add("Caroline: I met Frank Ocean at the festival!", session_id="s1")
    second = mem.add("Melanie: Wow, what did Frank say?", session_id="s1")
    third = mem.add("I finished 《三体》 last night", session_id="s2")
    fourth = mem.add("三体的结局让我很震撼", session_id="s2", relations=[("Calvin", "bought", "Ferrari 488")])
    kinds = {(src, dst, kind) for src, dst, kind, _ in _edges(mem)}
    assert (first.id, second.id, "NEXT") in kinds and (third.id, fourth.id, "NEXT") in kinds
    assert (second.id, third.id, "NEXT") not in kinds  # another session
    assert {n.node.label for n in mem.graph.neighbors("Frank Ocean")} >= {first.content, "Frank"}
    assert [n.edge_type for n in mem.graph.neighbors("frank") if n.node.label == "Frank Ocean"] == ["ALIAS"]
    # 《三体》 and 三体 are one entity, mentioned by both Chinese memories.
    assert {n.node.label for n in mem.graph.neighbors("三体") if n.edge_type == "MENTIONS"} == {
        third.content,
        fourth.content,
    }
    relates = [n for n in mem.graph.neighbors("Calvin") if n.edge_type == "RELATES"]
    assert [(n.node.label, n.predicate) for n in relates] == [("Ferrari 488", "bought")]


def test_find_connections_explains_the_path(memory_only: RippleMem) -> None:
    memory_only.add("Calvin bought a Ferrari 488 last spring.")
    memory_only.add("The Ferrari 488 broke down on the highway to Monza.")
    paths = memory_only.graph.find_connections("Calvin", "Monza", max_hops=4)
    assert paths and paths[0].hops == 4
    text = paths[0].explain()
    assert text.startswith("Calvin -MENTIONS- Calvin bought") and text.endswith("-MENTIONS- Monza")
    assert "Ferrari 488" in text
    assert memory_only.graph.find_connections("Calvin", "Monza", max_hops=3) == []
    assert memory_only.graph.find_connections("Calvin", "Atlantis") == []


def test_deletes_remove_edges_and_orphan_entities(mem: RippleMem) -> None:
    kept = mem.add("Lena adopted a cat named Miso.")
    gone = mem.add("Lena flew to Reykjavik for the aurora.")
    assert {n.node.label for n in mem.graph.neighbors("Reykjavik")} == {gone.content}
    mem.delete(gone.id)
    assert mem.graph.neighbors("Reykjavik") == []
    assert all(gone.id not in (src, dst) for src, dst, _, _ in _edges(mem))
    assert {n.node.label for n in mem.graph.neighbors("Lena")} == {kept.content}
    assert mem.graph.find_connections("Lena", "Reykjavik") == []


def test_in_memory_graph_stays_equal_to_the_stored_one(tmp_path: Path, embedder: Embedder) -> None:
    path = tmp_path / "store"
    with RippleMem(path=path, user_id="alice", embedder=embedder) as mem:
        mem.add_many([{"content": text, "session_id": "s1"} for text in FILLER[:8]])
        mem.recall("Marco and Dune")  # loads the graph; later writes update it in place
        extra = mem.add_many([{"content": text, "session_id": "s2"} for text in FILLER[8:]])
        mem.delete(extra[0].id)
        mem.update(extra[1].id, importance=0.9)
        live = engine_of(mem).graph("alice")
        expected = {node: live.neighbors(node) for node in live.nodes()}
    with RippleMem(path=path, user_id="alice", embedder=embedder) as fresh:
        loaded = engine_of(fresh).graph("alice")
        got = {node: loaded.neighbors(node) for node in loaded.nodes()}
    assert got.keys() == {node for node, nbrs in expected.items() if nbrs}
    for node, neighbours in got.items():
        assert neighbours == pytest.approx(expected[node])


def test_ripple_reaches_a_follow_up_turn_that_dense_and_keyword_miss(memory_only: RippleMem) -> None:
    memory_only.add_many([{"content": text, "session_id": f"f{i}"} for i, text in enumerate(FILLER)])
    memory_only.add_many(
        [
            {"content": text, "session_id": "s1"}
            for text in (BOOK, FOLLOW_UP, "Anyway, I need to buy groceries later.")
        ]
    )
    query = "Tell me about The Three-Body Problem"
    for mode in ("dense", "keyword", "hybrid"):
        found = [h.memory.content for h in memory_only.recall(query, k=5, mode=mode, record_access=False)]
        assert FOLLOW_UP not in found, mode
    result = memory_only.recall(query, k=5)
    assert result.mode == "ripple"
    hit = next(h for h in result.hits if h.memory.content == FOLLOW_UP)
    # It was a first-stage candidate (the store is small) that nothing matched: the graph lifted it.
    assert hit.components["first_stage"] < 0.2 and hit.components["graph"] >= 0.1
    assert "-NEXT-> this memory" in hit.why and "Three-Body Problem" in hit.why
    assert hit.path[-1] == hit.memory.id and len(hit.path) >= 2
    assert any(e.type == "NEXT" and hit.memory.id in (e.src, e.dst) for e in result.subgraph.edges)
    assert result.subgraph.nodes[hit.memory.id].kind == "memory"


def test_ripple_on_a_store_without_edges_ranks_like_hybrid(memory_only: RippleMem) -> None:
    memory_only.add_many(["green tea in the morning", "black coffee at night", "oolong tea on weekends"])
    ripple = memory_only.recall("tea", k=3, record_access=False)
    hybrid = memory_only.recall("tea", k=3, mode="hybrid", record_access=False)
    assert [h.memory.id for h in ripple] == [h.memory.id for h in hybrid]


def test_traversed_edges_are_reinforced_with_a_cap(mem: RippleMem) -> None:
    mem.add_many([{"content": text, "session_id": f"f{i}"} for i, text in enumerate(FILLER)])
    mem.add_many([{"content": text, "session_id": "s1"} for text in (BOOK, FOLLOW_UP)])

    def edge(a: str, b: str) -> tuple[object, ...]:
        return stored_rows(
            mem,
            "SELECT weight, activations FROM edges WHERE user_id = 'alice' "
            "AND ((src = ? AND dst = ?) OR (src = ? AND dst = ?))",
            (a, b, b, a),
        )[0]

    query = "Tell me about The Three-Body Problem"
    result = mem.recall(query, k=5, record_access=False)
    # Only paths to hits in the better half that the graph lifted are reinforced; the follow-up
    # ranks last, so the NEXT edge into it keeps its weight.
    lifted = [h for h in result.hits[:3] if h.components["graph"] >= 0.1 and len(h.path) > 1]
    low = next(h for h in result.hits if h.memory.content == FOLLOW_UP)
    assert lifted and low is result.hits[-1]
    book = next(h for h in result.hits if h.memory.content == BOOK)
    walked = [(a, b) for hit in lifted for a, b in zip(hit.path, hit.path[1:], strict=False)]
    assert all(edge(a, b) == (1.0, 0) for a, b in walked) and edge(book.memory.id, low.memory.id) == (1.0, 0)
    mem.recall(query, k=5)
    for a, b in walked:
        weight, activations = edge(a, b)
        assert weight == pytest.approx(1.0 + mem.settings.graph.reinforce_step) and activations == 1
    assert edge(book.memory.id, low.memory.id) == (1.0, 0)
    for _ in range(40):
        mem.recall(query, k=5)
    assert edge(*walked[0])[0] == pytest.approx(mem.settings.graph.weight_cap)


def test_communities_separate_topics(memory_only: RippleMem) -> None:
    added = memory_only.add_many(
        [
            {"content": "Jonas trains for the Berlin Marathon every morning.", "session_id": "run"},
            {"content": "The Berlin Marathon route passes the Brandenburg Gate.", "session_id": "run"},
            {"content": "Jonas bought new shoes for the Berlin Marathon.", "session_id": "run"},
            {"content": "Priya is learning the cello with Mrs Kowalski.", "session_id": "music"},
            {"content": "Mrs Kowalski says Priya should practise the cello daily.", "session_id": "music"},
        ]
    )
    groups = memory_only.graph.communities()
    # Biggest first: the marathon's three memories, then the cello lessons' two, each named by its topic.
    assert [set(group.memory_ids) for group in groups] == [
        {m.id for m in added[:3]},
        {m.id for m in added[3:]},
    ]
    assert "Berlin Marathon" in groups[0].label and "Kowalski" not in groups[0].label
    assert "Priya" in groups[1].label and "Kowalski" in groups[1].label and "Marathon" not in groups[1].label


class _ScriptedExtractor(FakeListChatModel):
    """A chat model that answers extraction prompts from a script."""


def test_llm_extraction_adds_relations_and_broken_output_still_stores(embedder: Embedder) -> None:
    good = (
        '{"entities": [{"name": "Calvin", "type": "person"}, {"name": "Ferrari 488", "type": "product"}],'
        ' "relations": [{"subject": "Calvin", "predicate": "owns", "object": "Ferrari 488"}]}'
    )
    llm = _ScriptedExtractor(responses=[good, "Sorry, I cannot help with that.", "still not JSON", "nope"])
    with RippleMem(path=None, user_id="alice", embedder=embedder, llm=llm) as mem:
        mem.add("calvin finally got the car he wanted")
        relates = [
            (n.node.label, n.predicate) for n in mem.graph.neighbors("Calvin") if n.edge_type == "RELATES"
        ]
        assert relates == [("Ferrari 488", "owns")]
        kept = mem.add("an unremarkable sentence")
        assert mem.get(kept.id) is not None


def test_graph_calls_reject_bad_input_and_keep_users_apart(memory_only: RippleMem) -> None:
    memory_only.add("Calvin bought a Ferrari 488.")
    with pytest.raises(InvalidTypeError, match="source"):
        memory_only.graph.find_connections(42, "Ferrari 488")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="max_hops"):
        memory_only.graph.find_connections("Calvin", "Ferrari 488", max_hops=0)
    bad: list[Any] = [("Calvin", "", "Ferrari")]
    with pytest.raises(InvalidInputError, match="predicate"):
        memory_only.add("Calvin again", relations=bad)
    assert [m.content for m in memory_only.list()] == ["Calvin bought a Ferrari 488."]
    bob = memory_only.scope(user_id="bob")
    assert bob.graph.neighbors("Calvin") == [] and bob.graph.find_connections("Calvin", "Ferrari 488") == []
    assert bob.graph.communities() == [] and bob.recall("Calvin Ferrari").hits == []


def test_context_groups_linked_memories_under_the_best_hit(memory_only: RippleMem) -> None:
    memory_only.add_many([{"content": text, "session_id": f"f{i}"} for i, text in enumerate(FILLER)])
    start = datetime.now(timezone.utc) - timedelta(minutes=10)
    memory_only.add_many(
        [
            {"content": text, "session_id": "s1", "event_time": start + timedelta(minutes=i)}
            for i, text in enumerate((BOOK, FOLLOW_UP))
        ]
    )
    result = memory_only.recall("Tell me about The Three-Body Problem", k=5)
    lines = result.context(token_budget=400).splitlines()
    book = next(i for i, line in enumerate(lines) if BOOK in line)
    assert lines[book].startswith(f"- [{start:%Y-%m-%d %H:%M}")
    assert lines[book + 1].startswith(f"  - [{start + timedelta(minutes=1):%Y-%m-%d %H:%M}")
    assert FOLLOW_UP in lines[book + 1]
    assert len(lines) == 6  # the header and all five hits, none repeated


def test_alias_edges_join_names_that_embed_alike(mem: RippleMem) -> None:
    mem.add("We flew to New York City for the marathon.")
    mem.add("NYC was freezing in November.")
    mem.add("Rome was sunny all week.")
    aliases = [n.node.label for n in mem.graph.neighbors("NYC") if n.edge_type == "ALIAS"]
    assert aliases == ["New York City"]
    assert [n for n in mem.graph.neighbors("Rome") if n.edge_type == "ALIAS"] == []
    path = mem.graph.find_connections("NYC", "New York City")[0]
    assert path.hops == 1 and path.steps[0].edge_type == "ALIAS"
