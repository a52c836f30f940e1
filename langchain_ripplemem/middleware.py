"""RippleMemMiddleware: layered memory for ``create_agent`` (recall into the prompt, observe each turn)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from langchain_ripplemem.scopes import check_memory, run_scope
from langchain_ripplemem.tools import RippleMemToolkit
from langchain_ripplemem.turns import observe_exchange
from ripplemem import MemoryTypeName, RecallMode, RippleMem
from ripplemem.integration import RECALL_MODES, check_k, check_mode, check_types

Handler = Callable[[ModelRequest], ModelResponse]
AsyncHandler = Callable[[ModelRequest], Awaitable[ModelResponse]]


class RippleMemMiddleware(AgentMiddleware):
    """Give a ``create_agent`` agent memory in one line: ``middleware=[RippleMemMiddleware(memory=mem)]``.

    Before each model call the memories recalled for the latest user message (long-term, ripple) and
    the session's working memory not already in the messages (short-term) are added to the system
    prompt, each within its token budget. After each turn the user message and the answer are observed
    into working memory; the user's explicit requests ("remember that ...") and urgent statements go
    to long-term memory at once, and statements mentioned again and again when they come due.
    The run's ``user_id``/``session_id`` (context or configurable; ``thread_id`` is the session) pick
    the scope, so one agent serves many users.
    """

    def __init__(
        self,
        memory: RippleMem,
        *,
        k: int = 8,
        mode: RecallMode = "ripple",
        types: MemoryTypeName | Sequence[MemoryTypeName] | None = None,
        token_budget: int = 400,
        working_token_budget: int = 300,
        observe: bool = True,
        with_tools: bool = False,
        header: str = "Relevant memories:",
        working_header: str = "Earlier in this conversation:",
    ) -> None:
        self.memory = check_memory(memory)
        self.k = check_k(k)
        self.mode = check_mode(mode, RECALL_MODES)
        self.types = check_types(types)
        self.token_budget = check_k(token_budget, "token_budget")
        self.working_token_budget = (
            working_token_budget
            if working_token_budget == 0
            else check_k(working_token_budget, "working_token_budget")
        )
        self.observe = bool(observe)
        self.header = header
        self.working_header = working_header
        self.tools: list[BaseTool] = RippleMemToolkit(memory=memory).get_tools() if with_tools else []

    # -- hooks ---------------------------------------------------------------------------------
    def wrap_model_call(self, request: ModelRequest, handler: Handler) -> ModelResponse:
        """Call the model with the memory block added to the system prompt."""
        return handler(self._with_memories(request))

    async def awrap_model_call(self, request: ModelRequest, handler: AsyncHandler) -> ModelResponse:
        """Async twin of wrap_model_call (recall runs in a worker thread)."""
        return await handler(await asyncio.to_thread(self._with_memories, request))

    def after_agent(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        """Observe the finished turn (user message, final answer) into working memory."""
        if self.observe:
            self._observe_turn(state["messages"], run_scope(self.memory, _current_config(), runtime.context))
        return None

    async def aafter_agent(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        """Async twin of after_agent."""
        return await asyncio.to_thread(self.after_agent, state, runtime)

    # -- the prompt ----------------------------------------------------------------------------
    def memory_prompt(
        self,
        query: str | None,
        memory: RippleMem | None = None,
        *,
        exclude: Iterable[str] = (),
        record_access: bool = True,
    ) -> str:
        """The block the model is shown: recalled memories for ``query``, then working memory."""
        handle = self.memory if memory is None else check_memory(memory)
        seen = {text.strip() for text in exclude}
        parts = []
        if query and query.strip():
            recall = handle.recall(
                query, k=self.k, mode=self.mode, types=self.types, record_access=record_access
            )
            fresh = [hit for hit in recall.hits if hit.memory.content.strip() not in seen]
            parts.append(replace(recall, hits=fresh).context(self.token_budget, header=self.header))
        if self.working_token_budget:
            items = handle.working().select(self.working_token_budget)
            lines = [item.line() for item in items if item.text.strip() not in seen]
            if lines:
                parts.append("\n".join([self.working_header, *lines] if self.working_header else lines))
        return "\n\n".join(part for part in parts if part)

    def _with_memories(self, request: ModelRequest) -> ModelRequest:
        context = request.runtime.context if request.runtime else None
        handle = run_scope(self.memory, _current_config(), context)
        messages = request.messages
        query = next((m.text for m in reversed(messages) if isinstance(m, HumanMessage)), None)
        first_call = bool(messages) and isinstance(messages[-1], HumanMessage)
        block = self.memory_prompt(
            query, handle, exclude=(m.text for m in messages), record_access=first_call
        )
        if not block:
            return request
        return request.override(system_message=_extend_system(request.system_message, block))

    def _observe_turn(self, messages: Sequence[AnyMessage], handle: RippleMem) -> None:
        humans = [i for i, message in enumerate(messages) if isinstance(message, HumanMessage)]
        last_human = humans[-1] if humans else None
        if last_human is None:
            return
        answer = next(
            (
                m
                for m in reversed(messages[last_human + 1 :])
                if isinstance(m, AIMessage) and not m.tool_calls and m.text.strip()
            ),
            None,
        )
        observe_exchange(
            handle, messages[last_human].text, answer.text if answer else None, source="langchain"
        )


def _extend_system(system: SystemMessage | None, block: str) -> SystemMessage:
    if system is None:
        return SystemMessage(content=block)
    content = system.content
    if isinstance(content, str):
        return system.model_copy(update={"content": f"{content}\n\n{block}" if content.strip() else block})
    return system.model_copy(update={"content": [*content, {"type": "text", "text": f"\n\n{block}"}]})


def _current_config() -> dict[str, Any] | None:
    try:
        from langgraph.config import get_config

        return dict(get_config())
    except RuntimeError:  # called outside a graph run
        return None
