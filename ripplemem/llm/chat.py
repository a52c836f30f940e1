"""Asking a LangChain chat model with retries, shared by query expansion, routing and answering.

Each request is a `ChatTask`: a conversation plus a parser that raises ValueError on an unusable
reply. `run_tasks` / `arun_tasks` send every pending task as one batch per round; a bad reply is
sent back with the parse error, a failed call is tried again, and when tries run out the task
keeps an `error` instead of raising. Optional: langchain-core is imported only when a task runs.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from ripplemem.errors import InvalidInputError, InvalidTypeError, MissingDependencyError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

T = TypeVar("T")

_THINKING = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.DOTALL | re.IGNORECASE)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")


class LLMRequiredError(InvalidInputError):
    """A feature that needs a chat model was asked for without one (the message says where to pass it)."""


def require_llm(llm: Any, feature: str, how: str = "pass llm=... to RippleMem(...)") -> BaseChatModel:
    """The model, checked: LLMRequiredError naming the feature when none is given, InvalidTypeError
    for a non-model."""
    if llm is None:
        raise LLMRequiredError(f"{feature} needs an LLM: {how}")
    try:
        from langchain_core.runnables import Runnable
    except ImportError as exc:
        raise MissingDependencyError(
            f"{feature} needs langchain-core: pip install 'ripplemem[langchain]'"
        ) from exc
    if not isinstance(llm, Runnable):
        raise InvalidTypeError(f"llm must be a LangChain chat model, got {type(llm).__name__}")
    # Any Runnable that chats will do (a chat model, a fake, one wrapped with retries): run_tasks
    # only batches conversations through it.
    return cast("BaseChatModel", llm)


def language_of(text: str) -> str | None:
    """'Chinese', 'Japanese' or 'Korean' when the text is written in one, else None.

    Named in prompts so that weak models answer a Chinese question in Chinese; other
    languages are left to "the language of the question".
    """
    if _HANGUL.search(text):
        return "Korean"
    if _KANA.search(text):
        return "Japanese"
    if _HAN.search(text):
        return "Chinese"
    return None


def answer_language_rule(text: str, what: str = "the query") -> str:
    """A prompt line asking for the reply in the text's own language."""
    language = language_of(text)
    if language:
        return f"Write in {language}, the language of {what}."
    return f"Write in the same language as {what}."


def strip_thinking(reply: str) -> str:
    """The reply without <think>...</think> reasoning blocks (an unclosed one runs to the end)."""
    return _THINKING.sub("", reply).strip()


def first_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a model's reply (trailing commas forgiven); ValueError if none."""
    start = text.find("{")
    if start < 0:
        raise ValueError("the reply contains no JSON object")
    decoder = json.JSONDecoder()
    try:
        data, _ = decoder.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        try:
            data, _ = decoder.raw_decode(_TRAILING_COMMA.sub(r"\1", text[start:]))
        except json.JSONDecodeError:
            raise ValueError(f"invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got a JSON {type(data).__name__}")
    return data


def normalise_for_compare(text: str) -> str:
    """A key under which two phrasings differing only in case, width, spaces or end punctuation meet."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"\s+", " ", text).strip()
    return text.strip(" .,;:!?。，；：！？、\"'“”‘’「」『』")


def reply_text(reply: Any) -> str | None:
    """The text of a chat model reply (a message or a string); None when it is neither."""
    if isinstance(reply, str):
        return reply
    text = getattr(reply, "text", None)
    if not isinstance(text, str) and callable(text):  # langchain-core < 1.0 had text() as a method
        text = text()
    return text if isinstance(text, str) else None


@dataclass
class ChatTask(Generic[T]):
    """One request to the model: its conversation so far, its parser and how many tries remain."""

    messages: list[BaseMessage]
    parse: Callable[[str], T]
    retry_prompt: str
    tries_left: int
    result: T | None = None
    error: str | None = None
    attempts: int = 0
    done: bool = field(default=False)

    @property
    def ok(self) -> bool:
        """True when a usable reply was parsed."""
        return self.done and self.error is None

    def absorb(self, reply: Any) -> None:
        """Take one reply (or the exception the call raised): parse it, queue a retry or give up."""
        from langchain_core.messages import AIMessage, HumanMessage

        self.attempts += 1
        if isinstance(reply, Exception):
            problem = f"the model call failed: {type(reply).__name__}: {reply}"
            self._retry_or_fail(problem, None)
            return
        content = reply_text(reply)
        if content is None:
            self._retry_or_fail(f"the model returned a {type(reply).__name__}, not a message", None)
            return
        try:
            self.result = self.parse(content)
        except ValueError as exc:
            feedback = [AIMessage(content), HumanMessage(self.retry_prompt.format(error=exc))]
            self._retry_or_fail(f"unusable reply: {exc}", feedback)
            return
        self.done = True

    def _retry_or_fail(self, problem: str, feedback: list[BaseMessage] | None) -> None:
        if self.tries_left <= 0:
            self.error = f"{problem} (after {self.attempts} tries)" if self.attempts > 1 else problem
            self.done = True
            return
        self.tries_left -= 1
        if feedback:
            self.messages = [*self.messages, *feedback]


def run_tasks(
    llm: BaseChatModel, tasks: Sequence[ChatTask[Any]], *, max_concurrency: int | None = None
) -> None:
    """Run every task to a result or an error; each round of tries goes to the model as one batch."""
    while pending := [task for task in tasks if not task.done]:
        replies: list[Any]
        try:
            replies = llm.batch(
                [task.messages for task in pending],
                {"max_concurrency": max_concurrency},
                return_exceptions=True,
            )
        except Exception as exc:  # a model whose batch ignores return_exceptions
            replies = [exc] * len(pending)
        for task, reply in zip(pending, replies, strict=True):
            task.absorb(reply)


async def arun_tasks(
    llm: BaseChatModel, tasks: Sequence[ChatTask[Any]], *, max_concurrency: int | None = None
) -> None:
    """Async run_tasks: the rounds run concurrently on the event loop."""
    while pending := [task for task in tasks if not task.done]:
        replies: list[Any]
        try:
            replies = await llm.abatch(
                [task.messages for task in pending],
                {"max_concurrency": max_concurrency},
                return_exceptions=True,
            )
        except Exception as exc:  # a model whose abatch ignores return_exceptions
            replies = [exc] * len(pending)
        for task, reply in zip(pending, replies, strict=True):
            task.absorb(reply)
