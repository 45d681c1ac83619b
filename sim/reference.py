"""Independent reference results (scipy.sparse.csgraph, networkx) for the golden
model's algorithms. They get only the graph's edge list and share no code with
``golden/algorithms`` (docs/golden.md): the tests, ``graphunits cosim`` and the
benchmarks compare every result with them.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

__all__ = ["reference", "ref_bfs", "ref_sssp", "ref_pr", "ref_cc", "ref_bc", "ref_kcore", "compare"]


def _edges(g):
    w = g.weight if g.weight is not None else np.ones(g.num_edges)
    return g.src(), g.col.astype(np.int64), w


def _matrix(g, unit: bool = False):
    s, d, w = _edges(g)
    return sp.csr_matrix((np.ones_like(w) if unit else w, (s, d)), shape=(g.num_vertices, g.num_vertices))


def _nx(g):
    import networkx as nx
    G = nx.DiGraph()
    G.add_nodes_from(range(g.num_vertices))
    s, d, w = _edges(g)
    G.add_weighted_edges_from(zip(s.tolist(), d.tolist(), np.asarray(w, float).tolist()))
    return G


def ref_bfs(g, source: int) -> np.ndarray:
    d = csgraph.shortest_path(_matrix(g, unit=True), unweighted=True, indices=source, directed=True)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def ref_sssp(g, source: int) -> np.ndarray:
    return csgraph.dijkstra(_matrix(g), indices=source, directed=True)


def ref_pr(g, damping: float = 0.85) -> np.ndarray:
    import networkx as nx
    r = nx.pagerank(_nx(g), alpha=damping, tol=1e-15, max_iter=10000, weight=None)
    return np.array([r[v] for v in range(g.num_vertices)])


def ref_cc(g) -> np.ndarray:
    n, lab = csgraph.connected_components(_matrix(g, unit=True), directed=True, connection="weak")
    mins = np.full(n, g.num_vertices)
    np.minimum.at(mins, lab, np.arange(g.num_vertices))
    return mins[lab]


def ref_bc(g, source: int) -> np.ndarray:
    import networkx as nx
    G = _nx(g)
    b = nx.betweenness_centrality_subset(G, sources=[source], targets=list(G.nodes), normalized=False, weight=None)
    return np.array([b[v] for v in range(g.num_vertices)])


def ref_kcore(g) -> np.ndarray:
    """Core numbers (networkx) of the graph's edges taken as undirected, self loops dropped."""
    import networkx as nx
    G = nx.Graph()
    G.add_nodes_from(range(g.num_vertices))
    s, d, _ = _edges(g)
    G.add_edges_from((a, b) for a, b in zip(s.tolist(), d.tolist()) if a != b)
    cn = nx.core_number(G)
    return np.array([cn[v] for v in range(g.num_vertices)], dtype=np.int64)


def reference(g, algo: str, *, source: int | None = None, damping: float = 0.85) -> np.ndarray:
    """The independent result of ``algo`` on ``g`` (for PR: the standard definition,
    tolerance far below the golden model's default)."""
    if algo == "bfs":
        return ref_bfs(g, source)
    if algo == "sssp":
        return ref_sssp(g, source)
    if algo == "pr":
        return ref_pr(g, damping)
    if algo == "cc":
        return ref_cc(g)
    if algo == "bc":
        return ref_bc(g, source)
    if algo == "kcore":
        return ref_kcore(g)
    raise ValueError(f"no reference for algorithm {algo!r}")


def compare(algo: str, got: np.ndarray, ref: np.ndarray, *, pr_tol: float = 1e-6) -> str | None:
    """None when ``got`` equals ``ref`` (PR: max difference below ``pr_tol``), else why not."""
    got, ref = np.asarray(got), np.asarray(ref)
    if got.shape != ref.shape:
        return f"{got.size} values, the reference has {ref.size}"
    if algo == "pr":
        diff = float(np.max(np.abs(got - ref))) if got.size else 0.0
        return None if diff < pr_tol else f"max |rank - reference| = {diff:.3g} (tolerance {pr_tol:g})"
    if algo in ("sssp", "bc"):
        same_inf = np.array_equal(np.isinf(got), np.isinf(ref))
        fin = ~np.isinf(ref)
        ok = same_inf and np.allclose(got[fin], ref[fin], rtol=1e-9, atol=1e-9)
    else:
        ok = np.array_equal(got, ref)
    if ok:
        return None
    bad = int(np.flatnonzero(~np.isclose(got.astype(float), ref.astype(float), equal_nan=True))[0])
    return f"vertex {bad}: {got[bad]} vs reference {ref[bad]}"
