"""Updates supersede the old value (SUPERSEDES, valid_to); contradictions keep both (CONTRADICTS,
belief state); an LLM judge decides what the rules leave open
(docs/design-notes.md#duplicates-and-conflicts)."""

from __future__ import annotations

import ast
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from chat_fakes import ByPromptChatModel
from manual_clock import ManualClock

from ripplemem import RippleMem
from ripplemem.config import Settings
from ripplemem.embedding.embedders import Embedder
from ripplemem.engine.write_plans import may_state_attribute
from ripplemem.rules.lifecycle.settings import LifecycleSettings
from ripplemem.rules.lifecycle.statements import parse_statement


def _edges(mem: RippleMem, memory_id: str, kind: str) -> set[tuple[str, str]]:
    return {(n.node.id, n.edge_type) for n in mem.graph.neighbors(memory_id) if n.edge_type == kind}


def test_a_dose_changed_twice_recalls_the_latest_first(tmp_path: Path, embedder: Embedder) -> None:
    clock = ManualClock()
    with RippleMem(path=tmp_path, user_id="alice", embedder=embedder, clock=clock) as mem:
        mem.add("I walk the dog every evening")
        ten = mem.add("I take 10 mg of lisinopril")
        clock.now += timedelta(days=30)
        twenty = mem.add("my lisinopril dose is now 20 mg")
        changed = clock.now
        clock.now += timedelta(days=30)
        forty = mem.add("my lisinopril dose is now 40 mg")
        hits = mem.recall("what dose of lisinopril do I take?", k=3).hits
        assert hits[0].memory.id == forty.id
        assert {h.memory.id for h in hits}.isdisjoint({ten.id, twenty.id})
        old, middle = mem.get(ten.id), mem.get(twenty.id)
        assert (old.status, old.valid_to) == ("superseded", changed)
        assert (middle.status, middle.valid_to) == ("superseded", clock.now)
        assert mem.get(forty.id).status == "active" and mem.get(forty.id).valid_to is None
        assert mem.stats()["by_status"] == {"active": 2, "superseded": 2}
        assert mem.stats()["vectors"] == 2  # superseded values leave the vector index


def test_chinese_move_supersedes_the_old_city(memory_only: RippleMem) -> None:
    beijing = memory_only.add("我住在北京")
    shanghai = memory_only.add("我搬到上海了")
    assert memory_only.get(beijing.id).status == "superseded"
    assert memory_only.recall("我住在哪里？", k=2).hits[0].memory.id == shanghai.id
    events = memory_only.history(shanghai.id)
    assert [(e.memory_id, e.event) for e in events] == [
        (beijing.id, "added"),
        (shanghai.id, "added"),
        (beijing.id, "superseded"),
        (shanghai.id, "supersedes"),
    ]
    assert "搬到" in events[2].cause and events[2].detail["by"] == shanghai.id


def test_an_older_statement_added_late_does_not_replace_the_current_one(memory_only: RippleMem) -> None:
    now = memory_only.add("I live in Berlin", event_time=datetime(2024, 6, 1, tzinfo=timezone.utc))
    before = memory_only.add("I live in Paris", event_time=datetime(2021, 1, 1, tzinfo=timezone.utc))
    assert before.status == "superseded" and memory_only.get(before.id).valid_to == now.when
    assert memory_only.get(now.id).status == "active"
    assert memory_only.recall("where do I live?", k=1).hits[0].memory.id == now.id


def test_a_contradiction_keeps_both_with_their_belief_state(mem: RippleMem) -> None:
    like = mem.add("I like apples")
    hate = mem.add("I hate apples")
    assert {mem.get(like.id).status, mem.get(hate.id).status} == {"active"}
    assert mem.get(like.id).metadata["belief"] == mem.get(hate.id).metadata["belief"] == "preference"
    assert _edges(mem, hate.id, "CONTRADICTS") == {(like.id, "CONTRADICTS")}
    assert [e.event for e in mem.history(hate.id)] == ["added", "contradicted"]
    assert {h.memory.id for h in mem.recall("do I like apples?", k=2).hits} == {like.id, hate.id}


def test_an_update_inside_one_batch(memory_only: RippleMem) -> None:
    old, new = memory_only.add_many(["My phone number is 555-0100", "My new phone number is 555-0199"])
    assert (old.status, new.status) == ("superseded", "active")
    assert memory_only.get(old.id).status == "superseded" and memory_only.stats()["total"] == 1


def test_conflict_detection_can_be_switched_off(embedder: Embedder) -> None:
    settings = Settings(lifecycle=LifecycleSettings(detect_conflicts=False))
    with RippleMem(path=None, user_id="alice", embedder=embedder, settings=settings) as mem:
        old = mem.add("I live in Berlin")
        mem.add("I moved to Paris")
        assert mem.get(old.id).status == "active" and mem.stats()["total"] == 2


def test_updates_never_cross_users(memory_only: RippleMem) -> None:
    alice = memory_only.add("I take 10 mg of lisinopril")
    memory_only.scope("bob").add("my lisinopril dose is now 20 mg")
    assert memory_only.get(alice.id).status == "active"


def _extraction_reply() -> str:
    return json.dumps({"entities": [], "relations": []})


def test_the_llm_judge_settles_what_the_rules_cannot(embedder: Embedder) -> None:
    verdict = (
        '```json\n{"verdict": "update", "slot": "favourite colour", "subject": "Maya", '
        '"current": "new", "reason": "Maya\'s favourite colour changed from blue to green"}\n```'
    )
    llm = ByPromptChatModel(
        script={"knowledge graph": [_extraction_reply()] * 2, "compare two statements": [verdict]}
    )
    with RippleMem(path=None, user_id="alice", embedder=embedder, llm=llm) as mem:
        blue = mem.add("Maya's favourite colour is blue")
        green = mem.add("Maya's favourite colour is green")
        assert mem.get(blue.id).status == "superseded" and mem.get(green.id).status == "active"
        superseded = mem.history(blue.id)[-2]
        assert superseded.event == "superseded" and superseded.detail["judged_by"] == "llm"
        assert "blue to green" in superseded.cause
    judged = [m for m in llm.seen if "compare two statements" in m[0].content]
    assert len(judged) == 1 and "Maya's favourite colour is blue" in judged[0][1].content


def test_a_broken_judge_reply_falls_back_to_the_rules(embedder: Embedder) -> None:
    junk = ["Sure! These two look like an update to me.", '{"verdict": "maybe", "current": "new"']
    llm = ByPromptChatModel(
        script={
            "knowledge graph": [_extraction_reply()] * 4,
            "compare two statements": junk + ['{"verdict": "sideways"}', "no idea"],
        }
    )
    with RippleMem(path=None, user_id="alice", embedder=embedder, llm=llm) as mem:
        downtown = mem.add("The kids' swimming lessons are at the downtown pool")
        centre = mem.add("The kids' swimming lessons are at the community centre pool")
        assert mem.get(downtown.id).status == "active" and mem.get(centre.id).status == "active"
        assert [e.event for e in mem.history(centre.id)] == ["added"]
        like = mem.add("I like apples")
        hate = mem.add("I hate apples")  # the rules' contradiction stands after two unusable replies
        assert mem.get(like.id).status == "active"
        assert [e.event for e in mem.history(hate.id)] == ["added", "contradicted"]
        assert "rules" in mem.history(hate.id)[1].cause
    assert sum("compare two statements" in m[0].content for m in llm.seen) == 4


def test_every_text_the_rules_read_an_attribute_from_passes_the_cheap_gate() -> None:
    # The write path parses only texts may_state_attribute lets through; it must miss none.
    tests = Path(__file__).resolve().parents[2]
    texts = {
        node.value
        for name in (
            "unit/rules/test_conflicts.py",
            "unit/rules/test_lifecycle_rules.py",
            "behaviour/memory/test_supersede.py",
        )
        for node in ast.walk(ast.parse((tests / name).read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 300
    }
    read = [text for text in texts if parse_statement(text).slot is not None]
    assert len(read) > 50
    assert [text for text in read if not may_state_attribute(text)] == []
    assert not may_state_attribute("We argued with Bob about who pays for winter tyres last weekend.")
