"""RippleMem hits as LangChain Documents, and Documents back as prompt text."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langchain_core.documents import Document

from ripplemem import Hit, Memory


def hit_to_document(hit: Hit) -> Document:
    """A recalled memory as a Document: its text, and id, type, score, event_time, why in metadata."""
    document = memory_to_document(hit.memory)
    document.metadata.update(score=float(hit.score), why=hit.why, path=list(hit.path))
    return document


def memory_to_document(memory: Memory) -> Document:
    """A stored memory as a Document (id, type, dates, importance, scope and its own metadata)."""
    metadata: dict[str, Any] = {
        "id": memory.id,
        "type": memory.type,
        "event_time": _iso(memory.event_time),
        "created_at": _iso(memory.created_at),
        "importance": memory.importance,
        "user_id": memory.user_id,
        "session_id": memory.session_id,
        "source": "ripplemem",
    }
    if memory.metadata:
        metadata["memory_metadata"] = dict(memory.metadata)
    return Document(id=memory.id, page_content=memory.content, metadata=metadata)


def format_docs(documents: Sequence[Document]) -> str:
    """Documents as dated prompt lines, '- [2024-03-15, episodic] ...', for ``retriever | format_docs``."""
    lines = []
    for document in documents:
        meta = document.metadata
        when = meta.get("event_time") or meta.get("created_at")
        date = str(when)[:10] if when else "undated"
        kind = meta.get("type")
        label = f"{date}, {kind}" if kind else date
        lines.append(f"- [{label}] {document.page_content}")
    return "\n".join(lines)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()
