"""Single-source shortest paths, near-far as in Davidson et al. (the SCU paper's
baseline, §2.2). Result ``dist``: float64 path cost, ``inf`` if unreachable.

State: ``dist``, the node frontier (near), the far pile of (vertex, cost) pairs
and a threshold that grows by ``delta`` (default: the mean edge weight times
``max(1, 32 / average degree)``; option ``delta``).

* ``sssp_expand``: like BFS's expansion, plus ``dist[u]`` per frontier vertex and
  the edge weights; writes the edge frontier ``ev`` and its costs ``ec =
  dist[u] + w``.
* ``sssp_contract``: one thread per element reads ``ev[j]``, ``ec[j]`` and
  ``dist[v]``; an element *improves* if ``ec < dist[v]`` (the distance when the
  kernel starts) and then does ``atomicMin(dist[v], ec)``. Improving elements with
  ``ec <= threshold`` go to the near frontier once per vertex (Davidson's lookup
  table: every candidate writes its thread id to ``lookup[v]``, the largest id
  wins and only the winner appends ``v``); improving elements above the
  threshold are appended to the far pile.
* When the near frontier is empty, ``sssp_far``: far-pile entries whose cost is
  above ``dist[v]`` are stale and dropped; the threshold becomes ``max(threshold
  + delta, smallest live cost)``; live entries at or below it become the new
  near frontier (once per vertex, same lookup rule), the others stay.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .common import Algorithm, AlgorithmError, cta_atomics

__all__ = ["SSSP", "check_weights"]


def winners(v: np.ndarray, cand: np.ndarray, nvert: int) -> np.ndarray:
    """Lookup-table dedup: among candidate elements of each vertex, the last one wins."""
    idx = np.flatnonzero(cand)
    lookup = np.full(nvert, -1, np.int64)
    np.maximum.at(lookup, v[idx], idx)
    win = np.zeros(v.size, bool)
    win[idx] = lookup[v[idx]] == idx
    return win



def check_weights(graph) -> None:
    """SSSP's weights: finite and non-negative; the error names the graph and the
    first edge that breaks it."""
    w = graph.weight
    if w is None or not w.size:
        return
    bad = (~np.isfinite(w) | (w < 0)).nonzero()[0]
    if bad.size:
        i = int(bad[0])
        u = int(np.searchsorted(graph.row_ptr, i, side="right") - 1)
        raise AlgorithmError(f"sssp needs finite, non-negative edge weights: {graph.name} has {w[i]:g} on the edge "
                             f"{u} -> {int(graph.col[i])} ({bad.size} such edge{'s' if bad.size > 1 else ''})")

class SSSP(Algorithm):
    name = "sssp"
    key = "dist"
    needs_weights = True
    option_names = ("delta",)

    @classmethod
    def check_option_values(cls, options: dict) -> None:
        super().check_option_values(options)
        d = options.get("delta")
        # NaN fails the comparison; infinity would make one bucket (and no JSON number).
        if d is not None and not (isinstance(d, numbers.Real) and not isinstance(d, bool) and 0 < d < math.inf):
            raise AlgorithmError(f"delta must be a positive finite number, not {d!r}")

    def check_options(self) -> None:
        check_weights(self.graph)

    def setup(self) -> None:
        super().setup()
        g, gpu = self.graph, self.gpu
        V = g.num_vertices
        self.a_nf = gpu.queue("nf")
        self.a_ev = gpu.queue("ev")
        self.a_ec = gpu.queue("ec")
        self.a_dist = gpu.array("dist", V)
        self.a_lookup = gpu.array("lookup", V)
        self.a_far_v = gpu.queue("far_v")
        self.a_far_c = gpu.queue("far_c")

    def default_delta(self) -> float:
        g = self.graph
        if g.num_edges == 0:
            return 1.0
        avg_deg = g.num_edges / max(g.num_vertices, 1)
        return float(max(g.weight.mean(), 1e-9) * max(1.0, 32.0 / avg_deg))

    def run(self) -> np.ndarray:
        g = self.graph
        src = self.source()
        V = g.num_vertices
        dist = np.full(V, np.inf)
        dist[src] = 0.0
        delta = float(self.options.get("delta") or self.default_delta())
        self.extra["delta"] = delta
        threshold = delta
        nf = np.array([src], np.int64)
        far_v = np.zeros(0, np.int64)
        far_c = np.zeros(0, np.float64)
        it = 0
        while True:
            while nf.size:
                self.progress(it, int(nf.size))
                ev, ec = self.expand(nf, dist)
                nf, fv, fc = self.contract(ev, ec, dist, threshold)
                far_v = np.concatenate([far_v, fv])
                far_c = np.concatenate([far_c, fc])
                it += 1
            if far_v.size == 0:
                break
            nf, far_v, far_c, threshold = self.split_far(far_v, far_c, dist, threshold, delta)
            if nf.size == 0 and far_v.size == 0:
                break
        self.iterations = it
        return dist

    # ------------------------------------------------------------------ steps
    def expand(self, nf: np.ndarray, dist: np.ndarray):
        g = self.graph
        pos, owner, counts = self.advance_edges(nf, self.a_nf)
        self.gpu.count("gpu_nodes", nf.size)
        with self.gpu.kernel("sssp_expand", nf.size + pos.size, phases=3 + self.load_balanced) as k:
            self.advance_loads(k, nf, self.a_nf, counts, owner)
            k.load(self.a_dist, nf)
            k.load(self.dg.col, pos)
            k.load(self.dg.weight, pos)
            k.store(self.a_ev, range(pos.size))
            k.store(self.a_ec, range(pos.size))
            cta_atomics(k, self.counter, nf.size + pos.size)
        return g.col[pos].astype(np.int64), dist[nf][owner] + g.weight[pos]

    def contract_masks(self, ev, ec, dist, threshold):
        """``(improving, near candidates, far, near winners)`` of the edge frontier."""
        improving = ec < dist[ev]
        near_cand = improving & (ec <= threshold)
        far = improving & ~near_cand
        return improving, near_cand, far, winners(ev, near_cand, dist.size)

    def describe_contract(self, k, ev, improving, near_cand) -> None:
        """The contraction's reads, atomicMin and lookup-table accesses (not its output)."""
        n = ev.size
        k.load(self.a_ev, range(n))
        k.load(self.a_ec, range(n))
        k.load(self.a_dist, ev)
        k.atomic(self.a_dist, ev, active=improving)
        k.store(self.a_lookup, ev, active=near_cand)
        k.load(self.a_lookup, ev, active=near_cand)

    def describe_far(self, k, far_v, near_cand) -> None:
        """The far split's reads and lookup-table accesses (not its output)."""
        n = far_v.size
        k.load(self.a_far_v, range(n))
        k.load(self.a_far_c, range(n))
        k.load(self.a_dist, far_v)
        k.store(self.a_lookup, far_v, active=near_cand)
        k.load(self.a_lookup, far_v, active=near_cand)

    def contract(self, ev, ec, dist, threshold):
        improving, near_cand, far, win = self.contract_masks(ev, ec, dist, threshold)
        n = ev.size
        self.gpu.count("gpu_edges", n)
        with self.gpu.kernel("sssp_contract", n, phases=3) as k:
            self.describe_contract(k, ev, improving, near_cand)
            k.store(self.a_nf, range(int(win.sum())), tid=np.flatnonzero(win))
            nfar = int(far.sum())
            k.store(self.a_far_v, range(nfar), tid=np.flatnonzero(far))
            k.store(self.a_far_c, range(nfar), tid=np.flatnonzero(far))
            cta_atomics(k, self.counter, n)
        np.minimum.at(dist, ev[improving], ec[improving])
        return ev[win], ev[far], ec[far]

    def far_masks(self, far_v, far_c, dist, threshold, delta):
        """``(near candidates, near winners, staying, new threshold)`` of the far pile."""
        live = far_c <= dist[far_v]
        lc = far_c[live]
        if lc.size:
            threshold = max(threshold + delta, float(lc.min()))
        near_cand = live & (far_c <= threshold)
        return near_cand, winners(far_v, near_cand, dist.size), live & ~near_cand, threshold

    def split_far(self, far_v, far_c, dist, threshold, delta):
        near_cand, win, stay, threshold = self.far_masks(far_v, far_c, dist, threshold, delta)
        n = far_v.size
        self.gpu.count("gpu_edges", n)
        with self.gpu.kernel("sssp_far", n, phases=3) as k:
            self.describe_far(k, far_v, near_cand)
            k.store(self.a_nf, range(int(win.sum())), tid=np.flatnonzero(win))
            k.store(self.a_far_v, range(int(stay.sum())), tid=np.flatnonzero(stay))
            k.store(self.a_far_c, range(int(stay.sum())), tid=np.flatnonzero(stay))
            cta_atomics(k, self.counter, n)
        self.gpu.count("far_pile_passes", 1)
        return far_v[win], far_v[stay], far_c[stay], threshold
