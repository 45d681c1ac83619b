"""Betweenness-centrality dependencies from one source (Brandes): result ``bc``,
``delta_s(v) = sum_t sigma_st(v) / sigma_st`` for the source ``s`` (0 for ``s``
and for unreachable vertices). Unweighted, along the stored edge direction.

* Forward, one level per iteration (``bc_forward``): one thread per frontier
  vertex reads ``row_ptr`` and ``sigma[u]``; edge-parallel lanes read ``col[e]``
  and ``depth[v]``; unvisited ``v`` get ``depth[v] = d + 1`` and set
  ``flag[v]``; every lane with ``depth[v] == d + 1`` does ``atomicAdd(sigma[v],
  sigma[u])``. ``bc_compact`` turns the flags into the next frontier (exactly
  once per vertex). ``sigma`` is a float64 path count.
* Backward, deepest level first (``bc_backward``): edge-parallel over the edges
  of the level's vertices, lanes with ``depth[v] == d + 1`` read ``sigma[v]`` and
  ``delta[v]`` and do ``atomicAdd(delta[u], sigma[u] / sigma[v] * (1 + delta[v]))``.
"""
from __future__ import annotations

import numpy as np

from .common import Algorithm, cta_atomics, segments

__all__ = ["BC"]


class BC(Algorithm):
    name = "bc"
    key = "bc"

    def setup(self) -> None:
        super().setup()
        V = self.graph.num_vertices
        gpu = self.gpu
        self.a_front = gpu.array("front", V + 1)
        self.a_depth = gpu.array("depth", V)
        self.a_sigma = gpu.array("sigma", V, np.float64)
        self.a_delta = gpu.array("delta", V, np.float64)
        self.a_flag = gpu.array("flag", V)

    def start_forward(self) -> tuple[int, int, np.ndarray, np.ndarray, list[np.ndarray]]:
        """The forward pass's start: ``(s, V, depth, sigma, levels)``, the source,
        the vertex count, depths (-1, unvisited, but 0 at ``s``), path counts (0 but
        1 at ``s``) and the level stack (``[[s]]``)."""
        s = self.source()
        V = self.graph.num_vertices
        depth = np.full(V, -1, np.int64)
        sigma = np.zeros(V)
        depth[s] = 0
        sigma[s] = 1.0
        levels = [np.array([s], np.int64)]
        return s, V, depth, sigma, levels

    def run(self) -> np.ndarray:
        g = self.graph
        s, V, depth, sigma, levels = self.start_forward()
        d = 0
        while levels[-1].size:
            front = levels[-1]
            self.progress(d, int(front.size))
            pos, owner, counts = self.advance_edges(front, self.a_front)
            v = g.col[pos].astype(np.int64)
            u = front[owner]
            new = depth[v] == -1
            depth[v[new]] = d + 1
            onpath = depth[v] == d + 1
            np.add.at(sigma, v[onpath], sigma[u[onpath]])
            nxt = np.flatnonzero(np.bincount(v[new], minlength=V)) if new.any() else np.zeros(0, np.int64)
            with self.gpu.kernel("bc_forward", front.size + pos.size, phases=4 + self.load_balanced) as k:
                self.advance_loads(k, front, self.a_front, counts, owner)
                k.load(self.a_sigma, front)
                k.load(self.dg.col, pos)
                k.load(self.a_depth, v)
                k.store(self.a_depth, v, active=new)
                k.store(self.a_flag, v, active=new)
                k.atomic(self.a_sigma, v, active=onpath)
            with self.gpu.kernel("bc_compact", V) as k:
                k.load(self.a_flag, range(V))
                k.store(self.a_flag, nxt, tid=nxt)
                k.store(self.a_front, range(nxt.size), tid=nxt)
                cta_atomics(k, self.counter, V)
            levels.append(nxt.astype(np.int64))
            d += 1
        delta = np.zeros(V)
        for d in range(len(levels) - 2, -1, -1):
            front = levels[d]
            starts = g.row_ptr[front]
            counts = g.row_ptr[front + 1] - starts
            pos, owner = segments(starts, counts)
            v = g.col[pos].astype(np.int64)
            u = front[owner]
            child = depth[v] == d + 1
            np.add.at(delta, u[child], sigma[u[child]] / sigma[v[child]] * (1.0 + delta[v[child]]))
            self.lb_scan(self.a_front, front)
            with self.gpu.kernel("bc_backward", front.size + pos.size, phases=3 + self.load_balanced) as k:
                self.lb_search(k, counts, owner)
                k.load(self.dg.row_ptr, front)
                k.load(self.dg.row_ptr, front + 1)
                k.load(self.dg.col, pos)
                k.load(self.a_depth, v)
                k.load(self.a_sigma, v, active=child)
                k.load(self.a_delta, v, active=child)
                k.atomic(self.a_delta, u, active=child)
        delta[s] = 0.0
        self.iterations = len(levels) - 1
        return delta
