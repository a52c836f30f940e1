"""A square sparse matrix in compressed rows (CSR) on plain numpy arrays: what ScopeGraph needs of
scipy.sparse (build from triples with duplicates summed, row sums, back to triples), without
scipy's 143 MB in the default install."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CSR:
    """Row r holds columns indices[indptr[r]:indptr[r + 1]] (sorted, unique) with values data[...]."""

    indptr: np.ndarray  # int64, n + 1
    indices: np.ndarray  # int32
    data: np.ndarray  # float64

    @classmethod
    def empty(cls, n: int = 0) -> CSR:
        """An n x n matrix of zeros."""
        return cls(np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0))

    @classmethod
    def from_triples(
        cls, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n: int, *, drop_below: float = 0.0
    ) -> CSR:
        """An n x n matrix with vals[k] at (rows[k], cols[k]); repeated positions add up, and sums
        whose magnitude is below drop_below (deletions that cancelled an edge) are left out."""
        key = np.asarray(rows, dtype=np.int64) * max(n, 1) + np.asarray(cols, dtype=np.int64)
        order = np.argsort(key)
        key = key[order]
        if len(key):
            first = np.empty(len(key), dtype=bool)
            first[0] = True
            np.not_equal(key[1:], key[:-1], out=first[1:])
            starts = np.flatnonzero(first)
            summed = np.add.reduceat(np.asarray(vals, dtype=np.float64)[order], starts)
            key = key[starts]
        else:
            summed = np.zeros(0)
        keep = np.abs(summed) >= drop_below if drop_below > 0 else summed != 0
        key, summed = key[keep], summed[keep]
        row_of, col_of = np.divmod(key, max(n, 1))
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_of, minlength=n), out=indptr[1:])
        return cls(indptr, col_of.astype(np.int32), summed)

    @property
    def n(self) -> int:
        """The number of rows (and columns)."""
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        """How many entries are stored."""
        return len(self.data)

    def row_of_each(self) -> np.ndarray:
        """The row of every stored entry, in storage order."""
        return np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr))

    def row_sums(self) -> np.ndarray:
        """Each row's sum (a node's weighted degree)."""
        return np.bincount(self.row_of_each(), weights=self.data, minlength=self.n)

    def row_max(self) -> np.ndarray:
        """Each row's largest value (0 for an empty row)."""
        out = np.zeros(self.n)
        filled = np.diff(self.indptr) > 0
        if filled.any():
            out[filled] = np.maximum.reduceat(self.data, self.indptr[:-1][filled])
        return out
