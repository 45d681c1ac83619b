"""Connected components by min-label propagation (weakly connected for directed
graphs: edges are followed both ways). Result ``label``: the smallest vertex id
of the vertex's component.

Every vertex starts active with its own id. Each iteration:

* ``cc_push``: one thread per active vertex reads ``front[i]``, ``row_ptr``,
  ``label[u]``; edge-parallel lanes read ``col[e]`` and do ``atomicMin(label[v],
  label[u])``; a lane that lowers ``label[v]`` sets ``flag[v]``. The model is
  synchronous: every lane sees the labels of the iteration's start.
* ``cc_compact``: one thread per vertex reads ``flag[v]``, clears it and appends
  flagged vertices to the next active list.

Stops when no label changes. A label moves one hop per iteration: about
diameter + 1 iterations and O(diameter x E) edge inspections (``grid:300x300``:
599 iterations, 300x its arcs; ``python benchmarks/golden_speed.py --part
inspections``, docs/golden.md).
"""
from __future__ import annotations

import numpy as np

from .common import Algorithm, DeviceGraph, cta_atomics, segments

__all__ = ["CC"]


class CC(Algorithm):
    name = "cc"
    key = "label"
    takes_source = False

    def setup(self) -> None:
        g = self.graph
        # Follow edges both ways: for a directed graph use the union with its transpose.
        if g.directed:
            t = g.transpose()
            from ..graphs import CSRGraph
            src = np.concatenate([g.src(), t.src()])
            dst = np.concatenate([g.col, t.col]).astype(np.int64)
            self.und = CSRGraph.from_edges(src, dst, num_vertices=g.num_vertices, directed=True,
                                           name=g.name)
        else:
            self.und = g
        gpu = self.gpu
        V = g.num_vertices
        self.dg = DeviceGraph(gpu, self.und)
        self.counter = gpu.array("counters", 16)
        self.a_front = gpu.array("front", V + 1)
        self.a_label = gpu.array("label", V)
        self.a_flag = gpu.array("flag", V)

    def run(self) -> np.ndarray:
        g = self.und
        V = g.num_vertices
        label = np.arange(V, dtype=np.int64)
        front = np.arange(V, dtype=np.int64)
        it = 0
        while front.size:
            self.progress(it, int(front.size))
            starts = g.row_ptr[front]
            pos, owner = segments(starts, g.row_ptr[front + 1] - starts)
            self.gpu.count("edges", pos.size)             # attributed to the push kernel
            self.gpu.count("frontier_vertices", front.size)
            v, lower = self.push(front, pos, owner, label)
            new = label.copy()
            np.minimum.at(new, v[lower], label[front][owner][lower])
            changed = np.flatnonzero(new < label)
            with self.gpu.kernel("cc_compact", V) as k:
                k.load(self.a_flag, range(V))
                k.store(self.a_flag, changed, tid=changed)
                k.store(self.a_front, range(changed.size), tid=changed)
                cta_atomics(k, self.counter, V)
            label = new
            front = changed
            it += 1
        self.iterations = it
        return label

    def push(self, front: np.ndarray, pos: np.ndarray, owner: np.ndarray,
             label: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The push kernel: the active vertices' lists, atomicMin on the neighbours' labels.
        Returns every edge's neighbour and whether it lowers the neighbour's label (a mode
        that reads the lists elsewhere, e.g. from host memory, overrides this)."""
        v = self.und.col[pos].astype(np.int64)
        lower = label[front][owner] < label[v]
        with self.gpu.kernel("cc_push", front.size + pos.size, phases=4) as k:
            k.load(self.a_front, range(front.size))
            k.load(self.dg.row_ptr, front)
            k.load(self.dg.row_ptr, front + 1)
            k.load(self.a_label, front)
            k.load(self.dg.col, pos)
            k.atomic(self.a_label, v)
            k.store(self.a_flag, v, active=lower)
        return v, lower
