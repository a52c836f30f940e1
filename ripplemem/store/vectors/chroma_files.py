"""Structural checks of an on-disk Chroma index, read without Chroma. A process killed while Chroma
persists an HNSW graph can leave files that make Chroma segfault, or write a huge sparse file, when
it loads them: so they are validated before Chroma ever loads them (see chroma_health).

Chroma (>= 1.0, chroma-core/hnswlib) keeps each collection's graph in a folder named by its vector
segment's id under the Chroma directory: ``header.bin`` (hnswlib's header), ``data_level0.bin`` (per
element its level-0 links, vector and label), ``length.bin`` (a float per element),
``link_lists.bin`` (per element a 4-byte size, then its upper-level links) and
``index_metadata.pickle`` (Chroma's id <-> label maps). Chroma loads the four files only once the
pickle exists; before that it rebuilds the graph from its log.
"""

from __future__ import annotations

import math
import os
import pickle
import shutil
import sqlite3
import struct
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Where a store keeps its Chroma databases: <store>/chroma for the text index, beside the lock every
# operation on it holds (see stores/chroma.py), and <store>/modality-index/<modality>/chroma, one
# database per modality, so their collections (another dimension) never meet the text index's.
CHROMA_DIRNAME = "chroma"
LOCK_FILENAME = "ripplemem-index.lock"
MODALITY_DIRNAME = "modality-index"
CHROMA_DB = "chroma.sqlite3"
PICKLE = "index_metadata.pickle"
GRAPH_FILES = ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin")
# How deeply check_files looks: "files" (the header, file sizes against it, sparse files, the
# link-list walk: a few ms at 10k vectors, run on every open), "graph" (also every link target, the
# id maps and Chroma's SQLite integrity check: run after a crash and by `check`).
LEVELS = ("files", "graph")


def modality_folder(path: str, modality: str) -> str:
    """Where a modality's Chroma index lives under a store directory."""
    return os.path.join(path, MODALITY_DIRNAME, modality)


# hnswlib's persisted header (PERSISTENCE_VERSION 1), native byte order, no padding.
_HEADER = struct.Struct("=i6Qii3QdQ")
_VERSION = 1
_LABEL_BYTES = 8
_MAX_LEVEL = 64  # levels grow as log_M(n): far below this for any real index
# A file this much bigger than its allocated blocks is a hole no HNSW write makes (Chroma writes
# every byte of its files); smaller gaps are left alone (filesystems that compress report fewer).
_SPARSE_SLACK = 64 * 2**20
_SEGMENTS = """
SELECT s.id, c.name, c.dimension, EXISTS (SELECT 1 FROM max_seq_id m WHERE m.segment_id = s.id)
FROM segments s JOIN collections c ON c.id = s.collection WHERE s.scope = 'VECTOR'
"""


@dataclass(frozen=True)
class IndexDamage:
    """A broken part of a Chroma index: one collection's graph, or (collection None) the whole
    Chroma database."""

    directory: str
    collection: str | None
    segment: str | None
    problem: str

    def __str__(self) -> str:
        where = "Chroma's database" if self.collection is None else f"collection {self.collection}"
        return f"{where} in {self.directory}: {self.problem}"


@dataclass(frozen=True)
class VectorSegment:
    """One collection's HNSW segment as Chroma's SQLite lists it."""

    segment: str
    collection: str
    dimension: int | None
    persisted: bool  # Chroma recorded a persisted graph (it has a max_seq_id row)


@dataclass(frozen=True)
class _Header:
    max_elements: int
    count: int
    bytes_per_element: int
    links_bytes: int  # the level-0 link block of one element
    max_level: int
    entry_point: int
    max_links: int
    max_links0: int


def vector_segments(directory: str, integrity: bool = False) -> list[VectorSegment]:
    """The vector segments in Chroma's SQLite file at `directory` (none if there is no file);
    ``integrity`` runs SQLite's quick_check first. Raises sqlite3.DatabaseError if it is broken."""
    path = os.path.join(directory, CHROMA_DB)
    if not os.path.isfile(path):
        return []
    # Chroma keeps this file in rollback-journal mode and every RippleMem use of it runs under the
    # index's process lock, so a read here never meets a Chroma transaction of this process (whose
    # locks a close of this connection would drop).
    conn = sqlite3.connect(path, timeout=30)
    try:
        if integrity:
            verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {verdict}")
        return [VectorSegment(str(r[0]), str(r[1]), r[2], bool(r[3])) for r in conn.execute(_SEGMENTS)]
    finally:
        conn.close()


def check_files(directory: str, level: str = "files") -> list[IndexDamage]:
    """What is broken in the Chroma index at `directory` (an empty list: nothing found), read
    without Chroma; nothing is written. ``level`` is one of LEVELS."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    try:
        segments = vector_segments(directory, integrity=level == "graph")
    except sqlite3.DatabaseError as exc:
        return [IndexDamage(directory, None, None, f"{CHROMA_DB} cannot be read ({exc})")]
    found = []
    for segment in segments:
        problem = _segment_problem(os.path.join(directory, segment.segment), segment, level == "graph")
        if problem is not None:
            found.append(IndexDamage(directory, segment.collection, segment.segment, problem))
    return found


def _segment_problem(folder: str, segment: VectorSegment, deep: bool) -> str | None:
    """Why Chroma must not load this segment's files, or None."""
    pickle_path = os.path.join(folder, PICKLE)
    if not os.path.isfile(pickle_path):
        # Without the pickle Chroma rebuilds the graph from its log, which it trims once persisted:
        # a graph it recorded as persisted would come back without those vectors.
        return f"{PICKLE} is missing from a persisted graph" if segment.persisted else None
    missing = [name for name in GRAPH_FILES if not os.path.isfile(os.path.join(folder, name))]
    if missing:
        return f"{', '.join(missing)} missing"
    if os.path.getsize(pickle_path) == 0:
        return f"{PICKLE} is empty"
    with open(os.path.join(folder, "header.bin"), "rb") as handle:
        header, problem = _read_header(handle.read(_HEADER.size + 1), segment.dimension)
    if header is None:
        return problem
    found = _size_problem(folder, header) or _link_list_problem(folder, header, deep)
    if found is None and deep:
        found = _level0_problem(folder, header) or _pickle_problem(pickle_path, header)
    return found


def _read_header(raw: bytes, dimension: int | None) -> tuple[_Header | None, str]:
    """The header's fields, or None and what is wrong with them."""
    if len(raw) != _HEADER.size:
        return None, f"header.bin holds {len(raw)} bytes, not {_HEADER.size}"
    (
        version,
        offset_level0,
        max_elements,
        count,
        per_element,
        label_offset,
        data_offset,
        max_level,
        entry_point,
        max_links,
        max_links0,
        _m,
        mult,
        _ef,
    ) = _HEADER.unpack(raw)
    vector_bytes = label_offset - data_offset
    checks = [
        (version == _VERSION, f"version {version}, not {_VERSION}"),
        (offset_level0 == 0 and data_offset == 4 * max_links0 + 4, "inconsistent link offsets"),
        (0 < max_links <= max_links0 < 2**16, f"link limits {max_links}/{max_links0}"),
        (vector_bytes > 0 and vector_bytes % 4 == 0, f"vector size {vector_bytes} bytes"),
        (
            dimension is None or vector_bytes == 4 * dimension,
            f"vectors of {vector_bytes // 4} dimensions in a {dimension}-dimension collection",
        ),
        (per_element == label_offset + _LABEL_BYTES, f"element size {per_element}"),
        (count <= max_elements <= 2 * (count + 2**16), f"{count} elements of capacity {max_elements}"),
        (
            count == 0 or (0 <= max_level <= _MAX_LEVEL and entry_point < count),
            f"top level {max_level}, entry point {entry_point} of {count} elements",
        ),
        (math.isfinite(mult) and mult > 0, f"level multiplier {mult}"),
    ]
    for ok, problem in checks:
        if not ok:
            return None, f"header.bin is corrupt: {problem}"
    return _Header(
        max_elements, count, per_element, data_offset, max(max_level, 0), entry_point, max_links, max_links0
    ), ""


def _size_problem(folder: str, header: _Header) -> str | None:
    """A file shorter than its header's elements need, longer than its capacity, or sparse."""
    capacity = max(header.max_elements, header.count)
    per_element = header.bytes_per_element
    bounds = {
        "data_level0.bin": (header.count * per_element, capacity * per_element),
        "length.bin": (header.count * 4, capacity * 4),
        # Each element's 4-byte size, and at most max_level blocks of upper-level links.
        "link_lists.bin": (
            header.count * 4,
            header.count * (4 + header.max_level * (4 * header.max_links + 4)),
        ),
    }
    for name, (least, most) in bounds.items():
        stat = os.stat(os.path.join(folder, name))
        if stat.st_size < least:
            return f"{name} is truncated: {stat.st_size} bytes, its {header.count} elements need {least}"
        if stat.st_size > most:
            return f"{name} holds {stat.st_size} bytes, more than the header allows ({most})"
        allocated = getattr(stat, "st_blocks", None)
        if allocated is not None and stat.st_size - 512 * allocated > max(_SPARSE_SLACK, 512 * allocated):
            return f"{name} is a sparse file: {stat.st_size} bytes, {512 * allocated} on disk"
    return None


def _link_list_problem(folder: str, header: _Header, deep: bool) -> str | None:
    """Walk link_lists.bin: every element's size must be whole levels up to the top one, the walk
    must end exactly at the file's end, and (``deep``) every link must name an element."""
    with open(os.path.join(folder, "link_lists.bin"), "rb") as handle:
        raw = handle.read()
    if len(raw) % 4:
        return f"link_lists.bin holds {len(raw)} bytes, not whole 4-byte words"
    words = memoryview(raw).cast("I")
    block = header.max_links + 1  # words per level: a count, then the links
    position = 0
    levels: list[int] = []
    blocks: list[int] = []  # where each upper-level block of links starts, in words
    for element in range(header.count):
        if position >= len(words):
            return f"link_lists.bin ends after {element} of {header.count} elements"
        size = words[position]
        level = size // (4 * block)
        if size % (4 * block) or level > header.max_level:
            return f"link_lists.bin is corrupt at element {element} (a list of {size} bytes)"
        levels.append(level)
        blocks.extend(range(position + 1, position + 1 + level * block, block))
        position += 1 + size // 4
    if position != len(words):
        return f"link_lists.bin holds {4 * (len(words) - position)} bytes after its last element"
    if header.count and levels[header.entry_point] != header.max_level:
        return "the entry point is not on the top level"
    if not deep or not blocks:
        return None
    rows = np.asarray(blocks)[:, None] + np.arange(block)
    return _links_problem(
        np.frombuffer(raw, dtype=np.uint32)[rows], header.max_links, header.count, "link_lists.bin"
    )


def _level0_problem(folder: str, header: _Header) -> str | None:
    """Every element's level-0 links must name elements of the index."""
    if header.count == 0:
        return None
    data = np.memmap(
        os.path.join(folder, "data_level0.bin"),
        dtype=np.uint8,
        mode="r",
        shape=(header.count, header.bytes_per_element),
    )
    try:
        links = np.ascontiguousarray(data[:, : header.links_bytes]).view(np.uint32)
    finally:
        del data
    return _links_problem(links, header.max_links0, header.count, "data_level0.bin")


def _links_problem(blocks: np.ndarray, limit: int, count: int, name: str) -> str | None:
    """Check link blocks (a row each: a count in the low 16 bits, then the links)."""
    sizes = blocks[:, 0] & 0xFFFF
    if (sizes > limit).any():
        return f"{name} holds a link list longer than {limit}"
    used = np.arange(blocks.shape[1] - 1) < sizes[:, None]
    if (blocks[:, 1:][used] >= count).any():
        return f"{name} holds links to elements that do not exist"
    return None


class _PlainUnpickler(pickle.Unpickler):
    """Chroma's id maps are plain dicts, strings and numbers: refuse anything that names code."""

    def find_class(self, module: str, name: str) -> type:
        raise pickle.UnpicklingError(f"unexpected {module}.{name}")


def _pickle_problem(path: str, header: _Header) -> str | None:
    """Chroma's id maps must parse and agree with each other."""
    try:
        with open(path, "rb") as handle:
            maps = _PlainUnpickler(handle).load()
        to_label, to_id = maps["id_to_label"], maps["label_to_id"]
        added = int(maps["total_elements_added"])
    except (
        pickle.UnpicklingError,
        EOFError,
        KeyError,
        TypeError,
        ValueError,
        AttributeError,
        IndexError,
        MemoryError,
    ) as exc:
        return f"{PICKLE} cannot be read ({type(exc).__name__}: {exc})"
    if not isinstance(to_label, dict) or not isinstance(to_id, dict) or len(to_label) != len(to_id):
        return f"{PICKLE} holds id maps that disagree"
    if to_label and header.count == 0:
        return f"{PICKLE} maps {len(to_label)} ids, but header.bin holds no element"
    if any(not isinstance(label, int) or not 0 < label <= added for label in to_id):
        return f"{PICKLE} holds labels outside 1..{added}"
    return None


def remove_broken_files(directory: str, found: Sequence[IndexDamage]) -> None:
    """Delete the broken graph folders (all of `directory` if Chroma's own database is broken)
    before Chroma opens it; their collections are then deleted and refilled from SQLite."""
    if any(d.collection is None for d in found):
        shutil.rmtree(directory)
        os.makedirs(directory)
    for segment in {d.segment for d in found if d.segment is not None}:
        # Chroma leaves a deleted collection's folder behind: a sparse giant would stay on disk.
        shutil.rmtree(os.path.join(directory, segment), ignore_errors=True)


def remove_dropped_segments(directory: str) -> None:
    """Delete the graph folders Chroma no longer lists: a deleted collection's folder, which Chroma
    leaves behind with every vector of it. Nothing for a server-side index (no directory)."""
    if not directory:
        return
    live = {segment.segment for segment in vector_segments(directory)}
    for name in os.listdir(directory):
        folder = os.path.join(directory, name)
        if name not in live and os.path.isdir(folder) and _is_segment_name(name):
            shutil.rmtree(folder, ignore_errors=True)


def _is_segment_name(name: str) -> bool:
    try:
        return str(uuid.UUID(name)) == name
    except ValueError:
        return False
