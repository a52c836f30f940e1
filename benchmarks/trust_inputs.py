"""Hostile-input probes across the public API: each is a value a careless or
hostile caller might send to one method. A probe is handled when RippleMem refuses it with a
RippleMemError and the store is exactly as before (no row, no vector, no reading, no working item, no
pending-write marker), or when it returns what the probe checks for (the value stored exactly).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/trust_inputs.py

trust.py prints the row; run alone, this lists every probe and its outcome.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ripplemem import HashingEmbedder, RippleMem, Settings, StoreOptions
from ripplemem.errors import RippleMemError
from ripplemem.interfaces.cli.main import main as cli_main
from ripplemem.store.write_lock import PENDING_DIRNAME

Probe = Callable[[RippleMem], Any]
SURROGATE = "lone \ud800 surrogate"
HUGE = 10**400
DEEP_JSON = "[" * 100_000 + "]" * 100_000
SENTINEL = "The sentinel memory must never change"


class FaultyEmbedder:
    """A custom embedder that goes wrong in one way on texts containing "faulty"."""

    def __init__(self, fault: str) -> None:
        self.fault = fault
        self.model_id = f"faulty-{fault}"
        self.inner = HashingEmbedder(64)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Hashing vectors, broken as chosen when a text says "faulty"."""
        vectors = self.inner.embed_documents(texts)
        if not any("faulty" in text for text in texts):
            return vectors
        if self.fault == "dimension":
            return vectors[:, :48]
        if self.fault == "rows":
            return vectors[:-1]
        vectors[-1, 0] = math.nan if self.fault == "nan" else math.inf
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        """One vector, broken as chosen."""
        return self.embed_documents([text])[0]


def _nested(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    cursor = root
    for _ in range(depth):
        cursor["x"] = {}
        cursor = cursor["x"]
    return root


def _faulty(fault: str) -> Probe:
    def probe(mem: RippleMem) -> Any:
        with RippleMem(user_id="faulty", embedder=FaultyEmbedder(fault)) as other:
            other.add("a fine first note")
            return other.add_many(["a fine note", "a faulty note"])

    return probe


def _closed(method: str) -> Probe:
    def probe(mem: RippleMem) -> Any:
        other = RippleMem(user_id="closed", embedder="hashing")
        other.close()
        calls: dict[str, Callable[[], Any]] = {
            "add": lambda: other.add("after close"),
            "list": other.list,
            "recall": lambda: other.recall("x"),
            "stats": other.stats,
            "observe": lambda: other.observe("user", "Remember that I left"),
        }
        return calls[method]()

    return probe


def _import(lines: list[str], batch_size: int = 1024) -> Probe:
    def probe(mem: RippleMem) -> Any:
        with tempfile.TemporaryDirectory() as folder:
            file = Path(folder) / "hostile.jsonl"
            file.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return mem.import_file(file, batch_size=batch_size)

    return probe


def _ingest(knowledge_base: str = "hostile", **options: Any) -> Probe:
    def probe(mem: RippleMem) -> Any:
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / "notes.md").write_text("# Notes\nAnn drinks oolong tea.\n", encoding="utf-8")
            return mem.ingest(folder, knowledge_base, **options)

    return probe


def _cli(*args: str) -> Probe:
    """A CLI command on the probe store: handled when it exits 2 with an error line, no traceback."""

    def probe(mem: RippleMem) -> bool:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main([args[0], "--path", str(mem.path), "--user", mem.user_id, *args[1:]])
        return code == 2 and "Traceback" not in err.getvalue() and "error" in err.getvalue()

    return probe


def _round_trip(content: str, **fields: Any) -> Probe:
    """add() that must store the value exactly (and is then deleted again)."""

    def probe(mem: RippleMem) -> bool:
        memory = mem.add(content, **fields)
        got = mem.get(memory.id)
        exact = (
            got is not None
            and got.content == content
            and all(getattr(got, name) == value for name, value in fields.items())
        )
        mem.delete(memory.id)
        return exact

    return probe


def hostile_probes() -> list[tuple[str, Probe]]:
    """(label, probe) pairs: each probe calls one public method of a RippleMem handle with a hostile
    value (its own throw-away handle where the probe needs one: a closed or faulty-embedder store)."""
    relation = [("Ann", "likes", "tea")]
    probes: list[tuple[str, Probe]] = [
        ("add_many batch_size=-1", lambda m: m.add_many(["a note"], batch_size=-1)),
        ("add_many batch_size=0", lambda m: m.add_many(["a note"], batch_size=0)),
        ("add_many batch_size='2'", lambda m: m.add_many(["a note"], batch_size="2")),  # type: ignore[arg-type]
        ("add_many batch_size=1.5", lambda m: m.add_many(["a note"], batch_size=1.5)),  # type: ignore[arg-type]
        ("add source surrogate", lambda m: m.add("a note", source=SURROGATE)),
        ("add source NUL", lambda m: m.add("a note", source="a\x00b")),
        ("add source 10 MB", lambda m: m.add("a note", source="s" * 10_000_000)),
        ("add relation subject surrogate", lambda m: m.add("a note", relations=[(SURROGATE, "is", "x")])),
        ("add relation predicate surrogate", lambda m: m.add("a note", relations=[("Ann", SURROGATE, "x")])),
        ("add relation object NUL", lambda m: m.add("a note", relations=[("Ann", "likes", "t\x00")])),
        ("add relation confidence 10**400", lambda m: m.add("a note", relations=[(*relation[0], HUGE)])),
        ("add metadata key surrogate", lambda m: m.add("a note", metadata={SURROGATE: 1})),
        ("add metadata value surrogate", lambda m: m.add("a note", metadata={"k": SURROGATE})),
        ("add metadata 10**400", lambda m: m.add("a note", metadata={"k": HUGE})),
        ("add metadata 2**64", lambda m: m.add("a note", metadata={"k": 2**64})),
        ("add metadata nested 100", lambda m: m.add("a note", metadata=_nested(100))),
        ("add importance 10**400", lambda m: m.add("a note", importance=HUGE)),
        ("add importance nan", lambda m: m.add("a note", importance=math.nan)),
        ("add content NUL", lambda m: m.add("a\x00b")),
        ("add content surrogate", lambda m: m.add(SURROGATE)),
        ("add content 10 MB", lambda m: m.add("x" * 10_000_000)),
        ("add unicode stored exactly", _round_trip("שלום مرحبا 👩‍👩‍👧‍👦 \u202eevil", source="источник")),
        ("get id surrogate", lambda m: m.get(SURROGATE)),
        ("get id NUL", lambda m: m.get("a\x00b")),
        ("delete id surrogate", lambda m: m.delete(SURROGATE)),
        ("update id surrogate", lambda m: m.update(SURROGATE, content="new")),
        ("update importance 10**400", lambda m: m.update(m.list()[0].id, importance=HUGE)),
        ("update metadata surrogate", lambda m: m.update(m.list()[0].id, metadata={SURROGATE: 1})),
        ("history id surrogate", lambda m: m.history(SURROGATE)),
        ("erase id surrogate", lambda m: m.erase(SURROGATE)),
        ("neighbors node surrogate", lambda m: m.graph.neighbors(SURROGATE)),
        ("find_connections surrogate", lambda m: m.graph.find_connections("Ann", SURROGATE)),
        ("list limit 2**63", lambda m: m.list(limit=2**63)),
        ("list offset 2**63", lambda m: m.list(offset=2**63)),
        ("list metadata 2**64", lambda m: m.list(metadata={"k": 2**64})),
        ("recall k 2**63", lambda m: m.recall("note", k=2**63)),
        ("recall k 10**400", lambda m: m.recall("note", k=HUGE)),
        ("recall min_importance 10**400", lambda m: m.recall("note", min_importance=HUGE)),
        ("recall query surrogate", lambda m: m.recall(SURROGATE)),
        ("observe NUL", lambda m: m.observe("user", "Remember that my code is 12\x0034")),
        ("observe 10 MB", lambda m: m.observe("user", "word " * 2_100_000)),
        ("observe role surrogate", lambda m: m.observe(SURROGATE, "hello there")),
        ("observe importance 10**400", lambda m: m.observe("user", "hello there", importance=HUGE)),
        (
            "observe metadata surrogate",
            lambda m: m.observe("user", "Remember that I like tea", metadata={"k": SURROGATE}),
        ),
        ("record metric surrogate", lambda m: m.sensors.record(SURROGATE, 72)),
        ("record source surrogate", lambda m: m.sensors.record("heart_rate", 72, source=SURROGATE)),
        ("record source NUL", lambda m: m.sensors.record("heart_rate", 72, source="band\x00")),
        ("record unit surrogate", lambda m: m.sensors.record("weight", 72, unit=SURROGATE)),
        ("record value 10**400", lambda m: m.sensors.record("heart_rate", HUGE)),
        ("readings limit 2**63", lambda m: m.sensors.readings("heart_rate", limit=2**63)),
        ("scope user surrogate", lambda m: m.scope(SURROGATE)),
        ("import JSONL nested 100000", _import(['{"content": "x", "metadata": ' + DEEP_JSON + "}"])),
        ("import JSONL source surrogate", _import([json.dumps({"content": "x", "source": SURROGATE})])),
        ("import JSONL importance 10**400", _import(['{"content": "x", "importance": 1' + "0" * 400 + "}"])),
        ("import batch_size 0", _import(['"a note"'], batch_size=0)),
        ("ingest max_file_bytes 10**400", _ingest(max_file_bytes=HUGE)),
        ("ingest max_compression_ratio 10**400", _ingest(max_compression_ratio=HUGE)),
        ("ingest max_tokens 2**63", _ingest(max_tokens=2**63)),
        ("ingest knowledge base surrogate", _ingest(SURROGATE)),
        ("reembed batch_size 0", lambda m: RippleMem.reembed(str(m.path), "hashing-v1-512", batch_size=0)),
        ("embedder wrong dimension", _faulty("dimension")),
        ("embedder wrong row count", _faulty("rows")),
        ("embedder NaN", _faulty("nan")),
        ("embedder infinity", _faulty("inf")),
        ("closed handle add", _closed("add")),
        ("closed handle list", _closed("list")),
        ("closed handle recall", _closed("recall")),
        ("closed handle stats", _closed("stats")),
        ("closed handle observe", _closed("observe")),
        (
            "settings of the wrong type",
            lambda m: RippleMem(user_id="x", embedder="hashing", settings={"max_content_chars": 5}),
        ),  # type: ignore[arg-type]
        ("Settings.graph of the wrong type", lambda m: Settings(graph={"similar_k": 3})),  # type: ignore[arg-type]
        (
            "numpy index with isolation='filter'",
            lambda m: RippleMem(
                user_id="x", store=StoreOptions(vector_index="numpy", isolation="filter"), embedder="hashing"
            ),
        ),
        ("CLI list --limit 2**63", _cli("list", "--limit", str(2**63))),
        ("CLI recall -k 2**63", _cli("recall", "-k", str(2**63), "note")),
        ("CLI add --importance 1e400", _cli("add", "--importance", "1e400", "a note")),
        (
            "CLI add --metadata nested 5000",
            _cli("add", "--metadata", '{"a": ' + "[" * 5000 + "]" * 5000 + "}", "a note"),
        ),
        ("CLI add --metadata 2**64", _cli("add", "--metadata", json.dumps({"k": 2**64}), "a note")),
    ]
    return probes


def _state(mem: RippleMem) -> tuple[Any, ...]:
    """Everything a probe could have changed: rows, vectors, readings, working items, knowledge bases
    and pending-write markers."""
    rows = sorted(
        (m.id, m.content, m.importance, m.source, json.dumps(m.metadata, sort_keys=True))
        for m in mem.list(limit=1_000_000)
    )
    markers = Path(str(mem.path)) / PENDING_DIRNAME
    pending = sorted(os.listdir(markers)) if markers.is_dir() else []
    return (
        rows,
        mem.stats()["vectors"],
        mem.sensors.metrics(),
        [i.text for i in mem.working().items()],
        [kb.name for kb in mem.kb.list()],
        pending,
    )


def run_probe(mem: RippleMem, probe: Probe) -> str | None:
    """None when the probe was handled, else what went wrong."""
    before = _state(mem)
    try:
        outcome = probe(mem)
    except RippleMemError:
        return None if _state(mem) == before else "refused, but the store changed"
    except Exception as exc:  # an unexpected error type is a failure to handle the input
        return f"{type(exc).__name__}: {str(exc)[:80]}"
    if outcome is True:
        return None if _state(mem) == before else "the store changed"
    return "accepted" if _state(mem) == before else "accepted and the store changed"


def hostile_probe_row() -> tuple[int, int, list[str]]:
    """(probes tried, handled, "label: what went wrong" of the rest) on a fresh on-disk Chroma store."""
    failures = []
    probes = hostile_probes()
    with (
        tempfile.TemporaryDirectory() as folder,
        RippleMem(
            Path(folder) / "store",
            user_id="alice",
            embedder=HashingEmbedder(),
            store=StoreOptions(vector_index="chroma"),
        ) as mem,
    ):
        mem.add(SENTINEL)
        for label, probe in probes:
            problem = run_probe(mem, probe)
            if problem is not None:
                failures.append(f"{label}: {problem}")
        if [m.content for m in mem.list()] != [SENTINEL]:
            failures.append("the sentinel memory changed")
    return len(probes), len(probes) - len(failures), failures


def main() -> int:
    """Print every probe's outcome and the totals."""
    tried, handled, failures = hostile_probe_row()
    print(f"{handled} of {tried} hostile-input probes handled")
    for failure in failures:
        print(f"- not handled: {failure}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
