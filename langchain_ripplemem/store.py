"""RippleMemStore: a LangGraph long-term store whose items are RippleMem memories."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from langchain_ripplemem.namespaces import (
    DEFAULT_LAYOUT,
    Layout,
    check_namespace,
    matches_filter,
    namespace_matches,
    value_text,
)
from langchain_ripplemem.scopes import check_memory
from ripplemem import Memory, RippleMem
from ripplemem.errors import InvalidInputError, InvalidTypeError
from ripplemem.validation import check_type

NAMESPACE_KEY, KEY_KEY, VALUE_KEY, UPDATED_KEY = (
    "langgraph_namespace", "langgraph_key", "langgraph_value", "langgraph_updated_at")
_STORE_KEYS = (NAMESPACE_KEY, KEY_KEY, VALUE_KEY, UPDATED_KEY)
_PAGE = 500
_MAX_RECALL = 2000
Keep = Callable[[Item], bool]


class RippleMemStore(BaseStore):
    """A LangGraph store on RippleMem: ``create_agent(model, tools, store=RippleMemStore(memory=mem))``.

    Namespaces map onto scopes through ``layout`` (default ``("{user_id}",)``: the first part is the
    user), so each user's items are that user's memories, isolated like any other. ``search`` with a
    ``query`` is a ripple recall; a ``put`` with value None deletes. Memories written another way
    (tools, middleware, ``mem.add``) appear in the layout's namespace, e.g. ``("alice",)``, keyed by id.
    """

    def __init__(self, memory: RippleMem, *, layout: Sequence[str] = DEFAULT_LAYOUT,
                 memory_type: str = "semantic", index: Sequence[str] | None = None) -> None:
        self.memory = check_memory(memory)
        self.layout = Layout.parse(layout)
        self.memory_type = check_type(memory_type)
        if index is not None and (isinstance(index, str) or not all(isinstance(f, str) for f in index)):
            raise InvalidTypeError(f"index must be a list of value fields such as ['content'], got {index!r}")
        self.index_fields = list(index) if index is not None else None
        self._users: set[str] = {memory.user_id}
        self._lock = threading.Lock()

    # -- the two methods LangGraph calls -------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run Get/Put/Search/ListNamespaces ops in order; one result per op."""
        return [self._apply(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async twin of batch (runs in a worker thread so the event loop never blocks)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _apply(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise InvalidTypeError(f"ops must be GetOp, PutOp, SearchOp or ListNamespacesOp, "
                               f"got {type(op).__name__}")

    # -- ops -----------------------------------------------------------------------------------
    def _get(self, op: GetOp) -> Item | None:
        namespace = check_namespace(op.namespace)
        scope = self.layout.scope_of(namespace)
        found = self._find(self._handle(scope), scope, namespace, op.key)
        return None if found is None else self._item(found)

    def _put(self, op: PutOp) -> None:
        namespace = check_namespace(op.namespace)
        scope = self.layout.scope_of(namespace)
        handle = self._handle(scope)
        existing = self._find(handle, scope, namespace, op.key)
        if op.value is None:
            if existing is not None:
                handle.delete(existing.id)
            return
        if not isinstance(op.value, dict):
            raise InvalidTypeError(f"value must be a dict (or None to delete), got {type(op.value).__name__}")
        fields = list(op.index) if isinstance(op.index, list) else self.index_fields
        text = value_text(op.value, fields)
        kept = {k: v for k, v in (existing.metadata if existing else {}).items() if k not in _STORE_KEYS}
        metadata = {**kept, NAMESPACE_KEY: list(namespace), KEY_KEY: op.key, VALUE_KEY: op.value}
        if existing is None:
            handle.add(text, type=self.memory_type, metadata=metadata, session_id=scope.get("session_id"))
        else:
            metadata[UPDATED_KEY] = datetime.now(timezone.utc).isoformat()
            handle.update(existing.id, content=None if text == existing.content else text, metadata=metadata)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = check_namespace(op.namespace_prefix, "namespace_prefix")
        if op.limit < 0 or op.offset < 0:
            raise InvalidInputError(f"limit and offset must not be negative, got {op.limit} and {op.offset}")
        scope = self.layout.scope_of(prefix, prefix=True)
        handle = self._handle(scope)

        def keep(item: Item) -> bool:
            return item.namespace[:len(prefix)] == prefix and matches_filter(item.value, op.filter)

        wanted = op.offset + op.limit
        if op.query:
            found = self._recalled(handle, op.query, scope.get("session_id"), wanted, keep)
        else:
            found = [_search_item(item, None) for item in self._listed(handle, scope.get("session_id"),
                                                                      wanted, keep)]
        return found[op.offset:wanted]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = list(op.match_conditions or ())
        users = set(self._known_users())
        for condition in conditions:
            if condition.match_type == "prefix":
                user = self._pinned_user(tuple(condition.path))
                if user is not None:
                    users.add(user)
        namespaces: set[tuple[str, ...]] = set()
        for user in sorted(users):
            handle = self.memory.scope(user, agent_id=self._list_agent())
            namespaces.update(item.namespace for item in self._listed(handle, None, None, lambda _: True))
        chosen = [ns for ns in namespaces
                  if all(namespace_matches(ns, c.match_type, tuple(c.path)) for c in conditions)]
        if op.max_depth is not None:
            chosen = list({ns[:op.max_depth] for ns in chosen})
        return sorted(chosen)[op.offset:op.offset + op.limit]

    # -- helpers -------------------------------------------------------------------------------
    def _handle(self, scope: dict[str, str]) -> RippleMem:
        own = self.memory.scope_info
        with self._lock:
            self._users.add(scope["user_id"])
        return self.memory.scope(scope["user_id"], agent_id=scope.get("agent_id", own.agent_id),
                                 session_id=scope.get("session_id", own.session_id))

    def _find(self, handle: RippleMem, scope: dict[str, str], namespace: tuple[str, ...],
              key: str) -> Memory | None:
        session = scope.get("session_id")
        stored = handle.list(metadata={NAMESPACE_KEY: list(namespace), KEY_KEY: key},
                             session_id=session, limit=1)
        if stored:
            return stored[0]
        if len(namespace) != len(self.layout.parts) or not key:
            return None
        native = handle.get(key)  # a memory written another way is keyed by its id
        if native is None or NAMESPACE_KEY in native.metadata or self._namespace_of(native) != namespace:
            return None
        return native

    def _namespace_of(self, memory: Memory) -> tuple[str, ...] | None:
        if NAMESPACE_KEY in memory.metadata:
            return tuple(memory.metadata[NAMESPACE_KEY])
        return self.layout.base_of({"user_id": memory.user_id, "agent_id": memory.agent_id,
                                    "session_id": memory.session_id})

    def _item(self, memory: Memory) -> Item | None:
        namespace = self._namespace_of(memory)
        if namespace is None:
            return None
        meta = memory.metadata
        created = memory.created_at or datetime.now(timezone.utc)
        updated = datetime.fromisoformat(meta[UPDATED_KEY]) if UPDATED_KEY in meta else created
        value = meta[VALUE_KEY] if VALUE_KEY in meta else _native_value(memory)
        return Item(value=value, key=meta.get(KEY_KEY, memory.id), namespace=namespace,
                    created_at=created, updated_at=updated)

    def _recalled(self, handle: RippleMem, query: str, session: str | None, wanted: int,
                  keep: Keep) -> list[SearchItem]:
        k, first = max(2 * wanted, 10), True
        while True:
            recall = handle.recall(query, k=k, session_id=session, record_access=first)
            found = [_search_item(item, hit.score) for hit in recall.hits
                     if (item := self._item(hit.memory)) is not None and keep(item)]
            if len(found) >= wanted or len(recall.hits) < k or k >= _MAX_RECALL:
                return found
            k, first = min(4 * k, _MAX_RECALL), False

    def _listed(self, handle: RippleMem, session: str | None, wanted: int | None, keep: Keep) -> list[Item]:
        found: list[Item] = []
        offset = 0
        while wanted is None or len(found) < wanted:
            page = handle.list(session_id=session, limit=_PAGE, offset=offset)
            found += [item for memory in page if (item := self._item(memory)) is not None and keep(item)]
            if len(page) < _PAGE:
                break
            offset += _PAGE
        return found

    def _known_users(self) -> list[str]:
        with self._lock:
            return list(self._users)

    def _pinned_user(self, path: tuple[str, ...]) -> str | None:
        try:
            user = self.layout.scope_of(path, prefix=True)["user_id"]
        except InvalidInputError:
            return None
        return None if user == "*" else user

    def _list_agent(self) -> str | None:
        return None if "{agent_id}" in self.layout.parts else self.memory.scope_info.agent_id


def _native_value(memory: Memory) -> dict[str, Any]:
    when = memory.event_time
    return {"content": memory.content, "type": memory.type, "importance": memory.importance,
            "event_time": when.isoformat() if when else None, "metadata": dict(memory.metadata)}


def _search_item(item: Item, score: float | None) -> SearchItem:
    return SearchItem(namespace=item.namespace, key=item.key, value=item.value,
                      created_at=item.created_at, updated_at=item.updated_at, score=score)
