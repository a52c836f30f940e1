"""Knowledge bases: named collections of document chunks shared with the users they are granted to.

A knowledge base is a scope of its own. Its chunks are ``document`` memories stored under a
reserved scope id, ``"\\x1fkb\\x1f" + name``: user ids may not contain control characters
(``validation.check_identifier``), so no user id can ever equal it and no handle can be opened on
it. Everything per-scope works unchanged for it (SQLite rows and FTS, its own Chroma collection,
its own graph, BM25 cache). Users reach a base only through a grant, never by its scope id.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from ripplemem.core.clock import from_epoch
from ripplemem.core.types import Memory
from ripplemem.core.validation import check_identifier
from ripplemem.engine.engine import Engine
from ripplemem.engine.writes import delete_memories
from ripplemem.errors import InvalidInputError, InvalidTypeError, KnowledgeBaseAccessError
from ripplemem.markdown.convert.convert import source_key
from ripplemem.store.tables import knowledge_bases as kb_tables
from ripplemem.store.tables.knowledge_bases import KB_SCOPE_PREFIX, kb_name_of
from ripplemem.store.tables.memories import MemoryFilter

DEFAULT_KNOWLEDGE_BASE = "default"


@dataclass(frozen=True)
class KnowledgeBase:
    """A knowledge base a user can read: its size, its readers and who created it when."""

    name: str
    chunks: int
    sources: int
    pages: int
    readers: tuple[str, ...]
    created_by: str
    created_at: datetime | None


def kb_scope(name: str) -> str:
    """The reserved scope id a knowledge base's chunks, vectors and graph are stored under."""
    return KB_SCOPE_PREFIX + name


def kb_label(name: str) -> str:
    """What a chunk's ``Memory.user_id`` shows instead of the reserved scope id: "kb:NAME"."""
    return "kb:" + name


def present(memory: Memory) -> Memory:
    """A chunk as users see it: owned by "kb:NAME", never by the reserved scope id."""
    name = kb_name_of(memory.user_id)
    return memory if name is None else replace(memory, user_id=kb_label(name))


def check_kb_name(value: object) -> str:
    """A knowledge base name: a non-empty printable string of at most 128 characters."""
    name = check_identifier("knowledge_base", value, required=True)
    assert name is not None
    return name


def check_kb_names(value: object) -> tuple[str, ...] | None:
    """recall(knowledge_bases=...): one name, a list of names, or None for every readable base."""
    if value is None:
        return None
    if isinstance(value, str):
        return (check_kb_name(value),)
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise InvalidTypeError(
            f"knowledge_bases must be a name or a list of names, got {type(value).__name__}"
        )
    return tuple(dict.fromkeys(check_kb_name(v) for v in value))


def _not_shared(kb: str, user_id: str) -> KnowledgeBaseAccessError:
    return KnowledgeBaseAccessError(
        f"no knowledge base {kb!r} is shared with user {user_id!r}; "
        "a user it is granted to can share it with mem.kb.grant(knowledge_base, user_id)"
    )


def require_reader(engine: Engine, kb: str, user_id: str) -> None:
    """Raise KnowledgeBaseAccessError unless the user may read the base (a missing base looks the same)."""
    with engine.store.read() as conn:
        if not kb_tables.has_grant(conn, kb, user_id):
            raise _not_shared(kb, user_id)


def readable(engine: Engine, user_id: str, wanted: Iterable[str] | None = None) -> tuple[str, ...]:
    """The bases a user may read, or the wanted ones after checking each is shared with them."""
    granted = kb_tables.granted_kbs(engine.store, user_id)
    if wanted is None:
        return tuple(granted)
    for kb in wanted:
        if kb not in granted:
            raise _not_shared(kb, user_id)
    return tuple(wanted)


def open_for_ingest(engine: Engine, kb: str, user_id: str) -> bool:
    """Make sure a user may write into a base, creating (and granting) it if missing; True if created."""
    with engine.unit_of_work(kb_scope(kb)) as work, work.transaction() as conn:
        if not kb_tables.kb_exists(conn, kb):
            kb_tables.create_kb(conn, kb, user_id, engine.now())
            return True
        if not kb_tables.has_grant(conn, kb, user_id):
            raise KnowledgeBaseAccessError(
                f"the knowledge base {kb!r} exists and is not shared with user {user_id!r}; ask one "
                "of its readers to grant it (mem.kb.grant), or ingest into another knowledge base"
            )
    return False


def grant(engine: Engine, kb: str, granter: str, user_id: str) -> bool:
    """Share a base the granter can read with another user; False if they could read it already."""
    with engine.unit_of_work(kb_scope(kb)) as work, work.transaction() as conn:
        if not kb_tables.has_grant(conn, kb, granter):
            raise _not_shared(kb, granter)
        return kb_tables.add_grant(conn, kb, user_id, granter, engine.now())


def revoke(engine: Engine, kb: str, revoker: str, user_id: str) -> bool:
    """Stop sharing a base with a user (the revoker must read it); False if they could not read it."""
    with engine.unit_of_work(kb_scope(kb)) as work, work.transaction() as conn:
        if not kb_tables.has_grant(conn, kb, revoker):
            raise _not_shared(kb, revoker)
        if kb_tables.readers(conn, kb) == [user_id]:
            raise InvalidInputError(
                f"{user_id!r} is the last reader of knowledge base {kb!r}; revoking would leave it "
                "unreachable: delete it instead (mem.kb.delete)"
            )
        return kb_tables.remove_grant(conn, kb, user_id)


def chunk_count(engine: Engine, kb: str) -> int:
    """How many active chunks a knowledge base holds."""
    return kb_tables.active_chunks(engine.store, kb_scope(kb))


def describe(engine: Engine, user_id: str) -> list[KnowledgeBase]:
    """The bases a user may read, with chunk, file and page counts."""
    found = []
    for kb in kb_tables.granted_kbs(engine.store, user_id):
        sources = kb_tables.list_sources(engine.store, kb)
        with engine.store.read() as conn:
            created_at, created_by = kb_tables.kb_created(conn, kb)
            names = kb_tables.readers(conn, kb)
        found.append(
            KnowledgeBase(
                name=kb,
                chunks=chunk_count(engine, kb),
                sources=len(sources),
                pages=sum(s.pages for s in sources),
                readers=tuple(names),
                created_by=created_by,
                created_at=from_epoch(created_at),
            )
        )
    return found


def _stored_key(engine: Engine, kb: str, source: object) -> str:
    """The key a file's chunks are stored under: the given text if a base knows it, else the
    resolved absolute path."""
    if not isinstance(source, (str, os.PathLike)) or not os.fspath(source).strip():
        raise InvalidTypeError(f"source must be a file path (str or Path), got {source!r}")
    text = os.fspath(source)
    return text if text in kb_tables.source_hashes(engine.store, kb) else source_key(text)


def list_chunks(
    engine: Engine, kb: str, user_id: str, source: str | os.PathLike[str] | None, limit: int, offset: int
) -> list[Memory]:
    """Chunks of a base the user can read, in the order they were stored (of one file, if given)."""
    require_reader(engine, kb, user_id)
    metadata: tuple[tuple[str, str], ...] = ()
    if source is not None:
        metadata = (("source", _stored_key(engine, kb, source)),)
    flt = MemoryFilter(user_id=kb_scope(kb), metadata=metadata)
    return [present(m) for m in engine.store.list(flt, limit, offset, newest_first=False)]


def forget_source(engine: Engine, kb: str, user_id: str, source: str | os.PathLike[str]) -> int:
    """Delete one file's chunks from a base the user can read; returns how many were deleted."""
    require_reader(engine, kb, user_id)
    key = _stored_key(engine, kb, source)
    scope = kb_scope(kb)
    deleted = delete_memories(engine, scope, kb_tables.chunk_ids(engine.store, scope, key))
    with engine.unit_of_work(scope) as work, work.transaction() as conn:
        kb_tables.remove_source(conn, kb, key)
    return len(deleted)


def delete_knowledge_base(engine: Engine, kb: str, user_id: str) -> int:
    """Delete a base the user can read, for every reader: chunks, vectors, graph, grants; returns
    how many chunks were deleted."""
    require_reader(engine, kb, user_id)
    scope = kb_scope(kb)
    deleted = delete_memories(engine, scope, kb_tables.chunk_ids(engine.store, scope))
    with engine.unit_of_work(scope) as work:
        work.index.drop(scope)
        with work.transaction() as conn:
            kb_tables.drop_kb_rows(conn, kb)
    return len(deleted)
