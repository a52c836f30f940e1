"""MQE and HyDE query expansion with scripted chat models, and rank fusion of the pooled candidates."""

from __future__ import annotations

import json
import logging

import pytest
from chat_fakes import ByPromptChatModel, ScriptedChatModel, timeout
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from ripplemem.core.text import keyword_tokens
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.retrieval.expansion import (
    RRF_K,
    LLMRequiredError,
    QueryExpander,
    acandidate_search,
    candidate_pool_size,
    candidate_search,
    check_expand,
    fuse_by_rank,
    parse_passage,
    parse_queries,
)

QUERY = "How do I configure the API key?"
REWRITES_JSON = (
    '["How can I set up the API key?", "Where do I put my API credentials?", '
    '"What are the steps to add an API key to the settings?"]'
)
REWRITES_CHATTY = """Sure! Here are three ways to phrase it:

1. How can I set up the API key?
2. Where do I put my API credentials?
3. What are the steps to add an API key to the settings?

Let me know if you need more variations."""
ZH_QUERY = "如何配置API密钥？"
ZH_REWRITES = "以下是改写：\n1、怎样设置API密钥？\n2、在哪里填写API凭证？\n3、API密钥的配置步骤是什么？"
PASSAGE = (
    "To configure the API key, open Settings > Credentials, paste the key into the API key "
    "field and press Save. The key is stored encrypted and used for every request."
)
ZH_PASSAGE = "配置API密钥时，打开“设置 > 凭证”，把密钥粘贴到API密钥一栏，然后点击保存。"
PROSE = "Configuring an API key is usually done in the settings page of the service you are using."


def _warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name == "ripplemem.retrieval.expansion" and r.levelno == logging.WARNING
    ]


# -- MQE -------------------------------------------------------------------------------------------


def test_mqe_json_reply_gives_the_query_first_then_its_rewrites() -> None:
    model = ScriptedChatModel(replies=[REWRITES_JSON])
    queries = QueryExpander(model, n_queries=3).mqe(QUERY)
    assert queries == [
        QUERY,
        "How can I set up the API key?",
        "Where do I put my API credentials?",
        "What are the steps to add an API key to the settings?",
    ]
    [conversation] = model.seen
    system, user = conversation
    assert isinstance(system, SystemMessage) and "JSON array of 3 strings" in system.content
    assert "same language as the query" in system.content
    assert isinstance(user, HumanMessage) and QUERY in user.content


def test_mqe_numbered_list_inside_chatty_prose_is_read() -> None:
    model = ScriptedChatModel(replies=[REWRITES_CHATTY])
    assert QueryExpander(model).mqe(QUERY)[1:] == [
        "How can I set up the API key?",
        "Where do I put my API credentials?",
        "What are the steps to add an API key to the settings?",
    ]


def test_chinese_query_is_rewritten_in_chinese_and_the_prompt_asks_for_chinese() -> None:
    model = ScriptedChatModel(replies=[ZH_REWRITES])
    queries = QueryExpander(model).mqe(ZH_QUERY)
    assert queries == [ZH_QUERY, "怎样设置API密钥？", "在哪里填写API凭证？", "API密钥的配置步骤是什么？"]
    assert "Write in Chinese, the language of the query." in model.seen[0][0].content


async def test_async_mqe_matches_sync() -> None:
    queries = await QueryExpander(ScriptedChatModel(replies=[REWRITES_JSON])).amqe(QUERY)
    assert queries[0] == QUERY and len(queries) == 4


def test_rewrites_that_repeat_the_query_or_each_other_are_dropped_and_capped_at_n() -> None:
    reply = (
        '["how do i configure the API key", "How can I set up the API key?", '
        '"HOW CAN I SET UP THE API KEY", "Where do API credentials go?", "API key setup steps"]'
    )
    queries = QueryExpander(ScriptedChatModel(replies=[reply]), n_queries=2).mqe(QUERY)
    assert queries == [QUERY, "How can I set up the API key?", "Where do API credentials go?"]


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"queries": ["How can I set up the API key?", "Where do API credentials go?"]}\n```',
        '<think>The user wants rewrites. 1. keep it short</think>["How can I set up the API key?", '
        '"Where do API credentials go?"]',
        "- How can I set up the API key?\n- Where do API credentials go?",
        "**1.** How can I set up the API key?\n**2.** Where do API credentials go?",
        "Query 1: How can I set up the API key?\nQuery 2: Where do API credentials go?",
        "['How can I set up the API key?', 'Where do API credentials go?']",  # a Python list
        '["How can I set up the API key?", "Where do API credentials go?"',  # cut off by max_tokens
        "How can I set up the API key?\nWhere do API credentials go?",  # one question per line
        '[{"query": "How can I set up the API key?"}, {"query": "Where do API credentials go?"}]',
    ],
)
def test_list_shapes_models_really_produce_are_parsed(reply: str) -> None:
    assert parse_queries(reply, QUERY, 3) == ["How can I set up the API key?", "Where do API credentials go?"]


@pytest.mark.parametrize(
    "reply, problem",
    [
        ("", "empty"),
        ("   \n  ", "empty"),
        (PROSE, "no list of queries"),
        ("I'm sorry, I can't help with that.\nPlease ask something else.", "no list of queries"),
        ('{"queries": [1, 2]', "no list of queries"),
        ('["How do I configure the API key?"]', "differs from the query"),
    ],
)
def test_junk_replies_are_rejected_with_a_reason(reply: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_queries(reply, QUERY, 3)


@pytest.mark.parametrize("junk", ["", PROSE, '{"queries": ["How can I', "[]"])
def test_junk_falls_back_to_the_original_query_with_a_warning(
    junk: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel(replies=[junk, junk])
    with caplog.at_level(logging.WARNING, logger="ripplemem.retrieval.expansion"):
        queries = QueryExpander(model, max_retries=1).mqe(QUERY)
    assert queries == [QUERY]
    assert len(model.seen) == 2
    [record] = _warnings(caplog)
    assert "mqe" in record.getMessage() and "fell back to the original query" in record.getMessage()
    assert "API key" not in caplog.text  # the user's query stays out of the log


def test_a_bad_reply_is_sent_back_with_the_problem_and_the_retry_is_used() -> None:
    model = ScriptedChatModel(replies=[PROSE, REWRITES_JSON])
    queries = QueryExpander(model).mqe(QUERY)
    assert len(queries) == 4
    retry = model.seen[1]
    assert [type(m) for m in retry] == [SystemMessage, HumanMessage, AIMessage, HumanMessage]
    assert retry[2].content == PROSE
    assert "no list of queries" in retry[3].content and "JSON array of 3" in retry[3].content


def test_a_timed_out_model_is_retried_then_the_query_is_used_alone(caplog: pytest.LogCaptureFixture) -> None:
    model = ScriptedChatModel(replies=[timeout(), timeout()])
    with caplog.at_level(logging.WARNING, logger="ripplemem.retrieval.expansion"):
        expansion = QueryExpander(model, max_retries=1).expansion(QUERY, "mqe")
    assert expansion.queries == [QUERY] and expansion.fell_back
    assert len(model.seen) == 2
    assert "TimeoutError: Request timed out after 60 s" in expansion.problems[0]
    assert "TimeoutError" in caplog.text


def test_a_timeout_then_a_good_reply_recovers() -> None:
    model = ScriptedChatModel(replies=[timeout(), REWRITES_JSON])
    assert QueryExpander(model).mqe(QUERY) == [QUERY, *json.loads(REWRITES_JSON)]
    assert len(model.seen) == 2  # the timed-out call was retried once


async def test_async_timeout_falls_back_without_raising() -> None:
    model = ScriptedChatModel(replies=[timeout(), timeout()])
    assert await QueryExpander(model).amqe(QUERY) == [QUERY]


def test_no_retries_means_one_call() -> None:
    model = ScriptedChatModel(replies=[""])
    assert QueryExpander(model, max_retries=0).mqe(QUERY) == [QUERY]
    assert len(model.seen) == 1


# -- HyDE ------------------------------------------------------------------------------------------


def test_hyde_returns_the_passage_without_its_preamble() -> None:
    model = ScriptedChatModel(replies=["Here is a hypothetical passage:\n\n" + PASSAGE])
    assert QueryExpander(model).hyde(QUERY) == PASSAGE
    system, user = model.seen[0]
    assert "about 100 words" in system.content and "never shown as an answer" in system.content
    assert user.content == f"Question: {QUERY}"


def test_hyde_for_a_chinese_question_asks_for_chinese() -> None:
    model = ScriptedChatModel(replies=[ZH_PASSAGE])
    assert QueryExpander(model).hyde(ZH_QUERY) == ZH_PASSAGE
    assert "Write in Chinese, the language of the question." in model.seen[0][0].content


async def test_async_hyde_matches_sync() -> None:
    assert await QueryExpander(ScriptedChatModel(replies=[PASSAGE])).ahyde(QUERY) == PASSAGE


def test_a_refusal_is_retried_and_the_passage_used() -> None:
    model = ScriptedChatModel(replies=["I'm sorry, but I don't have access to your settings.", PASSAGE])
    assert QueryExpander(model).hyde(QUERY) == PASSAGE
    assert "refusal" in model.seen[1][-1].content


@pytest.mark.parametrize("junk", ["", "抱歉，我无法回答这个问题。", QUERY, timeout()])
def test_hyde_junk_falls_back_to_the_query_itself(
    junk: str | Exception, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel(replies=[junk, junk])
    with caplog.at_level(logging.WARNING, logger="ripplemem.retrieval.expansion"):
        assert QueryExpander(model).hyde(QUERY) == QUERY
    assert "hyde" in _warnings(caplog)[0].getMessage()


def test_passage_is_cut_at_a_sentence_end() -> None:
    text = "The key lives in settings. " * 200
    passage = parse_passage(text, QUERY, max_chars=300)
    assert len(passage) <= 300 and passage.endswith("settings.")


def test_a_json_wrapped_passage_and_times_in_prose_survive() -> None:
    assert parse_passage('{"passage": "' + PASSAGE + '"}', QUERY) == PASSAGE
    assert (
        parse_passage("Okay, so the meeting was at 3:00 pm on Friday.", QUERY)
        == "Okay, so the meeting was at 3:00 pm on Friday."
    )


# -- both, and the expand() seam ------------------------------------------------------------------------


def _both_model(mqe: list[str | Exception], hyde: list[str | Exception]) -> ByPromptChatModel:
    return ByPromptChatModel(script={"rewrite search queries": mqe, "write the passage": hyde})


def test_both_searches_the_query_its_rewrites_and_the_passage() -> None:
    model = _both_model([REWRITES_JSON], [PASSAGE])
    expander = QueryExpander(model)
    expansion = expander.expansion(QUERY, "both")
    assert expansion.queries == [
        QUERY,
        "How can I set up the API key?",
        "Where do I put my API credentials?",
        "What are the steps to add an API key to the settings?",
        PASSAGE,
    ]
    assert expansion.passage == PASSAGE and not expansion.problems
    assert len(model.seen) == 2


async def test_async_both_runs_the_two_requests_and_keeps_the_order() -> None:
    queries = await QueryExpander(_both_model([REWRITES_JSON], [PASSAGE])).aexpand(QUERY, "both")
    assert queries[0] == QUERY and queries[-1] == PASSAGE and len(queries) == 5


def test_both_keeps_what_worked_when_one_half_fails() -> None:
    model = _both_model([REWRITES_JSON], [timeout(), ""])
    expansion = QueryExpander(model).expansion(QUERY, "both")
    assert expansion.passage is None and len(expansion.paraphrases) == 3
    assert len(expansion.problems) == 1 and expansion.problems[0].startswith("hyde:")


def test_expand_modes() -> None:
    assert QueryExpander(ScriptedChatModel(replies=[PASSAGE])).expand(QUERY, "hyde") == [QUERY, PASSAGE]
    assert QueryExpander(ScriptedChatModel(replies=[REWRITES_JSON])).expand(QUERY)[0] == QUERY
    with pytest.raises(InvalidInputError, match="mode must be one of"):
        QueryExpander(ScriptedChatModel(replies=[])).expand(QUERY, "rerank")


def test_without_a_model_the_error_says_how_to_pass_one() -> None:
    expected = r"expand='mqe' needs an LLM: pass llm=\.\.\. to RippleMem\(\.\.\.\)"
    with pytest.raises(LLMRequiredError, match=expected):
        check_expand("mqe", None)
    with pytest.raises(InvalidInputError, match="expand='hyde' needs an LLM"):  # a subclass of it
        check_expand("hyde", None)
    with pytest.raises(LLMRequiredError, match="QueryExpander needs an LLM"):
        QueryExpander(None)


def test_check_expand_accepts_modes_and_none_and_rejects_the_rest() -> None:
    model = ScriptedChatModel(replies=[])
    assert check_expand(None, None) is None
    assert check_expand("both", model) == "both"
    with pytest.raises(InvalidInputError, match="expand must be one of 'mqe', 'hyde', 'both' or None"):
        check_expand("MQE", model)
    with pytest.raises(InvalidTypeError, match="LangChain chat model"):
        check_expand("mqe", "gpt-4o")


@pytest.mark.parametrize("query", ["", "   ", None, 42])
def test_bad_queries_are_refused_before_any_call(query: object) -> None:
    model = ScriptedChatModel(replies=[])
    with pytest.raises((InvalidInputError, InvalidTypeError)):
        QueryExpander(model).mqe(query)  # type: ignore[arg-type]
    assert model.seen == []


def test_bad_settings_are_refused() -> None:
    model = ScriptedChatModel(replies=[])
    with pytest.raises(InvalidInputError, match="n_queries must be >= 1"):
        QueryExpander(model, n_queries=0)
    with pytest.raises(InvalidTypeError, match="max_retries must be an integer"):
        QueryExpander(model, max_retries=1.5)  # type: ignore[arg-type]


# -- pooling and rank fusion --------------------------------------------------------------------------


def test_pool_is_four_times_k_but_at_least_twenty() -> None:
    assert [candidate_pool_size(k) for k in (1, 5, 6, 10, 50)] == [20, 20, 24, 40, 200]
    with pytest.raises(InvalidInputError):
        candidate_pool_size(0)


def test_rrf_scores_use_the_documented_constant() -> None:
    assert RRF_K == 60
    fused = dict(fuse_by_rank([["a", "b"], ["b"]]))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)


def test_agreement_across_lists_beats_one_top_spot_and_ids_are_deduplicated() -> None:
    fused = fuse_by_rank([["solo", "shared", "x"], ["shared", "y"], ["z", "shared", "shared"]], k=3)
    assert [doc for doc, _ in fused] == ["shared", "solo", "z"]
    assert len({doc for doc, _ in fuse_by_rank([["a", "a", "b"], ["b", "a"]])}) == 2


def test_ties_keep_the_first_list_first_and_weights_shift_the_balance() -> None:
    assert [d for d, _ in fuse_by_rank([["original"], ["rewrite"]])] == ["original", "rewrite"]
    weighted = fuse_by_rank([["original"], ["rewrite"]], weights=[1.0, 2.0])
    assert [d for d, _ in weighted] == ["rewrite", "original"]
    with pytest.raises(InvalidInputError, match="weights has 1 entries for 2 ranked lists"):
        fuse_by_rank([["a"], ["b"]], weights=[1.0])
    with pytest.raises(InvalidTypeError):
        fuse_by_rank(["abc"])  # type: ignore[list-item]
    assert fuse_by_rank([]) == [] and fuse_by_rank([[], []], k=5) == []


NOTES = {
    "n1": "Paste your API credentials into Settings > Credentials and press Save.",
    "n2": "The dashboard shows usage per day.",
    "n3": "Billing is monthly.",
    "n4": "Configure the proxy under Network.",
}


def _keyword_search(query: str, pool: int) -> list[str]:
    """A tiny BM25 stand-in: notes ranked by shared keywords, best first."""
    words = set(keyword_tokens(query, drop_stopwords=True))
    scored = [
        (len(words & set(keyword_tokens(text, drop_stopwords=True))), key) for key, text in NOTES.items()
    ]
    return [key for score, key in sorted(scored, reverse=True) if score > 0][:pool]


def test_a_rewrite_finds_a_note_the_original_wording_misses() -> None:
    original = "Where do I set my secret token?"
    assert "n1" not in _keyword_search(original, 20)
    expander = QueryExpander(
        ScriptedChatModel(
            replies=['["Where do I put my API credentials?", "How do I configure the credentials?"]']
        )
    )
    pooled = candidate_search(expander.mqe(original), _keyword_search, k=2)
    assert pooled[0][0] == "n1"


async def test_async_candidate_search_pools_every_query_with_the_pool_size() -> None:
    asked: list[tuple[str, int]] = []

    async def search(query: str, pool: int) -> list[str]:
        asked.append((query, pool))
        return _keyword_search(query, pool)

    pooled = await acandidate_search(["API credentials", "proxy network"], search, k=6)
    assert sorted(asked) == [("API credentials", 24), ("proxy network", 24)]
    assert {doc for doc, _ in pooled} == {"n1", "n4"}
