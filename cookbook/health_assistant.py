"""Recipe: a personal health assistant on RippleMem's four kinds of memory.

    HF_HUB_OFFLINE=1 python cookbook/health_assistant.py [--offline]

- working memory: the current chat ("what did I just say I had for breakfast?");
- episodic memory: diet, run and sleep logs ("what did I run last Wednesday?");
- semantic memory: nutrition facts ("what nutrients do vegetarians lack?");
- perceptual memory: a wristband's heart rate, SpO2 and steps ("what is my heart rate now?"),
  answered exactly from the time series; readings out of the normal range become episodes.

Answers are written by ChatOpenAI when OPENAI_API_KEY / OPENAI_BASE_URL is set (see
langchain_models.py), else by a scripted offline model. The clock is fixed so the output is stable.

Needs ``pip install 'ripplemem[langchain]'`` (langchain-core, for the chat model); add ``[openai]``
to answer with ChatOpenAI. Without it the recipe stops with that pip command.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from extras import missing_extra

try:
    from langchain_core.messages import AIMessage
    from langchain_models import choose_model
except ImportError as error:
    missing_extra("langchain", error)

from ripplemem import RippleMem

NOW = datetime(2024, 1, 22, 9, 30, tzinfo=timezone.utc)  # a Monday morning
WEEK_START = datetime(2024, 1, 15, tzinfo=timezone.utc)
RUN_START = datetime(2024, 1, 17, 7, 10, tzinfo=timezone.utc)  # last Wednesday

FACTS = [
    "Vegetarians often lack vitamin B12, iron, zinc and omega-3 fatty acids; B12 comes only from animal "
    "foods, fortified foods or supplements.",
    "A lack of vitamin D calls for more sunlight or a supplement.",
    "Soy milk, lentils and tofu are good plant sources of protein.",
]
LOGS = [
    ("Breakfast: oatmeal with soy milk and blueberries.", "2024-01-15T07:30:00+00:00"),
    ("Slept 6 hours 40 minutes, woke up twice.", "2024-01-16T06:50:00+00:00"),
    ("Ran 5 km along the river in 31 minutes.", "2024-01-17T07:45:00+00:00"),
    ("Lunch: lentil curry with rice and spinach.", "2024-01-17T12:30:00+00:00"),
    ("Yoga class for 45 minutes.", "2024-01-19T18:00:00+00:00"),
    ("Ran 8 km in the park in 52 minutes.", "2024-01-20T08:30:00+00:00"),
    ("Slept 8 hours, felt rested.", "2024-01-21T07:00:00+00:00"),
]
SCRIPT = [
    AIMessage("Last Wednesday (17 January) you ran 5 km along the river in 31 minutes [1]."),
    AIMessage(
        "Vegetarians most often lack vitamin B12, iron, zinc and omega-3 fatty acids [1]; B12 needs "
        "fortified foods or a supplement."
    ),
]


def resting_heart_rate(index: int) -> int:
    """A plausible resting heart rate for the reading at `index` (every 30 minutes)."""
    return 62 + (index * 7) % 25


def wristband_readings() -> list[dict]:
    """A week of heart rate every 30 minutes, a run's spike last Wednesday, SpO2 and daily steps."""
    readings = []
    at, index = WEEK_START, 0
    while at <= NOW - timedelta(minutes=30):
        if not RUN_START <= at < RUN_START + timedelta(minutes=40):
            readings.append(
                {"metric": "heart_rate", "value": resting_heart_rate(index), "unit": "bpm", "at": at}
            )
        at, index = at + timedelta(minutes=30), index + 1
    for minutes, bpm in ((0, 128), (10, 142), (20, 151), (30, 139)):
        readings.append({"metric": "heart_rate", "value": bpm, "at": RUN_START + timedelta(minutes=minutes)})
    readings.append(
        {"metric": "heart_rate", "value": 76, "at": NOW - timedelta(minutes=5), "source": "wristband"}
    )
    readings.append({"metric": "spo2", "value": 97, "unit": "%", "at": NOW - timedelta(minutes=5)})
    readings += [
        {"metric": "steps", "value": steps, "at": WEEK_START + timedelta(days=day, hours=22)}
        for day, steps in enumerate((6200, 8100, 11800, 5400, 7300, 13900, 4100))
    ]
    return readings


def main() -> None:
    """Fill the four memories, then answer the seed's questions."""
    mem = RippleMem(path=None, user_id="mei", clock=lambda: NOW)  # path="./health-memdb" keeps it on disk
    mem.add_many(FACTS, type="semantic")
    mem.add_many([{"content": text, "event_time": when} for text, when in LOGS])
    stored = mem.sensors.record_many(wristband_readings())
    mem.observe("user", "For breakfast today I had oatmeal with soy milk and a banana.", session_id="chat")
    print(f"Stored {len(FACTS)} facts, {len(LOGS)} logs and {len(stored)} sensor readings.\n")

    model, label = choose_model(SCRIPT)
    print(f"Answers by {label}.\n")

    question = "What did I run last Wednesday?"
    recalled = mem.recall(question, 3)
    print(
        f"Q: {question}\n  recall understood {recalled.time['phrase']!r} as "
        f"{recalled.time['start']:%a %d %b} (recall(now=...) sets 'now')"
    )
    for hit in recalled.hits:
        print(f"  {hit.score:.2f}  {hit.memory.when:%Y-%m-%d}  {hit.memory.content}")
    print(f"A: {mem.ask(question, llm=model, k=3).text}\n")

    question = "What is my heart rate now?"
    top = mem.recall(question, 1).hits[0].memory
    latest = mem.sensors.latest("heart_rate")
    assert latest is not None
    print(
        f"Q: {question}\n  recall: {top.content}\n"
        f"A: {latest.value:g} {latest.unit} at {latest.at:%H:%M} ({latest.status}), "
        "from mem.sensors.latest()\n"
    )

    question = "What nutrients do vegetarians lack?"
    print(f"Q: {question}")
    for hit in mem.recall(question, 2, types="semantic").hits:
        print(f"  {hit.score:.2f}  {hit.memory.content}")
    print(f"A: {mem.ask(question, llm=model, k=2, types='semantic').text}\n")

    week = mem.sensors.metric_range("heart_rate", period="last week")
    assert week is not None
    print(
        "Q: How was my heart rate last week?\n"
        f"A: average {week.mean:.1f} bpm over {week.count} readings; lowest {week.lowest.value:g} bpm "
        f"({week.lowest.at:%a %H:%M}), highest {week.highest.value:g} bpm ({week.highest.at:%a %H:%M})."
    )
    steps = mem.sensors.metric_range("steps", period="last week")
    assert steps is not None
    print(f"   steps: {steps.total:,.0f} in total, {steps.mean:,.0f} a day on average.")
    print("   out-of-range episodes remembered:")
    for memory in mem.list("episodic", metadata={"sensor": "episode"}):
        print(f"   - {memory.content}")
    linked = [n.node.label for n in mem.graph.neighbors("heart rate") if n.node.kind == "memory"]
    print(f"   the graph links 'heart rate' to {len(linked)} memories.\n")

    print("Q: What did I just say I had for breakfast?\n" + mem.working("chat").context())


if __name__ == "__main__":
    main()
