"""The chat model for the LangChain recipes: ChatOpenAI when configured, else a scripted offline model.

A real model is used when OPENAI_API_KEY or OPENAI_BASE_URL (any OpenAI-compatible server, e.g.
Ollama's http://localhost:11434/v1) is set; RIPPLEMEM_LLM_MODEL names the model (default
gpt-4o-mini). Otherwise, or with --offline, the recipes run on a scripted model that replays the
replies a real model would give, so every recipe runs with no network at all.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage


class ScriptedChatModel(GenericFakeChatModel):
    """An offline stand-in: replies with the scripted messages in order, tool calls included."""

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any
    ) -> ScriptedChatModel:
        """Accept the agent's tools: the script already holds the calls to make."""
        return self


def choose_model(script: Sequence[AIMessage]) -> tuple[BaseChatModel, str]:
    """The model to run with and a label saying which one it is."""
    configured = os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")
    if configured and "--offline" not in sys.argv:
        from langchain_openai import ChatOpenAI

        name = os.environ.get("RIPPLEMEM_LLM_MODEL", "gpt-4o-mini")
        model = ChatOpenAI(
            model=name,
            temperature=0,
            base_url=os.environ.get("OPENAI_BASE_URL"),
            api_key=os.environ.get("OPENAI_API_KEY", "not-needed"),
        )
        return model, f"{name} (OpenAI-compatible API)"
    return ScriptedChatModel(messages=iter(script)), "offline scripted model"


def tool_call(name: str, call_id: str, **args: Any) -> AIMessage:
    """A scripted reply that calls one tool."""
    calls = [{"name": name, "args": args, "id": call_id, "type": "tool_call"}]
    return AIMessage(content="", tool_calls=calls)


class ShowSystemPrompt(BaseCallbackHandler):
    """Prints the system prompt of each model call, so you see the memories the model was given."""

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        """Print the system message the model is about to read."""
        system = next((m.text for m in messages[0] if m.type == "system"), "")
        print("  [model is shown] " + (system.replace("\n", "\n                   ") or "(no system prompt)"))


def transcript(messages: Sequence[BaseMessage]) -> None:
    """Print a conversation: user, assistant, tool calls and tool results."""
    for message in messages:
        if message.type == "ai" and getattr(message, "tool_calls", None):
            for call in message.tool_calls:
                print(f"  assistant -> {call['name']}({call['args']})")
        elif message.type == "tool":
            print("  tool      <- " + message.text.replace("\n", "\n               "))
        elif message.type in ("human", "ai"):
            print(f"  {'user' if message.type == 'human' else 'assistant'}: {message.text}")
