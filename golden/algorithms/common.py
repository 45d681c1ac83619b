"""Shared machinery of the GPU-style graph algorithms (docs/golden.md, "Algorithms").

An algorithm is a class with a ``run()`` that computes the per-vertex result with
numpy, one bulk-synchronous step at a time, and describes the kernels a CUDA
implementation would launch for each step on a :class:`golden.gpu.GPU`. Unit
modes (SCU, IRU, GraphPEG, MFF, EMOGI) are subclasses that replace some steps.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..gpu import GPU, ArrayRef

__all__ = ["RunResult", "Algorithm", "DeviceGraph", "segments", "first_in_warp", "CTA_THREADS",
           "cta_atomics", "AlgorithmError", "default_source"]

#: Threads per thread block.
CTA_THREADS = 256


class AlgorithmError(ValueError):
    """Bad algorithm input (source out of range, missing weights...)."""


@dataclass
class RunResult:
    """Outcome of one algorithm run."""

    algo: str
    mode: str
    graph: str
    key: str                        # name of the per-vertex result: depth, dist, rank, label, bc
    values: np.ndarray
    iterations: int
    wall_s: float
    gpu: dict | None = None         # GPU.report() when stats were recorded
    counters: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)   # mode-specific statistics (units)

    def summary(self) -> dict:
        d = {"algo": self.algo, "mode": self.mode, "graph": self.graph, "iterations": self.iterations,
             "wall_s": self.wall_s, "counters": self.counters, "extra": self.extra}
        if self.gpu is not None:
            d["gpu"] = self.gpu
        return d


def segments(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate the index ranges ``[starts[i], starts[i] + counts[i])``.

    Returns ``(positions, owner)``: every position and the index ``i`` of its range.
    """
    starts = np.asarray(starts, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    owner = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    offsets = np.cumsum(counts) - counts
    pos = np.arange(total, dtype=np.int64) - offsets[owner] + starts[owner]
    return pos, owner


def first_in_warp(values: np.ndarray, active: np.ndarray | None = None, warp: int = 32) -> np.ndarray:
    """True where ``values[j]`` is the first occurrence of its value among the
    active lanes of its warp (``j // warp``): Merrill's warp culling."""
    v = np.asarray(values, dtype=np.int64)
    n = v.size
    keep = np.zeros(n, bool)
    if n == 0:
        return keep
    act = np.ones(n, bool) if active is None else np.asarray(active, bool)
    rows = -(-n // warp)
    big = np.iinfo(np.int64).max
    mat = np.full(rows * warp, big, np.int64)
    mat[:n] = np.where(act, v, big)
    mat = mat.reshape(rows, warp)
    order = np.argsort(mat, axis=1, kind="stable")
    srt = np.take_along_axis(mat, order, axis=1)
    first = np.ones(srt.shape, bool)
    first[:, 1:] = srt[:, 1:] != srt[:, :-1]
    first &= srt != big
    flat = np.zeros(rows * warp, bool)
    flat[(order + (np.arange(rows) * warp)[:, None])[first]] = True
    keep[:] = flat[:n]
    return keep


def default_source(graph) -> int:
    """The vertex of largest out-degree (the smallest id among ties): always inside
    the giant component of a kron graph, where vertex 0 is often isolated."""
    deg = graph.degrees()
    return int(np.argmax(deg)) if deg.size else 0


def cta_atomics(k, counter: ArrayRef, threads: int) -> None:
    """One atomicAdd per thread block on a global counter (output allocation)."""
    nc = -(-int(threads) // CTA_THREADS)
    if nc:
        k.atomic(counter, np.zeros(nc, np.int64), tid=np.arange(nc, dtype=np.int64) * CTA_THREADS)


class DeviceGraph:
    """The CSR arrays of a graph placed in the GPU's memory (4-byte elements)."""

    def __init__(self, gpu: GPU, graph, *, weights: bool = False, prefix: str = ""):
        V, E = graph.num_vertices, graph.num_edges
        self.row_ptr = gpu.array(prefix + "row_ptr", V + 1)
        self.col = gpu.array(prefix + "col", E)
        self.weight = gpu.array(prefix + "weight", E) if weights else None


class Algorithm:
    """Base class: ``run()`` returns the per-vertex result.

    Parameters
    ----------
    graph : golden.graphs.CSRGraph
    gpu : GPU
    progress : callable(iteration, active) or None
    """

    name = ""
    key = ""
    mode = "baseline"
    needs_weights = False
    #: Whether the algorithm starts from a source vertex (option ``source``);
    #: giving a source to one that does not is an error, not silently ignored.
    takes_source = True

    def __init__(self, graph, gpu: GPU, *, progress: Callable | None = None, **options):
        self.graph = graph
        self.gpu = gpu
        self.progress = progress or (lambda it, active: None)
        self.options = options
        self.iterations = 0
        self.extra: dict = {}
        if not self.takes_source and options.get("source") is not None:
            raise AlgorithmError(f"{self.name} has no source vertex: it runs on every vertex (do not give a source)")
        if self.needs_weights and graph.weight is None:
            raise AlgorithmError(f"{self.name} needs edge weights: load the graph with weights "
                                 f"(`--weighted` or a weighted file)")
        self.check_options()
        self.setup()

    def check_options(self) -> None:
        pass

    def setup(self) -> None:
        self.dg = DeviceGraph(self.gpu, self.graph, weights=self.needs_weights)
        self.counter = self.gpu.array("counters", 16)

    def run(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def source(self) -> int:
        """The ``source`` option, or by default :func:`default_source`."""
        s = self.options.get("source")
        V = self.graph.num_vertices
        if s is None:
            if V == 0:
                raise AlgorithmError(f"{self.name} needs a source vertex, and the graph has none")
            s = default_source(self.graph)
        if not isinstance(s, (int, np.integer)) or not 0 <= s < V:
            raise AlgorithmError(f"source must be a vertex id in [0, {V - 1}], not {s!r}")
        self.extra["source"] = int(s)
        return int(s)

    def execute(self) -> RunResult:
        t0 = time.perf_counter()
        values = self.run()
        wall = time.perf_counter() - t0
        g = self.gpu
        return RunResult(self.name, self.mode, self.graph.name, self.key, values, self.iterations, wall,
                         g.report() if g.stats_on else None, dict(g.counters), dict(self.extra))
