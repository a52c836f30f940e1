"""Grounded answers with [n] citations mapped back to memory ids, from scripted chat models."""

from __future__ import annotations

import logging
from datetime import date, datetime

import pytest
from chat_fakes import ScriptedChatModel, timeout
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from ripplemem.core.types import Hit, Memory
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.llm.answer import ContextItem, aanswer_question, answer_question, cite, says_unknown
from ripplemem.retrieval.expansion import LLMRequiredError

CONTEXT = [
    ("mem-ferrari", "Calvin bought a Ferrari 488 in Tokyo.", date(2024, 3, 15)),
    ("mem-tea", "Calvin drinks green tea every morning.", datetime(2024, 4, 2, 8, 30)),
    ("doc-manual#4", "The Ferrari 488 has a 3.9-litre twin-turbo V8.", None),
]
QUESTION = "What car did Calvin buy, and what engine does it have?"
ZH_CONTEXT = [
    ContextItem("m-1", "刘慈欣写了《三体》。", date(2023, 5, 1)),
    ContextItem("m-2", "我上周读完了《三体》的第二部。", date(2024, 6, 10), source="reading-log"),
]


def test_cited_numbers_become_memory_ids_and_the_prompt_is_grounded() -> None:
    reply = "Calvin bought a Ferrari 488 [1], which has a 3.9-litre twin-turbo V8 [3]."
    model = ScriptedChatModel(replies=[reply])
    answer = answer_question(model, QUESTION, CONTEXT)
    assert answer.text == reply
    assert answer.citations == ["mem-ferrari", "doc-manual#4"]
    assert answer.answered and answer.cited_by == "model" and answer.error is None
    assert answer.context_ids == ["mem-ferrari", "mem-tea", "doc-manual#4"]
    [conversation] = model.seen
    system, user = conversation
    assert isinstance(system, SystemMessage)
    assert "only facts stated in the context" in system.content and "like [1]" in system.content
    assert "don't know" in system.content and "same language as the question" in system.content
    assert isinstance(user, HumanMessage)
    assert user.content == (
        "Context:\n[1] (2024-03-15) Calvin bought a Ferrari 488 in Tokyo.\n"
        "[2] (2024-04-02 08:30) Calvin drinks green tea every morning.\n"
        "[3] (undated) The Ferrari 488 has a 3.9-litre twin-turbo V8.\n\n"
        f"Question: {QUESTION}"
    )


def test_chinese_question_full_width_brackets_and_source_labels() -> None:
    model = ScriptedChatModel(replies=["《三体》的作者是刘慈欣【1】，你上周读完了第二部【2】。"])
    answer = answer_question(model, "《三体》是谁写的？我读到哪了？", ZH_CONTEXT)
    assert answer.citations == ["m-1", "m-2"]
    assert answer.text == "《三体》的作者是刘慈欣[1]，你上周读完了第二部[2]。"
    system, user = model.seen[0]
    assert "Answer in Chinese, the language of the question." in system.content
    assert "[2] (2024-06-10, reading-log) 我上周读完了《三体》的第二部。" in user.content


async def test_async_answer_matches_sync() -> None:
    model = ScriptedChatModel(replies=["He bought a Ferrari 488 [1]."])
    answer = await aanswer_question(model, QUESTION, CONTEXT)
    assert answer.citations == ["mem-ferrari"] and answer.answered


@pytest.mark.parametrize(
    "reply",
    [
        "I don't know.",
        "The context does not mention what Calvin's sister does.",
        "I do not have enough information to answer that.",
        "我不知道。",
        "上下文中没有提到他的妹妹。",
    ],
)
def test_a_model_that_does_not_know_says_so_and_cites_nothing(reply: str) -> None:
    answer = answer_question(ScriptedChatModel(replies=[reply]), "What does Calvin's sister do?", CONTEXT)
    assert answer.text == reply and not answer.answered and answer.citations == []


def test_partial_knowledge_with_a_citation_counts_as_an_answer() -> None:
    reply = "The context does not say when, but Calvin bought the Ferrari 488 in Tokyo [1]."
    answer = answer_question(ScriptedChatModel(replies=[reply]), "When did Calvin buy his car?", CONTEXT)
    assert answer.answered and answer.citations == ["mem-ferrari"]


def test_a_model_that_ignores_the_citation_format_still_gets_citations() -> None:
    reply = "He bought a Ferrari 488 in Tokyo; it has a twin-turbo V8 engine."
    answer = answer_question(ScriptedChatModel(replies=[reply]), QUESTION, CONTEXT)
    assert answer.text == reply and answer.answered
    assert answer.cited_by == "inferred"
    assert answer.citations[0] in ("mem-ferrari", "doc-manual#4") and "mem-tea" not in answer.citations


def test_an_answer_sharing_no_words_with_the_context_cites_nothing() -> None:
    answer = answer_question(ScriptedChatModel(replies=["Probably a sports car."]), QUESTION, CONTEXT)
    assert answer.citations == [] and answer.cited_by == "none" and answer.answered


def test_citations_to_entries_that_do_not_exist_are_removed() -> None:
    answer = answer_question(
        ScriptedChatModel(replies=["He bought a Ferrari 488 [1][7], see also [12]."]), QUESTION, CONTEXT
    )
    assert answer.citations == ["mem-ferrari"]
    assert answer.text == "He bought a Ferrari 488 [1], see also."


@pytest.mark.parametrize(
    "reply, ids",
    [
        ("A Ferrari [1, 3].", ["mem-ferrari", "doc-manual#4"]),
        ("A Ferrari [1-3].", ["mem-ferrari", "mem-tea", "doc-manual#4"]),
        ("A Ferrari [^3] [source 1].", ["doc-manual#4", "mem-ferrari"]),
        ("A Ferrari (source 2).", ["mem-tea"]),
        ("A Ferrari, per mem-ferrari.", ["mem-ferrari"]),
        ("一辆法拉利【1、3】。", ["mem-ferrari", "doc-manual#4"]),
    ],
)
def test_citation_shapes(reply: str, ids: list[str]) -> None:
    items = [ContextItem(*entry) for entry in CONTEXT]
    assert cite(reply, items)[1] == ids


def test_no_context_answers_unknown_without_calling_the_model() -> None:
    model = ScriptedChatModel(replies=[])
    english = answer_question(model, QUESTION, [])
    chinese = answer_question(model, "我的生日是哪天？", [("m", "   ", None)])
    assert (english.text, english.answered) == ("I don't know.", False)
    assert (chinese.text, chinese.answered) == ("我不知道。", False)
    assert model.seen == []


def test_an_empty_reply_is_retried(caplog: pytest.LogCaptureFixture) -> None:
    model = ScriptedChatModel(replies=["", "He bought a Ferrari 488 [1]."])
    answer = answer_question(model, QUESTION, CONTEXT)
    assert answer.citations == ["mem-ferrari"] and len(model.seen) == 2
    assert [type(m) for m in model.seen[1]] == [SystemMessage, HumanMessage, AIMessage, HumanMessage]


@pytest.mark.parametrize(
    "replies, problem",
    [
        (["", "  "], "the reply is empty"),
        (["<think>Let me think about the Ferrari.</think>", ""], "the reply is empty"),
        ([timeout(), timeout()], "TimeoutError: Request timed out after 60 s"),
    ],
)
def test_a_failing_model_gives_an_error_not_an_exception(
    replies: list[str | Exception], problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="ripplemem.llm.answer"):
        answer = answer_question(ScriptedChatModel(replies=replies), QUESTION, CONTEXT)
    assert answer.text == "" and not answer.answered and answer.citations == []
    assert answer.error is not None and problem in answer.error
    assert "grounded answer failed" in caplog.text and "Ferrari" not in caplog.text


async def test_async_timeout_gives_an_error() -> None:
    answer = await aanswer_question(ScriptedChatModel(replies=[timeout()]), QUESTION, CONTEXT, max_retries=0)
    assert answer.error is not None and "TimeoutError" in answer.error


def test_thinking_is_stripped_from_the_answer() -> None:
    reply = "<think>Entry 1 says Ferrari.</think>\nCalvin bought a Ferrari 488 [1]."
    assert (
        answer_question(ScriptedChatModel(replies=[reply]), QUESTION, CONTEXT).text
        == "Calvin bought a Ferrari 488 [1]."
    )


def test_context_past_the_token_budget_is_left_out() -> None:
    text = "Calvin went running in the park and then had breakfast. " * 10
    long = [(f"m{i}", text, None) for i in range(20)]
    model = ScriptedChatModel(replies=["He ran [1]."])
    answer = answer_question(model, "What did Calvin do?", long, max_context_tokens=400)
    assert 1 <= len(answer.context_ids) < 20
    assert f"[{len(answer.context_ids) + 1}]" not in model.seen[0][1].content


def test_one_entry_larger_than_the_budget_is_cut_not_dropped() -> None:
    model = ScriptedChatModel(replies=["Yes [1]."])
    answer = answer_question(model, "Did he run?", [("big", "word " * 5000, None)], max_context_tokens=100)
    assert answer.context_ids == ["big"] and len(model.seen[0][1].content) < 1000


def test_today_is_given_for_relative_dates() -> None:
    model = ScriptedChatModel(replies=["Last month [1]."])
    answer_question(model, "When did Calvin buy the car?", CONTEXT, now=date(2024, 4, 20))
    assert "Today is 2024-04-20." in model.seen[0][0].content


def test_context_items_come_from_recall_hits() -> None:
    memory = Memory(
        id="m-42",
        user_id="alice",
        type="episodic",
        content="Alice adopted a cat named Miso.",
        created_at=datetime(2024, 1, 5, 9, 0),
        source="turn-7",
    )
    item = ContextItem.from_hit(Hit(memory=memory, score=0.9))
    assert item == ContextItem("m-42", memory.content, datetime(2024, 1, 5, 9, 0), "turn-7")
    answer = answer_question(ScriptedChatModel(replies=["Miso [1]."]), "What is my cat called?", [item])
    assert answer.citations == ["m-42"]


def test_without_a_model_the_error_says_how_to_pass_one() -> None:
    with pytest.raises(LLMRequiredError, match=r"needs an LLM: pass llm=\.\.\. to ask\(\.\.\.\)"):
        answer_question(None, QUESTION, CONTEXT)


@pytest.mark.parametrize(
    "context, error",
    [
        ("Calvin bought a Ferrari", InvalidTypeError),
        ([("m1",)], InvalidTypeError),
        ([("", "text", None)], InvalidInputError),
        ([("m1", "text", "2024-03-15")], InvalidTypeError),
        ([{"id": "m1", "text": "x"}], InvalidTypeError),
    ],
)
def test_bad_context_is_refused_before_any_call(context: object, error: type[Exception]) -> None:
    model = ScriptedChatModel(replies=[])
    with pytest.raises(error):
        answer_question(model, QUESTION, context)  # type: ignore[arg-type]
    assert model.seen == []


def test_says_unknown_does_not_fire_on_real_answers() -> None:
    assert not says_unknown("Calvin bought a Ferrari 488 in Tokyo.")
    assert not says_unknown("刘慈欣写了《三体》。")
    assert says_unknown("Sorry, I can't find that in your notes.")
