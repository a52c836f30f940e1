"""The numpy CSR behind the scope graph equals a dense matrix built entry by entry."""

from __future__ import annotations

import numpy as np
import pytest

from ripplemem.index.csr import CSR
from ripplemem.index.scope_graph import ScopeGraph, SpreadParams


def _dense(matrix: CSR) -> np.ndarray:
    out = np.zeros((matrix.n, matrix.n))
    out[matrix.row_of_each(), matrix.indices] = matrix.data
    return out


def test_triples_with_repeats_and_cancellations_equal_a_dense_sum() -> None:
    rng = np.random.default_rng(3)
    n = 40
    rows, cols = rng.integers(0, n - 1, 600), rng.integers(0, n, 600)
    vals = rng.uniform(-1.0, 2.0, 600)
    # An entry added and taken back (an edge deleted) must leave no stored zero behind.
    rows, cols, vals = np.append(rows, [n - 1, n - 1]), np.append(cols, [0, 0]), np.append(vals, [0.7, -0.7])
    want = np.zeros((n, n))
    np.add.at(want, (rows, cols), vals)
    matrix = CSR.from_triples(rows, cols, vals, n, drop_below=1e-12)
    assert matrix.indptr[n] == matrix.indptr[n - 1]  # the cancelled row holds nothing
    np.testing.assert_allclose(_dense(matrix), want, atol=1e-12)
    assert matrix.nnz == int((np.abs(want) >= 1e-12).sum())
    for r in range(n):  # each row's columns sorted and unique (ScopeGraph binary-searches them)
        row = matrix.indices[matrix.indptr[r] : matrix.indptr[r + 1]]
        assert np.all(np.diff(row) > 0)
    np.testing.assert_allclose(matrix.row_sums(), np.where(np.abs(want) >= 1e-12, want, 0).sum(axis=1))
    stored = np.where(np.abs(want) >= 1e-12, want, -np.inf).max(axis=1)
    np.testing.assert_allclose(matrix.row_max(), np.where(np.isfinite(stored), stored, 0.0))


def test_empty_matrices() -> None:
    assert CSR.empty().n == 0 and CSR.empty(3).row_sums().tolist() == [0.0, 0.0, 0.0]
    none = np.zeros(0, dtype=np.int64)
    assert CSR.from_triples(none, none, np.zeros(0), 4).indptr.tolist() == [0, 0, 0, 0, 0]


def test_a_loaded_graph_spreads_like_a_dense_matrix() -> None:
    rng = np.random.default_rng(11)
    names = [f"n{i}" for i in range(200)]
    ends, weights = rng.integers(0, 200, (1500, 2)), rng.uniform(0.1, 2, 1500)
    edges = [(names[a], names[b], float(w)) for (a, b), w in zip(ends, weights, strict=True) if a != b]
    graph = ScopeGraph.from_edges(edges)
    index = {name: graph._index[name] for name in names if name in graph._index}
    dense = np.zeros((len(index), len(index)))
    for a, b, w in edges:
        dense[index[a], index[b]] += w
        dense[index[b], index[a]] += w
    seeds = {names[0]: 1.0, names[7]: 0.5}
    params = SpreadParams(damping=0.5, max_hops=3, prune_below=0)
    transition = dense / np.where(dense.sum(axis=1) > 0, dense.sum(axis=1), 1)[:, None]
    start = np.zeros(len(index))
    for name, w in seeds.items():
        start[index[name]] = w / 1.5
    want, mass = 0.5 * start, start
    for _ in range(3):
        mass = 0.5 * transition.T @ mass
        want = want + 0.5 * mass
    got = graph.spread(seeds, params)
    assert {name: got.get(name, 0.0) for name in index} == pytest.approx(
        {name: want[position] for name, position in index.items()}, abs=1e-12
    )
    assert [graph.degree(name) for name in index] == pytest.approx([dense[p].sum() for p in index.values()])
