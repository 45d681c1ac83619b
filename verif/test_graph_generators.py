"""The dataset-like generators (golden/graphs/generators.py: delaunay, road, powerlaw,
mesh; docs/datasets.md): their properties checked with scipy / networkx, their spec
strings, error messages and cache keys."""
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, shortest_path
from scipy.spatial import ConvexHull, Delaunay

from golden.graphs import GraphError, delaunay, kron, load_graph, mesh, parse_spec, powerlaw, road, urand
from golden.graphs import spec as spec_module


def _matrix(g, weights=False):
    data = g.weight if weights else np.ones(g.num_edges)
    return sp.csr_matrix((data, g.col, g.row_ptr), shape=(g.num_vertices, g.num_vertices))


def _edge_set(g):
    """Undirected edges as a set of (min, max) pairs."""
    s, d = g.src(), g.col.astype(np.int64)
    keep = s < d
    return set(zip(s[keep].tolist(), d[keep].tolist()))


def _same(a, b):
    return (np.array_equal(a.row_ptr, b.row_ptr) and np.array_equal(a.col, b.col)
            and (a.weight is None) == (b.weight is None) and (a.weight is None or np.array_equal(a.weight, b.weight)))


def _ecc(m, v):
    """Eccentricity of ``v`` within its component and the farthest vertex (BFS by scipy)."""
    d = shortest_path(m, indices=[v], unweighted=True, directed=False)[0]
    d[np.isinf(d)] = -1
    return int(d.max()), int(d.argmax())


# ---------------------------------------------------------------------- delaunay
def test_delaunay_is_the_triangulation_of_its_points():
    g = delaunay(10, seed=3)
    V = g.num_vertices
    pts = g.meta["points"]
    assert V == 1024 and pts.shape == (V, 2) and not g.directed and g.weight is None
    assert pts.min() >= 0 and pts.max() < 1
    E = g.num_edges // 2
    h = len(ConvexHull(pts).vertices)
    assert E <= 3 * V - 6
    assert E == 3 * V - 3 - h                     # Euler: a triangulation of points in general position
    tri = Delaunay(pts)
    assert len(tri.coplanar) == 0                 # every point is a vertex of the triangulation
    ref = set()
    for a, b in ((0, 1), (1, 2), (2, 0)):
        u, v = tri.simplices[:, a], tri.simplices[:, b]
        ref |= set(zip(np.minimum(u, v).tolist(), np.maximum(u, v).tolist()))
    assert _edge_set(g) == ref
    assert connected_components(_matrix(g), directed=False)[0] == 1
    G = nx.Graph(list(_edge_set(g)))
    assert nx.check_planarity(G)[0]
    assert 5.8 < g.degrees().mean() < 6.0         # 2E / V = 6 - (6 + 2h) / V


def test_delaunay_sorted_order_is_the_same_graph_with_local_ids():
    a = delaunay(10, seed=3)
    b = delaunay(10, seed=3, order="sorted")
    pa, pb = a.meta["points"], b.meta["points"]
    # b's vertex i is a's vertex perm[i]: the same point.
    ia, ib = np.lexsort(pa.T[::-1]), np.lexsort(pb.T[::-1])
    assert np.array_equal(pa[ia], pb[ib])
    perm = np.empty(len(pb), np.int64)
    perm[ib] = ia
    assert {tuple(sorted((int(perm[u]), int(perm[v])))) for u, v in _edge_set(b)} == _edge_set(a)
    assert not np.array_equal(perm, np.arange(len(perm)))
    # Consecutive ids are close in the plane (a space-filling curve); generation order is not.
    step_b = np.linalg.norm(np.diff(pb, axis=0), axis=1).mean()
    step_a = np.linalg.norm(np.diff(pa, axis=0), axis=1).mean()
    assert step_b < 0.1 and step_a > 0.4
    # Neighbours get nearby ids.
    assert np.abs(b.src() - b.col).mean() < np.abs(a.src() - a.col).mean() / 5


def test_delaunay_determinism():
    assert _same(delaunay(8, seed=5), delaunay(8, seed=5))
    assert not _same(delaunay(8, seed=5), delaunay(8, seed=6))
    assert delaunay(2).num_vertices == 4


# ---------------------------------------------------------------------- road
def test_road_connected_sparse_weighted():
    g = road(48, 64, seed=5)
    V = g.num_vertices
    assert V == 48 * 64 and not g.directed and g.weighted
    assert connected_components(_matrix(g), directed=False)[0] == 1
    deg = g.degrees()
    assert 2.4 <= deg.mean() <= 2.8               # arcs per vertex, as road networks
    assert deg.min() >= 1 and deg.max() <= 8
    w = _matrix(g, weights=True)
    assert abs(w - w.T).max() == 0                # symmetric, both arcs the same weight
    assert g.weight.min() >= 1 and g.weight.max() <= 255 and np.array_equal(g.weight, np.round(g.weight))
    # Edges only between grid neighbours (including cell diagonals), vertex r * cols + c.
    (r1, c1), (r2, c2) = np.divmod(g.src(), 64), np.divmod(g.col.astype(np.int64), 64)
    assert np.abs(r1 - r2).max() <= 1 and np.abs(c1 - c2).max() <= 1


def test_road_diameter_is_large():
    r = road(64, 64, seed=1)
    m = _matrix(r)
    _, far = _ecc(m, 0)
    lower, _ = _ecc(m, far)                       # a lower bound on the diameter
    assert lower >= 100                            # the 64 x 64 grid's is 126
    k = kron(12, 2, seed=1)                        # about as many arcs per vertex
    mk = _matrix(k)
    _, labels = connected_components(mk, directed=False)
    v = int(np.flatnonzero(labels == np.bincount(labels).argmax())[0])
    upper = 2 * _ecc(mk, v)[0]                     # an upper bound on the giant component's diameter
    assert lower > 5 * upper


def test_road_small_and_deterministic():
    assert road(1, 1).num_edges == 0
    p = road(1, 7, seed=3)                        # a path: its own spanning tree
    assert _edge_set(p) == {(i, i + 1) for i in range(6)}
    assert _same(road(20, 30, seed=2), road(20, 30, seed=2))
    assert not _same(road(20, 30, seed=2), road(20, 30, seed=3))


# ---------------------------------------------------------------------- powerlaw
def _ccdf_slope(deg, lo, hi):
    ks = np.arange(lo, hi + 1)
    ccdf = np.array([(deg >= k).mean() for k in ks])
    return np.polyfit(np.log(ks), np.log(ccdf), 1)[0]


@pytest.mark.parametrize("exponent", [21, 25, 30])
def test_powerlaw_degrees(exponent):
    scale, ef = 15, 16
    g = powerlaw(scale, ef, exponent, seed=3)
    n, m = 1 << scale, ef << scale
    assert g.num_vertices == n and not g.directed
    assert 0.95 * m <= g.num_edges // 2 <= m      # a few duplicates and loops dropped
    deg = g.degrees()
    mean = deg.mean()
    assert deg.max() > 20 * mean                  # heavy tail
    assert deg.max() < 1.5 * np.sqrt(2 * m)       # the structural cut-off
    gamma = exponent / 10
    slope = _ccdf_slope(deg, int(2 * mean), int(deg.max() / 4))
    assert abs(slope + (gamma - 1)) < 0.3, slope  # P(D >= k) ~ k ** -(gamma - 1)
    assert g.meta["gamma"] == gamma


def test_powerlaw_against_urand():
    p, u = powerlaw(14, 8, seed=1), urand(14, 8, seed=1)
    assert p.degrees().max() > 10 * u.degrees().max()
    assert _same(powerlaw(12, 4, 25, seed=7), powerlaw(12, 4, 25, seed=7))
    assert not _same(powerlaw(12, 4, 25, seed=7), powerlaw(12, 4, 25, seed=8))


# ---------------------------------------------------------------------- mesh
@pytest.mark.parametrize("dofs", [1, 2, 3])
def test_mesh_against_coordinates(dofs):
    R, C, L = 4, 5, 3
    g = mesh(R, C, L, dofs)
    l, r, c = np.meshgrid(np.arange(L), np.arange(R), np.arange(C), indexing="ij")
    xyz = np.stack([l.ravel(), r.ravel(), c.ravel()], axis=1)          # point (l * R + r) * C + c
    cheb = np.abs(xyz[:, None, :] - xyz[None, :, :]).max(axis=2)
    near = (cheb <= 1).astype(int)                                       # neighbours and itself
    want = np.kron(near, np.ones((dofs, dofs), int)) - np.eye(R * C * L * dofs, dtype=int)
    assert np.array_equal(_matrix(g).toarray().astype(int), want)
    assert g.degrees().max() == 27 * dofs - 1    # an interior point


def test_mesh_interior_degree():
    g = mesh(5, 5, 5, 2)
    assert g.degrees().max() == 53 and g.degrees()[(((2 * 5) + 2) * 5 + 2) * 2] == 53
    assert mesh(1, 1, 1).num_edges == 0 and mesh(1, 1, 1, 3).num_edges == 6


# ---------------------------------------------------------------------- specs
def test_new_specs_parse_and_load():
    assert parse_spec("delaunay:scale=12") == ("delaunay", {"scale": 12, "seed": 1, "order": "random"})
    assert parse_spec("delaunay:scale=12,order=sorted,seed=3") == \
        ("delaunay", {"scale": 12, "seed": 3, "order": "sorted"})
    assert parse_spec("road:843x843") == ("road", {"rows": 843, "cols": 843, "seed": 1})
    assert parse_spec("powerlaw:scale=18,exponent=25") == \
        ("powerlaw", {"scale": 18, "edgefactor": 16, "exponent": 25, "seed": 1})
    assert parse_spec("mesh:59x59x59,dofs=2") == ("mesh", {"rows": 59, "cols": 59, "layers": 59, "dofs": 2})
    g = load_graph("delaunay:scale=6", cache=False)
    assert g.name == "delaunay:scale=6,seed=1,order=random" and g.num_vertices == 64
    assert _same(g, delaunay(6))
    r = load_graph("road:8x9,seed=2", cache=False)
    assert r.name == "road:8x9,seed=2" and _same(r, road(8, 9, seed=2))
    p = load_graph("powerlaw:scale=8,edgefactor=4", cache=False)
    assert p.name == "powerlaw:scale=8,edgefactor=4,exponent=21,seed=1" and _same(p, powerlaw(8, 4))
    m = load_graph("mesh:3x4x5", cache=False)
    assert m.name == "mesh:3x4x5,dofs=1" and _same(m, mesh(3, 4, 5))
    w = load_graph("delaunay:scale=5", weighted=True, cache=False)
    assert w.weighted


def test_canonical_names_of_the_old_generators_unchanged():
    # The cache is keyed on these strings: entries written before stay valid.
    assert spec_module._canonical(*parse_spec("kron:scale=14")) == "kron:scale=14,edgefactor=16,seed=1"
    assert spec_module._canonical(*parse_spec("urand:seed=2,scale=3")) == "urand:scale=3,edgefactor=16,seed=2"
    assert spec_module._canonical(*parse_spec("grid:4x5")) == "grid:4x5,seed=1"


def test_cache_keys_on_every_parameter(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHUNITS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(spec_module, "CACHE_MIN_EDGES", 0)
    specs = ["delaunay:scale=7", "delaunay:scale=7,order=sorted", "road:9x9", "road:9x9,seed=2",
             "powerlaw:scale=7", "powerlaw:scale=7,exponent=30", "mesh:3x3x3", "mesh:3x3x3,dofs=2"]
    first = [load_graph(s) for s in specs]
    assert len(list(tmp_path.glob("*.npz"))) == len(specs)
    again = [load_graph(s) for s in specs]        # read back from the cache
    assert len(list(tmp_path.glob("*.npz"))) == len(specs)
    for a, b in zip(first, again):
        assert _same(a, b) and a.name == b.name
    assert _same(load_graph("delaunay:seed=1,order=random,scale=7"), first[0])


@pytest.mark.parametrize("spec, message", [
    ("delaunay:seed=2", "graph spec 'delaunay:seed=2': delaunay needs scale=N"),
    ("delaunay:scale=1", "graph spec 'delaunay:scale=1': delaunay scale must be an integer in [2, 24], not 1"),
    ("delaunay:scale=25", "delaunay scale must be an integer in [2, 24], not 25"),
    ("delaunay:scale=5,order=hilbert", "graph spec 'delaunay:scale=5,order=hilbert': "
                                       "delaunay order must be one of random, sorted, not 'hilbert'"),
    ("delaunay:scale=5,order=", "delaunay order must be one of random, sorted, not ''"),
    ("delaunay:scale=5,edgefactor=2", "graph spec 'delaunay:scale=5,edgefactor=2': delaunay has no parameter "
                                      "'edgefactor'; parameters: scale, seed, order"),
    ("delaunay:scale=5,order=sorted,order=random", "order is given twice"),
    ("delaunay:scale=5,seed=-1", "delaunay seed must be an integer in [0, 9223372036854775807], not -1"),
    ("road:5", "graph spec 'road:5': expected road:ROWSxCOLS[,seed=N], e.g. road:843x843"),
    ("road:5x5x5", "expected road:ROWSxCOLS[,seed=N], e.g. road:843x843"),
    ("road:seed=1", "expected road:ROWSxCOLS[,seed=N]"),
    ("road:0x5", "graph spec 'road:0x5': road rows must be an integer in [1, 16384], not 0"),
    ("road:5x16385", "road cols must be an integer in [1, 16384], not 16385"),
    ("road:5xfive", "graph spec 'road:5xfive': cols must be an integer (decimal, or hexadecimal with 0x), "
                    "not 'five'"),
    ("road:4x4,scale=3", "road has no parameter 'scale'; parameters: seed"),
    ("road:4x4,rows=3", "road has no parameter 'rows'; parameters: seed"),
    ("road:4x4,seed=1,seed=2", "graph spec 'road:4x4,seed=1,seed=2': seed is given twice"),
    ("powerlaw:scale=10,exponent=2.1", "graph spec 'powerlaw:scale=10,exponent=2.1': exponent must be an integer "
                                       "in tenths (exponent=21 is 2.1), not '2.1'"),
    ("powerlaw:scale=10,exponent=14", "powerlaw exponent must be an integer in [15, 40], not 14"),
    ("powerlaw:scale=10,exponent=41", "powerlaw exponent must be an integer in [15, 40], not 41"),
    ("powerlaw:scale=29", "powerlaw scale must be an integer in [1, 28], not 29"),
    ("powerlaw:scale=10,edgefactor=0", "powerlaw edgefactor must be an integer in [1, 1024], not 0"),
    ("powerlaw:scale=10,gamma=2", "powerlaw has no parameter 'gamma'; parameters: scale, edgefactor, exponent, seed"),
    ("powerlaw:scale=10,scale=11", "scale is given twice"),
    ("mesh:4x4", "graph spec 'mesh:4x4': expected mesh:ROWSxCOLSxLAYERS[,dofs=K], e.g. mesh:64x64x64"),
    ("mesh:4x4x1025", "mesh layers must be an integer in [1, 1024], not 1025"),
    ("mesh:4x4x4,dofs=9", "mesh dofs must be an integer in [1, 8], not 9"),
    ("mesh:4x4x4,seed=1", "mesh has no parameter 'seed'; parameters: dofs"),
    ("mesh:4x4x4,dofs", "expected KEY=VALUE, not 'dofs'"),
])
def test_bad_new_specs(spec, message):
    with pytest.raises(GraphError) as e:
        parse_spec(spec)
    assert message in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(GraphError) as e:
        load_graph(spec, cache=False)
    assert message in str(e.value)


@pytest.mark.parametrize("call, message", [
    (lambda: delaunay(1), "delaunay scale must be an integer in [2, 24], not 1"),
    (lambda: delaunay(4, order="hilbert"), "delaunay order must be one of random, sorted, not 'hilbert'"),
    (lambda: delaunay(4, order=1), "delaunay order must be one of random, sorted, not 1"),
    (lambda: road(0, 3), "road rows must be an integer in [1, 16384], not 0"),
    (lambda: road(3, 3, seed=1.5), "road seed must be an integer in [0, 9223372036854775807], not 1.5"),
    (lambda: powerlaw(8, exponent=2.1), "powerlaw exponent must be an integer in [15, 40], not 2.1"),
    (lambda: mesh(2, 2, 2, dofs=0), "mesh dofs must be an integer in [1, 8], not 0"),
    (lambda: mesh(2, True, 2), "mesh cols must be an integer in [1, 1024], not True"),
])
def test_bad_generator_arguments(call, message):
    with pytest.raises(GraphError) as e:
        call()
    assert str(e.value) == message
