"""RippleMemStore: a LangGraph long-term store whose items are RippleMem memories."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
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
from langchain_ripplemem.store_config import check_minutes, index_paths, parse_index, parse_ttl
from langchain_ripplemem.store_ttl import (
    DEFAULT_SWEEP_MINUTES,
    TTL_KEY,
    TTLSweeper,
    is_expired,
    refreshed,
    ttl_metadata,
)
from ripplemem import InvalidInputError, InvalidTypeError, Memory, RippleMem
from ripplemem.integration import check_type, handle_now, store_users

NAMESPACE_KEY, KEY_KEY, VALUE_KEY, UPDATED_KEY, INDEXED_KEY = (
    "langgraph_namespace",
    "langgraph_key",
    "langgraph_value",
    "langgraph_updated_at",
    "langgraph_indexed",
)
_STORE_KEYS = (NAMESPACE_KEY, KEY_KEY, VALUE_KEY, UPDATED_KEY, INDEXED_KEY, TTL_KEY)
_PAGE = 500
_MAX_RECALL = 2000
Keep = Callable[[Item], bool]
Entry = tuple[Memory, Item]  # a memory and the store item it is


class RippleMemStore(BaseStore):
    """A LangGraph store on RippleMem: ``create_agent(model, tools, store=RippleMemStore(memory=mem))``.

    Namespaces map onto scopes through ``layout`` (default ``("{user_id}",)``: the first part is the
    user), so each user's items are that user's memories, isolated like any other. ``search`` with a
    ``query`` is a ripple recall; a ``put`` with value None deletes. Memories written another way
    (tools, middleware, ``mem.add``) appear in the layout's namespace, e.g. ``("alice",)``, keyed by id.

    ``index`` is LangGraph's ``IndexConfig`` (``fields`` in LangGraph's path syntax choose the text a
    value is recalled by; ``dims`` and ``embed`` must be the handle's embedder) or a list of fields.
    ``ttl`` is LangGraph's ``TTLConfig``: ``put(..., ttl=minutes)`` items expire that long after their
    last write (or refreshing read); expired items are never returned, and ``sweep_ttl`` (every
    ``sweep_interval_minutes`` in a background thread, when set) erases them for good.
    """

    supports_ttl: bool = True

    def __init__(
        self,
        memory: RippleMem,
        *,
        layout: Sequence[str] = DEFAULT_LAYOUT,
        memory_type: str = "semantic",
        index: IndexConfig | Sequence[str] | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        self.memory = check_memory(memory)
        self.layout = Layout.parse(layout)
        self.memory_type = check_type(memory_type)
        self.index_paths = parse_index(index, self.memory)
        self.index_config = index
        self.ttl_config = parse_ttl(ttl)
        self._users: set[str] = {memory.user_id}
        self._lock = threading.Lock()
        self._sweeper = TTLSweeper(self.sweep_ttl)
        if self.ttl_config and self.ttl_config.get("sweep_interval_minutes"):
            self.start_ttl_sweeper()

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
        raise InvalidTypeError(
            f"ops must be GetOp, PutOp, SearchOp or ListNamespacesOp, got {type(op).__name__}"
        )

    # -- TTL -----------------------------------------------------------------------------------
    def sweep_ttl(self) -> int:
        """Erase every expired item of every user of the store (``RippleMem.erase``: rows, vectors
        and change log); returns how many went."""
        swept = 0
        for user in store_users(self.memory):
            handle = self.memory.scope(user, agent_id=self._list_agent())
            now = handle_now(handle)
            expired = [memory.id for memory in self._all(handle, None) if is_expired(memory.metadata, now)]
            for memory_id in expired:
                current = handle.get(memory_id)  # read again: a put may have renewed it meanwhile
                if current is not None and is_expired(current.metadata, handle_now(handle)):
                    handle.erase(current.id)
                    swept += 1
        return swept

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> Future[None]:
        """Run sweep_ttl every ``sweep_interval_minutes`` (default: the ttl config's, else 5) in a
        daemon thread; the returned future ends when stop_ttl_sweeper stops it."""
        given = check_minutes(sweep_interval_minutes, "sweep_interval_minutes")
        configured = (self.ttl_config or {}).get("sweep_interval_minutes")
        return self._sweeper.start(given or configured or DEFAULT_SWEEP_MINUTES)

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; True when it has stopped."""
        return self._sweeper.stop(timeout)

    # -- ops -----------------------------------------------------------------------------------
    def _get(self, op: GetOp) -> Item | None:
        namespace = check_namespace(op.namespace)
        scope = self.layout.scope_of(namespace)
        handle = self._handle(scope)
        found = self._find(handle, scope, namespace, op.key)
        if found is None:
            return None
        item = self._item(found, handle_now(handle))
        if item is not None and op.refresh_ttl:
            self._refresh(handle, [found])
        return item

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
        paths = self.index_paths if op.index is None or op.index is False else index_paths(op.index)
        text = value_text(op.value, paths)
        kept = {k: v for k, v in (existing.metadata if existing else {}).items() if k not in _STORE_KEYS}
        metadata = {
            **kept,
            NAMESPACE_KEY: list(namespace),
            KEY_KEY: op.key,
            VALUE_KEY: op.value,
            **ttl_metadata(check_minutes(op.ttl, "ttl"), handle_now(handle)),
        }
        if op.index is False:
            metadata[INDEXED_KEY] = False
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
        session = scope.get("session_id")

        def keep(item: Item) -> bool:
            return item.namespace[: len(prefix)] == prefix and matches_filter(item.value, op.filter)

        wanted = op.offset + op.limit
        if op.query:
            found = self._recalled(handle, op.query, session, wanted, keep)
            if len(found) < wanted:  # as InMemoryStore: items put with index=False fill up, unscored
                found += [
                    (entry, None)
                    for entry in self._listed(handle, session, wanted - len(found), keep, indexed=False)
                ]
        else:
            found = [(entry, None) for entry in self._listed(handle, session, wanted, keep)]
        page = found[op.offset : wanted]
        if op.refresh_ttl:
            self._refresh(handle, [memory for (memory, _), _ in page])
        return [_search_item(item, score) for (_, item), score in page]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = list(op.match_conditions or ())
        for condition in conditions:
            if isinstance(condition.path, str):  # it would match letter by letter, so nothing
                raise InvalidTypeError(
                    f"{condition.match_type} must be a tuple of namespace labels such as "
                    f"('alice', 'memories'), got the string {condition.path!r}"
                )
        users = set(self._known_users())
        for condition in conditions:
            if condition.match_type == "prefix":
                user = self._pinned_user(tuple(condition.path))
                if user is not None:
                    users.add(user)
        namespaces: set[tuple[str, ...]] = set()
        for user in sorted(users):
            handle = self.memory.scope(user, agent_id=self._list_agent())
            namespaces.update(item.namespace for _, item in self._listed(handle, None, None, lambda _: True))
        chosen = [
            ns
            for ns in namespaces
            if all(namespace_matches(ns, c.match_type, tuple(c.path)) for c in conditions)
        ]
        if op.max_depth is not None:
            chosen = list({ns[: op.max_depth] for ns in chosen})
        return sorted(chosen)[op.offset : op.offset + op.limit]

    # -- helpers -------------------------------------------------------------------------------
    def _handle(self, scope: dict[str, str]) -> RippleMem:
        own = self.memory.scope_info
        with self._lock:
            self._users.add(scope["user_id"])
        return self.memory.scope(
            scope["user_id"],
            agent_id=scope.get("agent_id", own.agent_id),
            session_id=scope.get("session_id", own.session_id),
        )

    def _find(
        self, handle: RippleMem, scope: dict[str, str], namespace: tuple[str, ...], key: str
    ) -> Memory | None:
        session = scope.get("session_id")
        stored = handle.list(
            metadata={NAMESPACE_KEY: list(namespace), KEY_KEY: key}, session_id=session, limit=1
        )
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
        return self.layout.base_of(
            {"user_id": memory.user_id, "agent_id": memory.agent_id, "session_id": memory.session_id}
        )

    def _item(self, memory: Memory, now: datetime) -> Item | None:
        """The store item a memory is (None: outside the layout, or expired)."""
        namespace = self._namespace_of(memory)
        meta = memory.metadata
        if namespace is None or is_expired(meta, now):
            return None
        created = memory.created_at or datetime.now(timezone.utc)
        updated = datetime.fromisoformat(meta[UPDATED_KEY]) if UPDATED_KEY in meta else created
        value = meta[VALUE_KEY] if VALUE_KEY in meta else _native_value(memory)
        return Item(
            value=value,
            key=meta.get(KEY_KEY, memory.id),
            namespace=namespace,
            created_at=created,
            updated_at=updated,
        )

    def _entries(self, memories: Iterable[Memory], now: datetime, keep: Keep) -> list[Entry]:
        return [
            (memory, item)
            for memory in memories
            if (item := self._item(memory, now)) is not None and keep(item)
        ]

    def _refresh(self, handle: RippleMem, memories: Iterable[Memory]) -> None:
        """Restart the TTL of items a read returned (those that have one)."""
        now = handle_now(handle)
        for memory in memories:
            renewed = refreshed(memory.metadata, now)
            if renewed is not None:
                handle.update(memory.id, metadata=renewed)

    def _recalled(
        self, handle: RippleMem, query: str, session: str | None, wanted: int, keep: Keep
    ) -> list[tuple[Entry, float | None]]:
        k, first = max(2 * wanted, 10), True
        while True:
            recall = handle.recall(query, k=k, session_id=session, record_access=first)
            now = handle_now(handle)
            found: list[tuple[Entry, float | None]] = [
                (entry, hit.score)
                for hit in recall.hits
                for entry in self._entries([hit.memory], now, keep)
                if hit.memory.metadata.get(INDEXED_KEY) is not False
            ]
            if len(found) >= wanted or len(recall.hits) < k or k >= _MAX_RECALL:
                return found
            k, first = min(4 * k, _MAX_RECALL), False

    def _listed(
        self,
        handle: RippleMem,
        session: str | None,
        wanted: int | None,
        keep: Keep,
        indexed: bool | None = None,
    ) -> list[Entry]:
        """Live items in the scope, newest first; ``indexed=False``: only those put with index=False."""
        found: list[Entry] = []
        metadata = None if indexed is None else {INDEXED_KEY: indexed}
        offset = 0
        while wanted is None or len(found) < wanted:
            page = handle.list(session_id=session, metadata=metadata, limit=_PAGE, offset=offset)
            found += self._entries(page, handle_now(handle), keep)
            if len(page) < _PAGE:
                break
            offset += _PAGE
        return found if wanted is None else found[:wanted]

    def _all(self, handle: RippleMem, session: str | None) -> Iterator[Memory]:
        """Every memory of the scope, page by page (expired ones too)."""
        offset = 0
        while True:
            page = handle.list(session_id=session, limit=_PAGE, offset=offset)
            yield from page
            if len(page) < _PAGE:
                return
            offset += _PAGE

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
    return {
        "content": memory.content,
        "type": memory.type,
        "importance": memory.importance,
        "event_time": when.isoformat() if when else None,
        "metadata": dict(memory.metadata),
    }


def _search_item(item: Item, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=item.namespace,
        key=item.key,
        value=item.value,
        created_at=item.created_at,
        updated_at=item.updated_at,
        score=score,
    )
