"""Duplicates, updates and contradictions by rules (English and Chinese) and by a scripted chat model."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import BaseMessage
from pydantic import Field

from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.rules.lifecycle import (
    LifecycleSettings,
    LLMConflictJudge,
    find_duplicate,
    is_duplicate,
    judge_conflict,
    parse_statement,
)

JAN = datetime(2025, 1, 10, 9, 0, tzinfo=timezone.utc)
MAR = datetime(2025, 3, 10, 9, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("text", "slot", "owner", "qualifier", "value", "negated"),
    [
        ("My metformin dose is now 10 mg.", "dose", "user", "metformin", "10 mg", False),
        ("My dose is 5 mg", "dose", "user", None, "5 mg", False),
        ("I take 10 mg of metformin", "dose", "user", "metformin", "10 mg", False),
        (
            "My address is 5 Elm Street, Springfield",
            "address",
            "user",
            None,
            "5 Elm Street, Springfield",
            False,
        ),
        ("I moved to 9 Oak Avenue", "residence", "user", None, "9 Oak Avenue", False),
        ("I live in Berlin", "residence", "user", None, "Berlin", False),
        ("I no longer live in Berlin", "residence", "user", None, "Berlin", True),
        ("My sister lives in Paris", "residence", "sister", None, "Paris", False),
        ("Lin lives in Berlin", "residence", "lin", None, "Berlin", False),
        ("The report deadline is Friday", "deadline", None, "report", "Friday", False),
        ("The deadline was pushed back to Monday", "deadline", None, None, "Monday", False),
        ("My phone number changed to 555-1234", "phone", "user", None, "555-1234", False),
        ("I work at Google", "employer", "user", None, "Google", False),
        ("I work as a nurse", "occupation", "user", None, "a nurse", False),
        ("I'm now working at Microsoft", "employer", "user", None, "Microsoft", False),
        (
            "My dentist appointment has been moved to Monday",
            "appointment",
            "user",
            "dentist",
            "Monday",
            False,
        ),
        ("I like apples", "preference", "user", "apples", "likes", False),
        ("I hate apples", "preference", "user", "apples", "dislikes", False),
        ("I don't like apples anymore", "preference", "user", "apples", "dislikes", False),
        ("我的剂量是5毫克", "dose", "user", None, "5毫克", False),
        ("医生把我的剂量改成了10毫克", "dose", "user", None, "10毫克", False),
        ("妈妈的降压药剂量改成10mg", "dose", "妈妈", "降压药", "10mg", False),
        ("我每天吃5毫克阿司匹林", "dose", "user", "阿司匹林", "5毫克", False),
        ("我住在北京", "residence", "user", None, "北京", False),
        ("我搬到上海了", "residence", "user", None, "上海", False),
        ("她住在杭州", "residence", "her", None, "杭州", False),
        ("我的地址是北京市朝阳区1号", "address", "user", None, "北京市朝阳区1号", False),
        ("项目的截止日期改到下周五", "deadline", "项目", None, "下周五", False),
        ("截止日期是3月1日", "deadline", None, None, "3月1日", False),
        ("我的电话改成13800000000", "phone", "user", None, "13800000000", False),
        ("我在谷歌上班", "employer", "user", None, "谷歌", False),
        ("我喜欢苹果", "preference", "user", "苹果", "likes", False),
        ("我不喜欢苹果", "preference", "user", "苹果", "dislikes", False),
        ("我讨厌苹果", "preference", "user", "苹果", "dislikes", False),
    ],
)
def test_statements_are_read_into_slots(
    text: str, slot: str, owner: str | None, qualifier: str | None, value: str, negated: bool
) -> None:
    statement = parse_statement(text)
    assert (statement.slot, statement.owner, statement.qualifier, statement.value, statement.negated) == (
        slot,
        owner,
        qualifier,
        value,
        negated,
    )


@pytest.mark.parametrize(
    "text",
    ["What's my dose?", "My dose", "I went running today", "我的剂量是多少？", "Tell me about deadlines", ""],
)
def test_questions_and_plain_text_fill_no_slot(text: str) -> None:
    assert parse_statement(text).slot is None


@pytest.mark.parametrize(
    ("text", "belief"),
    [
        ("I hate apples", "preference"),
        ("我喜欢苹果", "preference"),
        ("I'm so angry at my boss today", "emotion"),
        ("今天好难过", "emotion"),
        ("My dose is 5 mg", "fact"),
        ("I live in Berlin", "fact"),
    ],
)
def test_belief_states(text: str, belief: str) -> None:
    assert parse_statement(text).belief == belief


# new, existing, new_time, existing_time, kind, slot, current
VERDICTS = [
    # updates: a cue, or a later date
    ("My metformin dose is now 10 mg", "I take 5 mg of metformin", None, None, "update", "dose", "new"),
    ("My dose is 10 mg", "My dose is 5 mg", MAR, JAN, "update", "dose", "new"),
    # older news arriving late: the existing statement stays current
    ("My dose is 10 mg", "My dose is 5 mg", JAN, MAR, "update", "dose", "existing"),
    ("I moved to Munich", "I live in Berlin", None, None, "update", "residence", "new"),
    ("I no longer live in Berlin", "I live in Berlin", None, None, "update", "residence", "new"),
    (
        "The deadline was pushed back to Monday",
        "The report deadline is Friday",
        None,
        None,
        "update",
        "deadline",
        "new",
    ),
    (
        "My phone number changed to 555-1234",
        "My phone number is 555-9876",
        None,
        None,
        "update",
        "phone",
        "new",
    ),
    ("I'm now working at Microsoft", "I work at Google", None, None, "update", "employer", "new"),
    (
        "My dentist appointment has been moved to Monday",
        "my dentist appointment is on Friday",
        None,
        None,
        "update",
        "appointment",
        "new",
    ),
    ("I don't like apples anymore", "I like apples", MAR, JAN, "update", "preference", "new"),
    ("医生把我的剂量改成了10毫克", "我的剂量是5毫克", None, None, "update", "dose", "new"),
    ("我搬到上海了", "我住在北京", None, None, "update", "residence", "new"),
    ("项目的截止日期改到下周五", "项目的截止日期是本周三", None, None, "update", "deadline", "new"),
    ("我的电话改成13800000000", "我的电话是13900000000", None, None, "update", "phone", "new"),
    ("我的地址是上海市徐汇区2号", "我的地址是北京市朝阳区1号", MAR, JAN, "update", "address", "new"),
    # contradictions: nothing says which is current, or opposite preferences
    ("My dose is 10 mg", "My dose is 5 mg", None, None, "contradiction", "dose", None),
    ("My dose is 10 mg", "My dose is 5 mg", JAN, JAN, "contradiction", "dose", None),
    ("I hate apples", "I like apples", MAR, JAN, "contradiction", "preference", None),
    ("I don't live in Berlin", "I live in Berlin", None, None, "contradiction", "residence", None),
    ("我讨厌苹果", "我喜欢苹果", MAR, JAN, "contradiction", "preference", None),
    ("我的剂量是10毫克", "我的剂量是5毫克", None, None, "contradiction", "dose", None),
    # duplicates: the same value restated
    ("My dose is still 5mg", "I take 5 mg of my medicine", None, None, "duplicate", "dose", None),
    ("我的剂量是5 mg", "我的剂量是5毫克", None, None, "duplicate", "dose", None),
    ("I love apples", "I like apples", None, None, "duplicate", "preference", None),
    ("I went running today", "I went running today!", None, None, "duplicate", None, None),
    # unrelated: other attributes or other subjects
    ("The report deadline is Friday", "The tax deadline is April 15", None, None, "unrelated", None, None),
    ("My sister lives in Paris", "I live in Berlin", None, None, "unrelated", None, None),
    ("My sister's address is 1 Main St", "My sister lives in Paris", None, None, "unrelated", None, None),
    ("I work as a nurse", "I work at Google", None, None, "unrelated", None, None),
    ("I love coffee", "I like tea", None, None, "unrelated", None, None),
    ("I went running today", "I ran this morning", None, None, "unrelated", None, None),
    ("妈妈的剂量改成10mg", "我的剂量是5毫克", None, None, "unrelated", None, None),
]


@pytest.mark.parametrize(
    ("new", "existing", "new_time", "existing_time", "kind", "slot", "current"), VERDICTS
)
def test_rule_verdicts(
    new: str,
    existing: str,
    new_time: datetime | None,
    existing_time: datetime | None,
    kind: str,
    slot: str | None,
    current: str | None,
) -> None:
    verdict = judge_conflict(new, existing, new_time=new_time, existing_time=existing_time)
    assert (verdict.kind, verdict.slot, verdict.current, verdict.source) == (kind, slot, current, "rules")
    assert verdict.reason


def test_verdicts_carry_values_subject_and_beliefs() -> None:
    verdict = judge_conflict("My metformin dose is now 10 mg", "I take 5 mg of metformin")
    assert (verdict.subject, verdict.old_value, verdict.new_value) == ("user: metformin", "5 mg", "10 mg")
    assert verdict.reason == "dose '5 mg' -> '10 mg'; the new text says 'now'"
    apples = judge_conflict("I hate apples", "I like apples")
    assert (apples.belief_new, apples.belief_existing) == ("preference", "preference")
    assert apples.reason == "preference 'likes' -> 'dislikes': opposite preferences"


def test_a_dose_changed_twice_keeps_the_latest_current() -> None:
    first, second, third = "My dose is 5 mg", "My dose was increased to 10 mg", "My dose changed to 15 mg"
    assert judge_conflict(second, first).current == "new"
    verdict = judge_conflict(third, second)
    assert (verdict.kind, verdict.old_value, verdict.new_value, verdict.current) == (
        "update",
        "10 mg",
        "15 mg",
        "new",
    )


def test_duplicates_by_text_or_similarity_but_not_across_values() -> None:
    assert is_duplicate("I run 5 km every morning.", "i run 5 km every morning")
    assert is_duplicate("I went for a run in the park", "I ran in the park", similarity=0.93)
    assert not is_duplicate("I went for a run in the park", "I ran in the park", similarity=0.89)
    assert is_duplicate(
        "I went for a run in the park",
        "I ran in the park",
        similarity=0.85,
        settings=LifecycleSettings(duplicate_similarity=0.8),
    )
    # near-identical embeddings, different values: an update question, not a duplicate
    assert not is_duplicate("My dose is 10 mg", "My dose is 5 mg", similarity=0.97)


def test_find_duplicate_picks_the_best_candidate() -> None:
    candidates = [
        "I had pasta for lunch",
        "I went for a run in the park",
        "I run in the park",
        "I went running",
    ]
    assert find_duplicate("I went for a run in the park!", candidates) == 1
    assert find_duplicate("Running in the park today", candidates, [0.2, 0.91, 0.95, 0.5]) == 2
    assert find_duplicate("Something else", candidates, [0.1, 0.2, 0.3, 0.4]) is None
    with pytest.raises(InvalidInputError):
        find_duplicate("x", candidates, [0.1])
    with pytest.raises(InvalidTypeError):
        find_duplicate("x", "a string")  # type: ignore[arg-type]


def test_bad_input() -> None:
    with pytest.raises(InvalidTypeError):
        judge_conflict(None, "x")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError):
        judge_conflict("x", "y", similarity="high")  # type: ignore[arg-type]


# --- the LLM judge ---------------------------------------------------------------------------------


class RecordingChat(FakeListChatModel):
    """FakeListChatModel that keeps the conversations it was shown."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        self.seen.append(list(messages))
        return super()._call(messages, *args, **kwargs)


class TimeoutChat(RecordingChat):
    """A chat model whose endpoint times out."""

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        self.seen.append(list(messages))
        raise TimeoutError("Request timed out after 60 s")


APPLES_UPDATE = (
    '{"verdict": "update", "slot": "preference", "subject": "user", "current": "new", '
    '"reason": "The user says their taste changed."}'
)


def test_llm_verdict_from_a_realistic_reply() -> None:
    llm = RecordingChat(responses=[APPLES_UPDATE])
    judge = LLMConflictJudge(llm)
    verdict = judge.judge(
        "I hate apples now that I had a bad one", "I like apples", new_time=MAR, existing_time=JAN
    )
    assert (verdict.kind, verdict.slot, verdict.subject, verdict.current, verdict.source) == (
        "update",
        "preference",
        "user",
        "new",
        "llm",
    )
    assert verdict.reason == "The user says their taste changed."
    shown = llm.seen[0][1].content
    assert "Existing (said 2025-01-10 09:00): I like apples" in shown
    assert "New (said 2025-03-10 09:00)" in shown


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"verdict": "contradiction", "slot": "dose", "subject": "user", "current": null, '
        '"reason": "Two doses, no sign of a change."}\n```',
        '<think>5 mg vs 10 mg, no cue</think>{"verdict": "Contradiction", "slot": "dose", "subject": "user", '
        '"reason": "Two doses, no sign of a change.",}',
        'Here is my answer: {"verdict": "contradiction", "slot": "dose", "subject": "user", '
        '"reason": "Two doses, no sign of a change."} Hope that helps!',
    ],
)
def test_llm_replies_in_fences_thinking_or_prose_are_read(reply: str) -> None:
    verdict = LLMConflictJudge(RecordingChat(responses=[reply])).judge("My dose is 10 mg", "My dose is 5 mg")
    assert (verdict.kind, verdict.slot, verdict.source) == ("contradiction", "dose", "llm")
    assert (verdict.old_value, verdict.new_value) == ("5 mg", "10 mg")  # the rules agree: values kept


def test_an_llm_update_without_current_takes_it_from_the_times() -> None:
    reply = '{"verdict": "update", "slot": "address", "subject": "user", "reason": "moved"}'
    judge = LLMConflictJudge(RecordingChat(responses=[reply, reply]))
    assert (
        judge.judge("I live at 9 Oak Ave", "I live at 5 Elm St", new_time=MAR, existing_time=JAN).current
        == "new"
    )
    assert (
        judge.judge("I live at 9 Oak Ave", "I live at 5 Elm St", new_time=JAN, existing_time=MAR).current
        == "existing"
    )


def test_a_broken_reply_is_retried_with_the_error() -> None:
    llm = RecordingChat(responses=['{"verdict": "maybe"}', APPLES_UPDATE])
    verdict = LLMConflictJudge(llm).judge("I hate apples", "I like apples")
    assert verdict.source == "llm" and verdict.kind == "update"
    retry = llm.seen[1]
    assert len(retry) == 4 and "verdict must be one of" in retry[3].content


@pytest.mark.parametrize(
    "replies",
    [
        ["I think these are probably related somehow.", "Still no JSON, sorry."],
        ['{"verdict": "update", "current": "tomorrow"}', '["update"]'],
        ['{"verdict": 3}', '{"slot": "dose"}'],
        ["", "   "],
    ],
)
def test_broken_replies_fall_back_to_the_rules(replies: list[str], caplog: pytest.LogCaptureFixture) -> None:
    llm = RecordingChat(responses=replies)
    with caplog.at_level(logging.WARNING, logger="ripplemem.lifecycle.rules"):
        verdict = LLMConflictJudge(llm).judge("医生把我的剂量改成了10毫克", "我的剂量是5毫克")
    assert (verdict.kind, verdict.slot, verdict.current, verdict.source) == ("update", "dose", "new", "rules")
    assert "no usable reply after 2 tries" in verdict.reason and len(llm.seen) == 2
    assert "fell back to rules" in caplog.text


def test_a_failing_model_falls_back_at_once() -> None:
    llm = TimeoutChat(responses=["unused"])
    verdict = LLMConflictJudge(llm, max_retries=3).judge("I hate apples", "I like apples")
    assert (verdict.kind, verdict.source) == ("contradiction", "rules")
    assert "TimeoutError" in verdict.reason and len(llm.seen) == 1


def test_identical_text_needs_no_model() -> None:
    llm = RecordingChat(responses=["unused"])
    verdict = LLMConflictJudge(llm).judge("I run every day.", "i run every day")
    assert verdict.kind == "duplicate" and llm.seen == []


def test_judge_arguments_are_checked() -> None:
    with pytest.raises(InvalidTypeError, match="chat model"):
        LLMConflictJudge("gpt-4o")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="max_retries"):
        LLMConflictJudge(RecordingChat(responses=["x"]), max_retries=-1)


async def test_async_judge() -> None:
    judge = LLMConflictJudge(RecordingChat(responses=[APPLES_UPDATE]))
    assert (await judge.ajudge("I hate apples", "I like apples")).source == "llm"
    fallback = await LLMConflictJudge(TimeoutChat(responses=["x"])).ajudge("I hate apples", "I like apples")
    assert (fallback.kind, fallback.source) == ("contradiction", "rules")
