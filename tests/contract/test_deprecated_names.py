"""The spellings deprecated by the narrower facade (docs/api.md) still work for one release, each
with a DeprecationWarning that names the new spelling: the flat names that moved into namespaces
(``mem.record`` -> ``mem.sensors.record``), the loose backend arguments of ``RippleMem(...)``
(-> ``store=StoreOptions(...)``) and the score presets' first names (``"seed001"``). This is the
one test module that uses them; elsewhere they fail the suite (pyproject's filterwarnings)."""

from __future__ import annotations

import asyncio
import inspect
from typing import get_args

import pytest

from ripplemem import (
    HashingEmbedder,
    InvalidInputError,
    InvalidTypeError,
    MemoryTypeName,
    RippleMem,
    Settings,
    StoreOptions,
)
from ripplemem.api.deprecation import Moved

MOVED = {name: member for name, member in inspect.getmembers(RippleMem) if isinstance(member, Moved)}


def test_every_moved_name_calls_its_new_spelling(memory_only: RippleMem) -> None:
    assert len(MOVED) == 24
    for old, moved in MOVED.items():
        new = getattr(getattr(memory_only, moved.namespace), moved.name)
        assert getattr(memory_only, old).__wrapped__ == new, old


def test_an_old_name_warns_naming_the_new_spelling_and_still_works(memory_only: RippleMem) -> None:
    expected = r"RippleMem\.record\(\) is deprecated .*use mem\.sensors\.record\(\)"
    with pytest.warns(DeprecationWarning, match=expected) as caught:
        memory_only.record("heart_rate", 72, unit="bpm")
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert memory_only.sensors.latest("heart_rate").value == 72  # type: ignore[union-attr]
    memory_only.add("Calvin bought a Ferrari 488", relations=[("Calvin", "bought", "Ferrari 488")])
    with pytest.warns(DeprecationWarning, match=r"use mem\.graph\.find_connections\(\)"):
        old = memory_only.find_connections("Calvin", "Ferrari 488")
    new = memory_only.graph.find_connections("Calvin", "Ferrari 488")
    assert [c.explain() for c in old] == [c.explain() for c in new] != []
    with pytest.warns(DeprecationWarning, match=r"RippleMem\.knowledge_bases\(\) .*use mem\.kb\.list\(\)"):
        assert memory_only.knowledge_bases() == memory_only.kb.list() == []
    with pytest.warns(DeprecationWarning, match=r"use mem\.lifecycle\.aarchive\(\)"):
        report = asyncio.run(memory_only.aarchive(dry_run=True))
    assert report.dry_run


def test_an_old_name_is_found_without_a_warning(
    memory_only: RippleMem, recwarn: pytest.WarningsRecorder
) -> None:
    assert callable(memory_only.neighbors) and hasattr(memory_only, "delete_readings")
    assert not recwarn.list  # only a call warns


def test_loose_backend_arguments_warn_and_still_open_the_store() -> None:
    with pytest.warns(
        DeprecationWarning,
        match=r"RippleMem\(vector_index=\.\.\.\) is deprecated .*"
        r"store=StoreOptions\(vector_index=\.\.\.\)",
    ):
        mem = RippleMem(None, user_id="alice", embedder=HashingEmbedder(), vector_index="numpy")
    with mem:
        assert mem.stats()["vector_index"] == "numpy"


def test_store_options_are_checked() -> None:
    embedder = HashingEmbedder()
    with pytest.raises(InvalidInputError, match="give the store settings once"):
        RippleMem(None, user_id="alice", embedder=embedder, store=StoreOptions(), vector_index="numpy")
    with pytest.raises(InvalidTypeError, match="store must be a StoreOptions, got str"):
        RippleMem(None, user_id="alice", embedder=embedder, store="numpy")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword argument 'vector_indx'"):
        RippleMem(None, user_id="alice", embedder=embedder, vector_indx="numpy")
    with pytest.raises(InvalidInputError, match="vector_index must be one of auto, chroma, numpy"):
        RippleMem(None, user_id="alice", embedder=embedder, store=StoreOptions(vector_index="faiss"))  # type: ignore[arg-type]
    assert "secret" not in repr(StoreOptions(backend="neo4j", auth=("neo4j", "secret")))


def test_an_old_score_preset_warns_and_scores_as_its_new_name() -> None:
    with pytest.warns(
        DeprecationWarning,
        match=r'Settings\(score_preset="seed000"\) is deprecated .*'
        r'use Settings\(score_preset="recency_first"\)',
    ) as caught:
        old = Settings(score_preset="seed000")
    assert caught[0].filename == __file__
    new = Settings(score_preset="recency_first")
    assert old == new
    assert [old.profile(t) for t in get_args(MemoryTypeName)] == [
        new.profile(t) for t in get_args(MemoryTypeName)
    ]
    with pytest.warns(DeprecationWarning, match=r'use Settings\(score_preset="relevance_first"\)'):
        assert Settings(score_preset="seed001") == Settings()
    with pytest.raises(InvalidInputError, match="'relevance_first', 'recency_first', got 'seed002'"):
        Settings(score_preset="seed002")
