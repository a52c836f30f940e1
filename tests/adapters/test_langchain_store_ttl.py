"""RippleMemStore's TTL, as LangGraph's TTLConfig and put(..., ttl=) define it: expired items are never
shown, reads refresh the clock when asked to, and the sweep erases them for good."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from manual_clock import ManualClock

from langchain_ripplemem import RippleMemStore
from ripplemem import RippleMem
from ripplemem.embedding.embedders import Embedder
from ripplemem.errors import InvalidInputError, InvalidTypeError


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def mem(embedder: Embedder, clock: ManualClock) -> Iterator[RippleMem]:
    handle = RippleMem(path=None, user_id="alice", embedder=embedder, clock=clock)
    yield handle
    handle.close()


def later(clock: ManualClock, minutes: float) -> None:
    clock.now += timedelta(minutes=minutes)


def test_items_expire_unless_a_read_refreshes_them(mem: RippleMem, clock: ManualClock) -> None:
    store = RippleMemStore(memory=mem, ttl={"default_ttl": 10, "refresh_on_read": True})
    assert store.supports_ttl
    store.put(("alice", "notes"), "parking", {"content": "Parked on level 3, spot B12"})  # default: 10 min
    store.put(("alice", "notes"), "flight", {"content": "Flight LH 454 boards at gate A20"}, ttl=30)
    store.put(("alice", "prefs"), "tea", {"content": "Takes green tea, no sugar"}, ttl=None)  # never expires
    later(clock, 8)
    assert store.get(("alice", "notes"), "parking").value["content"].startswith("Parked")  # refreshed: 18
    later(clock, 8)  # minute 16
    assert store.get(("alice", "notes"), "parking", refresh_ttl=False) is not None  # still due at 18
    later(clock, 3)  # minute 19
    assert store.get(("alice", "notes"), "parking") is None
    found = store.search(("alice",), query="where is my car parked?", refresh_ttl=False)
    assert sorted(i.key for i in found) == ["flight", "tea"]
    later(clock, 12)  # minute 31: the flight note is past its 30 minutes too
    assert [i.key for i in store.search(("alice",))] == ["tea"]
    assert store.list_namespaces() == [("alice", "prefs")]
    assert len(mem.list()) == 3  # expired, not yet swept


def test_sweep_erases_expired_items_for_good(mem: RippleMem, clock: ManualClock) -> None:
    store = RippleMemStore(memory=mem)
    store.put(("alice",), "otp", {"content": "One-time code 481516 for the bank"}, ttl=5)
    store.put(("bob",), "otp", {"content": "Bob's one-time code 2342"}, ttl=5)
    store.put(("alice",), "keep", {"content": "Alice's bank is Nordbank"})
    store.search(("alice",), query="bank code")  # a read refreshes by default: due at minute 5 still
    assert store.sweep_ttl() == 0
    later(clock, 6)
    assert RippleMemStore(memory=mem).sweep_ttl() == 2  # a new store object sweeps every user of the store
    assert [m.content for m in mem.list()] == ["Alice's bank is Nordbank"]
    assert mem.scope("bob").list() == []
    assert mem.erase(matching="481516", dry_run=True).memory_ids == []


def test_put_renews_and_a_background_sweeper_runs(mem: RippleMem, clock: ManualClock) -> None:
    store = RippleMemStore(
        memory=mem, ttl={"default_ttl": 1, "refresh_on_read": False, "sweep_interval_minutes": 0.002}
    )  # every 0.12 s
    try:
        store.put(("alice",), "draft", {"content": "Draft reply to Sam"})
        later(clock, 0.9)
        store.get(("alice",), "draft")  # refresh_on_read False: no renewal
        store.put(("alice",), "draft", {"content": "Draft reply to Sam, v2"})  # a write renews
        later(clock, 0.9)  # 1.8 min after the first put, 0.9 after the second
        time.sleep(0.5)
        assert store.get(("alice",), "draft").value == {"content": "Draft reply to Sam, v2"}
        later(clock, 0.2)
        deadline = time.monotonic() + 10
        while mem.list() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert mem.list() == []
    finally:
        assert store.stop_ttl_sweeper(timeout=10)


def test_bad_ttl_settings_are_named(mem: RippleMem) -> None:
    with pytest.raises(InvalidInputError, match=r"ttl\['default_ttl'\] must be a positive number"):
        RippleMemStore(memory=mem, ttl={"default_ttl": -5})
    with pytest.raises(InvalidInputError, match=r"ttl has keys \['refresh'\]"):
        RippleMemStore(memory=mem, ttl={"refresh": True})
    with pytest.raises(InvalidInputError, match="never returns an expired item"):
        RippleMemStore(memory=mem, ttl={"omit_expired": False})
    with pytest.raises(InvalidTypeError, match=r"ttl\['refresh_on_read'\] must be True or False"):
        RippleMemStore(memory=mem, ttl={"refresh_on_read": "yes"})
    with pytest.raises(InvalidInputError, match="ttl must be a positive number of minutes"):
        RippleMemStore(memory=mem).put(("alice",), "k", {"content": "x"}, ttl=0)


def test_the_sweeper_stops_when_the_handle_closes(embedder: Embedder) -> None:
    handle = RippleMem(path=None, user_id="alice", embedder=embedder)
    store = RippleMemStore(memory=handle, ttl={"sweep_interval_minutes": 0.002})
    running = store.start_ttl_sweeper()  # already running: the future that ends when it stops
    handle.close()
    assert running.result(timeout=10) is None  # stopped by itself at its next sweep
    assert store.stop_ttl_sweeper(timeout=10)
