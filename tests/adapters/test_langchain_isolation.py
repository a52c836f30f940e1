"""Two users, one store: nothing of Alice's reaches Bob through any LangChain adapter."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage

from langchain_ripplemem import (
    RippleMemMemory,
    RippleMemMiddleware,
    RippleMemRetriever,
    RippleMemStore,
    RippleMemToolkit,
)
from langchain_ripplemem.scopes import run_scope
from ripplemem import Memory, RippleMem, RippleMemError
from ripplemem.embedding.embedders import Embedder

SECRET = "Alice's bank PIN is 4921 and her safe is behind the Monet print."


@pytest.fixture(scope="module")
def shared(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder
) -> Iterator[tuple[RippleMem, Memory]]:
    """One on-disk store: Alice's handle (holding her secret) and the secret memory."""
    path: Path = tmp_path_factory.mktemp("shared") / "memdb"
    alice = RippleMem(path=path, user_id="alice", embedder=embedder)
    secret = alice.add(SECRET, type="semantic", importance=1.0)
    alice.scope("bob").add("Bob collects vintage cameras.")
    yield alice, secret
    alice.close()


def test_retriever(shared: tuple[RippleMem, Memory]) -> None:
    alice, _ = shared
    docs = RippleMemRetriever(memory=alice.scope("bob"), k=10).invoke(SECRET)
    assert [d.page_content for d in docs] == ["Bob collects vintage cameras."]


def test_tools_under_bobs_run_config(shared: tuple[RippleMem, Memory]) -> None:
    alice, secret = shared
    tools = {t.name: t for t in RippleMemToolkit(memory=alice).get_tools()}
    bob = {"configurable": {"user_id": "bob"}}
    recalled = tools["recall_memory"].invoke({"query": "bank PIN safe", "k": 20}, config=bob)
    assert "4921" not in recalled and "Bob collects vintage cameras." in recalled
    assert "nothing was deleted" in tools["forget_memory"].invoke({"memory_id": secret.id}, config=bob)
    found = tools["find_connections"].invoke({"source": "Alice", "target": "Monet"}, config=bob)
    assert found.startswith("No connection")
    assert alice.get(secret.id) is not None


def test_store_namespaces(shared: tuple[RippleMem, Memory]) -> None:
    alice, secret = shared
    store = RippleMemStore(memory=alice)
    assert store.get(("bob",), secret.id) is None
    store.delete(("bob",), secret.id)
    assert alice.get(secret.id) is not None
    hits = store.search(("bob",), query=SECRET, limit=50)
    assert [item.value["content"] for item in hits] == ["Bob collects vintage cameras."]
    assert store.get(("alice",), secret.id).value["content"] == SECRET


def test_middleware_under_bobs_context(shared: tuple[RippleMem, Memory], script: Any) -> None:
    alice, _ = shared
    model = script(AIMessage("I don't know your PIN."))
    agent = create_agent(model, [], middleware=[RippleMemMiddleware(memory=alice)])
    agent.invoke(
        {"messages": [HumanMessage("What is my bank PIN?")]},
        config={"configurable": {"user_id": "bob", "thread_id": "b1"}},
    )
    shown = "\n".join(m.text for m in model.seen[0])
    assert "4921" not in shown and "Bob collects vintage cameras." in shown
    assert [i.text for i in alice.scope("bob").working("b1").items()][0] == "What is my bank PIN?"
    assert alice.working("b1").items() == []


def test_legacy_memory(shared: tuple[RippleMem, Memory]) -> None:
    alice, _ = shared
    legacy = RippleMemMemory(memory=alice.scope("bob"))
    history = legacy.load_memory_variables({"input": "bank PIN"})["history"]
    assert "4921" not in history and "vintage cameras" in history


USER_KEYS = ("user_id", "langgraph_auth_user_id", "langgraph_user_id")
BAD_USERS = ("", "   ", 0, None, "bad\x00id")


@pytest.mark.parametrize("key", USER_KEYS)
@pytest.mark.parametrize("user", BAD_USERS)
def test_tools_refuse_a_run_config_with_an_invalid_user(
    shared: tuple[RippleMem, Memory], key: str, user: Any
) -> None:
    alice, secret = shared
    tools = {t.name: t for t in RippleMemToolkit(memory=alice).get_tools()}
    config = {"configurable": {key: user}}
    with pytest.raises(RippleMemError, match=key):
        tools["recall_memory"].invoke({"query": "bank PIN safe", "k": 20}, config=config)
    with pytest.raises(RippleMemError, match=key):
        tools["forget_memory"].invoke({"memory_id": secret.id}, config=config)
    with pytest.raises(RippleMemError, match=key):
        tools["store_memory"].invoke({"content": "Planted by a run with no valid user."}, config=config)
    assert [m.content for m in alice.list()] == [SECRET]


def test_tools_refuse_a_run_that_names_two_users(shared: tuple[RippleMem, Memory]) -> None:
    alice, _ = shared
    recall = RippleMemToolkit(memory=alice).get_tools()[1]
    config = {"configurable": {"user_id": "alice", "langgraph_auth_user_id": "bob"}}
    with pytest.raises(RippleMemError, match="two users"):
        recall.invoke({"query": "bank PIN safe"}, config=config)


@pytest.mark.parametrize("key", USER_KEYS[1:])
def test_tools_run_as_the_langgraph_user(shared: tuple[RippleMem, Memory], key: str) -> None:
    alice, _ = shared
    recall = RippleMemToolkit(memory=alice).get_tools()[1]
    recalled = recall.invoke({"query": "bank PIN safe", "k": 20}, config={"configurable": {key: "bob"}})
    assert "4921" not in recalled and "Bob collects vintage cameras." in recalled


@pytest.mark.parametrize("user", BAD_USERS)
def test_middleware_refuses_a_run_with_an_invalid_user(
    shared: tuple[RippleMem, Memory], script: Any, user: Any
) -> None:
    alice, _ = shared
    model = script(AIMessage("Your PIN is ..."))
    agent = create_agent(model, [], middleware=[RippleMemMiddleware(memory=alice)])
    with pytest.raises(RippleMemError, match="user_id"):
        agent.invoke(
            {"messages": [HumanMessage("What is my bank PIN?")]},
            config={"configurable": {"user_id": user, "thread_id": "x1"}},
        )
    assert model.seen == []
    assert alice.working("x1").items() == []


@dataclass
class RunContext:
    """A create_agent context schema whose user is optional."""

    user_id: Any = None


@pytest.mark.parametrize(
    "context", [{"user_id": ""}, {"user_id": None}, RunContext(user_id=0), RunContext(user_id="  ")]
)
def test_a_run_context_with_an_invalid_user_is_refused(
    shared: tuple[RippleMem, Memory], context: Any
) -> None:
    alice, _ = shared
    with pytest.raises(RippleMemError, match="context\\['user_id'\\] is not a valid user"):
        run_scope(alice, None, context)
    assert run_scope(alice, None, RunContext()) is alice  # an optional field left unset names no one
    assert run_scope(alice, None, RunContext(user_id="bob")).user_id == "bob"
