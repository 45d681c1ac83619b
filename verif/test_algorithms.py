"""Every golden algorithm against an independent implementation (scipy.sparse.csgraph,
networkx; sim/reference.py), on generated graphs and on corner cases. The
references never use the golden model's code: they get the graph's edge list
and compute on their own."""
import re

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from golden.algorithms import AlgorithmError, run_algorithm
from golden.graphs import CSRGraph, load_graph
from sim.reference import ref_bc, ref_bfs, ref_cc, ref_pr


# ---------------------------------------------------------------------- references
def edges_of(g):
    return g.src(), g.col.astype(np.int64), (g.weight if g.weight is not None else np.ones(g.num_edges))


def ref_matrix(g):
    s, d, w = edges_of(g)
    return sp.csr_matrix((w, (s, d)), shape=(g.num_vertices, g.num_vertices))


def ref_nx(g, multi_edges=None):
    G = nx.DiGraph()
    G.add_nodes_from(range(g.num_vertices))
    s, d, w = edges_of(g) if multi_edges is None else multi_edges
    G.add_weighted_edges_from(zip(s.tolist(), d.tolist(), np.asarray(w, float).tolist()))
    return G


def ref_sssp_nx(g, src, multi_edges=None):
    G = nx.MultiDiGraph() if multi_edges is not None else None
    if G is not None:
        G.add_nodes_from(range(g.num_vertices))
        s, d, w = multi_edges
        G.add_weighted_edges_from(zip(s.tolist(), d.tolist(), np.asarray(w, float).tolist()))
    else:
        G = ref_nx(g)
    lengths = nx.single_source_dijkstra_path_length(G, src)
    out = np.full(g.num_vertices, np.inf)
    for v, L in lengths.items():
        out[v] = L
    return out


def ref_pr_nodangle(g, d=0.85, tol=1e-13):
    # Independent power iteration in matrix form (no dangling redistribution).
    V = g.num_vertices
    A = ref_matrix(g)
    A.data[:] = 1.0
    deg = np.asarray(A.sum(axis=1)).ravel()
    inv = np.divide(1.0, deg, out=np.zeros(V), where=deg > 0)
    P = (sp.diags(inv) @ A).T.tocsr()
    r = np.full(V, 1.0 / V)
    for _ in range(10000):
        n = (1 - d) / V + d * (P @ r)
        if np.abs(n - r).sum() < tol:
            return n
        r = n
    return r


# ---------------------------------------------------------------------- graphs
def corner_graphs():
    rng = np.random.default_rng(7)
    out = {}
    out["no_edges"] = CSRGraph.from_edges([], [], num_vertices=5, directed=True)
    out["one_vertex"] = CSRGraph.from_edges([], [], num_vertices=1, directed=True)
    out["self_loops"] = CSRGraph.from_edges([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], directed=True)
    out["components"] = CSRGraph.from_edges(
        *np.array([(3 * i + a, 3 * i + b) for i in range(20) for a, b in ((0, 1), (1, 2))]).T,
        num_vertices=65, directed=False)
    out["hub"] = CSRGraph.from_edges(np.zeros(5000, int), np.arange(1, 5001), directed=False)
    # 1101 levels: past Python's recursion limit (1000), so no recursive walk passes
    out["long_path"] = CSRGraph.from_edges(np.arange(1100), np.arange(1, 1101), directed=False)
    out["dangling_directed"] = CSRGraph.from_edges(rng.integers(0, 60, 200), rng.integers(0, 80, 200),
                                                   num_vertices=100, directed=True)
    return out


def generated_graphs():
    return {
        "kron10": load_graph("kron:scale=10,edgefactor=8,seed=3", cache=False),
        "urand10": load_graph("urand:scale=10,edgefactor=4,seed=5", cache=False),
        "grid": load_graph("grid:20x30,seed=2", cache=False),
    }


GRAPHS = {}


def graph(name):
    if not GRAPHS:
        GRAPHS.update(corner_graphs())
        GRAPHS.update(generated_graphs())
    return GRAPHS[name]


ALL = ["no_edges", "one_vertex", "self_loops", "components", "hub", "long_path", "dangling_directed",
       "kron10", "urand10", "grid"]


def pick_source(g):
    # A vertex with out-edges when there is one.
    deg = g.degrees()
    return int(np.argmax(deg > 0)) if deg.any() else 0


# ---------------------------------------------------------------------- tests
@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("stats", [False, True])
def test_bfs(name, stats):
    g = graph(name)
    s = pick_source(g)
    r = run_algorithm(g, "bfs", source=s, stats=stats)
    assert np.array_equal(r.values, ref_bfs(g, s))
    assert (r.gpu is not None) == stats


@pytest.mark.parametrize("name", ALL)
def test_sssp(name):
    g = graph(name).with_weights(seed=11)
    s = pick_source(g)
    r = run_algorithm(g, "sssp", source=s)
    assert np.array_equal(np.isinf(r.values), np.isinf(ref_sssp_nx(g, s)))
    assert np.allclose(r.values, ref_sssp_nx(g, s), rtol=0, atol=1e-9, equal_nan=False)


def test_sssp_zero_weights_and_duplicate_edges():
    # Duplicate edges with different weights: the lighter one counts; zero weights are valid.
    s = np.array([0, 0, 1, 1, 2, 3, 3])
    d = np.array([1, 1, 2, 2, 3, 4, 4])
    w = np.array([5.0, 2.0, 0.0, 7.0, 1.0, 0.0, 3.0])
    g = CSRGraph.from_edges(s, d, w, directed=True)
    r = run_algorithm(g, "sssp", source=0)
    assert r.values.tolist() == ref_sssp_nx(g, 0, multi_edges=(s, d, w)).tolist() == [0, 2, 2, 3, 3]


def test_sssp_small_delta_many_far_passes():
    g = graph("grid").with_weights(seed=3)
    r = run_algorithm(g, "sssp", source=0, delta=1.0)
    assert np.allclose(r.values, ref_sssp_nx(g, 0))
    assert r.counters.get("far_pile_passes", 0) > 5


@pytest.mark.parametrize("name", ALL)
def test_cc(name):
    g = graph(name)
    r = run_algorithm(g, "cc")
    assert np.array_equal(r.values, ref_cc(g))


@pytest.mark.parametrize("name", [n for n in ALL if n not in ("no_edges",)])
def test_pagerank_standard_matches_networkx(name):
    g = graph(name)
    # 1e-12: the star's sums (5,001 vertices) stay above 1e-13 of rounding noise and never converge
    r = run_algorithm(g, "pr", tol=1e-12, max_iter=2000)
    assert r.iterations < 2000, "did not converge"
    ref = ref_pr(g, 0.85)
    assert np.max(np.abs(r.values - ref)) < 1e-6
    assert abs(r.values.sum() - 1.0) < 1e-9


@pytest.mark.parametrize("name", ["dangling_directed", "kron10", "hub"])
def test_pagerank_without_dangling_term(name):
    g = graph(name)
    r = run_algorithm(g, "pr", variant="nodangle", tol=1e-12, max_iter=5000)
    assert r.iterations < 5000, "did not converge"
    assert np.max(np.abs(r.values - ref_pr_nodangle(g))) < 1e-6


def test_pagerank_empty_graph():
    g = graph("no_edges")
    r = run_algorithm(g, "pr", tol=1e-13)
    assert np.allclose(r.values, 1 / 5)


@pytest.mark.parametrize("name", ALL)
def test_bc(name):
    g = graph(name)
    s = pick_source(g)
    r = run_algorithm(g, "bc", source=s)
    ref = ref_bc(g, s)
    assert np.allclose(r.values, ref, rtol=1e-9, atol=1e-9), np.max(np.abs(r.values - ref))


def test_bad_inputs():
    g = graph("kron10")
    with pytest.raises(AlgorithmError, match=r"source must be a vertex id in \[0, 1023\], not 5000"):
        run_algorithm(g, "bfs", source=5000)
    with pytest.raises(AlgorithmError, match="sssp needs edge weights"):
        run_algorithm(graph("hub"), "sssp")
    with pytest.raises(AlgorithmError, match="unknown algorithm 'dfs'"):
        run_algorithm(g, "dfs")
    with pytest.raises(AlgorithmError, match="bfs has no mode 'magic'"):
        run_algorithm(g, "bfs", mode="magic")
    with pytest.raises(AlgorithmError, match=r"damping must be in \(0, 1\)"):
        run_algorithm(g, "pr", damping=1.5)
    neg = CSRGraph.from_edges([0], [1], [-1.0], directed=True)
    with pytest.raises(AlgorithmError, match="non-negative"):
        run_algorithm(neg, "sssp")


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("algo, options, message", [
    # NaN compares false with everything: a check written as "tol <= 0" lets it through
    # (PR then runs max_iter iterations, its change never "< nan").
    ("pr", {"tol": NAN}, r"^tol must be a positive finite number, not nan$"),
    ("pr", {"tol": INF}, r"^tol must be a positive finite number, not inf$"),
    ("pr", {"tol": 0.0}, r"^tol must be a positive finite number, not 0\.0$"),
    ("pr", {"tol": -1e-6}, r"^tol must be a positive finite number, not -1e-06$"),
    ("pr", {"tol": True}, r"^tol must be a positive finite number, not True$"),
    ("pr", {"damping": NAN}, r"^damping must be in \(0, 1\), not nan$"),
    ("pr", {"damping": 1.0}, r"^damping must be in \(0, 1\), not 1\.0$"),
    ("pr", {"damping": 0}, r"^damping must be in \(0, 1\), not 0$"),
    ("pr", {"max_iter": 0}, r"^max_iter must be a positive integer, not 0$"),
    ("pr", {"max_iter": 2.0}, r"^max_iter must be a positive integer, not 2\.0$"),
    ("pr", {"variant": "x"}, r"^variant must be 'standard' or 'nodangle', not 'x'$"),
    ("sssp", {"delta": NAN}, r"^delta must be a positive finite number, not nan$"),
    ("sssp", {"delta": INF}, r"^delta must be a positive finite number, not inf$"),
    ("sssp", {"delta": 0}, r"^delta must be a positive finite number, not 0$"),
])
def test_numeric_options_reject_nan_and_out_of_range(algo, options, message):
    g = graph("grid")                    # weighted: SSSP reaches its option checks
    with pytest.raises(AlgorithmError, match=message):
        run_algorithm(g, algo, stats=False, **options)


def test_numeric_options_accept_their_range():
    g = graph("grid")
    r = run_algorithm(g, "pr", stats=False, tol=np.float64(1e-3), damping=np.float32(0.5), max_iter=np.int64(3))
    assert 1 <= r.iterations <= 3
    assert np.array_equal(run_algorithm(g, "sssp", stats=False, source=0, delta=1e9).values,
                          ref_sssp_nx(g, 0))


def test_stats_are_recorded_and_plausible():
    g = graph("kron10")
    r = run_algorithm(g, "bfs", source=pick_source(g), stats=True)
    t = r.gpu["total"]
    names = [k["name"] for k in r.gpu["kernels"]]
    assert names == ["bfs_expand", "bfs_contract"]
    assert t["launches"] == 2 * r.iterations
    # Every edge of the reached part is inspected exactly once by a duplicate-free BFS;
    # duplicates only add to it.
    reached = r.values >= 0
    assert r.counters["edges"] >= g.degrees()[reached].sum()
    assert 1.0 <= t["accesses_per_request"] <= 32.0
    assert t["cycles"] > 0


def test_bfs_duplicates_follow_the_visibility_window():
    # Vertices 1..200 (the frontier of level 1) all lead to vertex 201: the edge
    # frontier [0, 201, 0, 201, ...] holds 201 once per lane pair, in 13 warps.
    n = 200
    src = np.concatenate([np.zeros(n, int), np.arange(1, n + 1)])
    dst = np.concatenate([np.arange(1, n + 1), np.full(n, n + 1)])
    g = CSRGraph.from_edges(src, dst, directed=False)
    ref = ref_bfs(g, 0)
    from golden.gpu import GPUConfig
    warps_holding = -(-2 * n // 32)
    for resident_threads, expect_copies in ((64, 2), (2048, warps_holding)):
        cfg = GPUConfig(sms=1, threads_per_sm=resident_threads)
        assert cfg.resident_warps == resident_threads // 32
        r = run_algorithm(g, "bfs", source=0, gpu=cfg)
        assert np.array_equal(r.values, ref)
        # Level 2's frontier holds vertex 201 once per warp within the window.
        assert r.counters["duplicates_in_frontier"] == expect_copies - 1


# ---------------------------------------------------------------------- raw edge lists (merge rules checked too)
def raw_edges(directed: bool, seed: int):
    """A raw edge list with everything CSRGraph.from_edges must clean up: self loops,
    duplicate edges with different weights (and, undirected, the same edge given in
    both directions with different weights) and zero weights."""
    rng = np.random.default_rng(seed)
    V, m = 48, 150
    s = rng.integers(0, V, m)
    d = rng.integers(0, V, m)
    w = rng.integers(0, 6, m).astype(float)                        # 0..5: many zero weights
    dup = rng.integers(0, m, 60)                                   # duplicates, other weights
    rev = rng.integers(0, m, 30)                                   # the reverse direction, other weights
    loops = np.arange(0, V, 4)                                     # self loops
    s = np.concatenate([s, s[dup], d[rev], loops])
    d = np.concatenate([d, d[dup], s[rev], loops])
    w = np.concatenate([w, rng.integers(0, 9, dup.size), rng.integers(0, 9, rev.size), np.ones(loops.size)])
    assert (w == 0).sum() > 10 and (s == d).sum() >= loops.size
    lighter = [w[m + i] < w[j] for i, j in enumerate(dup) if s[j] != d[j]]
    assert any(lighter) and not all(lighter)                       # sometimes the later copy is lighter
    return V, s.astype(np.int64), d.astype(np.int64), w


def raw_multigraph(V, s, d, w, directed):
    G = nx.MultiDiGraph() if directed else nx.MultiGraph()
    G.add_nodes_from(range(V))
    G.add_weighted_edges_from(zip(s.tolist(), d.tolist(), w.tolist()))
    return G


def raw_simple_arcs(s, d, directed):
    """The arcs of the project's merge rule, built independently: self loops dropped,
    each (u, v) once (both directions when undirected)."""
    arcs = {(u, v) for u, v in zip(s.tolist(), d.tolist()) if u != v}
    if not directed:
        arcs |= {(v, u) for u, v in arcs}
    return arcs


RAW = [(directed, seed) for directed in (True, False) for seed in (1, 2)]


@pytest.mark.parametrize("directed, seed", RAW)
@pytest.mark.parametrize("algo", ["bfs", "sssp", "pr", "cc", "bc"])
def test_against_references_built_from_the_raw_edge_list(algo, directed, seed):
    V, s, d, w = raw_edges(directed, seed)
    g = CSRGraph.from_edges(s, d, w, num_vertices=V, directed=directed)
    src = int(s[np.flatnonzero(s != d)[0]])
    if algo == "bfs":
        lengths = nx.single_source_shortest_path_length(raw_multigraph(V, s, d, w, directed), src)
        ref = np.full(V, -1)
        for v, L in lengths.items():
            ref[v] = L
        assert np.array_equal(run_algorithm(g.unweighted(), "bfs", source=src).values, ref)
    elif algo == "sssp":
        # networkx takes the lightest of parallel edges itself; zero weights are valid edges.
        lengths = nx.single_source_dijkstra_path_length(raw_multigraph(V, s, d, w, directed), src)
        ref = np.full(V, np.inf)
        for v, L in lengths.items():
            ref[v] = L
        got = run_algorithm(g, "sssp", source=src).values
        assert np.array_equal(np.isinf(got), np.isinf(ref)) and np.allclose(got[~np.isinf(ref)], ref[~np.isinf(ref)])
        assert np.sum(ref[np.isfinite(ref)] == 0) > 1           # zero-weight paths were exercised
    elif algo == "pr":
        G = nx.DiGraph()
        G.add_nodes_from(range(V))
        G.add_edges_from(raw_simple_arcs(s, d, directed))
        r = nx.pagerank(G, alpha=0.85, tol=1e-15, max_iter=10000)
        ref = np.array([r[v] for v in range(V)])
        got = run_algorithm(g, "pr", tol=1e-13, max_iter=3000).values
        assert np.max(np.abs(got - ref)) < 1e-6
    elif algo == "cc":
        A = sp.coo_matrix((np.ones(s.size), (s, d)), shape=(V, V))   # raw: duplicates summed, loops kept
        n, lab = sp.csgraph.connected_components(A, directed=True, connection="weak")
        first = {}
        for v in range(V):
            first.setdefault(lab[v], v)
        assert np.array_equal(run_algorithm(g, "cc").values, [first[lab[v]] for v in range(V)])
    else:
        G = nx.DiGraph()
        G.add_nodes_from(range(V))
        G.add_edges_from(raw_simple_arcs(s, d, directed))
        b = nx.betweenness_centrality_subset(G, sources=[src], targets=list(G.nodes), normalized=False)
        ref = np.array([b[v] for v in range(V)])
        assert np.allclose(run_algorithm(g.unweighted(), "bc", source=src).values, ref, rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------------- per-kernel work
def registered_modes():
    """Every registered (algorithm, mode) pair: the baseline and every unit's modes
    (the units register theirs when imported, which ``modes_for`` does)."""
    from golden.algorithms import ALGORITHMS, MODES, modes_for
    for a in ALGORITHMS:
        modes_for(a)
    return sorted(MODES)


# Modes whose kernels count no ``frontier_vertices`` (the counter is absent, every
# kernel's ``vertices`` is 0): the pull modes (each kernel walks every vertex's
# in-list, with no frontier), the MFF's BFS push and mff-push, and GraphPEG's BC and
# k-core. Nothing is left unattributed in them either; the test checks that the
# counter really is absent, so a mode that starts counting must leave this list.
NO_VERTEX_COUNT = {("bfs", "pull"), ("bfs", "mff"), ("bfs", "push"), ("bfs", "mff-push"),
                   ("bfs", "graphpeg-pull"), ("sssp", "pull"), ("sssp", "mff"), ("pr", "pull"),
                   ("pr", "mff"), ("cc", "pull"), ("cc", "mff"), ("bc", "graphpeg"), ("kcore", "graphpeg")}


@pytest.mark.parametrize("algo, mode", registered_modes())
def test_per_kernel_work_adds_up_to_the_run_counters(algo, mode):
    # Every pair runs on the same small graph: kron:scale=8 is undirected (k-core
    # needs that) and SSSP gets seeded weights; no pair is left out.
    g = load_graph("kron:scale=8,edgefactor=16,seed=1", cache=False)
    assert not g.directed
    r = run_algorithm(g.with_weights(seed=2) if algo == "sssp" else g, algo, mode,
                      **({"max_iter": 5} if algo == "pr" else {}))
    ks = r.gpu["kernels"]
    assert ks and r.gpu["unattributed"] == {"edges": 0, "vertices": 0}
    assert sum(k["edges"] for k in ks) == r.counters["edges"] == r.gpu["total"]["edges"] > 0
    vertices = sum(k["vertices"] for k in ks)
    assert vertices == r.gpu["total"]["vertices"]
    if (algo, mode) in NO_VERTEX_COUNT:
        assert "frontier_vertices" not in r.counters and vertices == 0
    else:
        assert vertices == r.counters["frontier_vertices"] > 0


def test_every_unit_registers_modes():
    # The parametrization above covers the units, not only the baseline.
    from golden.algorithms import MODES
    pairs = registered_modes()
    units = {MODES[p].__module__.split(".")[1] for p in pairs}
    assert units >= {"algorithms", "scu", "iru", "graphpeg", "mff", "emogi"}
    assert NO_VERTEX_COUNT <= set(pairs)


def test_per_kernel_work_matches_an_independent_count():
    # BFS on a 4x4 grid from a corner: every edge frontier fits in one warp, whose
    # culling removes the duplicates, so each vertex is expanded once, once per level.
    H = nx.grid_2d_graph(4, 4)
    r = run_algorithm(load_graph("grid:4x4", cache=False), "bfs", source=0)
    per = {k["name"]: (k["launches"], k["edges"], k["vertices"]) for k in r.gpu["kernels"]}
    assert per["bfs_expand"] == (nx.eccentricity(H, (0, 0)) + 1, 2 * H.number_of_edges(), H.number_of_nodes())
    assert per["bfs_contract"][1:] == (0, 0)
    # PageRank: every arc inspected by the push and every vertex expanded, every iteration.
    V, s, d, _ = raw_edges(True, 3)
    arcs = raw_simple_arcs(s, d, True)
    g = CSRGraph.from_edges(s, d, num_vertices=V, directed=True)
    r = run_algorithm(g, "pr", max_iter=7, tol=1e-30)
    per = {k["name"]: (k["launches"], k["edges"], k["vertices"]) for k in r.gpu["kernels"]}
    assert per["pr_push"] == (7, 7 * len(arcs), 0) and per["pr_contrib"] == (7, 0, 7 * V)
    assert per["pr_update"] == (7, 0, 0)
    # BC's forward pass: the out-arcs of every vertex reachable from the source, once.
    src = int(s[np.flatnonzero(s != d)[0]])
    G = nx.DiGraph(list(arcs))
    reach = nx.descendants(G, src) | {src}
    r = run_algorithm(g, "bc", source=src)
    fw = next(k for k in r.gpu["kernels"] if k["name"] == "bc_forward")
    assert (fw["edges"], fw["vertices"]) == (sum(G.out_degree(v) for v in reach), len(reach))
    # k-core peels every vertex once: every arc of the undirected graph, once.
    und = CSRGraph.from_edges(s, d, num_vertices=V, directed=False)
    U = nx.Graph([a for a in arcs])
    r = run_algorithm(und, "kcore")
    ex = next(k for k in r.gpu["kernels"] if k["name"] == "kcore_expand")
    assert (ex["edges"], ex["vertices"]) == (2 * U.number_of_edges(), V)


def test_source_is_rejected_where_there_is_none():
    g = graph("kron10")
    for algo in ("pr", "cc", "kcore"):
        with pytest.raises(AlgorithmError, match=f"^{algo} has no source vertex"):
            run_algorithm(g, algo, source=1)
    assert run_algorithm(g, "pr", source=None, max_iter=1).iterations == 1


# ---------------------------------------------------------------------- audit: options, inputs, overflow
@pytest.mark.parametrize("algo, mode, options, bad", [
    ("pr", "baseline", {"dampng": 0.5}, "'dampng'"),
    ("bfs", "baseline", {"nope": 1}, "'nope'"),
    ("bfs", "scu", {"edge_bytes": 4}, "'edge_bytes'"),
    ("bfs", "baseline", {"delta": 2.0}, "'delta'"),
    ("cc", "pull", {"tol": 1e-3, "max_iter": 5}, "'tol', 'max_iter'"),
    ("kcore", "baseline", {"graphpeg": "sim"}, "'graphpeg'"),
])
def test_unknown_options_are_errors_naming_the_allowed_ones(algo, mode, options, bad):
    g = load_graph("grid:4x4", cache=False)
    with pytest.raises(AlgorithmError) as e:
        run_algorithm(g, algo, mode, stats=False, **options)
    msg = str(e.value)
    assert msg.startswith(f"{algo} in mode {mode} takes no option {bad}; its options: ") and "source" in msg, msg


def test_every_option_a_mode_reads_is_accepted():
    """Every option name that a registered mode's classes read literally from
    self.options (``.get("x")``, ``["x"]``, ``"x" in``) is one it accepts: the
    declarations (Algorithm.option_names, the descriptors' options) cannot fall behind
    the code and reject a legitimate caller."""
    import ast
    import inspect
    import textwrap

    from golden.algorithms import ALGORITHMS, MODES, modes_for

    def literal_reads(cls) -> set:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError):            # made with type(): no source of its own
            return set()
        aliases = {"options"}
        for node in ast.walk(tree):             # o = self.options
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "options":
                aliases |= {t.id for t in node.targets if isinstance(t, ast.Name)}

        def is_opts(n) -> bool:
            return (isinstance(n, ast.Attribute) and n.attr == "options") or \
                (isinstance(n, ast.Name) and n.id in aliases)
        out = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("get", "pop") and is_opts(node.func.value) and node.args and \
                    isinstance(node.args[0], ast.Constant):
                out.add(node.args[0].value)
            elif isinstance(node, ast.Subscript) and is_opts(node.value) and isinstance(node.slice, ast.Constant):
                out.add(node.slice.value)
            elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and \
                    isinstance(node.ops[0], ast.In) and is_opts(node.comparators[0]):
                out.add(node.left.value)
        return out

    for a in ALGORITHMS:
        modes_for(a)
    assert len(MODES) > len(ALGORITHMS)
    for (algo, mode), cls in MODES.items():
        read = set().union(*(literal_reads(c) for c in cls.__mro__ if c.__module__.startswith("golden.")))
        assert read <= cls.accepted_options(), \
            (algo, mode, read - cls.accepted_options())


def test_callers_options_are_accepted():
    # what sim/cosim.py, the report and benchmarks pass to the unit modes
    from golden.algorithms import check_options
    from golden.iru import IRUConfig
    check_options("bfs", "iru", {"iru": IRUConfig.preset("gtx980"), "iru_exact": True, "backend": None})
    check_options("pr", "mff", {"mff": "gtx480", "compare_baseline": False, "pc_size": 2, "damping": 0.5})
    check_options("bfs", "graphpeg", {"graphpeg": "default", "compare_baseline": False, "latency": 3})
    check_options("sssp", "scu-enhanced", {"scu": "gtx980", "group": False, "delta": 2.0, "source": 0})
    check_options("bfs", "uvm", {"uvm_capacity": "0.5", "pcie": "pcie3-x16", "edge_bytes": 4})


@pytest.mark.parametrize("options, message", [
    ({"source": -1}, "source must be a vertex id (an integer >= 0), not -1"),
    ({"source": True}, "not True"),
    ({"source": 1.0}, "not 1.0"),
])
def test_check_options_without_a_graph(options, message):
    from golden.algorithms import check_options
    with pytest.raises(AlgorithmError, match=re.escape(message)):
        check_options("bfs", "baseline", options)
    for opts, msg in [({"damping": 2.0}, "damping must be in (0, 1)"), ({"max_iter": 0}, "max_iter must be"),
                      ({"tol": 0.0}, "tol must be"), ({"source": 1}, "pr has no source vertex")]:
        with pytest.raises(AlgorithmError, match=re.escape(msg)):
            check_options("pr", "baseline", opts)
    with pytest.raises(AlgorithmError, match="delta must be"):
        check_options("sssp", "baseline", {"delta": -1.0})
    check_options("pr", "baseline", {"damping": 0.5, "max_iter": 1, "tol": 1e-3, "source": None})


@pytest.mark.parametrize("source", [True, False, np.bool_(True)])
def test_bool_source_is_not_a_vertex(source):
    g = load_graph("grid:4x4", cache=False)
    with pytest.raises(AlgorithmError, match="source must be a vertex id"):
        run_algorithm(g, "bfs", source=source, stats=False)


def test_bad_graph_or_gpu_is_a_clear_type_error():
    g = load_graph("grid:4x4", cache=False)
    with pytest.raises(TypeError, match="run_algorithm needs a CSRGraph .*, not NoneType"):
        run_algorithm(None, "bfs")
    with pytest.raises(TypeError, match="gpu must be a GPUConfig or a preset name, not 5"):
        run_algorithm(g, "bfs", gpu=5)
    with pytest.raises(AlgorithmError, match="unknown algorithm"):
        run_algorithm(g, ["bfs"])


@pytest.mark.parametrize("mode", ["baseline", "emogi-merged", "pull"])
def test_sssp_path_cost_overflow_is_an_error(mode, recwarn):
    g = CSRGraph.from_edges([0, 1, 2], [1, 2, 3], [1e308, 1e308, 1.0], directed=True)
    with pytest.raises(AlgorithmError, match=r"^sssp: the path cost of vertex 2 exceeds the float64 range"):
        run_algorithm(g, "sssp", mode, source=0)
    assert not [w for w in recwarn if "overflow" in str(w.message)]
    # large but representable: every reachable vertex has a finite distance
    ok = CSRGraph.from_edges([0, 1], [1, 2], [1e307, 1e307], directed=True)
    assert np.isfinite(run_algorithm(ok, "sssp", mode, source=0).values).all()


def test_mode_speed_benchmark_times_every_mode_against_the_baseline(tmp_path, capsys):
    """benchmarks/mode_speed.py: each mode in its own process, its wall time and
    modelled edges over the baseline's; a run past the limit is reported, not
    waited for; bad arguments are one-line errors."""
    import json

    from conftest import load_script
    bench = load_script("benchmarks/mode_speed.py")
    assert bench.main(["--algos", "nope"]) == 2
    assert "unknown algorithm 'nope'" in capsys.readouterr().err
    assert bench.main(["--timeout", "0"]) == 2
    assert bench.main(["--graphs", "kron:scale=x"]) == 2
    assert "scale must be an integer (decimal, or hexadecimal with 0x)" in capsys.readouterr().err
    assert bench.main(["--graphs", "nowhere.mtx"]) == 2
    assert "no such file" in capsys.readouterr().err
    out = tmp_path / "speed.json"
    assert bench.main(["--graphs", "grid:6x6", "--algos", "bfs", "--modes", "scu,pull,mff", "--timeout", "120",
                       "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["mode"] for r in rows] == ["baseline", "mff", "pull", "scu"]
    base = rows[0]
    assert base["vs_baseline"] == 1.0 and base["edges"] > 0
    for r in rows[1:]:
        assert r["vs_baseline"] == pytest.approx(r["wall_s"] / base["wall_s"])
        assert r["edges_vs_baseline"] == pytest.approx(r["edges"] / base["edges"])
    # the MFF runs pull for its speedup: timed again without it; the others have no reference
    by = {r["mode"]: r for r in rows}
    assert by["mff"]["reference"] and not by["pull"]["reference"] and not by["scu"]["reference"]
    own = by["mff"]["own"]
    assert own["reference"] is False and own["edges"] == by["mff"]["edges"]
    assert by["mff"]["own_vs_baseline"] == pytest.approx(own["wall_s"] / base["wall_s"])
    assert by["pull"]["own"] is None and by["scu"]["own"] is None
    assert "grid:6x6" in capsys.readouterr().out
    # a run that cannot finish in time is reported as such
    r = bench.timed("grid:64x64", "bfs", "iru", 0.05)
    assert r == {"timeout": 0.05}


def test_warp_culling_keeps_the_first_active_lane_of_each_value():
    """first_in_warp against a plain loop over each warp's lanes (random values,
    activity and warp sizes, a partial last warp); bad arguments are refused."""
    from golden.algorithms.common import first_in_warp
    rng = np.random.default_rng(3)
    for case in range(200):
        warp = int(rng.choice([1, 4, 32]))
        n = int(rng.integers(0, 200))
        v = rng.integers(0, int(rng.choice([2, 40, 1 << 40])), n)
        act = rng.random(n) < 0.6 if case % 2 else None
        want = np.zeros(n, bool)
        for w in range(0, n, warp):
            seen = set()
            for j in range(w, min(w + warp, n)):
                if (act is None or act[j]) and v[j] not in seen:
                    seen.add(v[j])
                    want[j] = True
        assert np.array_equal(first_in_warp(v, act, warp), want), case
    with pytest.raises(ValueError, match="power of two"):
        first_in_warp(np.arange(4), warp=24)
    with pytest.raises(ValueError, match="values in"):
        first_in_warp(np.array([-1, 2]))


def test_sssp_refuses_negative_or_infinite_weights_in_every_mode():
    """Every SSSP mode (baseline, units and their references) refuses weights its
    algorithm cannot take, naming the graph and the first such edge."""
    from golden.algorithms import modes_for
    g = CSRGraph.from_edges([0, 1, 2], [1, 2, 0], [2.0, -3.0, np.inf], name="neg")
    modes = modes_for("sssp")
    assert {"baseline", "scu", "iru", "graphpeg", "mff", "emogi-merged"} <= set(modes)
    for mode in modes:
        with pytest.raises(AlgorithmError, match=re.escape("sssp needs finite, non-negative edge weights: neg has -3 "
                                                           "on the edge 1 -> 2 (2 such edges)")):
            run_algorithm(g, "sssp", mode, source=0)
    inf_only = CSRGraph.from_edges([0], [1], [np.inf], name="far")
    with pytest.raises(AlgorithmError, match=r"far has inf on the edge 0 -> 1 \(1 such edge\)$"):
        run_algorithm(inf_only, "sssp", "baseline", source=0)
