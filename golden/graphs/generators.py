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

Self loops and duplicate edges that the generators draw are removed by
:meth:`CSRGraph.from_edges`, as Graph500 and gapbs do when they build CSR.
"""
from __future__ import annotations

import numpy as np

from .csr import CSRGraph, GraphError, edge_weights

__all__ = ["kron", "urand", "grid", "GRAPH500_ABC", "LIMITS", "check_params"]

#: Graph500 initiator probabilities a, b, c (d = 1 - a - b - c).
GRAPH500_ABC = (0.57, 0.19, 0.19)


#: Generator -> parameter -> the allowed range ``(lo, hi)`` of the integer value
#: (checked by the generators and, before anything is generated, by
#: :func:`golden.graphs.spec.parse_spec`).
LIMITS = {
    "kron": {"scale": (1, 28), "edgefactor": (1, 1024), "seed": (0, 2**63 - 1)},
    "urand": {"scale": (1, 28), "edgefactor": (1, 1024), "seed": (0, 2**63 - 1)},
    "grid": {"rows": (1, 1 << 14), "cols": (1, 1 << 14), "seed": (0, 2**63 - 1)},
}


def check_params(kind: str, params: dict) -> None:
    """Every parameter of generator ``kind`` in its :data:`LIMITS` range (``GraphError``)."""
    for key, (lo, hi) in LIMITS[kind].items():
        if key in params:
            _check(f"{kind} {key}", params[key], lo, hi)


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
