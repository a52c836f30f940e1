"""The in-RAM graph: exact under adds and deletes, and spreading with known answers."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ripplemem.index.scope_graph import ScopeGraph, SpreadParams


def _dense_ppr(
    edges: list[tuple[str, str, float]], seeds: dict[str, float], params: SpreadParams, nodes: list[str]
) -> dict[str, float]:
    """The same truncated personalized PageRank computed with a dense matrix."""
    index = {n: i for i, n in enumerate(nodes)}
    w = np.zeros((len(nodes), len(nodes)))
    for a, b, weight in edges:
        w[index[a], index[b]] += weight
        w[index[b], index[a]] += weight
    degree = w.sum(axis=1)
    transition = np.divide(w, degree[:, None], out=np.zeros_like(w), where=degree[:, None] > 0)
    s = np.zeros(len(nodes))
    for n, v in seeds.items():
        s[index[n]] = v
    s /= s.sum()
    result = (1 - params.damping) * s
    mass = s
    for _ in range(params.max_hops):
        mass = params.damping * transition.T @ mass
        result = result + (1 - params.damping) * mass
    return {n: result[i] for n, i in index.items() if result[i] > 0}


def test_chain_activation_decays_with_distance() -> None:
    graph = ScopeGraph()
    graph.add_edges([("a", "b", 1.0), ("b", "c", 1.0), ("c", "d", 1.0), ("x", "y", 1.0)])
    act = graph.spread({"a": 1.0}, SpreadParams(damping=0.5, max_hops=3, prune_below=0))
    assert act["a"] > act["b"] > act["c"] > act["d"] > 0
    assert "x" not in act and "y" not in act
    assert act == pytest.approx(
        _dense_ppr(
            [("a", "b", 1.0), ("b", "c", 1.0), ("c", "d", 1.0)],
            {"a": 1.0},
            SpreadParams(0.5, 3, 0),
            list("abcd"),
        )
    )


def test_max_hops_bounds_the_reach() -> None:
    graph = ScopeGraph()
    graph.add_edges([("a", "b", 1.0), ("b", "c", 1.0), ("c", "d", 1.0)])
    assert set(graph.spread({"a": 1.0}, SpreadParams(max_hops=1, prune_below=0))) == {"a", "b"}
    assert set(graph.spread({"a": 1.0}, SpreadParams(max_hops=2, prune_below=0))) == {"a", "b", "c"}


def test_heavier_edges_carry_more_activation() -> None:
    graph = ScopeGraph()
    graph.add_edges([("q", "strong", 3.0), ("q", "weak", 1.0)])
    act = graph.spread({"q": 1.0})
    assert act["strong"] == pytest.approx(3 * act["weak"])


def test_incremental_updates_match_a_fresh_build() -> None:
    rng = random.Random(7)
    nodes = [f"n{i}" for i in range(60)]
    edges = [(rng.choice(nodes), rng.choice(nodes), rng.uniform(0.1, 2.0)) for _ in range(300)]
    edges = [e for e in edges if e[0] != e[1]]
    graph = ScopeGraph()
    for start in range(0, len(edges), 37):
        graph.add_edges(edges[start : start + 37])
        if start == 148:
            graph.compact()
    removed = set(rng.sample(nodes, 10))
    graph.remove_nodes(removed)
    kept_edges = [e for e in edges if e[0] not in removed and e[1] not in removed]
    fresh = ScopeGraph()
    fresh.add_edges(kept_edges)
    params = SpreadParams(damping=0.5, max_hops=3, prune_below=0)
    seeds = {n: 1.0 for n in nodes[:5] if n not in removed}
    incremental = graph.spread(seeds, params)
    assert incremental == pytest.approx(fresh.spread(seeds, params))
    live = [n for n in nodes if n not in removed]
    assert incremental == pytest.approx(_dense_ppr(kept_edges, seeds, params, live))
    for node in removed:
        assert node not in graph and node not in incremental
    graph.compact()
    assert graph.spread(seeds, params) == pytest.approx(incremental)


def test_neighbors_and_degree_follow_deletes() -> None:
    graph = ScopeGraph()
    graph.add_edges([("m1", "e:berlin", 1.0), ("m2", "e:berlin", 1.0), ("m1", "m2", 0.5)])
    assert graph.neighbors("e:berlin") == {"m1": 1.0, "m2": 1.0}
    graph.remove_nodes(["m1"])
    assert graph.neighbors("e:berlin") == {"m2": 1.0}
    assert graph.degree("m2") == pytest.approx(1.0)
    # A removed node passes nothing on: seeding it reaches none of its former neighbours.
    assert set(graph.spread({"m1": 1.0})) == {"m1"}
    graph.add_edges([("m1", "e:berlin", 2.0)])
    assert graph.neighbors("m1") == {"e:berlin": 2.0}


def test_seeds_without_edges_keep_their_share() -> None:
    graph = ScopeGraph()
    graph.add_edges([("m1", "e:berlin", 1.0), ("m2", "e:berlin", 1.0)])
    activation = graph.spread({"m1": 1.0, "lonely": 1.0}, SpreadParams(damping=0.5, max_hops=2))
    assert activation["lonely"] == pytest.approx(0.25)  # half the mass, kept: (1 - d) x 0.5
    assert activation["m2"] > 0 and "lonely" not in graph


def test_return_share_tells_an_echo_from_evidence() -> None:
    graph = ScopeGraph()
    # m1 alone mentions "Tom"; m2 and m3 share "Paris".
    graph.add_edges([("m1", "ent_tom", 1.0), ("m2", "ent_paris", 1.0), ("m3", "ent_paris", 1.0)])
    shares = graph.return_share(["m1", "m2", "missing"])
    assert shares["m1"] == pytest.approx(1.0)
    assert shares["m2"] == pytest.approx(0.5)
    assert "missing" not in shares
