"""The vector-index protocol: every shipped index class has each of its members,
a backend written against it alone goes through the rebuild and the consistency check, and no module
outside store/vectors/ branches on an index's name or probes it for members."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ripplemem import RippleMem, StoreOptions
from ripplemem.engine.engine import rebuild_index
from ripplemem.store.neo4j.index import Neo4jIndex
from ripplemem.store.recovery.reconcile import check_store, sync_index
from ripplemem.store.sqlite.rows import SQLiteStore
from ripplemem.store.vectors.base import NumpyIndex, VectorFilter, VectorIndex
from ripplemem.store.vectors.chroma import ChromaIndex

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "ripplemem"
VECTORS = PACKAGE / "store" / "vectors"
SHIPPED = (NumpyIndex, ChromaIndex, Neo4jIndex)


def protocol_members() -> dict[str, list[str] | None]:
    """Every member of VectorIndex: a method's parameter names, None for an attribute."""
    members: dict[str, list[str] | None] = dict.fromkeys(VectorIndex.__annotations__)
    for name, value in vars(VectorIndex).items():
        if callable(value) and not name.startswith("_"):
            members[name] = list(inspect.signature(value).parameters)
    return members


def test_the_protocol_names_what_the_engine_needs() -> None:
    """Persistence, emptiness, dropping, damage and strays are in the protocol, not probed for."""
    assert {
        "persistent",
        "remote",
        "on_damage",
        "is_empty",
        "drop_all",
        "ids",
        "foreign",
        "drop_foreign",
        "damage",
        "clear_damage",
        "exclusive",
        "open_space",
    } <= set(protocol_members())


@pytest.mark.parametrize("cls", SHIPPED, ids=lambda cls: cls.__name__)
def test_every_shipped_index_class_has_every_member(cls: type) -> None:
    """Each member exists on the class (Neo4j's needs a server to instantiate), methods with the
    protocol's parameters."""
    for name, parameters in protocol_members().items():
        assert hasattr(cls, name), f"{cls.__name__} lacks {name}"
        if parameters is not None:
            assert list(inspect.signature(getattr(cls, name)).parameters) == parameters, name


def test_the_indexes_say_how_they_keep_their_vectors(tmp_path: Path) -> None:
    """In memory (refilled on open) or persistent, local or on a server; open_space follows suit."""
    indexes: list[VectorIndex] = [NumpyIndex(), ChromaIndex(), ChromaIndex(str(tmp_path))]
    spaces = [index.open_space("image") for index in indexes]
    try:
        assert all(isinstance(index, VectorIndex) for index in indexes + spaces)
        kept = [
            (index.name, index.persistent, index.remote, type(space).__name__)
            for index, space in zip(indexes, spaces, strict=True)
        ]
    finally:
        for index in indexes + spaces:
            index.close()
    assert kept == [
        ("numpy", False, False, "NumpyIndex"),
        ("chroma", False, False, "NumpyIndex"),
        ("chroma", True, False, "ChromaIndex"),
    ]
    assert (Neo4jIndex.persistent, Neo4jIndex.remote) == (True, True)


class DictIndex:
    """A third-party backend written against the protocol alone: exact search over dicts."""

    name = "dict"
    persistent = True
    remote = False
    on_damage = None

    def __init__(self) -> None:
        self.users: dict[str, dict[str, np.ndarray]] = {}

    def add(
        self, user_id: str, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]
    ) -> None:
        self.users.setdefault(user_id, {}).update(zip(ids, vectors, strict=True))

    def delete(self, user_id: str, ids: Sequence[str]) -> None:
        for memory_id in ids:
            self.users.get(user_id, {}).pop(memory_id, None)

    def query(
        self, user_id: str, vector: np.ndarray, k: int, flt: VectorFilter | None = None
    ) -> list[tuple[str, float]]:
        found = [(i, float(v @ vector)) for i, v in self.users.get(user_id, {}).items()]
        return sorted(found, key=lambda hit: -hit[1])[:k]

    def query_many(self, user_id: str, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        return [self.query(user_id, row, k) for row in vectors]

    def count(self, user_id: str) -> int:
        return len(self.users.get(user_id, {}))

    def ids(self, user_id: str) -> set[str]:
        return set(self.users.get(user_id, {}))

    def drop(self, user_id: str) -> None:
        self.users.pop(user_id, None)

    def is_empty(self) -> bool:
        return not any(self.users.values())

    def drop_all(self) -> None:
        self.users.clear()

    def foreign(self, user_ids: Sequence[str]) -> dict[str, int]:
        return {u: len(v) for u, v in self.users.items() if u not in user_ids and v}

    def drop_foreign(self, part: str) -> None:
        self.drop(part)

    def damage(self) -> list[str]:
        return []

    def clear_damage(self) -> None:
        pass

    def exclusive(self) -> AbstractContextManager[None]:
        return nullcontext()

    def open_space(self, space: str) -> VectorIndex:
        return DictIndex()

    def close(self) -> None:
        self.users.clear()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    """A real store on disk holding three memories of alice."""
    mem = RippleMem(
        path=tmp_path, user_id="alice", embedder="hashing", store=StoreOptions(vector_index="numpy")
    )
    for text in ("Alice keeps bees on the roof", "Alice's sister lives in Lyon", "Alice runs on Sundays"):
        mem.add(text)
    mem.close()
    opened = SQLiteStore(str(tmp_path))
    yield opened
    opened.close()


def test_a_new_backend_goes_through_the_rebuild_and_the_check(store: SQLiteStore) -> None:
    """A class no module knows by name is filled from SQLite, checked, and repaired: a missing
    vector comes back and a departed user's vectors go, through its protocol members alone."""
    index = DictIndex()
    assert isinstance(index, VectorIndex)
    assert rebuild_index(index, store) == 3
    alice = index.ids("alice")
    assert check_store(store, index, repair=False).consistent
    index.delete("alice", [min(alice)])
    index.add("mallory", ["left-behind"], np.ones((1, 4), dtype=np.float32), [{}])
    found = check_store(store, index, repair=True)
    assert (found.vector_index, found.missing_vectors, found.stray_vectors) == ("dict", 1, 1)
    assert index.ids("alice") == alice and index.count("mallory") == 0
    assert check_store(store, index, repair=False).consistent
    index.drop("alice")
    assert sync_index(index, store) == 3 and index.ids("alice") == alice  # as after another's write


def _mentions_an_index(node: ast.expr) -> bool:
    return "index" in ast.unparse(node).lower()


def _is_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return bool(node.elts) and all(_is_literal(element) for element in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _index_name(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "name" and _mentions_an_index(node.value)


def index_branches(source: str) -> list[tuple[int, str]]:
    """(line, code) of each comparison of an index's name with a literal, and each getattr,
    hasattr or isinstance on an index."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            hit = any(map(_index_name, sides)) and any(map(_is_literal, sides))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            hit = node.func.attr in ("startswith", "endswith") and _index_name(node.func.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            hit = (
                node.func.id in ("getattr", "hasattr", "isinstance")
                and bool(node.args)
                and _mentions_an_index(node.args[0])
            )
        else:
            continue
        if hit:
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_module_outside_the_vector_backends_branches_on_an_index() -> None:
    """What differs between backends is asked of the protocol, so a new backend edits no caller."""
    found = [
        f"{path.relative_to(ROOT)}:{line}: {code}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if VECTORS not in path.parents
        for line, code in index_branches(path.read_text(encoding="utf-8"))
    ]
    assert not found, "branches on an index's name or probes for its members:\n" + "\n".join(found)


def test_the_branch_check_catches_what_the_engine_used_to_do() -> None:
    """The old name branches and probes are each reported; a name recorded as a label is not."""
    old = """
if index.name == "numpy" or recorded != index.name:
    rebuild()
stale = self._index is not None and self._index.name in ("numpy", "chroma")
drop_all = getattr(index, "drop_all", None)
if hasattr(index, "on_damage"):
    pass
if text_index.name.startswith("chroma"):
    pass
store.set_meta("vector_index", index.name)
"""
    assert sorted(line for line, _ in index_branches(old)) == [2, 4, 5, 6, 8]


@pytest.mark.parametrize("kind", ["numpy", "chroma"])
def test_a_batch_of_neighbour_lookups_answers_each_vector_in_its_place(tmp_path: Path, kind: str) -> None:
    """query_many over more vectors than one Chroma call takes (its calls run side by side) gives,
    row by row, what one query per vector gives: a batch write links each memory to its own
    neighbours, never to another item's."""
    rng = np.random.default_rng(7)
    stored = rng.standard_normal((1200, 16)).astype(np.float32)
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    index: VectorIndex = NumpyIndex() if kind == "numpy" else ChromaIndex(str(tmp_path))
    try:
        ids = [f"m{i}" for i in range(len(stored))]
        index.add("u", ids, stored, [{"type": "episodic", "when": 0.0}] * len(ids))
        # Noisy copies of stored vectors: each query's nearest neighbour is the one it was made from.
        queries = stored[:700] + 0.01 * rng.standard_normal((700, 16)).astype(np.float32)
        batched = index.query_many("u", queries, 3)
        single = [index.query("u", vector, 3) for vector in queries]
    finally:
        index.close()
    assert [[i for i, _ in row] for row in batched] == [[i for i, _ in row] for row in single]
    assert [row[0][0] for row in batched] == ids[:700]
