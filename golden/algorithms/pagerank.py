"""PageRank, push style with atomic adds (the SCU paper's baseline, §2.3).

Definition (option ``variant``):

* ``"standard"`` (default): ``r' = (1 - d) / V + d * (sum_{u -> v} r[u] / deg(u)
  + D / V)`` with ``D`` the rank held by vertices without out-edges (dangling
  mass spread evenly), damping ``d = 0.85``; ranks sum to 1 (networkx's
  definition).
* ``"nodangle"``: the same without the ``D / V`` term (rank leaks through
  dangling vertices; the SCU paper's form up to normalisation).

Starts from ``1 / V``; stops when the L1 norm of the change is below ``tol``
(default 1e-6) or after ``max_iter`` (default 100) iterations. Result ``rank``.

Kernels per iteration: ``pr_contrib`` (thread per vertex: ``rank[u]``,
``row_ptr[u]``, ``row_ptr[u+1]``, writes ``contrib[u]``; dangling vertices add
their rank with one atomic per thread block), ``pr_push`` (edge-parallel: lane
``e`` reads ``col[e]`` and ``contrib[src(e)]`` and does ``atomicAdd(next[col[e]])``),
``pr_update`` (thread per vertex: reads ``next[u]`` and ``rank[u]``, writes
``rank[u]`` and clears ``next[u]``, one atomic per block for the L1 change).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .common import Algorithm, AlgorithmError, cta_atomics

__all__ = ["PageRank"]


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


class PageRank(Algorithm):
    name = "pr"
    key = "rank"
    takes_source = False
    option_names = ("damping", "tol", "max_iter", "variant")

    @classmethod
    def check_option_values(cls, o: dict) -> None:
        super().check_option_values(o)
        # Written so that NaN fails every check (a comparison with NaN is false).
        d = o.get("damping", 0.85)
        if not (_is_real(d) and 0 < d < 1):
            raise AlgorithmError(f"damping must be in (0, 1), not {d!r}")
        tol = o.get("tol", 1e-6)
        if not (_is_real(tol) and 0 < tol < math.inf):
            raise AlgorithmError(f"tol must be a positive finite number, not {tol!r}")
        mi = o.get("max_iter", 100)
        if not (isinstance(mi, numbers.Integral) and not isinstance(mi, bool) and mi >= 1):
            raise AlgorithmError(f"max_iter must be a positive integer, not {mi!r}")
        if o.get("variant", "standard") not in ("standard", "nodangle"):
            raise AlgorithmError(f"variant must be 'standard' or 'nodangle', not {o.get('variant')!r}")

    def setup(self) -> None:
        super().setup()
        V = self.graph.num_vertices
        gpu = self.gpu
        self.a_rank = gpu.array("rank", V)
        self.a_next = gpu.array("next", V)
        self.a_contrib = gpu.array("contrib", V)

    def run(self) -> np.ndarray:
        g = self.graph
        V = g.num_vertices
        if V == 0:
            return np.zeros(0)
        d, tol, max_iter, dangle = self.parameters()
        deg = g.degrees()
        rank = np.full(V, 1.0 / V)
        dang = deg == 0
        inv = np.where(dang, 0.0, 1.0 / np.maximum(deg, 1))
        it = 0
        change = np.inf
        while it < max_iter:
            self.progress(it, V)
            contrib = rank * inv
            # Work counters, attributed to the next kernel (GPU.count): every vertex
            # is expanded by pr_contrib, every edge inspected by the push.
            self.gpu.count("frontier_vertices", V)
            self.describe_contrib(V, dang)
            D = rank[dang].sum() if dangle else 0.0
            self.gpu.count("edges", g.num_edges)
            nxt = self.push(contrib)
            new = (1.0 - d) / V + d * (nxt + D / V)
            change = float(np.abs(new - rank).sum())
            self.describe_update(V)
            rank = new
            it += 1
            if change < tol:
                break
        self.iterations = it
        self.extra["final_change"] = change
        self.gpu.count("gpu_nodes", V * it)
        self.gpu.count("gpu_edges", g.num_edges * it)
        return rank

    def parameters(self) -> tuple[float, float, int, bool]:
        """``(damping, tol, max_iter, spread the dangling mass)`` from the options."""
        o = self.options
        return (float(o.get("damping", 0.85)), float(o.get("tol", 1e-6)), int(o.get("max_iter", 100)),
                o.get("variant", "standard") == "standard")

    def push(self, contrib: np.ndarray) -> np.ndarray:
        """Sum of the contributions reaching every vertex (``pr_push``: edge-parallel atomicAdd)."""
        g = self.graph
        src = g.src()
        with self.gpu.kernel("pr_push", g.num_edges) as k:
            k.load(self.dg.col, range(g.num_edges))
            k.load(self.a_contrib, src)
            k.atomic(self.a_next, g.col)
        if not g.num_edges:
            return np.zeros(g.num_vertices)
        return np.bincount(g.col, weights=contrib[src], minlength=g.num_vertices)

    def describe_contrib(self, V: int, dang: np.ndarray) -> None:
        verts = range(V)
        with self.gpu.kernel("pr_contrib", V) as k:
            k.load(self.a_rank, verts)
            k.load(self.dg.row_ptr, verts)
            k.load(self.dg.row_ptr, range(1, V + 1))
            k.store(self.a_contrib, np.arange(V), active=~dang)
            cta_atomics(k, self.counter, V)

    def describe_update(self, V: int) -> None:
        verts = range(V)
        with self.gpu.kernel("pr_update", V) as k:
            k.load(self.a_next, verts)
            k.load(self.a_rank, verts)
            k.store(self.a_rank, verts)
            k.store(self.a_next, verts)
            cta_atomics(k, self.counter, V)
