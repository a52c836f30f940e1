"""Working memory: the turns of one session, in process, with capacity, TTL and mention counts.

The HelloAgents memory chapter's working memory (docs/design-notes.md#working-memory): at most 50 items,
each expires 60 minutes after it was last mentioned, and a full memory drops its lowest-priority item.
Priority (ours; the chapter names no formula):

    priority = 0.5 x importance + 0.3 x recency + 0.2 x min(mention_count / 3, 1)
               (+ 1.0 when the user asked to remember it)

where recency falls linearly from 1 at the item's last mention to 0 when its TTL runs out; of
equal priorities the least recently mentioned goes. The TTL runs from the last mention, not from
creation, so an item the conversation keeps returning to outlives an hour, which is what the
"older than 1 h" consolidation signal needs (docs/design-notes.md#consolidation).

Mentions: observing a text whose normalised form equals a live item's (case, punctuation and
spacing aside) does not add an item; it increments that item's mention_count. Observing a text
that names an entity a live item names (people, places, titles, organisations by
`ripplemem.language.entities.extract_entities`; dates and quantities do not count) increments the
mention_count of each such item once. Turns of every role count.

Items that leave by expiry or eviction are handed to `on_drop(item, reason)` (reason "expired" or
"evicted") so the caller can consolidate them; `expire()` also returns the expired ones. All
methods are thread-safe; items are frozen snapshots.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from ripplemem.core.clock import aware, in_utc, utc_now
from ripplemem.core.text import estimate_tokens
from ripplemem.core.validation import check_flag, check_time_range
from ripplemem.errors import InvalidInputError, InvalidTypeError, RippleMemError
from ripplemem.language.entities import ExtractedEntity, extract_entities
from ripplemem.rules.lifecycle._common import normalize_text
from ripplemem.rules.lifecycle.consolidation import (
    ConsolidationContext,
    ConsolidationDecision,
    decide_consolidation,
    remember_cue,
)
from ripplemem.rules.lifecycle.settings import DEFAULT_SETTINGS, LifecycleSettings

Clock = Callable[[], datetime]
DropCallback = Callable[["WorkingItem", str], None]
Extractor = Callable[[str], Iterable[ExtractedEntity]]

# Entity kinds that say what a turn is about; dates and quantities ("5 km") recur by chance.
_MENTION_KINDS_SKIPPED = frozenset({"date", "quantity"})


@dataclass(frozen=True)
class WorkingItem:
    """One turn held in working memory, as of the moment it was read."""

    id: str
    session_id: str | None
    role: str
    text: str
    created_at: datetime
    last_seen: datetime
    importance: float
    mention_count: int = 1
    entities: tuple[str, ...] = ()
    remember: bool = False
    key: str = ""
    tokens: int = 0
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def expires_at(self, ttl: timedelta) -> datetime:
        """When the item leaves working memory unless it is mentioned again."""
        return self.last_seen + ttl

    def line(self) -> str:
        """The item as one prompt line: '- [14:05, user] ...'."""
        return f"- [{self.created_at.strftime('%H:%M')}, {self.role}] {self.text}"


class WorkingMemory:
    """The working memory of one session: observe turns, read items or a prompt context, expire."""

    def __init__(
        self,
        session_id: str | None = None,
        *,
        settings: LifecycleSettings = DEFAULT_SETTINGS,
        clock: Clock | None = None,
        on_drop: DropCallback | None = None,
        extract: Extractor = extract_entities,
    ) -> None:
        if not isinstance(settings, LifecycleSettings):
            raise InvalidTypeError(f"settings must be LifecycleSettings, got {type(settings).__name__}")
        if clock is not None and not callable(clock):
            raise InvalidTypeError("clock must be a callable returning a datetime")
        self.session_id = session_id
        self.settings = settings
        self.capacity = settings.working_capacity
        self.ttl = timedelta(minutes=settings.working_ttl_minutes)
        self._clock: Clock = clock or utc_now
        self._on_drop = on_drop
        self._extract = extract
        self._lock = threading.Lock()
        self._items: dict[str, WorkingItem] = {}  # insertion order = conversation order
        self._retired = False  # set by WorkingMemories when it drops this empty session

    # --- writing ----------------------------------------------------------------------------

    def observe(
        self,
        role: str,
        text: str,
        *,
        importance: float | None = None,
        remember: bool = False,
        metadata: Mapping[str, Any] | None = None,
    ) -> WorkingItem:
        """Add a conversation turn, or count it as another mention of a live item; returns that item.

        `remember=True` (or a cue in the text such as "remember that" / 记住) marks the item for
        immediate consolidation and keeps it from being evicted before unmarked items.
        """
        if not isinstance(role, str) or not role.strip():
            raise InvalidInputError("role must be a non-empty string such as 'user'")
        if not isinstance(text, str):
            raise InvalidTypeError(f"text must be a string, got {type(text).__name__}")
        key = normalize_text(text)
        if not key:
            raise InvalidInputError("text must contain words, got an empty or punctuation-only turn")
        value = self.settings.default_importance if importance is None else importance
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise InvalidInputError(f"importance must be a number in [0, 1], got {importance!r}")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidTypeError(f"metadata must be a mapping, got {type(metadata).__name__}")
        explicit = check_flag(remember, "remember") or remember_cue(text) is not None
        entities = tuple(
            dict.fromkeys(
                entity.canonical
                for entity in self._extract(text)
                if entity.type not in _MENTION_KINDS_SKIPPED
            )
        )
        meta = MappingProxyType(dict(metadata or {}))

        dropped: list[tuple[WorkingItem, str]] = []
        with self._lock:
            if self._retired:
                raise _Retired()
            now = self._now()
            dropped.extend((item, "expired") for item in self._purge_expired(now))
            mentioned = set(entities)
            result: WorkingItem | None = None
            for item_id, item in list(self._items.items()):
                if item.key == key:
                    result = replace(
                        item,
                        mention_count=item.mention_count + 1,
                        last_seen=now,
                        importance=max(item.importance, float(value)),
                        remember=item.remember or explicit,
                        metadata=MappingProxyType({**item.metadata, **meta}),
                    )
                    self._items[item_id] = result
                elif mentioned.intersection(item.entities):
                    self._items[item_id] = replace(item, mention_count=item.mention_count + 1, last_seen=now)
            if result is None:
                result = WorkingItem(
                    id=uuid.uuid4().hex,
                    session_id=self.session_id,
                    role=role.strip(),
                    text=text.strip(),
                    created_at=now,
                    last_seen=now,
                    importance=float(value),
                    entities=entities,
                    remember=explicit,
                    key=key,
                    tokens=estimate_tokens(text),
                    metadata=meta,
                )
                self._items[result.id] = result
                while len(self._items) > self.capacity:
                    victim = min(
                        (item for item in self._items.values() if item.id != result.id),
                        key=lambda item: (self._priority(item, now), item.last_seen),
                    )
                    del self._items[victim.id]
                    dropped.append((victim, "evicted"))
        self._report(dropped)
        return result

    def remove(self, item_id: str) -> WorkingItem | None:
        """Take an item out (e.g. once it is consolidated); returns it, or None if it is not here."""
        with self._lock:
            return self._items.pop(item_id, None)

    def clear(self) -> list[WorkingItem]:
        """Empty the session's working memory; returns what it held."""
        with self._lock:
            items = list(self._items.values())
            self._items.clear()
        return items

    def expire(self) -> list[WorkingItem]:
        """Remove the items whose TTL ran out and return them (on_drop hears of them too)."""
        with self._lock:
            expired = self._purge_expired(self._now())
        self._report([(item, "expired") for item in expired])
        return expired

    # --- reading ----------------------------------------------------------------------------

    def items(self) -> list[WorkingItem]:
        """The live items in conversation order (expired ones are purged first)."""
        with self._lock:
            expired = self._purge_expired(self._now())
            items = list(self._items.values())
        self._report([(item, "expired") for item in expired])
        return items

    def get(self, item_id: str) -> WorkingItem | None:
        """One live item by id, or None."""
        return next((item for item in self.items() if item.id == item_id), None)

    def __len__(self) -> int:
        return len(self.items())

    def decide(self, known_entities: Collection[str] = ()) -> list[tuple[WorkingItem, ConsolidationDecision]]:
        """The consolidation decision for every live item now, given the entities long-term memory knows."""
        context = ConsolidationContext(now=self._now(), known_entities=frozenset(known_entities))
        return [(item, decide_consolidation(item, context, self.settings)) for item in self.items()]

    def priority(self, item: WorkingItem) -> float:
        """The item's eviction priority now (the lowest goes first when the memory is full)."""
        return self._priority(item, self._now())

    def select(self, token_budget: int | None = None) -> list[WorkingItem]:
        """The items a prompt of token_budget tokens holds: highest priority first, shown in order.

        An item too long for what is left is skipped and shorter ones may still fit.
        """
        budget = self._budget(token_budget)
        items = self.items()
        now = self._now()
        order = {item.id: index for index, item in enumerate(items)}
        chosen, used = [], 0
        for item in sorted(items, key=lambda item: (-self._priority(item, now), -order[item.id])):
            cost = estimate_tokens(item.line())
            if used + cost <= budget:
                chosen.append(item)
                used += cost
        return sorted(chosen, key=lambda item: order[item.id])

    def context(self, token_budget: int | None = None, *, header: str = "Current conversation:") -> str:
        """Text for a prompt: the selected items as dated lines in conversation order, within budget."""
        budget = self._budget(token_budget)
        header_cost = estimate_tokens(header) if header else 0
        chosen = self.select(budget - header_cost) if budget > header_cost else []
        if not chosen:
            return ""
        lines = [item.line() for item in chosen]
        return "\n".join([header, *lines] if header else lines)

    # --- internals --------------------------------------------------------------------------

    def _budget(self, token_budget: int | None) -> int:
        budget = self.settings.working_context_tokens if token_budget is None else token_budget
        if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
            raise InvalidInputError(f"token_budget must be a positive integer, got {token_budget!r}")
        return budget

    def _now(self) -> datetime:
        return in_utc(check_time_range("clock()", aware(self._clock(), "clock()")))

    def _priority(self, item: WorkingItem, now: datetime) -> float:
        s = self.settings
        recency = min(1.0, max(0.0, 1.0 - (now - item.last_seen) / self.ttl))
        mentions = min(item.mention_count / max(s.mention_threshold, 1), 1.0)
        priority = (
            s.working_priority_importance * item.importance
            + s.working_priority_recency * recency
            + s.working_priority_mentions * mentions
        )
        return priority + (s.working_remember_bonus if item.remember else 0.0)

    def _purge_expired(self, now: datetime) -> list[WorkingItem]:
        expired = [item for item in self._items.values() if now - item.last_seen >= self.ttl]
        for item in expired:
            del self._items[item.id]
        return expired

    def _report(self, dropped: list[tuple[WorkingItem, str]]) -> None:
        if self._on_drop is not None:
            for item, reason in dropped:
                self._on_drop(item, reason)


class _Retired(RippleMemError):
    """observe() on a session memory WorkingMemories.expire() dropped; WorkingMemories.observe retries."""

    def __init__(self) -> None:
        super().__init__(
            "this session's working memory was dropped when it expired empty; "
            "get it again with WorkingMemories.session(session_id)"
        )


class WorkingMemories:
    """One WorkingMemory per session id, created on first use, sharing settings, clock and on_drop."""

    def __init__(
        self,
        *,
        settings: LifecycleSettings = DEFAULT_SETTINGS,
        clock: Clock | None = None,
        on_drop: DropCallback | None = None,
        extract: Extractor = extract_entities,
    ) -> None:
        self.settings = settings
        self._clock = clock
        self._on_drop = on_drop
        self._extract = extract
        self._lock = threading.Lock()
        self._sessions: dict[str | None, WorkingMemory] = {}

    def session(self, session_id: str | None) -> WorkingMemory:
        """The working memory of a session (None is the handle's default session)."""
        with self._lock:
            memory = self._sessions.get(session_id)
            if memory is None:
                memory = WorkingMemory(
                    session_id,
                    settings=self.settings,
                    clock=self._clock,
                    on_drop=self._on_drop,
                    extract=self._extract,
                )
                self._sessions[session_id] = memory
            return memory

    def observe(self, session_id: str | None, role: str, text: str, **options: Any) -> WorkingItem:
        """WorkingMemory.observe on a session's memory; safe against a concurrent expire()."""
        while True:
            try:
                return self.session(session_id).observe(role, text, **options)
            except _Retired:
                continue

    def sessions(self) -> list[str | None]:
        """Session ids that have a working memory."""
        with self._lock:
            return list(self._sessions)

    def drop(self, session_id: str | None) -> list[WorkingItem]:
        """Forget a session's working memory (the session ended); returns what it held."""
        with self._lock:
            memory = self._sessions.pop(session_id, None)
        return memory.clear() if memory is not None else []

    def expire(self) -> dict[str | None, list[WorkingItem]]:
        """Expire every session; sessions left empty are dropped. Returns the expired items by session.

        Feed turns through `WorkingMemories.observe`, which retries on a session dropped meanwhile;
        a WorkingMemory held across expire() may be one the pool no longer lists.
        """
        with self._lock:
            memories = list(self._sessions.items())
        expired: dict[str | None, list[WorkingItem]] = {}
        for session_id, memory in memories:
            items = memory.expire()
            if items:
                expired[session_id] = items
            with self._lock, memory._lock:
                if not memory._items and self._sessions.get(session_id) is memory:
                    memory._retired = True
                    del self._sessions[session_id]
        return expired
