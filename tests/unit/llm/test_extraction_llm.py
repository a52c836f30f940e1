"""LLM entity and relation extraction with scripted fake chat models, and user-passed relations."""

from __future__ import annotations

import logging
import subprocess
import sys
from typing import Any

import pytest
from langchain_core.language_models import SimpleChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import Field

from ripplemem.core.relations import Relation, coerce_relations
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.llm.extraction import LLMExtractor

CALVIN = "Calvin bought a Ferrari 488 in Tokyo last spring."
CALVIN_JSON = (
    '{"entities": [{"name": "Calvin", "type": "person"}, {"name": "Ferrari 488", "type": "product"}, '
    '{"name": "Tokyo", "type": "place"}, {"name": "last spring", "type": "date"}], '
    '"relations": [{"subject": "Calvin", "predicate": "bought", "object": "Ferrari 488"}, '
    '{"subject": "Calvin", "predicate": "bought in", "object": "Tokyo"}]}'
)
LIU = "刘慈欣写了《三体》。"
LIU_FENCED = """以下是提取结果：
```json
{
  "entities": [
    {"name": "刘慈欣", "type": "person"},
    {"name": "《三体》", "type": "title"}
  ],
  "relations": [
    {"subject": "刘慈欣", "predicate": "wrote", "object": "《三体》"}
  ]
}
```"""
NO_JSON = "Sure! Calvin is a person, and he bought a Ferrari 488 in Tokyo."


class RecordingChatModel(FakeListChatModel):
    """FakeListChatModel that keeps every conversation it was shown."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        self.seen.append(list(messages))
        return super()._call(messages, *args, **kwargs)


class UnreachableChatModel(RecordingChatModel):
    """A chat model whose endpoint times out."""

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        self.seen.append(list(messages))
        raise TimeoutError("Request timed out after 60 s")


class ByTextChatModel(SimpleChatModel):
    """Answers each text from its own script, so threaded batches stay deterministic."""

    script: dict[str, list[str | Exception]]
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "by-text"

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        self.seen.append(list(messages))
        answer = next(replies for text, replies in self.script.items() if text in messages[1].content).pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def _facts(result: Any) -> tuple[dict[str, str], set[tuple[str, str, str]]]:
    entities = {e.canonical: e.type for e in result.entities}
    relations = {(r.subject, r.predicate, r.object) for r in result.relations}
    return entities, relations


def test_english_sentence_gives_entities_and_normalised_relations() -> None:
    model = RecordingChatModel(responses=[CALVIN_JSON])
    result = LLMExtractor(model).extract(CALVIN)
    entities, relations = _facts(result)
    assert entities == {"calvin": "person", "ferrari 488": "product", "tokyo": "place", "last spring": "date"}
    assert relations == {("Calvin", "bought", "Ferrari 488"), ("Calvin", "bought_in", "Tokyo")}
    assert result.error is None
    [conversation] = model.seen
    system, user = conversation
    assert isinstance(system, SystemMessage) and '"entities"' in system.content
    assert isinstance(user, HumanMessage) and CALVIN in user.content


def test_fenced_chinese_answer_keeps_chinese_names_and_meets_rule_keys() -> None:
    model = RecordingChatModel(responses=[LIU_FENCED])
    extractor = LLMExtractor(model, language_hint="Chinese")
    entities, relations = _facts(extractor.extract(LIU))
    assert entities == {"刘慈欣": "person", "三体": "title"}
    assert relations == {("刘慈欣", "wrote", "《三体》")}
    system, user = model.seen[0]
    assert LIU in user.content
    assert "Chinese names stay Chinese" in system.content and "mostly in Chinese" in system.content


async def test_async_extraction_matches_sync() -> None:
    result = await LLMExtractor(RecordingChatModel(responses=[LIU_FENCED])).aextract(LIU)
    assert {e.canonical for e in result.entities} == {"刘慈欣", "三体"}


def test_malformed_json_is_sent_back_and_the_retry_is_used() -> None:
    python_dict = "{'entities': [{'name': 'Calvin', 'type': 'person'}], 'relations': []}"
    model = RecordingChatModel(responses=[python_dict, CALVIN_JSON])
    result = LLMExtractor(model).extract(CALVIN)
    assert result.error is None and "ferrari 488" in _facts(result)[0]
    assert len(model.seen) == 2
    retry = model.seen[1]
    assert [type(m) for m in retry] == [SystemMessage, HumanMessage, AIMessage, HumanMessage]
    assert retry[2].content == python_dict
    assert "invalid JSON" in retry[3].content and "double quotes" in retry[3].content


def test_always_malformed_gives_empty_result_error_and_warning(caplog: pytest.LogCaptureFixture) -> None:
    model = RecordingChatModel(responses=[NO_JSON])
    with caplog.at_level(logging.WARNING, logger="ripplemem.language.entities"):
        result = LLMExtractor(model, max_retries=2).extract(CALVIN)
    assert result.entities == [] and result.relations == []
    assert result.error is not None and "no usable JSON after 3 tries" in result.error
    assert len(model.seen) == 3
    [record] = [r for r in caplog.records if r.name == "ripplemem.language.entities"]
    assert record.levelno == logging.WARNING and "no JSON object" in record.getMessage()
    assert "Ferrari" not in caplog.text  # the user's text stays out of the log


def test_model_that_raises_gives_error_not_exception(caplog: pytest.LogCaptureFixture) -> None:
    model = UnreachableChatModel(responses=["unused"])
    with caplog.at_level(logging.WARNING, logger="ripplemem.language.entities"):
        result = LLMExtractor(model).extract(CALVIN)
    assert result.entities == [] and result.relations == []
    assert result.error == "the model call failed: TimeoutError: Request timed out after 60 s"
    assert len(model.seen) == 1  # a failing endpoint is not asked again with an error message
    assert "TimeoutError" in caplog.text


async def test_async_model_that_raises_gives_error() -> None:
    result = await LLMExtractor(UnreachableChatModel(responses=["unused"])).aextract(CALVIN)
    assert result.error is not None and "TimeoutError" in result.error


def test_relations_with_missing_or_empty_fields_are_dropped() -> None:
    reply = (
        '{"entities": [{"name": "Calvin", "type": "person"}], "relations": ['
        '{"subject": "Calvin", "predicate": "bought"}, '
        '{"subject": "", "predicate": "visited", "object": "Tokyo"}, '
        '{"subject": "Calvin", "predicate": "likes", "object": null}, '
        '"Calvin likes fast cars", '
        '{"subject": "Calvin", "predicate": "visited", "object": "Tokyo"}]}'
    )
    entities, relations = _facts(LLMExtractor(RecordingChatModel(responses=[reply])).extract(CALVIN))
    assert relations == {("Calvin", "visited", "Tokyo")}
    assert entities == {"calvin": "person", "tokyo": "thing"}  # relation ends become entities


def test_mentions_of_one_entity_merge_and_self_relations_go() -> None:
    reply = (
        '{"entities": [{"name": "Ferrari 488", "type": "Product"}, '
        '{"name": "the Ferrari 488", "type": "car"}, {"name": "Calvin", "type": "Person"}], "relations": ['
        '{"subject": "calvin", "predicate": "Bought", "object": "the Ferrari 488", "confidence": 0.9}, '
        '{"subject": "Calvin", "predicate": "bought", "object": "Ferrari 488"}, '
        '{"subject": "Ferrari 488", "predicate": "is", "object": "The Ferrari 488"}]}'
    )
    result = LLMExtractor(RecordingChatModel(responses=[reply])).extract(CALVIN)
    assert [(e.name, e.type) for e in result.entities] == [("Ferrari 488", "product"), ("Calvin", "person")]
    assert result.relations == [Relation("Calvin", "bought", "Ferrari 488", 0.9)]


@pytest.mark.parametrize(
    "reply",
    [
        '<think>The user wants {entities}. Calvin is a person.</think>\n{"entities": [{"name": "Calvin", '
        '"type": "person"}], "relations": []}',
        '{"entities": [{"name": "Calvin", "type": "person"},], "relations": [],}',
        'Here is the JSON:\n{"entities": [{"name": "Calvin", "type": "person"}]}\n'
        "Let me know if you need more.",
    ],
)
def test_thinking_trailing_commas_and_surrounding_prose_are_tolerated(reply: str) -> None:
    model = RecordingChatModel(responses=[reply])
    result = LLMExtractor(model).extract(CALVIN)
    assert result.error is None and [e.canonical for e in result.entities] == ["calvin"]
    assert len(model.seen) == 1


def test_caps_keep_relations_between_kept_entities_only() -> None:
    reply = (
        '{"entities": [{"name": "Calvin", "type": "person"}, {"name": "Tokyo", "type": "place"}], '
        '"relations": [{"subject": "Calvin", "predicate": "visited", "object": "Tokyo"}, '
        '{"subject": "Calvin", "predicate": "bought", "object": "Ferrari 488"}]}'
    )
    extractor = LLMExtractor(RecordingChatModel(responses=[reply]), max_entities=2, max_relations=5)
    result = extractor.extract(CALVIN)
    assert [e.canonical for e in result.entities] == ["calvin", "tokyo"]
    assert [r.predicate for r in result.relations] == ["visited"]
    assert "At most 2 entities and 5 relations" in extractor.first_messages(CALVIN)[0].content


def test_extract_many_batches_and_retries_only_the_bad_reply() -> None:
    empty = '{"entities": [], "relations": []}'
    model = RecordingChatModel(responses=[CALVIN_JSON, '{"entities": [', empty, LIU_FENCED])
    results = LLMExtractor(model).extract_many([CALVIN, LIU, "ok, see you then"], max_concurrency=1)
    assert "calvin" in _facts(results[0])[0]
    assert _facts(results[1])[0] == {"刘慈欣": "person", "三体": "title"}
    assert results[2].entities == [] and results[2].error is None
    assert [LIU in conversation[1].content for conversation in model.seen] == [False, True, False, True]
    assert len(model.seen[3]) == 4  # only the broken reply was sent back


def test_extract_many_in_threads_isolates_a_failing_call() -> None:
    overloaded = "Mel ran 5 km around Central Park."
    model = ByTextChatModel(
        script={
            CALVIN: ["{'entities': []}", CALVIN_JSON],
            LIU: [LIU_FENCED],
            overloaded: [RuntimeError("429 Too Many Requests")],
        }
    )
    results = LLMExtractor(model).extract_many([CALVIN, overloaded, LIU], max_concurrency=3)
    assert "ferrari 488" in _facts(results[0])[0] and results[0].error is None
    assert results[1].entities == [] and results[1].error is not None and "429" in results[1].error
    assert "三体" in _facts(results[2])[0]
    assert len(model.seen) == 4


async def test_aextract_many_keeps_input_order() -> None:
    model = RecordingChatModel(responses=[CALVIN_JSON, LIU_FENCED])
    results = await LLMExtractor(model).aextract_many([CALVIN, LIU], max_concurrency=1)
    assert ["calvin" in _facts(r)[0] for r in results] == [True, False]


def test_blank_text_is_not_sent_to_the_model() -> None:
    model = RecordingChatModel(responses=[CALVIN_JSON])
    result = LLMExtractor(model).extract("   ")
    assert result.entities == [] and result.error is None and model.seen == []


def test_bad_arguments_raise_clear_errors() -> None:
    model = RecordingChatModel(responses=[CALVIN_JSON])
    with pytest.raises(InvalidTypeError, match="llm must be a LangChain chat model, got str"):
        LLMExtractor("gpt-4o-mini")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="max_retries must be >= 0"):
        LLMExtractor(model, max_retries=-1)
    with pytest.raises(InvalidTypeError, match=r"texts\[1\] must be a string"):
        LLMExtractor(model).extract_many([CALVIN, None])  # type: ignore[list-item]
    with pytest.raises(InvalidTypeError, match="texts must be a list of strings"):
        LLMExtractor(model).extract_many(CALVIN)


def test_core_imports_without_langchain() -> None:
    code = (
        "import sys; sys.modules['langchain_core'] = None\n"
        "import ripplemem, ripplemem.core.relations, ripplemem.llm.extraction as llm\n"
        "from ripplemem.errors import MissingDependencyError\n"
        "try:\n    llm.LLMExtractor(object())\nexcept MissingDependencyError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'ripplemem[langchain]'" in out.stdout


def test_coerce_relations_accepts_tuples_lists_dicts_and_relations() -> None:
    relations = coerce_relations(
        [
            ("Calvin", "bought", "Ferrari 488"),
            ["Calvin", "livesIn", "Tokyo", 0.8],
            {"subject": "刘慈欣", "predicate": "wrote", "object": "三体", "confidence": 1},
            Relation(" Mel ", "Is Friends With", "Caroline"),
        ]
    )
    assert relations == [
        Relation("Calvin", "bought", "Ferrari 488", 1.0),
        Relation("Calvin", "lives_in", "Tokyo", 0.8),
        Relation("刘慈欣", "wrote", "三体", 1.0),
        Relation("Mel", "is_friends_with", "Caroline", 1.0),
    ]
    assert coerce_relations(None) == [] and coerce_relations(()) == []


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ([("Calvin", "bought")], InvalidInputError, r"relations\[0\]: expected \(subject, predicate, object"),
        ([("Calvin", "bought", "Ferrari", 0.5, "x")], InvalidInputError, "got 5 item"),
        ([("Calvin", "bought", "  ")], InvalidInputError, r"relations\[0\]: object must not be empty"),
        ([("a", "b", "c"), ("", "b", "c")], InvalidInputError, r"relations\[1\]: subject must not be empty"),
        (
            [("Calvin", "bought", "Ferrari", 1.5)],
            InvalidInputError,
            r"confidence must be in \[0, 1\], got 1.5",
        ),
        ([("Calvin", "bought", "Ferrari", True)], InvalidTypeError, "confidence must be a number"),
        ([("Calvin", "!!", "Ferrari")], InvalidInputError, "predicate '!!' has no letters or digits"),
        ([("Calvin", "bought", 488)], InvalidTypeError, "object must be a string, got int"),
        ([{"subject": "Calvin", "predicate": "bought"}], InvalidInputError, "missing key.*object"),
        (
            [{"subject": "a", "predicate": "b", "object": "c", "confidance": 1}],
            InvalidInputError,
            "unknown key.*confidance",
        ),
        (["Calvin bought a Ferrari"], InvalidTypeError, r"relations\[0\]: expected a Relation.*got str"),
        ("Calvin bought a Ferrari", InvalidTypeError, "relations must be a list of relations, got str"),
        (Relation("a", "b", "c"), InvalidTypeError, "wrap a single one in a list"),
        (42, InvalidTypeError, "relations must be a list of relations, got int"),
    ],
)
def test_coerce_relations_rejects_bad_items_by_position(
    value: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        coerce_relations(value)
