"""Recipe: a LangGraph agent that remembers a user across sessions, with RippleMemStore and
RippleMemMiddleware.

    HF_HUB_OFFLINE=1 python cookbook/langchain_agent_store_middleware.py [--offline]

The middleware shows the model what it remembers before each call and observes every turn (a
"remember ..." turn goes to long-term memory at once); a tool keeps a profile in the LangGraph store,
whose items are RippleMem memories too. Each user is a run context; each thread a session.

Needs ``pip install 'ripplemem[langgraph]'`` (LangChain's create_agent and LangGraph); add
``[openai]`` to answer with ChatOpenAI. Without it the recipe stops with that pip command.
"""

from __future__ import annotations

from dataclasses import dataclass

from extras import missing_extra

try:
    from langchain.agents import create_agent
    from langchain.tools import ToolRuntime, tool
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_models import ShowSystemPrompt, choose_model, tool_call, transcript
    from langgraph.checkpoint.memory import InMemorySaver

    from langchain_ripplemem import RippleMemMiddleware, RippleMemStore
except ImportError as error:
    missing_extra("langgraph", error)

from ripplemem import RippleMem


@dataclass
class Context:
    """Who the agent is talking to."""

    user_id: str


@tool
def save_profile(field: str, value: str, runtime: ToolRuntime[Context]) -> str:
    """Save one profile field of the user (e.g. field='diet', value='vegetarian')."""
    runtime.store.put((runtime.context.user_id, "profile"), field, {"content": f"{field}: {value}"})
    return f"saved {field}"


SCRIPT = [
    tool_call("save_profile", "c1", field="diet", value="vegetarian"),
    AIMessage("Got it: you're vegetarian, and I'll remember Mia's peanut allergy."),
    AIMessage("How about a vegetable lasagne? It's vegetarian and peanut-free, so it works for Mia too."),
    AIMessage("I don't have anything saved about that yet."),
]
SESSIONS = [
    ("alice", "monday", "I'm vegetarian. Remember that my daughter Mia is allergic to peanuts."),
    ("alice", "friday", "Can you suggest a dinner for the family tonight?"),
    ("bob", "friday", "Any food allergies I told you about?"),
]


def main() -> None:
    """Three sessions: Alice on Monday and Friday, then Bob, who must see none of Alice's memories."""
    model, label = choose_model(SCRIPT)
    print(f"Model: {label}")
    with RippleMem(path=None, user_id="alice") as mem:  # path="./memdb" keeps it on disk
        agent = create_agent(
            model,
            [save_profile],
            system_prompt="You are a friendly cooking assistant.",
            middleware=[RippleMemMiddleware(memory=mem)],
            store=RippleMemStore(memory=mem),
            checkpointer=InMemorySaver(),
            context_schema=Context,
        )
        for user, thread, text in SESSIONS:
            print(f"\n{user}, session {thread!r}:")
            result = agent.invoke(
                {"messages": [HumanMessage(text)]},
                context=Context(user_id=user),
                config={"configurable": {"thread_id": f"{user}-{thread}"}, "callbacks": [ShowSystemPrompt()]},
            )
            transcript(result["messages"])
        print("\nAlice's long-term memories:")
        for memory in mem.list():
            print(f"  [{memory.type}] {memory.content}")
        print("Store search ('alice',) for 'food restrictions':")
        for item in RippleMemStore(memory=mem).search(("alice",), query="food restrictions", limit=3):
            print(f"  {item.score:.2f} {item.namespace} {item.key}: {item.value['content']}")


if __name__ == "__main__":
    main()
