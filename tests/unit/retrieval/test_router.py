"""Routing queries to memories, documents or both: rule table in English and Chinese, LLM router."""

from __future__ import annotations

import json
import logging

import pytest
from chat_fakes import ScriptedChatModel, timeout

from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.retrieval.expansion import LLMRequiredError
from ripplemem.retrieval.route_llm import LLMRouter
from ripplemem.retrieval.route_rules import (
    QueryClass,
    RouteDecision,
    Router,
    RuleRouter,
    check_route,
    classify_query,
    decide,
    route,
)

RICH = {"memory_count": 250, "document_count": 1200}

# (query, expected label, expected target with a rich memory and documents ingested)
TABLE = [
    # personal references
    ("What did I tell you about my sister's wedding?", "memory_primary", "memory"),
    ("Remind me what my doctor said about cholesterol", "memory_primary", "memory"),
    ("What is my favourite colour?", "memory_primary", "memory"),
    ("Do you remember the restaurant we went to?", "memory_primary", "memory"),
    ("What did I say about Python?", "memory_primary", "memory"),
    ("How do I fix my printer?", "memory_primary", "memory"),
    ("what was the name of the book you recommended", "memory_primary", "memory"),
    ("我之前说过什么？", "memory_primary", "memory"),  # from the routing source's table
    ("我的生日是哪天？", "memory_primary", "memory"),
    ("我的血压正常吗？", "memory_primary", "memory"),
    ("你跟我说过什么", "memory_primary", "memory"),
    ("你上次推荐的那本书叫什么？", "memory_primary", "memory"),
    # personal and temporal
    ("What did we discuss last week?", "memory_primary", "memory"),
    ("What did I eat yesterday?", "memory_primary", "memory"),
    ("where did i park two days ago", "memory_primary", "memory"),
    ("我昨天吃了什么？", "memory_primary", "memory"),
    ("三个月前我们去了哪里？", "memory_primary", "memory"),
    ("两周前我跟医生说了什么？", "memory_primary", "memory"),
    ("我们上周开会决定了什么？", "memory_primary", "memory"),
    # temporal only
    ("What happened two months ago?", "memory_primary", "memory"),
    ("上周讨论了什么?", "memory_primary", "memory"),  # from the routing source's table
    ("周三开会说了什么", "memory_primary", "memory"),
    # named entity + factual
    ("What is Transformer?", "documents_primary", "documents"),
    ("Who wrote The Three-Body Problem?", "documents_primary", "documents"),
    ("What does HTTP stand for?", "documents_primary", "documents"),
    ("How do I configure the API key?", "documents_primary", "documents"),  # a how-to, not about the user
    ("Tell me about Kubernetes", "documents_primary", "documents"),
    ("When was the Eiffel Tower built?", "documents_primary", "documents"),
    ("What's the capital of France?", "documents_primary", "documents"),
    ("What is the US GDP?", "documents_primary", "documents"),  # "US" is not "us"
    ("Summarize the chapter about World War I", "documents_primary", "documents"),  # nor "War I" "I"
    ("什么是Transformer?", "documents_primary", "documents"),  # from the routing source's table
    ("谁写了《三体》？", "documents_primary", "documents"),
    ("鲁迅是谁？", "documents_primary", "documents"),
    ("如何配置API密钥？", "documents_primary", "documents"),
    ("我该如何配置API密钥？", "documents_primary", "documents"),  # 我该如何: a how-to
    ("我国的GDP是多少？", "documents_primary", "documents"),  # 我国: the country, not the user
    ("Python和Java有什么区别？", "documents_primary", "documents"),
    ("《红楼梦》讲了什么？", "documents_primary", "documents"),
    ("What year did World War II end?", "documents_primary", "documents"),
    ("总结一下《人类简史》的观点", "documents_primary", "documents"),
    ("请告诉我什么是Transformer", "documents_primary", "documents"),  # 告诉我: a request idiom
    # personal and factual about an entity: both, memory first
    ("我的Python代码为什么报错？", "memory_primary", "both"),
    ("What is my Kubernetes cluster called?", "memory_primary", "both"),
    # no clear signal: both
    ("How does photosynthesis work?", "hybrid", "both"),
    ("Explain gradient descent", "hybrid", "both"),
    ("Ideas for a weekend trip", "hybrid", "both"),
    ("Can I take ibuprofen on an empty stomach?", "hybrid", "both"),
    ("深度学习原理是什么?", "hybrid", "both"),  # the routing source's table: RAG + Memory
    ("告诉我什么是量子计算", "hybrid", "both"),
    ("推荐几个周末活动", "hybrid", "both"),
]


def test_the_table_has_enough_english_and_chinese_queries() -> None:
    chinese = [q for q, _, _ in TABLE if any("\u4e00" <= c <= "\u9fff" for c in q)]
    assert len(TABLE) >= 30 and len(chinese) >= 15 and len(TABLE) - len(chinese) >= 15


@pytest.mark.parametrize("query, label, target", TABLE, ids=[q for q, _, _ in TABLE])
def test_rule_routing_table(query: str, label: str, target: str) -> None:
    decision = route(query, **RICH)
    assert (decision.query_class.label, decision.target) == (label, target), decision.reasons  # type: ignore[union-attr]
    assert decision.order[0] in ("memory", "documents") and len(decision.reasons) >= 2


@pytest.mark.parametrize(
    "query, memory_count, document_count, target, order",
    [
        # few memories: a memory-first query also reads the documents, memory first
        ("What did I eat yesterday?", 5, 300, "both", ("memory", "documents")),
        ("上周讨论了什么?", 3, 300, "both", ("memory", "documents")),
        ("What did I eat yesterday?", 20, 300, "memory", ("memory",)),  # at the threshold it is rich
        # no memories at all: documents only, even for personal queries
        ("What is my favourite colour?", 0, 300, "documents", ("documents",)),
        ("我的生日是哪天？", 0, 300, "documents", ("documents",)),
        # no documents: memory only, even for encyclopaedic queries
        ("What is Transformer?", 250, 0, "memory", ("memory",)),
        ("什么是Transformer?", 0, 0, "memory", ("memory",)),
        # documents-first queries ignore memory richness
        ("What is Transformer?", 3, 300, "documents", ("documents",)),
        # unclear queries merge both, documents first (the routing source: rag, memory, merge)
        ("深度学习原理是什么?", 250, 300, "both", ("documents", "memory")),
        ("深度学习原理是什么?", 4, 300, "both", ("documents", "memory")),
    ],
)
def test_how_rich_the_store_is_changes_the_route(
    query: str, memory_count: int, document_count: int, target: str, order: tuple[str, ...]
) -> None:
    decision = route(query, memory_count=memory_count, document_count=document_count)
    assert (decision.target, decision.order) == (target, order), decision.reasons


def test_reasons_say_why_in_words_a_person_can_read() -> None:
    decision = route("What did I eat yesterday?", memory_count=5, document_count=300)
    assert decision.reasons[0].startswith(
        "memory first (rules: personal reference 'I'; relative time 'yesterday')"
    )
    assert "memory is sparse (5 memories, under 20)" in decision.reasons[1]
    none = route("什么是Transformer?", memory_count=0, document_count=10)
    assert "the user has no memories yet" in none.reasons[-1]


def test_an_entity_the_user_has_memories_of_pulls_the_query_back_to_memory() -> None:
    plain = route("Who is Alice?", **RICH)
    known = route("Who is Alice?", **RICH, known_to_memory=["Alice"])
    assert plain.target == "documents"
    assert (known.target, known.order) == ("both", ("memory", "documents"))
    assert "the user's memories mention 'Alice'" in known.reasons[-1]


def test_decision_and_class_serialise_to_json_for_the_recall_result() -> None:
    decision = route("我昨天吃了什么？", **RICH)
    data = json.loads(json.dumps(decision.as_dict(), ensure_ascii=False))
    assert data["target"] == "memory" and data["order"] == ["memory"]
    assert data["query_class"]["personal"] is True and data["query_class"]["temporal"] is True
    assert data["query_class"]["source"] == "rules"
    assert decision.uses_memory and not decision.uses_documents


def test_confidence_is_higher_for_clear_cues_than_for_none() -> None:
    clear = classify_query("What did my doctor say last week?").confidence
    conflicted = classify_query("What is my Kubernetes cluster called?").confidence
    unclear = classify_query("Ideas for a weekend trip").confidence
    assert 1.0 >= clear > conflicted and clear > unclear >= 0.0


def test_signals_are_reported_separately() -> None:
    cls = classify_query("三个月前我们去了哪里？")
    assert (cls.personal, cls.temporal, cls.named_entity) == (True, True, False)
    cls = classify_query("Who wrote The Three-Body Problem?")
    assert (cls.personal, cls.temporal, cls.named_entity, cls.factual) == (False, False, True, True)


@pytest.mark.parametrize("query", ["", "   ", None, 3])
def test_bad_queries_are_refused(query: object) -> None:
    with pytest.raises((InvalidInputError, InvalidTypeError)):
        route(query, **RICH)  # type: ignore[arg-type]


def test_bad_counts_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="memory_count must be >= 0"):
        route("hi", memory_count=-1, document_count=0)
    with pytest.raises(InvalidTypeError, match="document_count must be an integer"):
        route("hi", memory_count=1, document_count=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="known_to_memory must be a list"):
        route("hi", **RICH, known_to_memory="Alice")


def test_check_route_accepts_auto_targets_and_none() -> None:
    assert [check_route(v) for v in ("auto", "memory", "documents", "both", None)] == [
        "auto",
        "memory",
        "documents",
        "both",
        None,
    ]
    expected = "route must be 'auto', 'memory', 'documents', 'both' or None"
    with pytest.raises(InvalidInputError, match=expected):
        check_route("rag")


def test_rule_router_fits_the_router_protocol() -> None:
    router: Router = RuleRouter(sparse_below=3)
    assert router.route("What did I eat yesterday?", memory_count=5, document_count=9).target == "memory"


async def test_rule_router_async() -> None:
    decision = await RuleRouter().aroute("什么是Transformer?", **RICH)
    assert decision.target == "documents"


# -- LLM router --------------------------------------------------------------------------------------

GOOD = (
    '{"personal": false, "temporal": false, "named_entity": true, "factual": true, '
    '"route": "documents", "confidence": 0.92, "reason": "Asks what a named model is."}'
)


def test_llm_router_uses_the_models_class() -> None:
    model = ScriptedChatModel(replies=[GOOD])
    decision = LLMRouter(model).route("Tell me about that model everyone talks about", **RICH)
    cls = decision.query_class
    assert isinstance(cls, QueryClass) and cls.source == "llm"
    assert (cls.label, cls.confidence, decision.target) == ("documents_primary", 0.92, "documents")
    assert "llm: Asks what a named model is." in decision.reasons[0]
    system, user = model.seen[0]
    assert '"route": "memory"|"documents"|"both"' in system.content and "How do I" in system.content
    assert user.content == "Query: Tell me about that model everyone talks about"


def test_llm_reply_in_a_fence_after_thinking_with_string_flags() -> None:
    reply = (
        "<think>The user asks about their own past.</think>\n```json\n"
        '{"personal": "yes", "temporal": "true", "named_entity": 0, "factual": false, '
        '"route": "memory"}\n```'
    )
    cls = LLMRouter(ScriptedChatModel(replies=[reply])).classify("上次我们聊了什么？")
    assert (cls.label, cls.personal, cls.temporal, cls.named_entity) == ("memory_primary", True, True, False)
    assert cls.confidence == 0.7  # none given


def test_llm_reply_without_a_route_is_decided_from_its_flags() -> None:
    reply = '{"personal": false, "temporal": true, "named_entity": false, "factual": false}'
    cls = LLMRouter(ScriptedChatModel(replies=[reply])).classify("What happened recently?")
    assert cls.label == "memory_primary" and cls.source == "llm"


@pytest.mark.parametrize(
    "junk",
    [
        "",
        "This query is about the user's personal life, so search memory.",
        '{"personal": true, "route": "memory"',  # cut off
        '{"answer": "memory"}',
        '{"personal": "maybe", "route": "memory"}',
        '{"route": "the internet"}',
    ],
)
def test_broken_llm_output_falls_back_to_the_rules(junk: str, caplog: pytest.LogCaptureFixture) -> None:
    model = ScriptedChatModel(replies=[junk, junk])
    with caplog.at_level(logging.WARNING, logger="ripplemem.retrieval.route_rules"):
        decision = LLMRouter(model).route("What did I eat yesterday?", **RICH)
    cls = decision.query_class
    assert cls is not None and cls.source == "rules" and cls.label == "memory_primary"
    assert decision.target == "memory" and len(model.seen) == 2
    assert "rules decided" in cls.cues[-1]
    assert "fell back to the rules" in caplog.text and "yesterday" not in caplog.text


def test_a_bad_llm_reply_is_retried_with_the_problem() -> None:
    model = ScriptedChatModel(replies=["memory, I think", GOOD])
    assert LLMRouter(model).classify("What is BERT?").source == "llm"
    assert "no JSON object" in model.seen[1][-1].content


def test_an_unreachable_model_routes_by_rules() -> None:
    model = ScriptedChatModel(replies=[timeout()])
    decision = LLMRouter(model, max_retries=0).route("什么是Transformer?", **RICH)
    assert decision.target == "documents" and decision.query_class.source == "rules"  # type: ignore[union-attr]


async def test_async_llm_router_and_its_fallback() -> None:
    good = await LLMRouter(ScriptedChatModel(replies=[GOOD])).aroute("What is BERT?", **RICH)
    assert good.query_class.source == "llm"  # type: ignore[union-attr]
    broken = await LLMRouter(ScriptedChatModel(replies=[timeout(), "{"])).aroute("我昨天吃了什么？", **RICH)
    assert broken.query_class.source == "rules" and broken.target == "memory"  # type: ignore[union-attr]


def test_llm_router_needs_a_model() -> None:
    with pytest.raises(LLMRequiredError, match="LLMRouter needs an LLM"):
        LLMRouter(None)
    router: Router = LLMRouter(ScriptedChatModel(replies=[GOOD]))
    assert isinstance(router.route("What is BERT?", **RICH), RouteDecision)


def test_decide_rejects_an_unknown_label() -> None:
    with pytest.raises(InvalidInputError, match="query_class.label"):
        decide(QueryClass(label="web"), **RICH)
