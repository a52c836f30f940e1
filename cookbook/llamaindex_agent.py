"""A LlamaIndex agent with RippleMem tools and memory: what it learns on Monday, it knows on Tuesday.

    python cookbook/llamaindex_agent.py              # a real model when OPENAI_API_KEY is set
    python cookbook/llamaindex_agent.py --offline    # the offline stand-in, no network needed

Monday and Tuesday are two sessions on one store on disk (closed and reopened in between). The
agent stores facts with the store_memory tool; RippleMemMemory keeps the chat history, writes
explicit "remember ..." requests to long-term memory by itself, and shows the agent the memories
recalled for each new message.

Needs ``pip install 'ripplemem[llamaindex]'`` (llama-index-core). Without it the recipe stops with
that pip command.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from extras import missing_extra  # noqa: E402

try:
    from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
    from llama_index.core.base.llms.types import TextBlock
    from llama_index.core.llms import LLM
    from llamaindex_llm import choose_llm

    from llamaindex_ripplemem import RippleMemMemory, RippleMemToolSpec
except ImportError as error:
    missing_extra("llamaindex", error)

from ripplemem import RippleMem  # noqa: E402

SYSTEM_PROMPT = (
    "You are a helpful assistant with long-term memory. When the user shares a fact about their life, "
    "save it with store_memory. Before answering a question about the user, call recall_memory. "
    "Answer in one or two sentences."
)
MONDAY = [
    "My sister Ana moved to Lisbon last spring.",
    "I'm training for the Porto marathon in October.",
    "Please remember that I am allergic to peanuts.",
]
TUESDAY = [
    "Where does my sister live?",
    "What am I allergic to?",
]


async def chat(agent: FunctionAgent, memory: RippleMemMemory, message: str) -> str:
    """Send one message, print the tool calls and the answer, return the answer."""
    print(f"user:      {message}")
    handler = agent.run(user_msg=message, memory=memory)
    async for event in handler.stream_events():
        if isinstance(event, ToolCallResult):
            first_line = event.tool_output.content.splitlines()[0]
            print(f"  tool     {event.tool_name}({event.tool_kwargs}) -> {first_line}")
    answer = str(await handler)
    print(f"assistant: {answer}")
    return answer


async def session(path: str, name: str, messages: list[str], llm: LLM) -> None:
    """One conversation on a freshly opened store."""
    print(f"\n== {name} ==")
    with RippleMem(path=path, user_id="alice") as mem:
        # The tools write under this session too; recall always searches every session.
        tools = RippleMemToolSpec(memory=mem.scope(session_id=name.lower())).to_tool_list()
        agent = FunctionAgent(tools=tools, llm=llm, system_prompt=SYSTEM_PROMPT)
        memory = RippleMemMemory(memory=mem, session_id=name.lower())
        for message in messages:
            await chat(agent, memory, message)
        if name == "Tuesday":
            last_user = [m for m in await memory.aget() if m.role.value == "user"][-1]
            recalled = next(b.text for b in last_user.blocks if isinstance(b, TextBlock)).rstrip()
            print(f"\nWhat RippleMemMemory put in front of the last message:\n{recalled}")
            print("\nLong-term memories of alice:")
            for stored in mem.list(newest_first=False):
                print(f"  [{stored.type}, session {stored.session_id}] {stored.content}")


async def main() -> None:
    """Run Monday, then Tuesday, on one store."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--offline", action="store_true", help="use the offline stand-in even when a model is configured"
    )
    parser.add_argument("--path", help="store directory (default: a temporary one)")
    args = parser.parse_args()
    llm, label = choose_llm(function_calling=True, offline=args.offline)
    print(f"LLM: {label}")
    with tempfile.TemporaryDirectory() as scratch:
        path = args.path or os.path.join(scratch, "memdb")
        await session(path, "Monday", MONDAY, llm)
        await session(path, "Tuesday", TUESDAY, llm)


if __name__ == "__main__":
    asyncio.run(main())
