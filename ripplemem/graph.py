"""One scope's memory graph in RAM: a sparse adjacency kept exact under adds and deletes,
and spreading activation (a truncated personalized PageRank) from weighted seeds.

The adjacency is a CSR base plus a small delta of pending changes (deletions are negative
entries), merged when the delta grows; a query never rebuilds the matrix.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy import sparse


@dataclass(frozen=True)
class SpreadParams:
    """How activation spreads: a = (1-d)·seeds + d·Wᵀa, for at most max_hops hops.

    Low damping keeps the mass near the seeds (HippoRAG 2 found ~0.5 works well); entries below
    prune_below are dropped after each hop so the frontier stays small.
    """

    damping: float = 0.5
    max_hops: int = 3
    prune_below: float = 1e-4
    max_frontier: int = 5000


class ScopeGraph:
    """Undirected weighted graph over string node ids (memories and entities) of one scope."""

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._index: dict[str, int] = {}
        self._alive = np.zeros(0, dtype=bool)
        self._degree = np.zeros(0, dtype=np.float64)
        self._base = sparse.csr_matrix((0, 0), dtype=np.float64)
        self._delta_rows: list[int] = []
        self._delta_cols: list[int] = []
        self._delta_vals: list[float] = []
        self._delta: sparse.csr_matrix | None = None
        self._lock = threading.RLock()

    # -- nodes ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self._alive.sum())

    def __contains__(self, node: str) -> bool:
        position = self._index.get(node)
        return position is not None and bool(self._alive[position])

    def _node(self, node: str) -> int:
        position = self._index.get(node)
        if position is None:
            position = len(self._ids)
            self._ids.append(node)
            self._index[node] = position
            if position >= len(self._alive):
                grow = max(16, len(self._alive))
                self._alive = np.concatenate([self._alive, np.zeros(grow, dtype=bool)])
                self._degree = np.concatenate([self._degree, np.zeros(grow)])
        self._alive[position] = True
        return position

    def nodes(self) -> list[str]:
        """Every live node id."""
        return [node for node, position in self._index.items() if self._alive[position]]

    @property
    def size(self) -> int:
        """How many node slots exist (dead ones included)."""
        return len(self._ids)

    # -- edges ---------------------------------------------------------------------------------
    def add_edges(self, edges: Iterable[tuple[str, str, float]]) -> None:
        """Add undirected edges (weights of repeated pairs add up); creates missing nodes."""
        with self._lock:
            for src, dst, weight in edges:
                if src == dst or weight <= 0:
                    continue
                a, b = self._node(src), self._node(dst)
                self._delta_rows += [a, b]
                self._delta_cols += [b, a]
                self._delta_vals += [weight, weight]
                self._degree[a] += weight
                self._degree[b] += weight
            self._delta = None
            self._maybe_compact()

    def remove_nodes(self, nodes: Iterable[str]) -> None:
        """Remove nodes and every edge touching them, exactly."""
        with self._lock:
            for node in nodes:
                position = self._index.get(node)
                if position is None or not self._alive[position]:
                    continue
                cols, weights = self._row(position)
                for col, weight in zip(cols, weights):
                    self._delta_rows += [position, int(col)]
                    self._delta_cols += [int(col), position]
                    self._delta_vals += [-float(weight), -float(weight)]
                    self._degree[col] -= weight
                self._degree[position] = 0.0
                self._alive[position] = False
                self._delta = None
            self._maybe_compact()

    def neighbors(self, node: str) -> dict[str, float]:
        """The node's live neighbours and edge weights."""
        with self._lock:
            position = self._index.get(node)
            if position is None or not self._alive[position]:
                return {}
            cols, weights = self._row(position)
            return {self._ids[c]: float(w) for c, w in zip(cols, weights) if self._alive[c]}

    def degree(self, node: str) -> float:
        """The node's weighted degree (0 for unknown nodes)."""
        position = self._index.get(node)
        return 0.0 if position is None else float(self._degree[position])

    def _matrix(self) -> sparse.csr_matrix:
        n = len(self._ids)
        if self._base.shape[0] != n:
            self._base.resize((n, n))
        if not self._delta_vals:
            return self._base
        return self._base + self._delta_matrix()

    def _delta_matrix(self) -> sparse.csr_matrix:
        n = len(self._ids)
        if self._delta is None or self._delta.shape[0] != n:
            self._delta = sparse.csr_matrix(
                (self._delta_vals, (self._delta_rows, self._delta_cols)), shape=(n, n))
        return self._delta

    def _rows(self, positions: np.ndarray) -> sparse.csr_matrix:
        """Adjacency rows of some nodes: base rows plus pending changes, without merging it all."""
        n = len(self._ids)
        if self._base.shape[0] != n:
            self._base.resize((n, n))
        rows = self._base[positions]
        if self._delta_vals:
            rows = rows + self._delta_matrix()[positions]
        return rows

    def _row(self, position: int) -> tuple[np.ndarray, np.ndarray]:
        row = self._rows(np.array([position])).tocsr()
        keep = np.abs(row.data) > 1e-12
        return row.indices[keep], row.data[keep]

    def _maybe_compact(self) -> None:
        if len(self._delta_vals) > max(20_000, self._base.nnz // 5):
            self.compact()

    def compact(self) -> None:
        """Fold pending changes into the CSR base (zeros from deletions are dropped)."""
        with self._lock:
            merged = self._matrix().tocsr()
            merged.data[np.abs(merged.data) < 1e-12] = 0.0
            merged.eliminate_zeros()
            self._base = merged
            self._delta_rows, self._delta_cols, self._delta_vals = [], [], []
            self._delta = None

    # -- spreading -----------------------------------------------------------------------------
    def spread(self, seeds: Mapping[str, float], params: SpreadParams = SpreadParams()) -> dict[str, float]:
        """Activation of every node reached from the seeds; seed weights are normalised to sum 1.

        Truncated personalized PageRank: each hop passes damping × activation along edges in
        proportion to their weight, and the seeds keep (1 - damping) of their own mass.
        """
        total = sum(w for w in seeds.values() if w > 0)
        if not total:
            return {}
        keep_share = 1.0 - params.damping
        # Seeds outside the graph (no edges yet) keep their share and pass nothing on.
        isolated = {n: keep_share * w / total for n, w in seeds.items() if w > 0 and n not in self}
        with self._lock:
            start = {self._index[n]: w for n, w in seeds.items()
                     if n in self._index and self._alive[self._index[n]] and w > 0}
            if not start:
                return isolated
            frontier_idx = np.fromiter(start, dtype=np.int64)
            frontier_val = np.array([start[i] / total for i in frontier_idx])
            result: dict[int, float] = {}
            for position, value in zip(frontier_idx, frontier_val):
                result[int(position)] = keep_share * float(value)
            mass = frontier_val
            for _ in range(params.max_hops):
                degree = self._degree[frontier_idx]
                moving = np.where(degree > 0, params.damping * mass / np.where(degree > 0, degree, 1), 0.0)
                if not moving.any():
                    break
                reached = sparse.csr_matrix(moving[None, :]) @ self._rows(frontier_idx)
                reached = reached.tocoo()
                keep = (reached.data > params.prune_below) & self._alive[reached.col]
                cols, vals = reached.col[keep], reached.data[keep]
                if len(cols) > params.max_frontier:
                    top = np.argpartition(-vals, params.max_frontier - 1)[: params.max_frontier]
                    cols, vals = cols[top], vals[top]
                if not len(cols):
                    break
                for position, value in zip(cols, vals):
                    result[int(position)] = result.get(int(position), 0.0) + keep_share * float(value)
                frontier_idx, mass = cols.astype(np.int64), vals
            return {**isolated, **{self._ids[p]: v for p, v in result.items()}}
