"""Consolidation, promotion, clusters and summaries, forgetting, tiers and settings, with fixed times."""

from __future__ import annotations

import dataclasses
import math
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import BaseMessage
from pydantic import Field

from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.rules.lifecycle import (
    DEFAULT_SETTINGS,
    ConsolidationContext,
    LifecycleSettings,
    WorkingItem,
    access_score,
    asummarize_cluster,
    cluster_related,
    days_since,
    decide_consolidation,
    detect_sentiment,
    forget_actions,
    forgetting_scores,
    plan_by_capacity,
    plan_forgetting,
    plan_promotions,
    plan_tier_moves,
    plan_wakeups,
    promotion_target,
    remember_cue,
    summarize_cluster,
    tier_by_access_score,
)

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)


def item(
    text: str = "I had lunch with a colleague",
    *,
    age_minutes: float = 5,
    mentions: int = 1,
    entities: tuple[str, ...] = (),
    remember: bool = False,
    importance: float = 0.5,
) -> WorkingItem:
    created = NOW - timedelta(minutes=age_minutes)
    return WorkingItem(
        id="w1",
        session_id="s",
        role="user",
        text=text,
        created_at=created,
        last_seen=created,
        importance=importance,
        mention_count=mentions,
        entities=entities,
        remember=remember,
    )


def ctx(*known: str, sentiment: str | None = None) -> ConsolidationContext:
    return ConsolidationContext(now=NOW, known_entities=frozenset(known), sentiment=sentiment)


# --- consolidation decision ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        ("Remember that my passport expires in May.", "Remember"),
        ("please remember my locker code is 4711", "please remember"),
        ("Can you remember that I'm vegetarian?", "Can you remember"),  # a polite request
        ("Could you please remember my wife's birthday is June 3", "Could you please remember"),
        ("Don't forget: the plumber comes on Friday", "Don't forget"),
        ("do not forget my dentist appointment", "do not forget"),
        ("Note that I prefer aisle seats.", "Note that"),
        ("Make a note: gate code 1234", "Make a note"),
        ("Keep in mind I'm allergic to nuts", "Keep in mind"),
        ("For future reference, my size is M", "For future reference"),
        ("记住，我的车停在B2层。", "记住"),
        ("别忘了明天交报告", "别忘"),
        ("不要忘记给妈妈打电话", "不要忘"),
        ("帮我记一下：会议改到三点", "帮我记"),
        ("记下来，密码是1234", "记下"),
        ("请记得我对花生过敏", "请记得"),
        ("你要记住我不吃香菜", "记住"),
    ],
)
def test_explicit_remember_cues(text: str, cue: str | None) -> None:
    assert remember_cue(text) == cue


@pytest.mark.parametrize(
    "text",
    [
        "Do you remember my sister's name?",
        "I remember when we went to Rome.",
        "Remember when we met?",
        "I'll never forget that trip.",
        "你还记得我妹妹叫什么吗？",
        "你记得吗？",
        "我记不住这么多事情",
        "我记得他以前住在上海",
        "我记住了",
        "Remember what I told you yesterday?",
        "The weather is nice today.",
    ],
)
def test_recollections_and_plain_talk_are_not_requests(text: str) -> None:
    assert remember_cue(text) is None


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("This is urgent, call the clinic ASAP", "urgent"),
        ("I need this done as soon as possible", "urgent"),
        ("It's an emergency", "urgent"),
        ("明天之前必须交，很急", "urgent"),
        ("请马上回复我", "urgent"),
        ("This is really important for my visa", "important"),
        ("I'm allergic to penicillin", "important"),
        ("这件事非常重要", "important"),
        ("我对青霉素过敏", "important"),
        ("千万别告诉她", "important"),
        ("I'm so excited about the new job!", "emotional"),
        ("My grandmother passed away last week", "emotional"),
        ("I was devastated when we broke up", "emotional"),
        ("今天好难过", "emotional"),
        ("我很担心我的考试", "emotional"),
    ],
)
def test_sentiment_cues(text: str, label: str) -> None:
    found = detect_sentiment(text)
    assert found is not None and found.label == label and found.cue


@pytest.mark.parametrize(
    "text",
    [
        "It's not important, just a thought",
        "no rush, whenever you can",
        "Don't worry about it",
        "this is not urgent",
        "不重要，随便说说",
        "不急，慢慢来",
        "别担心",
        "I had pasta for lunch",
        "我中午吃了面条",
    ],
)
def test_negated_or_plain_text_has_no_sentiment(text: str) -> None:
    assert detect_sentiment(text) is None


def test_explicit_request_goes_to_episodic_immediately_with_high_importance() -> None:
    decision = decide_consolidation(item("记住，我的车停在B2层。", importance=0.3), ctx())
    assert (decision.action, decision.target, decision.importance, decision.score) == (
        "immediate",
        "episodic",
        0.75,
        1.0,
    )
    assert decision.consolidates and "记住" in decision.reasons[0]
    flagged = decide_consolidation(item("gate code 1234", remember=True, importance=0.9), ctx())
    assert (flagged.action, flagged.target, flagged.importance) == ("immediate", "episodic", 0.9)


def test_explicit_request_wins_over_mentions_and_sentiment() -> None:
    decision = decide_consolidation(item("Remember: this is urgent", mentions=5), ctx())
    assert (decision.action, decision.target) == ("immediate", "episodic")


def test_three_mentions_go_to_semantic() -> None:
    for mentions, expected in ((2, "keep"), (3, "consolidate"), (7, "consolidate")):
        decision = decide_consolidation(item(mentions=mentions), ctx())
        assert decision.action == expected
    decision = decide_consolidation(item(mentions=3), ctx())
    assert decision.target == "semantic" and decision.score == 0.4
    assert "mentioned 3 times" in decision.reasons[0]


def test_mentions_are_checked_before_sentiment_as_in_the_seed() -> None:
    decision = decide_consolidation(item("This is so important!", mentions=3), ctx())
    assert decision.target == "semantic"


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Call the clinic ASAP", "urgent"),
        ("这件事非常重要", "important"),
        ("I'm heartbroken", "emotional"),
    ],
)
def test_sentiment_goes_to_episodic_immediately_with_high_importance(text: str, label: str) -> None:
    decision = decide_consolidation(item(text, importance=0.2), ctx())
    assert (decision.action, decision.target, decision.importance, decision.score) == (
        "immediate",
        "episodic",
        0.75,
        0.5,
    )
    assert decision.reasons[-1].startswith(label)


def test_sentiment_can_come_from_the_caller() -> None:
    assert decide_consolidation(item("plain words"), ctx(sentiment="emotional")).action == "immediate"
    assert decide_consolidation(item("Call the clinic ASAP"), ctx(sentiment="")).action == "keep"
    with pytest.raises(InvalidInputError, match="sentiment"):
        decide_consolidation(item(), ctx(sentiment="angry"))


def test_related_knowledge_adds_point_three_and_age_adds_point_two() -> None:
    related = decide_consolidation(item(entities=("lin", "berlin")), ctx("berlin", "tokyo"))
    assert (related.action, related.score) == ("keep", 0.3)
    assert related.reasons[0] == "related to known berlin (+0.3)"
    old = decide_consolidation(item(age_minutes=61), ctx())
    assert (old.action, old.score) == ("keep", 0.2)
    assert old.reasons[0] == "in working memory for 61 min (> 60, +0.2)"
    both = decide_consolidation(item(entities=("lin",), age_minutes=90), ctx("lin"))
    assert (both.action, both.target, both.score) == ("consolidate", "episodic", 0.5)
    assert both.reasons[-1] == "score 0.5 >= 0.5"


@pytest.mark.parametrize(("age", "score"), [(59, 0.0), (60, 0.0), (60.5, 0.2), (600, 0.2)])
def test_the_age_signal_needs_more_than_an_hour(age: float, score: float) -> None:
    assert decide_consolidation(item(age_minutes=age), ctx()).score == score


def test_a_heavier_score_reaches_semantic_above_point_six() -> None:
    settings = LifecycleSettings(age_score=0.35)
    decision = decide_consolidation(item(entities=("lin",), age_minutes=90), ctx("lin"), settings)
    assert (decision.target, decision.score) == ("semantic", 0.65)


def test_nothing_special_stays_in_working_memory() -> None:
    decision = decide_consolidation(item(), ctx("tokyo"))
    assert (decision.action, decision.target, decision.score) == ("keep", None, 0.0)
    assert not decision.consolidates
    assert decision.reasons == ("score 0 < 0.5",)


# --- promotion -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "importance", "target"),
    [
        ("working", 0.69, None),
        ("working", 0.7, "episodic"),
        ("working", 0.95, "episodic"),
        ("episodic", 0.79, None),
        ("episodic", 0.8, "semantic"),
        ("semantic", 1.0, None),
        ("document", 0.9, None),
    ],
)
def test_promotion_targets(kind: str, importance: float, target: str | None) -> None:
    assert promotion_target(kind, importance) == target


def test_plan_promotions_over_arrays() -> None:
    plan = plan_promotions(
        ["a", "b", "c", "d"], ["working", "episodic", "episodic", "working"], np.array([0.7, 0.85, 0.5, 0.1])
    )
    assert [(p.id, p.from_type, p.to_type) for p in plan] == [
        ("a", "working", "episodic"),
        ("b", "episodic", "semantic"),
    ]
    assert plan[1].reason == "importance 0.85 >= 0.8 (promotion rule)"
    with pytest.raises(InvalidInputError):
        plan_promotions(["a"], ["working", "episodic"], [0.9, 0.9])


# --- clusters and summaries -------------------------------------------------------------------------


def test_clusters_by_shared_entities_ignore_small_groups_and_the_users_own_name() -> None:
    ids = [f"m{i}" for i in range(10)]
    entities = [
        {"mei", "hyde park"},
        {"mei", "hyde park"},
        {"mei", "hyde park", "tom"},
        {"mei", "tom"},
        {"mei", "bakery"},
        {"mei", "bakery"},
        {"mei"},
        {"mei", "piano"},
        {"mei", "piano"},
        {"mei", "piano", "chopin"},
    ]
    clusters = cluster_related(ids, entities=entities)
    assert [c.ids for c in clusters] == [("m0", "m1", "m2", "m3"), ("m7", "m8", "m9")]
    assert clusters[0].shared_entities == ("hyde park", "tom")
    assert "mei" not in clusters[0].shared_entities  # in every memory: links nothing


def test_small_sets_keep_their_common_entity_and_ignore_list_works() -> None:
    runs = [{"running"}, {"running"}, {"running", "hyde park"}]
    assert [c.ids for c in cluster_related(["a", "b", "c"], entities=runs)] == [("a", "b", "c")]
    assert cluster_related(["a", "b", "c"], entities=runs, ignore_entities={"running"}) == []


def test_clusters_by_embedding_similarity() -> None:
    base = np.array([1.0, 0.0, 0.0])
    other = np.array([0.0, 1.0, 0.0])
    vectors = np.stack([base, base + [0, 0.1, 0], other, base + [0, 0, 0.2], other + [0.05, 0, 0]])
    clusters = cluster_related(["r1", "r2", "x1", "r3", "x2"], embeddings=vectors)
    assert [c.ids for c in clusters] == [("r1", "r2", "r3")]
    looser = cluster_related(
        ["r1", "r2", "x1", "r3", "x2"], embeddings=vectors, settings=LifecycleSettings(cluster_min_size=2)
    )
    assert [c.ids for c in looser] == [("r1", "r2", "r3"), ("x1", "x2")]
    with pytest.raises(InvalidInputError, match="shape"):
        cluster_related(["a", "b"], embeddings=np.zeros((3, 4)))


RUNS = [
    "2024-01-08: went for a 5 km run in the park",
    "2024-01-10: ran 6 km before work",
    "2024-01-13: long run, 10 km along the river",
]


class RecordingChat(FakeListChatModel):
    """FakeListChatModel that keeps the conversations it was shown."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        self.seen.append(list(messages))
        return super()._call(messages, *args, **kwargs)


class BrokenChat(RecordingChat):
    """A chat model whose endpoint is down."""

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        raise ConnectionError("connection refused")


@pytest.mark.parametrize(
    ("reply", "summary"),
    [
        ("The user runs about three times a week.", "The user runs about three times a week."),
        (
            "<think>three runs in one week</think>\nSummary: The user runs three times a week.",
            "The user runs three times a week.",
        ),
        (
            '```json\n{"summary": "The user runs regularly, 5-10 km."}\n```',
            "The user runs regularly, 5-10 km.",
        ),
        ('"用户每周跑步三次。"', "用户每周跑步三次。"),
        ("总结：用户每周跑步三次。", "用户每周跑步三次。"),
        ("NONE", None),
        ("none.", None),
        ("无", None),
        ("", None),
        ("I'm sorry, but I can't help with that.", None),
        ('{"facts": ["a", "b"]}', None),
        ('{"summary": 42}', None),
        ("{not json at all", None),
        ("x" * 500, None),
    ],
)
def test_summaries_from_realistic_and_broken_replies(reply: str, summary: str | None) -> None:
    llm = RecordingChat(responses=[reply])
    assert summarize_cluster(llm, RUNS) == summary
    shown = llm.seen[0][1].content
    assert "1. 2024-01-08: went for a 5 km run in the park" in shown and "3. 2024-01-13" in shown


def test_summary_never_raises_when_the_model_fails(caplog: pytest.LogCaptureFixture) -> None:
    assert summarize_cluster(BrokenChat(responses=["unused"]), RUNS) is None
    assert "connection refused" in caplog.text


def test_summary_prompt_stays_within_limits_and_empty_input_asks_nothing() -> None:
    llm = RecordingChat(responses=["The user runs."])
    settings = LifecycleSettings(summary_max_texts=2)
    assert summarize_cluster(llm, RUNS, settings=settings) == "The user runs."
    assert "3. " not in llm.seen[0][1].content
    quiet = RecordingChat(responses=["unused"])
    assert summarize_cluster(quiet, ["", "   "]) is None and quiet.seen == []
    with pytest.raises(InvalidTypeError):
        summarize_cluster(object(), RUNS)  # type: ignore[arg-type]


async def test_async_summary() -> None:
    llm = RecordingChat(responses=["The user runs often."])
    assert await asummarize_cluster(llm, RUNS) == "The user runs often."
    assert await asummarize_cluster(BrokenChat(responses=["x"]), RUNS) is None


# --- forgetting score ------------------------------------------------------------------------------


def seed_score(importance: float, count: float, idle: float, age: float, degree: float) -> float:
    """The source's IntelligentForgetting.calculate_forgetting_score (docs/design-notes.md#forgetting),
    one memory at a time."""
    frequency = 1 / (1 + count * 0.1) + min(idle * 0.02, 0.5)
    recency = 1 / (1 + math.exp(-0.05 * (age - 60)))
    return 0.30 * (1 - importance) + 0.25 * frequency + 0.25 * recency + 0.20 / (1 + degree * 0.2)


CASES = [
    (0.5, 0, 0, 0, 0),
    (0.9, 20, 1, 5, 10),
    (0.1, 0, 100, 100, 0),
    (0.3, 2, 30, 200, 3),
    (1.0, 50, 0, 0, 50),
]


def test_forgetting_score_matches_the_seed_formula_over_arrays() -> None:
    columns = np.array(CASES, dtype=float).T
    scores = forgetting_scores(
        importance=columns[0],
        access_count=columns[1],
        days_since_access=columns[2],
        age_days=columns[3],
        degree=columns[4],
    )
    assert scores.total == pytest.approx([seed_score(*case) for case in CASES])
    assert scores.importance[0] == 0.5 and scores.frequency[2] == pytest.approx(1.5)
    assert scores.recency[2] == pytest.approx(1 / (1 + math.exp(-2)))
    assert scores.connectivity[1] == pytest.approx(1 / 3)


def test_higher_forgetting_score_means_forget_sooner() -> None:
    """The higher the score, the sooner to forget - every factor that makes a memory valuable lowers it."""

    def one(**overrides: float) -> float:
        values: dict[str, Any] = {
            "importance": 0.5,
            "access_count": 2,
            "days_since_access": 10,
            "age_days": 30,
            "degree": 2,
        }
        values.update(overrides)
        arrays: dict[str, Any] = {k: [v] for k, v in values.items()}
        return float(forgetting_scores(**arrays).total[0])

    assert one(importance=0.9) < one(importance=0.1)
    assert one(access_count=30) < one(access_count=0)
    assert one(days_since_access=0) < one(days_since_access=25)
    assert one(age_days=1) < one(age_days=120)
    assert one(degree=20) < one(degree=0)


@pytest.mark.parametrize(
    ("score", "action"),
    [
        (0.95, "delete"),
        (0.8, "delete"),
        (0.79, "deprioritize"),
        (0.6, "deprioritize"),
        (0.59, "archive"),
        (0.4, "archive"),
        (0.39, "keep"),
        (0.0, "keep"),
        (1.125, "delete"),
    ],
)
def test_forget_action_thresholds(score: float, action: str) -> None:
    assert forget_actions([score])[0] == action


def test_score_plan_actions_reasons_and_numbers_from_the_docstring() -> None:
    days = np.array([0, 44, 0, 77])
    plan = plan_forgetting(
        ["fresh", "neglected", "linked", "linked-old"],
        "score",
        importance=[0.5, 0.5, 0.5, 0.5],
        access_count=[0, 0, 0, 0],
        days_since_access=days,
        age_days=days,
        degree=[0, 0, 5, 5],
    )
    # The two that score 0.8 would be deleted, but importance 0.5 only lets the score lower them.
    assert list(plan.actions) == ["deprioritize", "deprioritize", "archive", "deprioritize"]
    assert plan.scores is not None and plan.scores[0] == pytest.approx(0.612, abs=1e-3)
    entry = plan.entry(1)
    assert entry.reason == (
        "forget score 0.80 >= 0.8, but importance >= 0.3: deprioritize (importance 0.50, "
        "0 accesses, idle 44 d, 44 d old, 0 links)"
    )
    first = plan.entry(0)
    assert first.new_importance == pytest.approx(0.45)  # deprioritize: importance x 0.9
    assert plan.counts() == {"delete": 0, "deprioritize": 3, "archive": 1, "keep": 0}
    assert plan.ids_for("deprioritize") == ["fresh", "neglected", "linked-old"]
    assert [a.id for a in plan.changes()] == ["fresh", "neglected", "linked", "linked-old"]
    assert set(plan.parts) == {"importance", "frequency", "recency", "connectivity"}


def test_importance_guards_what_the_score_deletes() -> None:
    """A score of 0.8+ deletes only an unimportant memory; an important one is kept."""
    plan = plan_forgetting(
        ["trivia", "note", "allergy"],
        "score",
        importance=[0.1, 0.5, 1.0],
        access_count=[0, 0, 0],
        days_since_access=[400, 400, 400],
        age_days=[400, 400, 400],
        degree=[0, 0, 0],
    )
    assert plan.scores is not None and min(plan.scores) >= 0.8
    assert list(plan.actions) == ["delete", "deprioritize", "keep"]
    assert plan.entry(2).reason.startswith(
        "forget score 0.82 >= 0.8, but importance >= 0.8 protects it: keep"
    )
    assert plan.entry(2).new_importance is None  # protected: its importance is not lowered either


def test_a_dry_run_is_the_plan_and_keeps_are_listed() -> None:
    plan = plan_forgetting(
        ["a", "b"],
        importance=[1.0, 0.0],
        access_count=[50, 0],
        days_since_access=[0, 90],
        age_days=[0, 400],
        degree=[40, 0],
    )
    assert [(a.id, a.action) for a in plan] == [("a", "keep"), ("b", "delete")]
    assert [a.id for a in plan.changes()] == ["b"] and len(plan) == 2
    assert plan.entry(0).reason.startswith("forget score 0.") and "< 0.4" in plan.entry(0).reason


def test_importance_strategy() -> None:
    plan = plan_forgetting(["a", "b", "c"], "importance", importance=[0.05, 0.1, 0.8])
    assert list(plan.actions) == ["delete", "keep", "keep"]
    assert plan.entry(0).reason == "importance 0.05 < 0.1"
    assert plan.entry(1).reason == "importance 0.10 >= 0.1"
    custom = plan_forgetting(["a", "b", "c"], "importance", importance=[0.05, 0.1, 0.8], threshold=0.5)
    assert custom.ids_for("delete") == ["a", "b"]


def test_time_strategy() -> None:
    plan = plan_forgetting(["a", "b", "c"], "time", importance=[1, 1, 1], age_days=[29.9, 30, 30.5])
    assert plan.ids_for("delete") == ["c"] and plan.entry(2).reason == "30.5 days old > 30"
    week = plan_forgetting(["a"], "time", importance=[1], age_days=[8], max_age_days=7)
    assert week.ids_for("delete") == ["a"]


def test_capacity_strategy_deletes_the_least_important_with_tiebreaks() -> None:
    plan = plan_by_capacity(
        ["a", "b", "c", "d", "e"],
        importance=[0.9, 0.2, 0.2, 0.5, 0.2],
        capacity=3,
        days_since_access=[0, 5, 50, 0, 5],
        age_days=[0, 10, 10, 0, 20],
    )
    # three at 0.2: c is idle longest; b and e tie on idle, e is older.
    assert plan.ids_for("delete") == ["c", "e"]
    assert "among the 2 least important" in plan.entry(2).reason
    assert plan_by_capacity(["a"], importance=[0.1], capacity=5).counts()["delete"] == 0
    one = plan_forgetting(["a", "b"], "capacity", importance=[0.3, 0.6], capacity=1)
    assert one.ids_for("delete") == ["a"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategy": "random"}, "strategy"),
        ({"strategy": "score"}, "days_since_access"),
        ({"strategy": "time"}, "age_days"),
        ({"strategy": "capacity", "capacity": -1}, "capacity"),
        ({"strategy": "importance", "threshold": "low"}, "threshold"),
    ],
)
def test_bad_strategy_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        plan_forgetting(["a"], importance=[0.5], **kwargs)


def test_array_length_and_nan_checks() -> None:
    with pytest.raises(InvalidInputError, match="one per memory"):
        plan_forgetting(["a", "b"], importance=[0.5], days_since_access=[1, 1], age_days=[1, 1])
    with pytest.raises(InvalidInputError, match="NaN"):
        plan_forgetting(["a"], "importance", importance=[float("nan")])
    with pytest.raises(InvalidTypeError):
        plan_forgetting("abc", "importance", importance=[0.5, 0.5, 0.5])


def test_forgetting_plans_scale_to_100k_memories() -> None:
    rng = np.random.default_rng(0)
    n = 100_000
    plan = plan_forgetting(
        [f"m{i}" for i in range(n)],
        importance=rng.random(n),
        access_count=rng.integers(0, 20, n),
        days_since_access=rng.random(n) * 200,
        age_days=rng.random(n) * 400,
        degree=rng.integers(0, 10, n),
    )
    assert sum(plan.counts().values()) == n


# --- tiers -----------------------------------------------------------------------------------------


def test_access_score_formula() -> None:
    scores = access_score([0, 7, 30, 0], [0, 5, 20, 10])
    assert scores == pytest.approx([0.7, 0.7 * math.exp(-1) + 0.15, 0.7 * math.exp(-30 / 7) + 0.3, 1.0])


@pytest.mark.parametrize(
    ("tier", "importance", "accesses", "idle", "after"),
    [
        ("hot", 0.5, 0, 6.9, "hot"),  # not idle long enough
        ("hot", 0.5, 0, 7, "warm"),  # 7 days idle, importance < 0.7
        ("hot", 0.7, 0, 100, "hot"),  # important memories stay hot
        ("warm", 0.9, 2, 30, "cold"),  # 30 days idle, < 3 accesses (importance does not matter)
        ("warm", 0.5, 3, 60, "warm"),  # used 3 times: stays warm
        ("warm", 0.5, 0, 29, "warm"),
        ("cold", 0.29, 0, 90, "deleted"),  # 90 days idle, importance < 0.3
        ("cold", 0.3, 0, 400, "cold"),
        ("cold", 0.1, 0, 89, "cold"),
    ],
)
def test_each_tier_rule_and_its_boundary(
    tier: str, importance: float, accesses: int, idle: float, after: str
) -> None:
    plan = plan_tier_moves(
        ["m"],
        tiers=[tier],
        importance=[importance],
        access_count=[accesses],
        days_since_access=[idle],
        cascade=False,
    )
    assert plan.to_tiers[0] == after
    moves = plan.moves()
    assert len(moves) == (tier != after)
    if moves:
        assert moves[0].reason.startswith(f"{tier} -> {after}: ")


def test_cascade_applies_every_step_in_one_run_and_says_so() -> None:
    kwargs: dict[str, Any] = {
        "tiers": ["hot"],
        "importance": [0.2],
        "access_count": [0],
        "days_since_access": [100],
    }
    (move,) = plan_tier_moves(["m"], **kwargs).moves()
    assert (move.from_tier, move.to_tier) == ("hot", "deleted")
    assert move.reason.count("->") == 3 and "100 d idle >= 90" in move.reason
    (step,) = plan_tier_moves(["m"], cascade=False, **kwargs).moves()
    assert (step.from_tier, step.to_tier) == ("hot", "warm")
    assert step.access_score == pytest.approx(0.7 * math.exp(-100 / 7))


def test_tier_plan_summary() -> None:
    plan = plan_tier_moves(
        ["a", "b", "c", "d"],
        tiers=["hot", "hot", "warm", "cold"],
        importance=[0.9, 0.5, 0.5, 0.5],
        access_count=[0, 0, 0, 9],
        days_since_access=[50, 10, 40, 200],
    )
    assert plan.counts() == {"hot": 1, "warm": 1, "cold": 2, "deleted": 0}
    assert plan.ids_to("warm") == ["b"] and plan.ids_to("cold") == ["c"] and plan.ids_to("hot") == []
    assert [m.id for m in plan] == ["b", "c"]
    with pytest.raises(InvalidInputError, match="unknown tier"):
        plan_tier_moves(["a"], tiers=["lukewarm"], importance=[0.5], access_count=[0], days_since_access=[0])


def test_a_recall_that_reaches_warm_or_cold_memories_wakes_them() -> None:
    plan = plan_wakeups(
        ["a", "b", "c", "d"], tiers=["cold", "hot", "warm", "cold"], touched=[True, True, True, False]
    )
    assert [(m.id, m.from_tier, m.to_tier) for m in plan.moves()] == [
        ("a", "cold", "hot"),
        ("c", "warm", "hot"),
    ]
    assert plan.moves()[0].reason == "cold -> hot: reached by an associative recall"


def test_the_seeds_evaluate_tier_reading() -> None:
    tiers = tier_by_access_score([0.8, 0.8, 0.2, 0.4, 0.1], [0.8, 0.6, 0.6, 0.1, 0.1])
    assert list(tiers) == ["hot", "warm", "warm", "warm", "cold"]


def test_days_since_uses_the_fallback_for_never_accessed_memories() -> None:
    created = [NOW - timedelta(days=10), NOW - timedelta(days=3), None]
    accessed = [NOW - timedelta(days=2), None, None]
    assert days_since(NOW, accessed, fallback=created) == pytest.approx([2, 3, 0])
    naive = datetime(2025, 2, 27, 12, 0)  # naive = UTC
    assert days_since(NOW, [naive, (NOW - timedelta(hours=12)).timestamp()]) == pytest.approx([2, 0.5])


def test_tier_plans_scale_to_100k_memories() -> None:
    rng = np.random.default_rng(1)
    n = 100_000
    plan = plan_tier_moves(
        list(range(n)),
        tiers=rng.choice(["hot", "warm", "cold"], n),
        importance=rng.random(n),
        access_count=rng.integers(0, 6, n),
        days_since_access=rng.random(n) * 150,
    )
    assert sum(plan.counts().values()) == n


# --- settings --------------------------------------------------------------------------------------


def test_every_seed_number_is_in_the_settings() -> None:
    s = DEFAULT_SETTINGS
    assert (s.working_capacity, s.working_ttl_minutes) == (50, 60.0)
    assert (s.promote_working_to_episodic, s.promote_episodic_to_semantic) == (0.7, 0.8)
    assert (s.mention_threshold, s.mention_score, s.related_knowledge_score, s.sentiment_score) == (
        3,
        0.4,
        0.3,
        0.5,
    )
    assert (s.age_score, s.age_threshold_minutes) == (0.2, 60)
    assert (s.consolidate_threshold, s.semantic_threshold) == (0.5, 0.6)
    assert (
        s.forget_weight_importance,
        s.forget_weight_frequency,
        s.forget_weight_recency,
        s.forget_weight_connectivity,
    ) == (0.30, 0.25, 0.25, 0.20)
    assert (s.forget_recency_midpoint_days, s.forget_recency_steepness) == (60, 0.05)
    assert (
        s.forget_access_rate,
        s.forget_idle_rate_per_day,
        s.forget_idle_cap,
        s.forget_connectivity_rate,
    ) == (0.1, 0.02, 0.5, 0.2)
    assert (s.forget_delete_threshold, s.forget_deprioritize_threshold, s.forget_archive_threshold) == (
        0.8,
        0.6,
        0.4,
    )
    assert (s.forget_min_importance, s.forget_max_age_days) == (0.1, 30)
    assert (s.hot_to_warm_idle_days, s.warm_to_cold_idle_days, s.cold_delete_idle_days) == (7, 30, 90)
    assert (s.hot_to_warm_max_importance, s.warm_to_cold_max_accesses, s.cold_delete_max_importance) == (
        0.7,
        3,
        0.3,
    )
    assert (s.access_decay_days, s.access_count_saturation, s.access_time_weight) == (7, 10, 0.7)
    assert s.access_count_weight == pytest.approx(0.3) and s.duplicate_similarity == 0.9
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.working_capacity = 10  # type: ignore[misc]


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("working_capacity", 0, InvalidInputError),
        ("working_capacity", 2.5, InvalidTypeError),
        ("working_ttl_minutes", -1, InvalidInputError),
        ("duplicate_similarity", 1.5, InvalidInputError),
        ("forget_delete_threshold", 0.5, InvalidInputError),
        ("age_score", "0.2", InvalidTypeError),
        ("mention_threshold", True, InvalidTypeError),
        ("cluster_similarity", float("nan"), InvalidInputError),
    ],
)
def test_settings_are_checked(field: str, value: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=field):
        LifecycleSettings(**{field: value})
