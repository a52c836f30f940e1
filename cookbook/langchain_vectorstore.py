"""Recipe: RippleMem as a LangChain vector store: a team wiki kept in sync with LangChain's indexing
API, searched by ripple recall together with what the user told the assistant.

    HF_HUB_OFFLINE=1 python cookbook/langchain_vectorstore.py

Needs ``pip install 'ripplemem[langchain]'`` (langchain-core). Without it the recipe stops with that
pip command.
"""

from __future__ import annotations

from extras import missing_extra

try:
    from langchain_core.documents import Document
    from langchain_core.indexing import InMemoryRecordManager, index

    from langchain_ripplemem import RippleMemVectorStore
except ImportError as error:
    missing_extra("langchain", error)

from ripplemem import RippleMem

WIKI = [
    Document(
        page_content="Travel policy: book flights through the travel desk at least 14 days ahead; "
        "economy class for flights under six hours.",
        metadata={"source": "wiki/travel.md"},
    ),
    Document(
        page_content="Expenses: submit receipts within 30 days; meals abroad are covered up to 60 EUR a day.",
        metadata={"source": "wiki/expenses.md"},
    ),
    Document(
        page_content="Workshops with clients are planned by the account team and announced in the "
        "#clients channel.",
        metadata={"source": "wiki/clients.md"},
    ),
]
EDITED = Document(
    page_content="Expenses: submit receipts within 45 days; meals abroad are covered up to 70 EUR a day.",
    metadata={"source": "wiki/expenses.md"},
)


def show(store: RippleMemVectorStore, query: str, filter: dict[str, str] | None = None) -> None:
    """Print what the store finds for a query: score, source, text."""
    print(f"> {query}")
    for doc, score in store.similarity_search_with_score(query, k=3, filter=filter):
        print(f"  {score:.2f}  {doc.metadata.get('source')}  {doc.page_content}")


def sync(docs: list[Document], manager: InMemoryRecordManager, store: RippleMemVectorStore) -> dict:
    """Bring the store in line with docs: add new and changed ones, delete what they replaced."""
    return dict(
        index(docs, manager, store, cleanup="incremental", source_id_key="source", key_encoder="sha256")
    )


def main() -> None:
    """Index the wiki, re-index after an edit, then search it beside the user's own memories."""
    mem = RippleMem(path=None, user_id="sam")  # path="./memdb" keeps everything on disk
    store = RippleMemVectorStore(memory=mem)
    manager = InMemoryRecordManager(namespace="wiki/sam")
    manager.create_schema()
    print("index:", sync(WIKI, manager, store))
    print("after an edit:", sync([WIKI[0], EDITED, WIKI[2]], manager, store))

    mem.add("I'm flying to Lisbon on 3 June for the client workshop.", event_time="2026-05-20")
    show(store, "What do I need to do for my Lisbon trip?")
    show(store, "How long do I have to hand in receipts?", filter={"source": "wiki/expenses.md"})
    retriever = store.as_retriever(search_kwargs={"k": 1})
    print("retriever:", [doc.page_content for doc in retriever.invoke("meal allowance abroad")])


if __name__ == "__main__":
    main()
