"""RippleMemStore reads LangGraph's IndexConfig (dims, embed, fields in LangGraph's path syntax) and
index=False per put as InMemoryStore does, and refuses an embedder it cannot honour."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings, FakeEmbeddings
from langgraph.store.memory import InMemoryStore

from langchain_ripplemem import RippleMemStore
from ripplemem import FrameworkEmbedder, RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError, InvalidTypeError

PROFILE = {
    "profile": {"food": "Loves spicy Sichuan hotpot", "city": "Chengdu"},
    "sections": [{"text": "Plays the cello in an orchestra"}, {"text": "Training for a marathon"}],
    "version": 3,
}
FIELDS = ["profile.food", "sections[*].text"]


class SameModel(Embeddings):
    """The session's MiniLM behind LangChain's Embeddings interface (another object, same vectors)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embedder.embed_documents(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embedder.embed_query(text).tolist()


def test_langgraph_index_config_chooses_the_recalled_text(alice: RippleMem, embedder: Embedder) -> None:
    config: Any = {"dims": 384, "embed": SameModel(embedder), "fields": FIELDS}
    store = RippleMemStore(memory=alice, index=config)
    store.put(("alice", "profile"), "me", PROFILE)
    [memory] = alice.list()
    assert memory.content == (
        "Loves spicy Sichuan hotpot\nPlays the cello in an orchestra\nTraining for a marathon"
    )
    assert store.get(("alice", "profile"), "me").value == PROFILE
    store.put(("alice", "profile"), "last", PROFILE, index=["sections[-1].text", "profile.city"])
    assert alice.list()[0].content == "Training for a marathon\nChengdu"


def test_same_top_hits_as_in_memory_store_with_the_same_index_config(
    alice: RippleMem, embedder: Embedder
) -> None:
    config: Any = {"dims": 384, "embed": SameModel(embedder), "fields": FIELDS}
    ours, reference = RippleMemStore(memory=alice, index=config), InMemoryStore(index=config)
    values = {
        "mei": PROFILE,
        "tom": {"profile": {"food": "Vegetarian, no mushrooms"}, "sections": [{"text": "Paints"}]},
        "ana": {"profile": {"food": "Grilled sardines"}, "sections": [{"text": "Sails on weekends"}]},
        "bob": {"profile": {"food": "Anything"}, "sections": []},
    }
    for key, value in values.items():
        for store in (ours, reference):
            store.put(("alice", "people"), key, value)
    for store in (ours, reference):
        store.put(("alice", "people"), "raw", {"note": "Sails a dinghy, plays cello"}, index=False)
    for query in ["who plays a string instrument?", "boats and the sea", "meat-free diet"]:
        top = [
            [item.key for item in store.search(("alice",), query=query, limit=1)]
            for store in (ours, reference)
        ]
        assert top[0] == top[1], query
    # index=False: never matched by a query, but fills a page unscored, as in InMemoryStore
    keys = [(item.key, item.score is None) for item in ours.search(("alice",), query="sailing", limit=6)]
    assert keys[-1] == ("raw", True) and all(not unscored for _, unscored in keys[:-1])
    assert len(keys) == 5 and "raw" not in [i.key for i in ours.search(("alice",), query="sailing", limit=4)]
    assert ours.get(("alice", "people"), "raw").value == {"note": "Sails a dinghy, plays cello"}


def test_embed_names_the_store_embedder_or_is_refused(alice: RippleMem, embedder: Embedder) -> None:
    for accepted in [
        embedder,
        "sentence-transformers/all-MiniLM-L6-v2",
        SameModel(embedder),
        lambda texts: embedder.embed_documents(texts).tolist(),
    ]:
        RippleMemStore(memory=alice, index={"dims": 384, "embed": accepted})
    with pytest.raises(
        InvalidInputError,
        match=r"index\['embed'\] is 'openai:text-embedding-3-small', "
        r"but this RippleMem store embeds with 'all-MiniLM-L6-v2'",
    ):
        RippleMemStore(
            memory=alice, index={"dims": 1536, "embed": "openai:text-embedding-3-small"} | {"dims": 384}
        )
    with pytest.raises(InvalidInputError, match="gives other vectors than this store's embedder"):
        RippleMemStore(memory=alice, index={"embed": DeterministicFakeEmbedding(size=384)})
    with pytest.raises(
        InvalidInputError,
        match=r"index\['dims'\] is 1536 but this RippleMem store embeds "
        r"with 'all-MiniLM-L6-v2', 384 dimensions",
    ):
        RippleMemStore(memory=alice, index={"dims": 1536, "embed": embedder})
    with pytest.raises(InvalidInputError, match=r"index has keys \['ann_index_config'\]"):
        RippleMemStore(memory=alice, index={"dims": 384, "ann_index_config": {"kind": "hnsw"}})
    with pytest.raises(InvalidTypeError, match=r"index\['fields'\] must be a list of paths"):
        RippleMemStore(memory=alice, index={"fields": "profile.food"})


def test_the_embeddings_object_the_store_was_opened_with_is_accepted() -> None:
    fake = DeterministicFakeEmbedding(size=16)
    with RippleMem(path=None, user_id="alice", embedder=FrameworkEmbedder(fake, model_id="fake-16")) as own:
        store = RippleMemStore(memory=own, index={"dims": 16, "embed": fake, "fields": ["text"]})
        store.put(("alice",), "k", {"text": "hello", "n": 1})
        assert [item.key for item in store.search(("alice",), query="hello")] == ["k"]
        RippleMemStore(memory=own, index={"embed": DeterministicFakeEmbedding(size=16)})  # the same vectors
        with pytest.raises(InvalidInputError, match="gives other vectors"):
            RippleMemStore(memory=own, index={"embed": FakeEmbeddings(size=16)})  # random vectors
