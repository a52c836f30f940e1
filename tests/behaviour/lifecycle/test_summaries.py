"""consolidate() with a chat model: clusters of related episodic memories become one semantic
summary linked to its sources by SUMMARIZES edges (many runs -> a running habit)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest
from chat_fakes import ByPromptChatModel, Reply, timeout

from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.llm.chat import LLMRequiredError

RUNS = [
    "Went for a 5 km run in Riverside Park before work",
    "Ran 8 km in Riverside Park this evening",
    "Morning jog around Riverside Park, felt great",
    "Did interval runs at Riverside Park with Tom",
]
OTHERS = [
    "Booked a dentist appointment for next Thursday",
    "Tried a new ramen place downtown",
    "Called Mum about the holiday plans",
    "Paid the electricity bill",
    "Fixed the leaking kitchen tap",
    "Finished reading the book club novel",
]
HABIT = "The user runs in Riverside Park several times a week."
SUMMARY_KEY = "Below are separate memories"


def _extraction(text: str) -> str:
    entities = [{"name": "Riverside Park", "type": "place"}] if "Riverside" in text else []
    entities += [{"name": "Tom", "type": "person"}] if "Tom" in text else []
    return json.dumps({"entities": entities, "relations": []})


def scripted(summaries: list[Reply]) -> ByPromptChatModel:
    """A chat model that extracts entities, calls alike runs unrelated, and summarises as scripted."""
    return ByPromptChatModel(
        script={
            "knowledge graph": [_extraction(text) for text in [*RUNS, *OTHERS]],
            "compare two statements": ['{"verdict": "unrelated", "reason": "two separate runs"}'] * 6,
            SUMMARY_KEY: summaries,
        }
    )


def summary_calls(llm: ByPromptChatModel) -> list[str]:
    """What the model was shown each time it was asked for a summary."""
    return [messages[1].content for messages in llm.seen if SUMMARY_KEY in messages[0].content]


@pytest.fixture
def runs_store(embedder: Embedder, request: pytest.FixtureRequest) -> Iterator[tuple[RippleMem, list[str]]]:
    """Alice's store with four runs on four days and two unrelated memories, written with the
    handle's chat model (request.param: the scripted summary replies); the run ids, oldest first."""
    llm = scripted(list(request.param))
    clock_now = [datetime(2025, 3, 3, 7, 0, tzinfo=timezone.utc)]
    mem = RippleMem(path=None, user_id="alice", embedder=embedder, llm=llm, clock=lambda: clock_now[0])
    ids = []
    for index, text in enumerate([*RUNS, *OTHERS]):
        ids.append(mem.add(text, importance=0.5 + 0.05 * index if text in RUNS else 0.5).id)
        clock_now[0] += timedelta(days=1)
    yield mem, ids[: len(RUNS)]
    mem.close()


@pytest.mark.parametrize("runs_store", [[HABIT]], indirect=True)
def test_runs_become_one_semantic_habit_linked_to_each_run(runs_store: tuple[RippleMem, list[str]]) -> None:
    mem, runs = runs_store
    report = mem.consolidate()
    (step,) = [s for s in report.steps if s.action == "summarized"]
    assert step.sources == tuple(runs) and step.text == HABIT and "riverside park" in step.reason
    summary = mem.get(step.memory_id)
    assert (summary.type, summary.content) == ("semantic", HABIT)
    assert summary.importance == pytest.approx(0.65)
    assert summary.when == mem.get(runs[-1]).when
    linked = {n.node.id for n in mem.graph.neighbors(summary.id) if n.edge_type == "SUMMARIZES"}
    assert linked == set(runs)
    assert [e.event for e in mem.history(runs[0])][-1] == "summarized"
    assert mem.history(summary.id)[-1].detail["sources"] == runs
    shown = summary_calls(mem.llm)
    assert len(shown) == 1 and all(text in shown[0] for text in RUNS) and OTHERS[0] not in shown[0]
    assert summary.id in [h.memory.id for h in mem.recall("how often do I go running?", k=3).hits]
    again = mem.consolidate()  # the runs are covered now: no second summary, no model call
    assert "summarized" not in again.counts() and len(summary_calls(mem.llm)) == 1


@pytest.mark.parametrize(
    "runs_store",
    [[timeout(), "I'm sorry, but I can't help with that.", '{"answer": 3}', "NONE", f"**Summary:** {HABIT}"]],
    indirect=True,
)
def test_unusable_replies_store_nothing_and_a_later_run_retries(
    runs_store: tuple[RippleMem, list[str]],
) -> None:
    mem, runs = runs_store
    for _ in range(4):
        report = mem.consolidate()
        (step,) = [s for s in report.steps if s.action == "not summarized"]
        assert step.memory_id is None and "no usable summary" in step.reason
        assert mem.list(type="semantic") == []
    (step,) = [s for s in mem.consolidate().steps if s.action == "summarized"]
    assert mem.get(step.memory_id).content == HABIT


@pytest.mark.parametrize("runs_store", [[]], indirect=True)
def test_a_dry_run_names_the_cluster_without_asking_the_model(
    runs_store: tuple[RippleMem, list[str]],
) -> None:
    mem, runs = runs_store
    report = mem.consolidate(dry_run=True)
    (step,) = [s for s in report.steps if s.action == "summarized"]
    assert step.sources == tuple(runs) and step.memory_id is None and step.text == ""
    assert summary_calls(mem.llm) == [] and mem.list(type="semantic") == []
    assert "summarized" not in mem.consolidate(summarize=False).counts()


def test_summaries_need_a_chat_model_only_when_asked_for(embedder: Embedder) -> None:
    with RippleMem(path=None, user_id="alice", embedder=embedder) as mem:
        mem.add_many(RUNS)
        assert "summarized" not in mem.consolidate().counts()  # no llm: nothing is summarised
        with pytest.raises(LLMRequiredError, match=r"consolidate\(summarize=True\)"):
            mem.consolidate(summarize=True)
        with pytest.raises(TypeError, match="summarize"):
            mem.consolidate(summarize="yes")  # type: ignore[arg-type]
