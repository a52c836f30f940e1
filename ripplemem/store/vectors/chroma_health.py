"""The health of an on-disk Chroma index: its files checked structurally (chroma_files), and a
query on each collection (the probe) run only in a child process, so that an index that would crash
Chroma crashes the child, never this process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence

from ripplemem.errors import StoreError
from ripplemem.store.process_lock import ProcessLock
from ripplemem.store.vectors.chroma_files import (
    CHROMA_DIRNAME,
    LOCK_FILENAME,
    MODALITY_DIRNAME,
    IndexDamage,
    VectorSegment,
    check_files,
    vector_segments,
)

# How long a probe (a child process that queries every collection) may take before it counts as hung.
PROBE_SECONDS = 300
# How deeply find_damage looks: "files" (every open), "graph" (after a crash), "probe" (`check`).
VERIFY_LEVELS = ("files", "graph", "probe")

# The probe's child: opens the Chroma directory, queries each named collection once and reports
# each answer as one JSON line, so a crash on one collection names it.
_PROBE = r"""
import json, sys
import numpy as np
import chromadb
from chromadb.config import Settings
job = json.loads(sys.stdin.read())
try:
    client = chromadb.PersistentClient(path=job["directory"], settings=Settings(anonymized_telemetry=False))
except Exception as exc:
    print(json.dumps({"database": f"{type(exc).__name__}: {exc}"}), flush=True)
    sys.exit(0)
for name, dimension in job["collections"]:
    try:
        collection = client.get_collection(name, embedding_function=None)
        total = collection.count()
        found = total
        if total:
            vector = np.full(dimension, dimension ** -0.5, dtype=np.float32)
            found = len(collection.query(query_embeddings=[vector], n_results=min(total, 10),
                                         include=["distances"])["ids"][0])
        problem = None if found == min(total, 10) else f"a query for {min(total, 10)} found {found}"
    except Exception as exc:
        problem = f"{type(exc).__name__}: {exc}"
    print(json.dumps({"collection": name, "problem": problem}), flush=True)
"""


def probe_collections(directory: str, segments: Sequence[VectorSegment]) -> list[IndexDamage]:
    """Query every collection of `segments` once, in child processes (a crash fails the child, not
    this process); the collections whose query crashed, hung, failed or came back short. Chroma
    may apply its log to the graphs, as any open does, so hold the index's lock around it."""
    left = [s for s in segments if s.dimension]
    found: list[IndexDamage] = []
    while left:
        answers, stopped = _run_probe(directory, left)
        if "" in answers:  # Chroma could not open the directory at all
            return [IndexDamage(directory, None, None, f"Chroma cannot open it ({answers['']})")]
        found += [
            IndexDamage(directory, s.collection, s.segment, f"a probe query failed ({answers[s.collection]})")
            for s in left
            if answers.get(s.collection)
        ]
        unanswered = [s for s in left if s.collection not in answers]
        if unanswered:  # the child died or hung on the first of these
            found.append(IndexDamage(directory, unanswered[0].collection, unanswered[0].segment, stopped))
        left = unanswered[1:]
    return found


def _run_probe(directory: str, segments: Sequence[VectorSegment]) -> tuple[dict[str, str | None], str]:
    """One probe child: its answers by collection ("" for the whole database) and, if it stopped
    before answering all, why."""
    job = json.dumps({"directory": directory, "collections": [[s.collection, s.dimension] for s in segments]})
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE],
            input=job,
            capture_output=True,
            text=True,
            timeout=PROBE_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        output = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        stopped = f"a probe query did not answer within {PROBE_SECONDS} s"
    else:
        output, stopped = done.stdout, f"a probe query crashed Chroma (exit {done.returncode})"
        if done.returncode == 1 and not output:
            raise StoreError(f"the Chroma probe could not run: {done.stderr.strip()[-500:]}")
    answers: dict[str, str | None] = {}
    for line in output.splitlines():
        answer = json.loads(line)
        if "database" in answer:
            answers[""] = answer["database"]
        else:
            answers[answer["collection"]] = answer["problem"]
    return answers, stopped


def find_damage(directory: str, verify: str) -> list[IndexDamage]:
    """check_files at `verify` level, or ("probe") at "graph" level and then a probe of each
    collection whose files passed. `verify` is one of VERIFY_LEVELS."""
    found = check_files(directory, "files" if verify == "files" else "graph")
    if verify == "probe" and not any(d.collection is None for d in found):
        broken = {d.collection for d in found}
        found += probe_collections(
            directory, [s for s in vector_segments(directory) if s.collection not in broken]
        )
    return found


def index_damage(path: str | os.PathLike[str], *, probe: bool = True) -> list[IndexDamage]:
    """What is broken in the on-disk Chroma indexes (text and modality) of the RippleMem store at
    `path`: an empty list means healthy. Needs no open store, loads no graph into this process and
    repairs nothing; with ``probe`` each collection is also queried once in a child process, under
    the store's index locks (Chroma may apply its own log then, as any open does)."""
    root = os.path.abspath(os.fspath(path))
    modalities = os.path.join(root, MODALITY_DIRNAME)  # one index per modality beside the text one
    owners = [
        root,
        *(
            os.path.join(modalities, name)
            for name in (sorted(os.listdir(modalities)) if os.path.isdir(modalities) else [])
        ),
    ]
    found: list[IndexDamage] = []
    for owner in owners:
        directory, lock_path = os.path.join(owner, CHROMA_DIRNAME), os.path.join(owner, LOCK_FILENAME)
        if not os.path.isdir(directory):
            continue
        if not os.path.isfile(lock_path):
            found += find_damage(directory, "probe" if probe else "graph")
            continue
        lock = ProcessLock(lock_path)
        try:
            with lock.held():
                found += find_damage(directory, "probe" if probe else "graph")
                if probe:
                    lock.mark_written()  # other processes reload what the probe's Chroma wrote
        finally:
            lock.close()
    return found
