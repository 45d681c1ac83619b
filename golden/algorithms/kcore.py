"""K-core decomposition (the GraphPEG paper's KC benchmark, §4.1) in GPU style: result
``core``, the core number of every vertex (the largest ``k`` such that the vertex
is in the k-core), on an undirected graph.

Level-synchronous peeling: at level ``k`` (starting at the smallest degree) a
scan kernel (one thread per vertex) removes every live vertex of degree ``<= k``
(core ``k``) into a frontier; an expand kernel gathers the frontier's edges and a
contract kernel does ``atomicSub(deg[v], 1)`` for every edge to a live ``v``; the
lane whose decrement brings ``deg[v]`` from ``k + 1`` to ``k`` removes ``v`` (core
``k``) and appends it to the next frontier. When a frontier comes back empty,
``k`` becomes ``max(k + 1, smallest live degree)``. The atomics act in the order of
the edge frontier.

Undirected graphs only. The GraphPEG mode (``golden/graphpeg``) runs the same
peeling with the frontier in the engines' vertex lists.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .common import Algorithm, AlgorithmError, cta_atomics

__all__ = ["KCore", "KState", "kcore_peel"]


@dataclass
class KState:
    deg: np.ndarray          # current degree (int64)
    removed: np.ndarray      # bool
    core: np.ndarray         # int64, -1 until removed
    k: int = 0


def kcore_peel(v: np.ndarray, state: KState) -> tuple[np.ndarray, np.ndarray]:
    """Apply the decrements of edges to ``v`` (in order) to ``state``: returns
    ``(live, winners)``, the edges whose target was live when they were processed
    and the positions (ascending) of the lanes that removed their target."""
    n = v.size
    live = np.zeros(n, bool)
    if n == 0:
        return live, np.zeros(0, np.int64)
    idx = np.flatnonzero(~state.removed[v])
    vv = v[idx]
    order = np.argsort(vv, kind="stable")
    sv = vv[order]
    start = np.concatenate([[0], np.flatnonzero(sv[1:] != sv[:-1]) + 1])
    rank = np.arange(sv.size) - np.repeat(start, np.diff(np.concatenate([start, [sv.size]])))
    need = state.deg[sv] - state.k                     # decrements that reach k (>= 1 for live vertices)
    if np.any(need < 1):
        raise AlgorithmError("kcore: a live vertex has degree <= k (internal error)")
    take = rank < need                                 # later edges find the vertex removed
    live[idx[order[take]]] = True
    win_sorted = rank == need - 1
    win = np.sort(idx[order[win_sorted]])
    np.subtract.at(state.deg, sv[take], 1)
    w = v[win]
    state.removed[w] = True
    state.core[w] = state.k
    return live, win


class KCore(Algorithm):
    """K-core decomposition by level-synchronous peeling (module docstring)."""

    name = "kcore"
    key = "core"
    takes_source = False

    def check_options(self) -> None:
        if self.graph.directed:
            raise AlgorithmError("kcore needs an undirected graph (load it with --undirected or a symmetric file)")

    def setup(self) -> None:
        super().setup()
        V = self.graph.num_vertices
        gpu = self.gpu
        self.a_deg = gpu.array("deg", V)
        self.a_removed = gpu.array("removed", V)
        self.a_core = gpu.array("core", V)
        self.a_front = gpu.queue("front")
        self.a_ef = gpu.queue("ef")
        self.rounds = 0

    def run(self) -> np.ndarray:
        g = self.graph
        V = g.num_vertices
        st = KState(g.degrees().astype(np.int64), np.zeros(V, bool), np.full(V, -1, np.int64), 0)
        first = True
        while not st.removed.all():
            live = ~st.removed
            low = int(st.deg[live].min())
            st.k = low if first else max(st.k + 1, low)
            first = False
            front = np.flatnonzero(live & (st.deg <= st.k))
            with self.gpu.kernel("kcore_scan", V) as k:
                k.load(self.a_removed, range(V))
                k.load(self.a_deg, np.arange(V), active=live)
                k.store(self.a_removed, front, tid=front)
                k.store(self.a_core, front, tid=front)
                k.store(self.a_front, range(front.size), tid=front)
                cta_atomics(k, self.counter, V)
            st.removed[front] = True
            st.core[front] = st.k
            self.peel(front, st)
        self.iterations = self.rounds
        self.extra["max_core"] = int(st.core.max()) if V else 0
        return st.core

    def peel(self, front: np.ndarray, st: KState) -> None:
        """Remove the consequences of removing ``front`` at level ``st.k``."""
        g = self.graph
        while front.size:
            self.progress(st.k, int(front.size))
            pos, owner, counts = self.advance_edges(front, self.a_front)
            self.gpu.count("gpu_nodes", front.size)
            self.gpu.count("gpu_edges", pos.size)
            with self.gpu.kernel("kcore_expand", front.size + pos.size, phases=3 + self.load_balanced) as k:
                self.advance_loads(k, front, self.a_front, counts, owner)
                k.load(self.dg.col, pos)
                k.store(self.a_ef, range(pos.size))
                cta_atomics(k, self.counter, front.size + pos.size)
            v = g.col[pos].astype(np.int64)
            live, win = kcore_peel(v, st)
            with self.gpu.kernel("kcore_contract", v.size, phases=3) as k:
                k.load(self.a_ef, range(v.size))
                k.load(self.a_removed, v)
                k.atomic(self.a_deg, v, active=live)
                k.store(self.a_removed, v[win], tid=win)
                k.store(self.a_core, v[win], tid=win)
                k.store(self.a_front, range(win.size), tid=win)
                cta_atomics(k, self.counter, v.size)
            front = v[win]
            self.rounds += 1
