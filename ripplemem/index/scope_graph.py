"""One scope's memory graph in RAM: a sparse adjacency kept exact under adds and deletes,
and spreading activation (a truncated personalized PageRank) from weighted seeds.

The adjacency is a CSR base plus a small delta of pending changes (deletions are negative
entries), merged when the delta grows; a query never rebuilds the matrix.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from ripplemem.index.csr import CSR


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
        # The largest edge weight each node has had (an upper bound, for pruning the frontier).
        self._max_weight = np.zeros(0, dtype=np.float64)
        self._base = CSR.empty()
        # Pending changes per row (deletions are negative), folded into the base by compact().
        self._delta: dict[int, dict[int, float]] = {}
        self._delta_size = 0
        self._lock = threading.RLock()

    @classmethod
    def from_edges(cls, edges: Iterable[tuple[str, str, float]]) -> ScopeGraph:
        """A graph built from many undirected edges at once (loading a scope), equal to add_edges
        then compact() but with one CSR build: add_edges's per-edge delta would hold a fifth of
        the edges in Python dicts at its peak, memory the process keeps after the load."""
        graph = cls()
        index, ids = graph._index, graph._ids
        ends, weights = array("i"), array("d")
        for src, dst, weight in edges:
            if src == dst or weight <= 0:
                continue
            for node in (src, dst):
                if node not in index:
                    index[node] = len(ids)
                    ids.append(node)
                ends.append(index[node])
            weights.append(weight)
        n = len(ids)
        pairs = np.frombuffer(ends, dtype=np.int32).reshape(-1, 2)
        both = np.frombuffer(weights, dtype=np.float64)
        matrix = CSR.from_triples(
            np.concatenate([pairs[:, 0], pairs[:, 1]]),
            np.concatenate([pairs[:, 1], pairs[:, 0]]),
            np.concatenate([both, both]),
            n,
        )
        graph._base = matrix
        graph._alive = np.ones(n, dtype=bool)
        graph._degree = matrix.row_sums()
        graph._max_weight = matrix.row_max()
        return graph

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
                self._max_weight = np.concatenate([self._max_weight, np.zeros(grow)])
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
    def _change(self, a: int, b: int, weight: float) -> None:
        for row, col in ((a, b), (b, a)):
            entries = self._delta.setdefault(row, {})
            if col not in entries:
                self._delta_size += 1
            entries[col] = entries.get(col, 0.0) + weight
            self._max_weight[row] = max(self._max_weight[row], entries[col] + self._base_weight(row, col))
        self._degree[a] += weight
        self._degree[b] += weight

    def add_edges(self, edges: Iterable[tuple[str, str, float]]) -> None:
        """Add undirected edges (weights of repeated pairs add up); creates missing nodes."""
        with self._lock:
            for src, dst, weight in edges:
                if src == dst or weight <= 0:
                    continue
                self._change(self._node(src), self._node(dst), weight)
            self._maybe_compact()

    def remove_nodes(self, nodes: Iterable[str]) -> None:
        """Remove nodes and every edge touching them, exactly."""
        with self._lock:
            for node in nodes:
                position = self._index.get(node)
                if position is None or not self._alive[position]:
                    continue
                cols, weights = self._row(position)
                for col, weight in zip(cols, weights, strict=True):
                    self._change(position, int(col), -float(weight))
                self._degree[position] = 0.0
                self._alive[position] = False
            self._maybe_compact()

    def neighbors(self, node: str) -> dict[str, float]:
        """The node's live neighbours and edge weights."""
        with self._lock:
            position = self._index.get(node)
            if position is None or not self._alive[position]:
                return {}
            cols, weights = self._row(position)
            return {self._ids[c]: float(w) for c, w in zip(cols, weights, strict=True) if self._alive[c]}

    def degree(self, node: str) -> float:
        """The node's weighted degree (0 for unknown nodes)."""
        position = self._index.get(node)
        return 0.0 if position is None else float(self._degree[position])

    def _base_weight(self, row: int, col: int) -> float:
        """The weight of one edge in the CSR base (0 if absent); base rows are sorted."""
        if row >= self._base.n:
            return 0.0
        start, stop = self._base.indptr[row], self._base.indptr[row + 1]
        at = start + int(np.searchsorted(self._base.indices[start:stop], col))
        return float(self._base.data[at]) if at < stop and self._base.indices[at] == col else 0.0

    def weight(self, a: str, b: str) -> float:
        """The weight of the edge between two nodes (0 if there is none)."""
        i, j = self._index.get(a), self._index.get(b)
        if i is None or j is None or not (self._alive[i] and self._alive[j]):
            return 0.0
        return self._base_weight(i, j) + self._delta.get(i, {}).get(j, 0.0)

    def linked_to(self, node: str, candidates: list[str]) -> np.ndarray:
        """For each candidate, the weight of its edge to `node` (0 if none), vectorised."""
        position = self._index.get(node)
        weights = np.zeros(len(candidates))
        if position is None or not self._alive[position]:
            return weights
        cols, values = self._row(position)
        if not len(cols):
            return weights
        lookup = np.full(len(self._ids), 0.0)
        lookup[cols] = values
        places = np.array([self._index.get(c, -1) for c in candidates], dtype=np.int64)
        known = places >= 0
        weights[known] = lookup[places[known]]
        return weights

    def return_share(self, nodes: Iterable[str]) -> dict[str, float]:
        """For each node, the share of what it passes on that one more step brings straight back:
        sum over neighbours n of w(s, n)^2 / (deg(s) deg(n)). A memory linked only to an entity no
        other memory mentions gets all of it back (1.0): an echo, not evidence."""
        shares: dict[str, float] = {}
        with self._lock:
            for node in nodes:
                position = self._index.get(node)
                if position is None or self._degree[position] <= 0:
                    continue
                cols, vals = self._row(position)
                back = np.where(self._degree[cols] > 0, self._degree[cols], 1.0)
                shares[node] = float(np.sum(vals * vals / back) / self._degree[position])
        return shares

    def _row(self, position: int) -> tuple[np.ndarray, np.ndarray]:
        """One node's neighbours and weights: a slice of the CSR base plus its pending changes."""
        cols = np.zeros(0, dtype=np.int64)
        vals: np.ndarray = np.zeros(0, dtype=np.float64)
        if position < self._base.n:
            start, stop = self._base.indptr[position], self._base.indptr[position + 1]
            cols = self._base.indices[start:stop].astype(np.int64)
            vals = self._base.data[start:stop]
        changes = self._delta.get(position)
        if changes:
            cols = np.concatenate([cols, np.fromiter(changes, dtype=np.int64, count=len(changes))])
            vals = np.concatenate([vals, np.fromiter(changes.values(), dtype=np.float64, count=len(changes))])
            cols, inverse = np.unique(cols, return_inverse=True)
            vals = np.bincount(inverse, weights=vals)
        keep = np.abs(vals) > 1e-12
        return cols[keep], vals[keep]

    def _maybe_compact(self) -> None:
        if self._delta_size > max(20_000, self._base.nnz // 5):
            self.compact()

    def compact(self) -> None:
        """Fold pending changes into the CSR base (zeros from deletions are dropped)."""
        with self._lock:
            n = len(self._ids)
            base = self._base
            rows = [base.row_of_each()] + [np.full(len(cols), row) for row, cols in self._delta.items()]
            cols = [base.indices] + [np.fromiter(c, dtype=np.int64) for c in self._delta.values()]
            vals = [base.data] + [np.fromiter(c.values(), dtype=np.float64) for c in self._delta.values()]
            self._base = CSR.from_triples(
                np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), n, drop_below=1e-12
            )
            self._delta, self._delta_size = {}, 0

    def _reach(self, frontier: np.ndarray, moving: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mass arriving at each node (unique positions) when frontier nodes pass `moving` on."""
        cols: list[np.ndarray] = []
        vals: list[np.ndarray] = []
        inside = frontier < self._base.n
        if inside.any():
            # Gather the frontier's CSR rows with index arithmetic.
            rows, mass = frontier[inside], moving[inside]
            starts = self._base.indptr[rows].astype(np.int64)
            lengths = self._base.indptr[rows + 1].astype(np.int64) - starts
            total = int(lengths.sum())
            if total:
                shift = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
                at = shift + np.arange(total)
                cols.append(self._base.indices[at].astype(np.int64))
                vals.append(self._base.data[at] * np.repeat(mass, lengths))
        if self._delta:
            for position, mass in zip(frontier.tolist(), moving.tolist(), strict=True):
                changes = self._delta.get(position)
                if changes:
                    cols.append(np.fromiter(changes, dtype=np.int64, count=len(changes)))
                    vals.append(mass * np.fromiter(changes.values(), dtype=np.float64, count=len(changes)))
        if not cols:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        unique, inverse = np.unique(np.concatenate(cols), return_inverse=True)
        return unique, np.bincount(inverse, weights=np.concatenate(vals))

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
            start = {
                self._index[n]: w
                for n, w in seeds.items()
                if n in self._index and self._alive[self._index[n]] and w > 0
            }
            if not start:
                return isolated
            frontier_idx = np.fromiter(start, dtype=np.int64)
            mass = np.array([start[i] / total for i in frontier_idx])
            activation = np.zeros(len(self._ids))
            activation[frontier_idx] = keep_share * mass
            for _ in range(params.max_hops):
                degree = self._degree[frontier_idx]
                moving = np.where(degree > 0, params.damping * mass / np.where(degree > 0, degree, 1), 0.0)
                # A node whose strongest edge would pass on less than prune_below is not expanded:
                # hubs (a name in thousands of memories) spread thin anyway, and skipping them keeps
                # a hop's cost independent of their size.
                useful = moving * self._max_weight[frontier_idx] >= params.prune_below
                frontier_idx, moving = frontier_idx[useful], moving[useful]
                if not moving.any():
                    break
                cols, vals = self._reach(frontier_idx, moving)
                keep = (vals > params.prune_below) & self._alive[cols]
                cols, vals = cols[keep], vals[keep]
                if len(cols) > params.max_frontier:
                    top = np.argpartition(-vals, params.max_frontier - 1)[: params.max_frontier]
                    cols, vals = cols[top], vals[top]
                if not len(cols):
                    break
                activation[cols] += keep_share * vals
                frontier_idx, mass = cols, vals
            reached = np.flatnonzero(activation)
            names = [self._ids[p] for p in reached.tolist()]
            return {**isolated, **dict(zip(names, activation[reached].tolist(), strict=True))}
