"""When the Chroma index reads a collection into memory: only one queried again and again, and
never a large one, so a server recalling for many users in turn reads nothing extra."""

from __future__ import annotations

import numpy as np

from ripplemem.store.vectors.exact_mirror import QUERIES_BEFORE_MIRROR, ExactMirrors, Rows


class Collections:
    """Stand-in collections of a given size; counts how often each is read whole."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.reads: dict[str, int] = {}

    def find(self, mirrors: ExactMirrors, key: str) -> object:
        def read() -> Rows:
            self.reads[key] = self.reads.get(key, 0) + 1
            vectors = np.eye(self.size, 8, dtype=np.float32)
            return [f"{key}-{i}" for i in range(self.size)], vectors, [{} for _ in range(self.size)]

        return mirrors.find(key, lambda: self.size, read)


def test_users_recalled_in_turn_are_never_read_whole() -> None:
    mirrors, collections = ExactMirrors(max_vectors=100, max_collections=8), Collections(5)
    for _ in range(10):
        for user in range(200):
            assert collections.find(mirrors, f"user{user}") is None
    assert collections.reads == {}


def test_a_user_queried_again_and_again_is_read_once() -> None:
    mirrors, collections = ExactMirrors(max_vectors=100, max_collections=8), Collections(5)
    found = [collections.find(mirrors, "alice") for _ in range(QUERIES_BEFORE_MIRROR + 20)]
    assert all(mirror is None for mirror in found[: QUERIES_BEFORE_MIRROR - 1])
    assert all(mirror is not None for mirror in found[QUERIES_BEFORE_MIRROR - 1 :])
    assert collections.reads == {"alice": 1}


def test_a_large_collection_is_never_read_whole() -> None:
    mirrors, collections = ExactMirrors(max_vectors=100, max_collections=8), Collections(101)
    assert all(collections.find(mirrors, "alice") is None for _ in range(50))
    assert collections.reads == {}
