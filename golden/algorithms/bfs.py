"""Breadth-first search, expand/contract as in Merrill et al. (the SCU paper's
baseline, §2.1). Result ``depth``: hops from the source, -1 if unreachable.

Each iteration:

* ``bfs_expand``: one thread per frontier vertex reads ``nf[i]``,
  ``row_ptr[v]``, ``row_ptr[v+1]``; the edges of the frontier are then gathered
  edge-parallel (Merrill's scan-based gather: lane ``j`` reads the ``j``-th edge
  of the concatenated adjacency lists) into the edge frontier ``ef``; one
  atomicAdd per thread block allocates the output.
* ``bfs_contract``: one thread per edge-frontier element reads ``ef[j]`` and the
  best-effort visited bitmask word; unvisited elements read ``depth[u]``;
  duplicates inside a warp are culled (first lane kept); survivors write
  ``depth[u]`` and the bitmask (no atomics) and are compacted into the next node
  frontier. The bitmask is best effort: a warp's write is seen by the warps that
  start at least ``resident_warps`` warps later (all the warps the GPU holds at
  once, :attr:`GPUConfig.resident_warps`), and missed by those running beside it.
  So a vertex first met in warp ``w`` also enters the next frontier from every
  other warp in ``[w, w + resident_warps)`` that holds it: the duplicates that
  the enhanced SCU filters.

Not modelled: Merrill's history-based culling (a per-block hash of recently seen
vertices), so frontiers keep duplicates the real kernel would drop; on road-like
graphs the visibility window multiplies them (``grid:300x300`` on ``gtx980``
inspects 21.4x its arcs from the default source, ``kron:scale=14`` 1.46x;
``python benchmarks/golden_speed.py --part inspections``, docs/golden.md).

``edges`` counts edge inspections (duplicates included), attributed to
``bfs_expand``; ``frontier_vertices`` the frontier entries it expands.

Without statistics (functional mode) the depths are computed on duplicate-free
frontiers, which gives the same result faster; ``edges`` then counts the edges of
that traversal.
"""
from __future__ import annotations

import numpy as np

from .common import Algorithm, cta_atomics, first_in_warp, segments
from ..perf import unique

__all__ = ["BFS"]


class BFS(Algorithm):
    name = "bfs"
    key = "depth"
    #: Without statistics, run on duplicate-free frontiers (same depths, faster).
    functional_shortcut = True

    def setup(self) -> None:
        super().setup()
        g, gpu = self.graph, self.gpu
        V = g.num_vertices
        self.a_nf = gpu.queue("nf")
        self.a_ef = gpu.queue("ef")
        self.a_depth = gpu.array("depth", V)
        self.a_visited = gpu.array("visited", V // 32 + 1)

    def run(self) -> np.ndarray:
        g = self.graph
        src = self.source()
        V = g.num_vertices
        depth = np.full(V, -1, np.int64)
        visited = np.zeros(V, bool)
        depth[src] = 0
        visited[src] = True
        nf = np.array([src], np.int64)
        level = 0
        if not self.gpu.stats_on and self.functional_shortcut:
            self.iterations = self.run_functional(nf, depth)
            return depth
        while nf.size:
            self.progress(level, int(nf.size))
            ef = self.expand(nf)
            level += 1
            nf = self.contract(ef, level, depth, visited)
        self.iterations = level
        return depth

    def run_functional(self, nf: np.ndarray, depth: np.ndarray) -> int:
        """Level-synchronous BFS on duplicate-free frontiers (no statistics)."""
        g = self.graph
        row_ptr, col = g.row_ptr, g.col
        V = g.num_vertices
        mark = np.zeros(V, bool)
        level = 0
        edges = 0
        while nf.size:
            self.progress(level, int(nf.size))
            starts = row_ptr[nf]
            pos, _ = segments(starts, row_ptr[nf + 1] - starts)
            edges += pos.size
            nbr = col[pos]
            new = nbr[depth[nbr] < 0]
            level += 1
            if new.size * 8 < V:
                nf = unique(new).astype(np.int64)
            else:
                mark[new] = True
                nf = np.flatnonzero(mark)
                mark[nf] = False
            depth[nf] = level
        self.gpu.count("edges", edges)
        return level

    # ------------------------------------------------------------------ steps
    def expand(self, nf: np.ndarray) -> np.ndarray:
        """Edge frontier: the neighbours of every frontier vertex, in order."""
        g = self.graph
        pos, owner, counts = self.advance_edges(nf, self.a_nf)
        self.gpu.count("gpu_nodes", nf.size)
        with self.gpu.kernel("bfs_expand", nf.size + pos.size, phases=3 + self.load_balanced) as k:
            self.advance_loads(k, nf, self.a_nf, counts, owner)
            k.load(self.dg.col, pos)
            k.store(self.a_ef, range(pos.size))
            cta_atomics(k, self.counter, nf.size + pos.size)
        return g.col[pos].astype(np.int64)

    def contract_masks(self, ef: np.ndarray, visited: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(unvisited, keep)`` of every edge-frontier element: which threads see
        the vertex unvisited (visibility window) and which survive warp culling."""
        unvisited = ~visited[ef]
        ws = self.gpu.config.warp_size
        if ef.size > self.gpu.config.resident_warps * ws:
            # Writes are seen by warps resident_warps or more behind the first finder.
            idx = np.flatnonzero(unvisited)
            v = ef[idx]
            first = np.full(visited.size, np.iinfo(np.int64).max, np.int64)
            np.minimum.at(first, v, idx)
            late = (idx // ws) - (first[v] // ws) >= self.gpu.config.resident_warps
            unvisited[idx[late]] = False
        return unvisited, unvisited & first_in_warp(ef, unvisited)

    def contract(self, ef: np.ndarray, level: int, depth: np.ndarray, visited: np.ndarray) -> np.ndarray:
        """Next node frontier from the edge frontier (best-effort visited check)."""
        unvisited, keep = self.contract_masks(ef, visited)
        nf = ef[keep]
        self.gpu.count("gpu_edges", ef.size)
        with self.gpu.kernel("bfs_contract", ef.size, phases=3) as k:
            n = ef.size
            k.load(self.a_ef, range(n))
            k.load(self.a_visited, ef >> 5)
            k.load(self.a_depth, ef, active=unvisited)
            k.store(self.a_depth, ef, active=keep)
            k.store(self.a_visited, ef >> 5, active=keep)
            k.store(self.a_nf, range(nf.size), tid=np.flatnonzero(keep))
            cta_atomics(k, self.counter, n)
        return self.visit(nf, level, depth, visited)

    def visit(self, nf: np.ndarray, level: int, depth: np.ndarray, visited: np.ndarray) -> np.ndarray:
        depth[nf] = level
        visited[nf] = True
        if nf.size:
            distinct = np.count_nonzero(np.bincount(nf, minlength=depth.size))
            self.gpu.count("duplicates_in_frontier", nf.size - distinct)
        return nf
