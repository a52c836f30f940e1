"""Recipe: an agent with RippleMem's memory tools, remembering across conversations and restarts.

    HF_HUB_OFFLINE=1 python cookbook/langchain_agent_tools.py [--offline]

Conversation 1 stores what the user says with store_memory; the process "restarts" (the store is
reopened from disk); conversation 2 starts with no history and answers through recall_memory and
find_connections.

Needs ``pip install 'ripplemem[langgraph]'`` (LangChain's create_agent); add ``[openai]`` to answer
with ChatOpenAI. Without it the recipe stops with that pip command.
"""

from __future__ import annotations

import tempfile

from extras import missing_extra

try:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_models import choose_model, tool_call, transcript

    from langchain_ripplemem import RippleMemToolkit
except ImportError as error:
    missing_extra("langgraph", error)

from ripplemem import RippleMem

SYSTEM = (
    "You have long-term memory tools. Store lasting facts the user tells you with store_memory; "
    "before answering questions about the user, search with recall_memory."
)
FIRST = "I've started a new job at Acme Robotics, and my manager there is Priya."
SECOND = "Who is Priya again, and how do I know her?"

SCRIPT = [
    tool_call(
        "store_memory",
        "c1",
        content="The user started a new job at Acme Robotics.",
        type="episodic",
        importance=0.8,
    ),
    tool_call(
        "store_memory",
        "c2",
        content="Priya is the user's manager at Acme Robotics.",
        type="semantic",
        importance=0.8,
    ),
    AIMessage("Congratulations on the new job at Acme Robotics! I'll remember that Priya is your manager."),
    tool_call("recall_memory", "c3", query="Priya"),
    tool_call("find_connections", "c4", source="Priya", target="Acme Robotics"),
    AIMessage("Priya is your manager at Acme Robotics, where you started your new job."),
]


def conversation(path: str, text: str, model: object) -> None:
    """One conversation on a freshly opened store: no message history, only long-term memory."""
    with RippleMem(path=path, user_id="sam") as mem:
        agent = create_agent(model, RippleMemToolkit(memory=mem).get_tools(), system_prompt=SYSTEM)
        result = agent.invoke({"messages": [HumanMessage(text)]})
        transcript(result["messages"])


def main() -> None:
    """Two conversations, with a restart between them."""
    model, label = choose_model(SCRIPT)
    print(f"Model: {label}")
    with tempfile.TemporaryDirectory() as path:
        print("Conversation 1:")
        conversation(path, FIRST, model)
        print("(the store is closed and reopened from disk)\nConversation 2:")
        conversation(path, SECOND, model)


if __name__ == "__main__":
    main()
