"""Seeded synthetic graphs (docs/golden.md, "Graphs").

* :func:`kron` — Kronecker / R-MAT as the Graph500 reference generator builds it
  (a = 0.57, b = 0.19, c = 0.19, d = 0.05): ``edgefactor * 2**scale`` edges, one
  quadrant choice per bit, then a random permutation of the vertex ids; undirected.
  The papers' ``kron`` graphs (SCU Table 5: kron_g500-logn18; GraphPEG: logn17;
  EMOGI GK) have this shape.
* :func:`urand` — ``edgefactor * 2**scale`` edges between uniformly random end
  points (gapbs ``-u``; EMOGI's GU); undirected.
* :func:`grid` — an ``R x C`` four-neighbour grid with integer weights in
  ``[1, 255]`` hashed from the end points and the seed (:func:`edge_weights`): a
  road-like graph (large diameter, degree <= 4); undirected.
* :func:`delaunay` — the Delaunay triangulation of ``2**scale`` uniformly random
  points in the unit square, as the DIMACS10 ``delaunay_nXX`` graphs were built
  (SCU Table 5: delaunay_n19); ids in generation order or along a Hilbert curve.
* :func:`road` — an ``R x C`` grid thinned to a random spanning tree plus some of
  its other edges and a few cell diagonals: about 2.6 arcs per vertex like the
  DIMACS/SNAP road networks (GraphPEG's USAC), weights in ``[1, 255]``.
* :func:`powerlaw` — a Chung-Lu graph with a power-law expected degree sequence
  (social / co-purchase / web-like inputs: com-amazon, Amazon0601, Friendster).
* :func:`mesh` — a 3-D structured grid, each point joined to its 26 neighbours,
  optionally with several vertices (degrees of freedom) per point: a FEM-matrix-
  like graph (msdoor).

docs/datasets.md compares each with the papers' datasets.

Self loops and duplicate edges that the generators draw are removed by
:meth:`CSRGraph.from_edges`, as Graph500 and gapbs do when they build CSR.
"""
from __future__ import annotations

import numpy as np

from .csr import CSRGraph, GraphError, edge_weights

__all__ = ["kron", "urand", "grid", "delaunay", "road", "powerlaw", "mesh", "GRAPH500_ABC", "LIMITS",
           "CHOICES", "check_params"]

#: Graph500 initiator probabilities a, b, c (d = 1 - a - b - c).
GRAPH500_ABC = (0.57, 0.19, 0.19)


#: Generator -> parameter -> the allowed range ``(lo, hi)`` of the integer value
#: (checked by the generators and, before anything is generated, by
#: :func:`golden.graphs.spec.parse_spec`).
LIMITS = {
    "kron": {"scale": (1, 28), "edgefactor": (1, 1024), "seed": (0, 2**63 - 1)},
    "urand": {"scale": (1, 28), "edgefactor": (1, 1024), "seed": (0, 2**63 - 1)},
    "grid": {"rows": (1, 1 << 14), "cols": (1, 1 << 14), "seed": (0, 2**63 - 1)},
    "delaunay": {"scale": (2, 24), "seed": (0, 2**63 - 1)},
    "road": {"rows": (1, 1 << 14), "cols": (1, 1 << 14), "seed": (0, 2**63 - 1)},
    "powerlaw": {"scale": (1, 28), "edgefactor": (1, 1024), "exponent": (15, 40), "seed": (0, 2**63 - 1)},
    "mesh": {"rows": (1, 1 << 10), "cols": (1, 1 << 10), "layers": (1, 1 << 10), "dofs": (1, 8)},
}

#: Generator -> parameter -> its allowed words (parameters that are not integers).
CHOICES = {
    "delaunay": {"order": ("random", "sorted")},
}


def check_params(kind: str, params: dict) -> None:
    """Every parameter of generator ``kind`` in its :data:`LIMITS` range, or one of
    its :data:`CHOICES` (``GraphError``)."""
    for key, (lo, hi) in LIMITS[kind].items():
        if key in params:
            _check(f"{kind} {key}", params[key], lo, hi)
    for key, words in CHOICES.get(kind, {}).items():
        if key in params and (not isinstance(params[key], str) or params[key] not in words):
            raise GraphError(f"{kind} {key} must be one of {', '.join(words)}, not {params[key]!r}")


def _check(name, value, lo, hi):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise GraphError(f"{name} must be an integer in [{lo}, {hi}], not {value!r}")


def kron(scale: int, edgefactor: int = 16, seed: int = 1, *, a: float = GRAPH500_ABC[0],
         b: float = GRAPH500_ABC[1], c: float = GRAPH500_ABC[2], name: str | None = None) -> CSRGraph:
    """Graph500 Kronecker graph with ``2**scale`` vertices."""
    check_params("kron", {"scale": scale, "edgefactor": edgefactor, "seed": seed})
    if not (0 < a and 0 <= b and 0 <= c and a + b + c < 1):
        raise GraphError(f"kron needs a > 0, b, c >= 0 and a + b + c < 1, not a={a}, b={b}, c={c}")
    rng = np.random.default_rng(seed)
    n = 1 << scale
    m = edgefactor * n
    ab = a + b
    c_norm = c / (1.0 - ab)
    a_norm = a / ab
    src = np.zeros(m, np.int64)
    dst = np.zeros(m, np.int64)
    for bit in range(scale):
        ii = rng.random(m) > ab
        jj = rng.random(m) > np.where(ii, c_norm, a_norm)
        src |= ii.astype(np.int64) << bit
        dst |= jj.astype(np.int64) << bit
    perm = rng.permutation(n)
    return CSRGraph.from_edges(perm[src], perm[dst], num_vertices=n, directed=False,
                               name=name or f"kron{scale}",
                               meta={"generator": "kron", "scale": scale, "edgefactor": edgefactor, "seed": seed})


def urand(scale: int, edgefactor: int = 16, seed: int = 1, *, name: str | None = None) -> CSRGraph:
    """Uniform random graph with ``2**scale`` vertices."""
    check_params("urand", {"scale": scale, "edgefactor": edgefactor, "seed": seed})
    rng = np.random.default_rng(seed)
    n = 1 << scale
    m = edgefactor * n
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    return CSRGraph.from_edges(src, dst, num_vertices=n, directed=False, name=name or f"urand{scale}",
                               meta={"generator": "urand", "scale": scale, "edgefactor": edgefactor, "seed": seed})


def grid(rows: int, cols: int, seed: int = 1, *, name: str | None = None) -> CSRGraph:
    """``rows x cols`` four-neighbour grid, vertex ``r * cols + c``, weights in [1, 255]."""
    check_params("grid", {"rows": rows, "cols": cols, "seed": seed})
    ids = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    w = edge_weights(src, dst, seed, 1, 255, False, rows * cols)
    return CSRGraph.from_edges(src, dst, w, num_vertices=rows * cols, directed=False,
                               name=name or f"grid{rows}x{cols}",
                               meta={"generator": "grid", "rows": rows, "cols": cols, "seed": seed})


# ---------------------------------------------------------------------- delaunay
def _hilbert_index(x: np.ndarray, y: np.ndarray, bits: int) -> np.ndarray:
    """Position of the cells ``(x, y)`` (integers below ``2**bits``) along the
    Hilbert curve through the ``2**bits x 2**bits`` grid (the classic ``xy2d``)."""
    x = x.astype(np.int64)
    y = y.astype(np.int64)
    d = np.zeros(x.shape, np.int64)
    n = 1 << bits
    s = n >> 1
    while s:
        rx = (x & s) > 0
        ry = (y & s) > 0
        d += s * s * ((3 * rx.astype(np.int64)) ^ ry.astype(np.int64))
        flip = ~ry & rx                      # rotate the quadrant: reflect, then swap x and y
        x = np.where(flip, n - 1 - x, x)
        y = np.where(flip, n - 1 - y, y)
        x, y = np.where(~ry, y, x), np.where(~ry, x, y)
        s >>= 1
    return d


def delaunay(scale: int, seed: int = 1, order: str = "random", *, name: str | None = None) -> CSRGraph:
    """Delaunay triangulation of ``2**scale`` uniformly random points in the unit
    square (``scipy.spatial.Delaunay``); the edges are the triangles' sides; undirected.

    This is how the DIMACS10 ``delaunay_nXX`` graphs were made (2**XX random points
    in the unit square), so ``delaunay(19)`` is a delaunay_n19 with other points:
    V = 524,288 and E = 3V - 3 - h undirected edges (h: the convex hull's size, a few
    dozen), about 6 arcs per vertex. Vertex ``i`` is the ``i``-th point drawn
    (``order="random"``, generation order, no locality: a vertex's neighbours have
    unrelated ids) or, with ``order="sorted"``, the points are numbered along a
    Hilbert curve through the square (quantised to a 2**16 x 2**16 grid; ties by
    generation order), so neighbours in the plane get nearby ids, as in a
    bandwidth-reduced (locality-ordered) mesh file. ``meta["points"]`` holds the
    points (row ``i`` is vertex ``i``; a graph read back from the ``.npz`` cache has
    no ``meta``).
    """
    check_params("delaunay", {"scale": scale, "seed": seed, "order": order})
    from scipy.spatial import Delaunay, QhullError     # scipy.spatial only when needed

    n = 1 << scale
    rng = np.random.default_rng(seed)
    pts = rng.random((n, 2))
    try:
        tri = Delaunay(pts)
    except QhullError as e:                   # degenerate input (never for random points)
        raise GraphError(f"delaunay scale={scale} seed={seed}: qhull failed: {str(e).splitlines()[0]}") from None
    simp = tri.simplices.astype(np.int64)
    src = np.concatenate([simp[:, 0], simp[:, 1], simp[:, 2]])
    dst = np.concatenate([simp[:, 1], simp[:, 2], simp[:, 0]])
    if order == "sorted":
        q = np.minimum((pts * 65536).astype(np.int64), 65535)
        seq = np.argsort(_hilbert_index(q[:, 0], q[:, 1], 16), kind="stable")   # the points along the curve
        rank = np.empty(n, np.int64)
        rank[seq] = np.arange(n)
        src, dst, pts = rank[src], rank[dst], pts[seq]
    return CSRGraph.from_edges(src, dst, num_vertices=n, directed=False, name=name or f"delaunay{scale}",
                               meta={"generator": "delaunay", "scale": scale, "seed": seed, "order": order,
                                     "points": pts})


# ---------------------------------------------------------------------- road
#: Of the grid edges outside the random spanning tree, the fraction :func:`road` keeps.
ROAD_KEEP = 0.22
#: The fraction of grid cells that :func:`road` gives a diagonal.
ROAD_DIAGONAL = 0.08


def road(rows: int, cols: int, seed: int = 1, *, name: str | None = None) -> CSRGraph:
    """Road-network-like graph on an ``rows x cols`` grid of intersections, vertex
    ``r * cols + c``, weights in [1, 255]; undirected.

    Start from the four-neighbour grid; keep a random spanning tree of it (the
    minimum spanning tree for a random permutation of the edges as weights, so the
    graph stays connected), each other grid edge with probability
    :data:`ROAD_KEEP` (0.22) and add a diagonal to each cell with probability
    :data:`ROAD_DIAGONAL` (0.08, either direction). That is about
    ``2 * (1 + 0.22 + 0.08) = 2.6`` arcs per vertex (GraphPEG's USA-road-d.CAL: 2.6;
    DIMACS USA-road-d.CAL 2.45, SNAP roadNet-CA 2.82), degree at most 8 (mostly 1-4),
    one component, and a hop diameter close to the grid's ``rows + cols - 2`` (the
    diagonals shorten some paths, the dropped edges lengthen others: about 0.93 times
    it at 843 x 843 and 1375 x 1375): 2,562 at USA-road-d.CAL's size, which has 2,315;
    SNAP's roadNet-CA has 865 (docs/datasets.md).
    Weights are :func:`edge_weights` of the end points and the seed, as for
    :func:`grid`: uniform in [1, 255], unrelated to the geometry.
    """
    check_params("road", {"rows": rows, "cols": cols, "seed": seed})
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import minimum_spanning_tree

    rng = np.random.default_rng(seed)
    n = rows * cols
    ids = np.arange(n, dtype=np.int64).reshape(rows, cols)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    keep = rng.random(src.size) < ROAD_KEEP
    if src.size:
        # Distinct weights 1..E in random order: the MST is a random spanning tree and
        # its weights name the grid edges it uses (weight k + 1 is edge order[k]).
        order = rng.permutation(src.size)
        rank = np.empty(src.size, np.float64)
        rank[order] = np.arange(1, src.size + 1, dtype=np.float64)
        tree = minimum_spanning_tree(coo_matrix((rank, (src, dst)), shape=(n, n)).tocsr())
        keep[order[tree.data.astype(np.int64) - 1]] = True
    src, dst = src[keep], dst[keep]
    # Cell diagonals: (r, c)-(r+1, c+1) or (r, c+1)-(r+1, c).
    cell = ids[:-1, :-1].ravel()
    diag = rng.random(cell.size) < ROAD_DIAGONAL
    back = rng.random(cell.size) < 0.5
    cell, back = cell[diag], back[diag]
    dsrc = np.where(back, cell + 1, cell)
    ddst = np.where(back, cell + cols, cell + cols + 1)
    src, dst = np.concatenate([src, dsrc]), np.concatenate([dst, ddst])
    w = edge_weights(src, dst, seed, 1, 255, False, n)
    return CSRGraph.from_edges(src, dst, w, num_vertices=n, directed=False, name=name or f"road{rows}x{cols}",
                               meta={"generator": "road", "rows": rows, "cols": cols, "seed": seed})


# ---------------------------------------------------------------------- powerlaw
def _chung_lu_offset(n: int, alpha: float, kmax_over_mean: float) -> float:
    """The offset ``i0 >= 1`` for which the weights ``(i + i0) ** -alpha``,
    ``i < n``, have ``max / mean = kmax_over_mean`` (or 1 if even ``i0 = 1`` stays
    below it); the sum by the midpoint rule as an integral."""
    def ratio(i0):
        a, b = i0 - 0.5, n + i0 - 0.5
        total = np.log(b / a) if abs(alpha - 1) < 1e-12 else (b ** (1 - alpha) - a ** (1 - alpha)) / (1 - alpha)
        return n * i0 ** -alpha / total
    if ratio(1.0) <= kmax_over_mean:
        return 1.0
    lo, hi = 0.0, np.log(float(n) * 1e6)   # ratio decreases with i0 (flatter weights)
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ratio(np.exp(mid)) > kmax_over_mean else (lo, mid)
    return float(np.exp(hi))


def powerlaw(scale: int, edgefactor: int = 16, exponent: int = 21, seed: int = 1, *,
             name: str | None = None) -> CSRGraph:
    """Chung-Lu graph with ``2**scale`` vertices and a power-law degree sequence of
    exponent ``exponent / 10`` (``exponent=21``: P(degree = k) ~ k**-2.1); undirected.

    Vertex ``i`` gets the weight ``(i + i0) ** (-1 / (gamma - 1))``, the expected
    degrees of a power law of exponent gamma; ``edgefactor * 2**scale`` edges are drawn,
    both end points independently in proportion to the weights (so vertex ``i`` has
    the expected degree ``2 * edgefactor * w_i / mean(w)``), then the vertex ids are
    permuted at random (as :func:`kron` does). ``i0`` caps the largest expected
    degree at the structural cut-off ``sqrt(2 * edgefactor * 2**scale)`` (the square
    root of the arc count), past which a Chung-Lu graph would draw many duplicate
    edges between hubs. Self loops and duplicates are dropped as always, so the graph
    has slightly fewer than ``edgefactor * 2**scale`` edges. The exponent is given in
    tenths because spec values are integers (``powerlaw:scale=14,exponent=25`` is
    gamma = 2.5); ``meta["gamma"]`` holds it as a float.
    """
    check_params("powerlaw", {"scale": scale, "edgefactor": edgefactor, "exponent": exponent, "seed": seed})
    rng = np.random.default_rng(seed)
    n = 1 << scale
    m = edgefactor * n
    gamma = exponent / 10
    alpha = 1.0 / (gamma - 1.0)
    mean = 2.0 * m / n
    i0 = _chung_lu_offset(n, alpha, np.sqrt(2.0 * m) / mean)
    cdf = np.cumsum((np.arange(n, dtype=np.float64) + i0) ** -alpha)
    cdf /= cdf[-1]
    src = np.minimum(np.searchsorted(cdf, rng.random(m), side="right"), n - 1)
    dst = np.minimum(np.searchsorted(cdf, rng.random(m), side="right"), n - 1)
    perm = rng.permutation(n)
    return CSRGraph.from_edges(perm[src], perm[dst], num_vertices=n, directed=False,
                               name=name or f"powerlaw{scale}",
                               meta={"generator": "powerlaw", "scale": scale, "edgefactor": edgefactor,
                                     "exponent": exponent, "gamma": gamma, "seed": seed})


# ---------------------------------------------------------------------- mesh
def mesh(rows: int, cols: int, layers: int, dofs: int = 1, *, name: str | None = None) -> CSRGraph:
    """3-D structured mesh: the points of an ``rows x cols x layers`` lattice, each
    joined to its (up to) 26 neighbours (the nodes that share a hexahedral element
    with it), with ``dofs`` vertices per point all joined to each other and to those
    of the neighbouring points (the block pattern of a FEM matrix with ``dofs``
    unknowns per node); undirected, unweighted, no randomness.

    Vertex ``(point * dofs + k)`` with ``point = (l * rows + r) * cols + c``: ids in
    lattice order, so neighbours have nearby ids (a banded matrix). An interior
    vertex has ``27 * dofs - 1`` neighbours (26 for ``dofs=1``, 53 for ``dofs=2``);
    msdoor (SCU Table 5) has 48.7 arcs per vertex.
    """
    check_params("mesh", {"rows": rows, "cols": cols, "layers": layers, "dofs": dofs})
    pts = np.arange(rows * cols * layers, dtype=np.int64).reshape(layers, rows, cols)
    psrc, pdst = [], []
    for dl, dr, dc in ((dl, dr, dc) for dl in (-1, 0, 1) for dr in (-1, 0, 1) for dc in (-1, 0, 1)):
        if (dl, dr, dc) <= (0, 0, 0):        # each neighbour pair once: 13 "forward" offsets
            continue
        a = pts[max(0, -dl):layers - max(0, dl), max(0, -dr):rows - max(0, dr), max(0, -dc):cols - max(0, dc)]
        b = pts[max(0, dl):layers - max(0, -dl), max(0, dr):rows - max(0, -dr), max(0, dc):cols - max(0, -dc)]
        psrc.append(a.ravel())
        pdst.append(b.ravel())
    psrc = np.concatenate(psrc) if psrc else np.zeros(0, np.int64)
    pdst = np.concatenate(pdst) if pdst else np.zeros(0, np.int64)
    a, b = np.divmod(np.arange(dofs * dofs, dtype=np.int64), dofs)   # every (dof, dof) pair
    src = (psrc[:, None] * dofs + a[None, :]).ravel()
    dst = (pdst[:, None] * dofs + b[None, :]).ravel()
    if dofs > 1:                             # the dofs of one point with each other
        own = a < b
        p = pts.ravel()
        src = np.concatenate([src, (p[:, None] * dofs + a[own][None, :]).ravel()])
        dst = np.concatenate([dst, (p[:, None] * dofs + b[own][None, :]).ravel()])
    n = rows * cols * layers * dofs
    return CSRGraph.from_edges(src, dst, num_vertices=n, directed=False, name=name or f"mesh{rows}x{cols}x{layers}",
                               meta={"generator": "mesh", "rows": rows, "cols": cols, "layers": layers,
                                     "dofs": dofs})
