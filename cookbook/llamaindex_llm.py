"""The LLM of the LlamaIndex recipes: a real OpenAI-compatible model when configured, else a stand-in.

A real model needs OPENAI_API_KEY (plus OPENAI_BASE_URL for another OpenAI-compatible server and
RIPPLEMEM_LLM_MODEL for the model name, default gpt-4o-mini) and one of the packages
llama-index-llms-openai-like or llama-index-llms-openai. Without them the recipes run with a
stand-in that follows the tools' descriptions mechanically, so they work with no network at all.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import (
    ChatMessage,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    TextBlock,
    ToolCallBlock,
)
from llama_index.core.llms import LLM, CustomLLM, MockFunctionCallingLLM
from llama_index.core.llms.callbacks import llm_completion_callback

HIT_PREFIX = re.compile(r"^\d+\. \[id=\w+\] \([^)]*\) ")
WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "is",
        "are",
        "was",
        "my",
        "i",
        "me",
        "do",
        "does",
        "did",
        "how",
        "much",
        "what",
        "when",
        "where",
        "who",
        "which",
        "and",
        "or",
        "it",
        "its",
        "be",
        "can",
        "should",
        "must",
        "have",
        "has",
        "many",
    }
)


def choose_llm(*, function_calling: bool, offline: bool) -> tuple[LLM, str]:
    """The LLM to use and a label saying which one it is."""
    if not offline and os.environ.get("OPENAI_API_KEY"):
        real = configured_llm(function_calling=function_calling)
        if real is not None:
            return real, f"{real.metadata.model_name} (OpenAI-compatible API)"
    if function_calling:
        agent_llm = MockFunctionCallingLLM(response_generator=stand_in_agent_reply)
        return agent_llm, "offline stand-in (scripted rules)"
    return ExtractiveStandIn(), "offline stand-in (quotes the best-matching passages)"


def configured_llm(*, function_calling: bool) -> LLM | None:
    """An OpenAI-compatible chat model from the environment; None (saying why) when its package is missing."""
    model = os.environ.get("RIPPLEMEM_LLM_MODEL", "gpt-4o-mini")
    base = os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    key = os.environ["OPENAI_API_KEY"]
    try:
        from llama_index.llms.openai_like import OpenAILike

        return OpenAILike(
            model=model,
            api_base=base,
            api_key=key,
            is_chat_model=True,
            is_function_calling_model=function_calling,
            context_window=128_000,
        )
    except ImportError:
        pass
    try:
        from llama_index.llms.openai import OpenAI

        return OpenAI(model=model, api_base=base, api_key=key)
    except ImportError:
        print(
            "OPENAI_API_KEY is set, but llama-index-llms-openai-like (or llama-index-llms-openai) is not "
            "installed: pip install llama-index-llms-openai-like. "
            "Running with the offline stand-in instead."
        )
        return None


# -- the offline stand-in for an agent ------------------------------------------------------------
def stand_in_agent_reply(messages: Sequence[ChatMessage], **_: Any) -> ChatMessage:
    """Questions -> recall_memory; "remember ..." -> left to RippleMemMemory; other facts -> store_memory."""
    last = messages[-1]
    if last.role.value == "tool":
        return ChatMessage(role="assistant", content=answer_from_tool(last.content or ""))
    # The user's own words: RippleMemMemory puts the recalled memories in a block in front of them.
    said = [block.text for block in last.blocks if isinstance(block, TextBlock)]
    text = (said[-1] if said else "").strip()
    if text.endswith("?"):
        return tool_call("recall_memory", query=text)
    if "remember" in text.lower():
        return ChatMessage(role="assistant", content="I'll keep that in mind.")
    return tool_call("store_memory", content=text)


def tool_call(name: str, **kwargs: Any) -> ChatMessage:
    """An assistant message asking for one tool call."""
    return ChatMessage(
        role="assistant",
        blocks=[ToolCallBlock(tool_call_id=f"call-{name}", tool_name=name, tool_kwargs=kwargs)],
    )


def answer_from_tool(output: str) -> str:
    """A reply built from a tool's output: an acknowledgement, or the best memory recalled."""
    if output.startswith("Stored memory"):
        return "Noted."
    lines = [HIT_PREFIX.sub("", line) for line in output.splitlines() if HIT_PREFIX.match(line)]
    return f"From memory: {lines[0]}" if lines else output


# -- the offline stand-in for a query engine ------------------------------------------------------
class ExtractiveStandIn(CustomLLM):
    """Answers a question-answering prompt with the context passages sharing most words with the query."""

    @property
    def metadata(self) -> LLMMetadata:
        """A completion model with a generous context window."""
        return LLMMetadata(context_window=32_000, num_output=256, model_name="extractive-stand-in")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        """Quote the best-matching passages of the prompt's context."""
        return CompletionResponse(text=quote_best_passages(prompt))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        """The same answer, as one chunk."""
        text = quote_best_passages(prompt)
        yield CompletionResponse(text=text, delta=text)


def quote_best_passages(prompt: str, how_many: int = 2) -> str:
    """The context passages (text lines, not 'key: value' metadata) that share most words with the query."""
    context, _, rest = prompt.partition("---------------------\nGiven the context")
    query = rest.partition("Query: ")[2].partition("\n")[0]
    passages = [
        line
        for line in context.split("---------------------\n", 1)[-1].splitlines()
        if line.strip() and not re.match(r"^\w+: ", line)
    ]
    wanted = set(WORD.findall(query.lower())) - STOPWORDS
    ranked = sorted(passages, key=lambda line: -len(wanted & set(WORD.findall(line.lower()))))
    return " / ".join(ranked[:how_many]) or "I don't know."
