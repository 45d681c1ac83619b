"""PageRank, push style with atomic adds (the SCU paper's baseline, §2.3).

Definition (option ``variant``):

* ``"standard"`` (default): ``r' = (1 - d) / V + d * (sum_{u -> v} r[u] / deg(u)
  + D / V)`` with ``D`` the rank held by vertices without out-edges (dangling
  mass spread evenly), damping ``d = 0.85``; ranks sum to 1 (networkx's
  definition).
* ``"nodangle"``: the same without the ``D / V`` term (rank leaks through
  dangling vertices; the SCU paper's form up to normalisation).

Starts from ``1 / V``; stops when the L1 norm of the change is below ``tol``
(default 1e-6), or, when a unit's arithmetic is less precise than float64
(the IRU's binary32 merges), once the change is below the push's noise floor
(:meth:`PageRank.noise_floor`) and has stopped falling, or after ``max_iter``
(default 100) iterations. Result ``rank``;
``extra["final_change"]``, ``extra["noise_floor"]`` and ``extra["error_bound"]``
(an upper bound of the L1 distance to the exact fixed point:
``d / (1 - d) * (final change + push error)``).

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
        changes: list[float] = []
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
            changes.append(change)
            if change < tol:
                break
            # Below the push's noise floor the change stops falling: stop once it has
            # not fallen by 5 % over the last 5 iterations (the noise, not the
            # iteration, sets it then).
            if change < self.noise_floor(d) and len(changes) > 5 and change >= 0.95 * min(changes[-6:-1]):
                break
        self.iterations = it
        self.extra["final_change"] = change
        err = self.push_error()
        self.extra["noise_floor"] = self.noise_floor(d)
        self.extra["error_bound"] = d / (1.0 - d) * (change + err) if math.isfinite(change) else None
        self.gpu.count("gpu_nodes", V * it)
        self.gpu.count("gpu_edges", g.num_edges * it)
        return rank

    def parameters(self) -> tuple[float, float, int, bool]:
        """``(damping, tol, max_iter, spread the dangling mass)`` from the options."""
        o = self.options
        return (float(o.get("damping", 0.85)), float(o.get("tol", 1e-6)), int(o.get("max_iter", 100)),
                o.get("variant", "standard") == "standard")

    def push_error(self) -> float:
        """Upper bound of the L1 error of the last :meth:`push` against the exact sums
        (0: float64 atomics, whose rounding is far below any ``tol``)."""
        return 0.0

    def noise_floor(self, d: float) -> float:
        """The L1 change that the push's error alone can sustain between two
        iterations: with an error of at most ``B`` per push (:meth:`push_error`)
        and the iteration a ``d``-contraction in L1, the change obeys
        ``c_k <= d c_(k-1) + 2 d B``, so it need not fall below ``2 d B / (1 - d)``;
        the run stops there."""
        return 2.0 * d * self.push_error() / (1.0 - d)

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
