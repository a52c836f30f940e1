"""RippleMem hits as LangChain Documents, and Documents back as prompt text."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.documents import Document

from ripplemem import Hit, Memory, hit_metadata
from ripplemem.integration import memory_metadata


def hit_to_document(hit: Hit) -> Document:
    """A recalled memory as a Document: its text, ``id`` the memory id, and the public metadata of
    ``ripplemem.hit_metadata()`` (``source`` the origin, times, score, why, the caller's keys flat)."""
    return Document(id=hit.memory.id, page_content=hit.memory.content, metadata=hit_metadata(hit))


def memory_to_document(memory: Memory) -> Document:
    """A stored memory as a Document with the public metadata of ``ripplemem.hit_metadata()`` (no score)."""
    return Document(id=memory.id, page_content=memory.content, metadata=memory_metadata(memory))


def format_docs(documents: Sequence[Document]) -> str:
    """Documents as dated prompt lines, '- [2024-03-15, episodic] ...', for ``retriever | format_docs``."""
    lines = []
    for document in documents:
        meta = document.metadata
        when = meta.get("time") or meta.get("event_time") or meta.get("created_at")
        date = str(when)[:10] if when else "undated"
        kind = meta.get("type")
        label = f"{date}, {kind}" if kind else date
        lines.append(f"- [{label}] {document.page_content}")
    return "\n".join(lines)
