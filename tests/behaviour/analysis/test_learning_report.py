"""learning_report(): the report's JSON shape with numbers that follow from the stored history,
the knowledge base's coverage, a forgetting curve that recall resets, a scripted model phrasing it,
and broken replies falling back to the data-only text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from chat_fakes import ScriptedChatModel
from manual_clock import ManualClock

from ripplemem import RippleMem, StoreOptions
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import KnowledgeBaseAccessError

GUIDE = """# Deep Learning Guide

## Neural Networks

A neural network stacks weighted sums and non-linear activation functions.

### Backpropagation

Backpropagation computes the gradient of the loss for every weight with the chain rule, from the output layer
back to the input.

## Transformer Architecture

The Transformer replaces recurrence with stacked encoder and decoder blocks.

### Encoder

Each encoder block has a feed-forward layer, residual connections and layer normalisation.

## Attention Mechanism

### Self-Attention

Self-attention computes queries, keys and values from one sequence and mixes the values by softmax weights.

### Multi-Head Attention

Multi-head attention runs several attention heads in parallel and concatenates their outputs.
"""
START = datetime(2024, 1, 10, 9, 0, tzinfo=timezone.utc)
# (minutes after the session start, text, activity)
SESSION_1 = [
    (0, "How does Backpropagation compute the gradient of every weight?", "question"),
    (20, "Note: Backpropagation applies the chain rule from the output layer back to the input.", "note"),
    (45, "Note: Neural Networks stack weighted sums and activation functions.", "note"),
]
SESSION_2 = [
    (0, "What does an Encoder block of the Transformer contain?", "question"),
    (30, "Does Backpropagation run through the Transformer layers as well?", "question"),
]
SESSION_2_DAY = 3
REPORT_DAY = 7
KEYS = {
    "report_id",
    "generated_at",
    "summary",
    "learning_analysis",
    "knowledge_gaps",
    "review_suggestions",
    "next_steps",
    "overview",
    "basis",
    "phrasing",
}


def _learn(mem: RippleMem, clock: ManualClock, tmp_path: Path) -> None:
    guide = tmp_path / "guide.md"
    guide.write_text(GUIDE, encoding="utf-8")
    mem.ingest(guide, "deep-learning")
    for day, session, items in ((0, "s1", SESSION_1), (SESSION_2_DAY, "s2", SESSION_2)):
        for minutes, text, activity in items:
            mem.add(
                text,
                session_id=session,
                metadata={"activity": activity},
                event_time=START + timedelta(days=day, minutes=minutes),
            )
    clock.now = START + timedelta(days=REPORT_DAY)


@pytest.fixture
def learner(tmp_path: Path, embedder: Embedder) -> Iterator[tuple[RippleMem, ManualClock]]:
    clock = ManualClock(START)
    mem = RippleMem(
        path=tmp_path / "store",
        user_id="lin",
        embedder=embedder,
        store=StoreOptions(vector_index="numpy"),
        clock=clock,
    )
    _learn(mem, clock, tmp_path)
    yield mem, clock
    mem.close()


def test_the_report_has_the_seed_shape_and_numbers_from_the_data(
    learner: tuple[RippleMem, ManualClock],
) -> None:
    mem, _ = learner
    report = mem.analysis.learning_report()
    assert set(report) == KEYS
    assert report["report_id"] == "report_20240117_lin" and report["generated_at"] == "2024-01-17T09:00:00Z"

    items = SESSION_1 + SESSION_2
    minutes = SESSION_1[-1][0] + SESSION_2[-1][0]  # each session runs from its first to its last memory
    assert report["summary"] == {
        "total_study_time": f"{minutes / 60:.1f} hours",
        "documents_studied": 1,
        "questions_asked": sum(a == "question" for *_, a in items),
        "notes_created": sum(a == "note" for *_, a in items),
    }

    analysis = report["learning_analysis"]
    assert analysis["strengths"] == ["Backpropagation"]  # the one concept of three or more memories
    assert "Encoder" in analysis["weaknesses"]  # asked about, never noted
    graph = analysis["knowledge_graph"]
    assert graph["nodes"] == mem.analysis.graph_quality().entities
    assert graph["central_concepts"][0] in {"Backpropagation", "Transformer"}

    gaps = {gap["topic"]: gap for gap in report["knowledge_gaps"]}
    attention = gaps["Attention Mechanism"]
    assert attention["priority"] == "high" and attention["reason"].startswith("never")
    assert attention["recommendation"] == "Study: Self-Attention, Multi-Head Attention"
    untouched = {gap["topic"] for gap in report["knowledge_gaps"] if gap["reason"].startswith("never")}
    assert untouched == {"Attention Mechanism"}
    assert report["basis"]["coverage"] == "knowledge base 'deep-learning'"
    assert (report["basis"]["topics"], report["basis"]["topics_covered"]) == (3, 2)

    reviews = {r["topic"]: r for r in report["review_suggestions"]}
    assert reviews["Encoder"]["reason"] == f"learned {REPORT_DAY - SESSION_2_DAY} days ago, not reviewed"
    assert all(0 <= r["retention"] < 0.8 for r in reviews.values())
    assert report["next_steps"][0] == "Study: Self-Attention, Multi-Head Attention"
    assert any(step.startswith("Review ") for step in report["next_steps"])
    assert "asked 3 questions and wrote 2 notes" in report["overview"]
    assert report["phrasing"] == {"by": "data"}
    json.dumps(report)


def test_recalling_a_concept_resets_its_forgetting_curve(learner: tuple[RippleMem, ManualClock]) -> None:
    mem, _ = learner
    before = {r["topic"]: r["retention"] for r in mem.analysis.learning_report()["review_suggestions"]}
    assert "Neural Networks" in before
    for _ in range(2):
        mem.recall("What do Neural Networks stack?", 1)
    after = {r["topic"]: r["retention"] for r in mem.analysis.learning_report()["review_suggestions"]}
    assert "Neural Networks" not in after  # just reviewed: retention back near 1


def test_recorded_minutes_are_the_study_time(tmp_path: Path, embedder: Embedder) -> None:
    with RippleMem(
        path=tmp_path / "s", user_id="kim", embedder=embedder, store=StoreOptions(vector_index="numpy")
    ) as mem:
        mem.add("Read the chapter on Photosynthesis.", metadata={"activity": "study", "minutes": 50})
        mem.add(
            "Note: Photosynthesis turns light into chemical energy.",
            type="semantic",
            metadata={"minutes": 25},
        )
        report = mem.analysis.learning_report()
    assert report["summary"]["total_study_time"] == "1.2 hours"  # 75 minutes
    assert report["summary"]["notes_created"] == 1 and report["summary"]["questions_asked"] == 0
    assert report["basis"]["study_time"] == "the minutes recorded with study memories"
    assert report["basis"]["coverage"].startswith("the user's own document memories")


def test_a_scripted_model_phrases_the_overview_and_next_steps(learner: tuple[RippleMem, ManualClock]) -> None:
    mem, _ = learner
    reply = json.dumps(
        {
            "overview": "You asked 3 questions and wrote 2 notes; Backpropagation is your strongest topic, "
            "but the Attention Mechanism section is still untouched.",
            "next_steps": [
                "Work through Self-Attention and Multi-Head Attention.",
                "Write a note on what an Encoder block contains.",
                "Review Neural Networks before moving on.",
            ],
        }
    )
    model = ScriptedChatModel(replies=[f"```json\n{reply}\n```"])
    report = mem.analysis.learning_report(llm=model)
    assert report["phrasing"] == {"by": "llm"}
    assert report["overview"].startswith("You asked 3 questions")
    assert report["next_steps"][0] == "Work through Self-Attention and Multi-Head Attention."
    assert report["summary"]["questions_asked"] == 3  # the numbers stay the data's
    shown = model.seen[0][1].content
    assert '"Attention Mechanism"' in shown and '"questions_asked": 3' in shown


def test_broken_replies_fall_back_to_the_data_only_text(learner: tuple[RippleMem, ManualClock]) -> None:
    mem, _ = learner
    data_only = mem.analysis.learning_report()
    invented = json.dumps({"overview": "You studied for 12 hours this week.", "next_steps": ["Keep going."]})
    model = ScriptedChatModel(replies=["Sure! Here is your report: you are doing great.", invented])
    report = mem.analysis.learning_report(llm=model)
    assert report["phrasing"]["by"] == "data"
    assert "numbers the data does not hold: 12" in report["phrasing"]["error"]
    assert report["overview"] == data_only["overview"] and report["next_steps"] == data_only["next_steps"]
    assert len(model.seen) == 2 and "not usable: the reply holds no JSON object" in model.seen[1][-1].content

    failing = ScriptedChatModel(replies=[TimeoutError("Request timed out")] * 2)
    assert "timed out" in mem.analysis.learning_report(llm=failing)["phrasing"]["error"]


def test_users_are_apart_and_unshared_bases_are_refused(learner: tuple[RippleMem, ManualClock]) -> None:
    mem, _ = learner
    bob = mem.scope("bob")
    report = bob.analysis.learning_report()
    assert report["summary"] == {
        "total_study_time": "0.0 hours",
        "documents_studied": 0,
        "questions_asked": 0,
        "notes_created": 0,
    }
    assert report["learning_analysis"]["knowledge_graph"]["nodes"] == 0 and report["knowledge_gaps"] == []
    with pytest.raises(KnowledgeBaseAccessError, match="deep-learning"):
        bob.analysis.learning_report(knowledge_base="deep-learning")
    mem.kb.grant("deep-learning", "bob")
    gaps = bob.analysis.learning_report(knowledge_base="deep-learning")["knowledge_gaps"]
    assert {g["topic"] for g in gaps} == {
        "Neural Networks",
        "Transformer Architecture",
        "Attention Mechanism",
    }
    assert all(g["priority"] == "medium" for g in gaps)  # bob has not started the guide
