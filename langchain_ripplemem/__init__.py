"""LangChain and LangGraph adapters for RippleMem: retriever, memory tools, LangGraph store, middleware.

One line each::

    retriever = RippleMemRetriever(memory=mem, k=5)              # LCEL: {"context": retriever | format_docs}
    tools = RippleMemToolkit(memory=mem).get_tools()             # store/recall/update/find_connections/forget
    agent = create_agent(model, tools, store=RippleMemStore(memory=mem),
                         middleware=[RippleMemMiddleware(memory=mem)])

``RippleMemMemory`` (legacy ``BaseMemory`` for old chains) needs the ``langchain-classic`` extra.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ripplemem import MissingDependencyError

_EXPORTS = {
    "RippleMemRetriever": "langchain_ripplemem.retriever",
    "format_docs": "langchain_ripplemem.documents",
    "hit_to_document": "langchain_ripplemem.documents",
    "memory_to_document": "langchain_ripplemem.documents",
    "RippleMemToolkit": "langchain_ripplemem.tools",
    "StoreMemoryTool": "langchain_ripplemem.tools",
    "RecallMemoryTool": "langchain_ripplemem.tools",
    "FindConnectionsTool": "langchain_ripplemem.tools",
    "ForgetMemoryTool": "langchain_ripplemem.tools",
    "UpdateMemoryTool": "langchain_ripplemem.tools",
    "EraseMemoryTool": "langchain_ripplemem.tools",
    "RippleMemStore": "langchain_ripplemem.store",
    "RippleMemVectorStore": "langchain_ripplemem.vectorstore",
    "RippleMemMiddleware": "langchain_ripplemem.middleware",
    "RippleMemMemory": "langchain_ripplemem.legacy",
}
_EXTRAS = {
    "langchain_ripplemem.legacy": "langchain-classic",
    "langchain_ripplemem.middleware": "langgraph",
    "langchain_ripplemem.store": "langgraph",
}

__all__ = [
    "RippleMemRetriever",
    "format_docs",
    "hit_to_document",
    "memory_to_document",
    "RippleMemToolkit",
    "StoreMemoryTool",
    "RecallMemoryTool",
    "FindConnectionsTool",
    "ForgetMemoryTool",
    "UpdateMemoryTool",
    "EraseMemoryTool",
    "RippleMemStore",
    "RippleMemMiddleware",
    "RippleMemMemory",
    "RippleMemVectorStore",
]

if TYPE_CHECKING:
    from langchain_ripplemem.documents import format_docs, hit_to_document, memory_to_document
    from langchain_ripplemem.legacy import RippleMemMemory
    from langchain_ripplemem.middleware import RippleMemMiddleware
    from langchain_ripplemem.retriever import RippleMemRetriever
    from langchain_ripplemem.store import RippleMemStore
    from langchain_ripplemem.tools import (
        EraseMemoryTool,
        FindConnectionsTool,
        ForgetMemoryTool,
        RecallMemoryTool,
        RippleMemToolkit,
        StoreMemoryTool,
        UpdateMemoryTool,
    )
    from langchain_ripplemem.vectorstore import RippleMemVectorStore


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langchain_ripplemem' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ImportError as error:
        extra = _EXTRAS.get(module, "langchain")
        raise MissingDependencyError(
            f"{name} needs {error.name or 'a missing package'}: pip install 'ripplemem[{extra}]'"
        ) from error
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
