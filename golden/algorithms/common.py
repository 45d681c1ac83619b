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
           "cta_atomics", "AlgorithmError", "default_source", "unit_options", "reference_run", "REFERENCE_RUNS"]

#: Threads per thread block.
CTA_THREADS = 256

#: Reference runs kept by :func:`reference_run` (the latest first out when full).
REFERENCE_RUNS = 16
_reference_cache: dict = {}


def _graph_fingerprint(graph) -> str:
    import hashlib
    h = hashlib.blake2b(digest_size=16)
    for a in (graph.row_ptr, graph.col, graph.weight):
        if a is not None:
            a = np.ascontiguousarray(a)
            h.update(f"{a.dtype}{a.shape}".encode())
            h.update(a.data)
    h.update(repr(graph.directed).encode())
    return h.hexdigest()


def reference_run(graph, mode_cls, gpu: GPU, options: dict) -> tuple[dict, dict]:
    """The GPU totals and counters of ``mode_cls`` (the mode a unit mode compares
    itself with: ``compare_baseline``) on ``graph`` with ``options``, on a fresh GPU
    of ``gpu``'s configuration, caches and cache model.

    The run is deterministic, so it is kept (in this process, the last
    :data:`REFERENCE_RUNS`) by the graph's contents, the mode, the options and the
    GPU: a sweep of a unit's parameters on one graph pays its reference once
    (docs/benchmarks.md, "Mode speed")."""
    import json
    key = (_graph_fingerprint(graph), f"{mode_cls.__module__}.{mode_cls.__qualname__}",
           json.dumps(options, sort_keys=True, default=repr), gpu.config.to_json(), gpu.caches, gpu.cache_model)
    hit = _reference_cache.pop(key, None)
    if hit is None:
        g2 = GPU(gpu.config, stats=True, caches=gpu.caches, cache_model=gpu.cache_model)
        b = mode_cls(graph, g2, **options).execute()
        hit = (dict(b.gpu["total"]), dict(b.counters))
        while len(_reference_cache) >= REFERENCE_RUNS:
            _reference_cache.pop(next(iter(_reference_cache)))
    _reference_cache[key] = hit
    return dict(hit[0]), dict(hit[1])


class AlgorithmError(ValueError):
    """Bad algorithm input (source out of range, missing weights...)."""


def unit_options() -> dict[tuple[str, str], tuple[str, ...]]:
    """The options that the classes of the units' golden models read, by
    ``(module, class name)``, from the units' descriptors (``options``,
    golden/units.py): the units' mode classes (mixins and their subclasses) are
    not annotated with :attr:`Algorithm.option_names` themselves;
    :meth:`Algorithm.accepted_options` merges the entries of every class along the
    MRO. A class may also set ``option_names`` itself (both count).
    verif/test_algorithms.py checks that every option a registered mode's classes
    read by name (``self.options.get("x")``...) is listed."""
    from ..units import units
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for u in units().values():
        out.update(u.option_table())
    return out


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
    active lanes of its warp (``j // warp``): Merrill's warp culling.

    Each row of the ``(warps, warp)`` matrix of keys ``value << log2(warp) | lane``
    (inactive lanes: the largest key) is sorted; the first key of each value
    names the lane to keep."""
    v = np.asarray(values, dtype=np.int64)
    n = v.size
    if n == 0:
        return np.zeros(0, bool)
    if warp & (warp - 1) or warp < 1:
        raise ValueError(f"warp must be a power of two, not {warp}")
    lb = (warp - 1).bit_length()
    if int(v.min()) < 0 or int(v.max()) >= 1 << (62 - lb):
        raise ValueError(f"first_in_warp takes values in [0, 2**{62 - lb})")
    rows = -(-n // warp)
    big = np.iinfo(np.int64).max
    key = np.full(rows * warp, big, np.int64)
    key[:n] = (v << lb) if active is None else np.where(np.asarray(active, bool), v << lb, big)
    key |= np.arange(rows * warp, dtype=np.int64) & (warp - 1)      # (big stays big)
    key = key.reshape(rows, warp)
    key.sort(axis=1)
    first = np.empty(key.shape, bool)
    first[:, 0] = True
    val = key >> lb
    np.not_equal(val[:, 1:], val[:, :-1], out=first[:, 1:])
    first &= key != big
    keep = np.zeros(rows * warp, bool)
    keep[((key & (warp - 1)) + (np.arange(rows, dtype=np.int64) * warp)[:, None])[first]] = True
    return keep[:n]


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


#: Mode ``lb`` (docs/golden.md, "Load-balanced advance"): Gunrock's
#: load-balanced partitioning advance. Warp instructions per warp of the CTA-wide
#: exclusive scan of the frontier's degrees: CUB's BlockScanWarpScans on 256
#: threads is 5 shuffle steps of about 3 instructions (SHFL.UP, compare, add),
#: the warp totals through shared memory (store, barrier, 8 loads and adds) and
#: the final add: about 32.
LB_SCAN_ALU = 32
#: Warp instructions per step of each thread's binary search for its source vertex
#: in the CTA's tile of scanned offsets in shared memory (load, compare, select).
LB_SEARCH_ALU = 3
#: Edges per CTA tile of the advance (256 threads, one edge each).
LB_TILE = 256


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
    #: The options this class reads (``run_algorithm`` keywords); a class takes
    #: those of every class in its MRO (:meth:`accepted_options`), any other name
    #: is an error. ``source`` is taken by all (``source=None`` is always allowed).
    option_names: tuple[str, ...] = ("source",)
    #: Mode ``lb``: the expansions pay Gunrock's load-balanced advance
    #: (:meth:`lb_scan`, :meth:`lb_search`); False: the expansions' edges are
    #: spread over the threads for free.
    load_balanced = False

    @classmethod
    def accepted_options(cls) -> frozenset[str]:
        """The option names this class takes: ``option_names`` and the
        :func:`unit_options` entries of every class along its MRO."""
        names: set[str] = set()
        table = unit_options()
        for c in cls.__mro__:
            names.update(vars(c).get("option_names", ()))
            names.update(table.get((c.__module__, c.__name__), ()))
        return frozenset(names)

    @classmethod
    def check_option_names(cls, options) -> None:
        """Every name in ``options`` is one this class takes (:meth:`accepted_options`)."""
        allowed = cls.accepted_options()
        unknown = [k for k in options if k not in allowed]
        if unknown:
            raise AlgorithmError(f"{cls.name} in mode {cls.mode} takes no option "
                                 f"{', '.join(map(repr, unknown))}; its options: {', '.join(sorted(allowed))}")

    @classmethod
    def check_option_values(cls, options: dict) -> None:
        """The checks of option values that need no graph (``source`` an integer
        >= 0 where the algorithm has one, PageRank's ``damping``...): run before
        every run and by ``graphunits sweep`` when it reads a sweep file.
        Subclasses extend it (calling ``super()``); checks that need the graph go
        in :meth:`check_options`."""
        s = options.get("source")
        if s is None:
            return
        if not cls.takes_source:
            raise AlgorithmError(f"{cls.name} has no source vertex: it runs on every vertex (do not give a source)")
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)) or s < 0:
            raise AlgorithmError(f"source must be a vertex id (an integer >= 0), not {s!r}")

    def __init__(self, graph, gpu: GPU, *, progress: Callable | None = None, **options):
        self.graph = graph
        self.gpu = gpu
        self.progress = progress or (lambda it, active: None)
        self.options = options
        self.check_option_names(options)
        self.iterations = 0
        self.extra: dict = {}
        self.check_option_values(options)
        if self.needs_weights and graph.weight is None:
            raise AlgorithmError(f"{self.name} needs edge weights: load the graph with weights "
                                 f"(`--weighted` or a weighted file)")
        with np.errstate(over="ignore"):   # checks of huge weights compare with inf, quietly
            self.check_options()
        self.setup()

    def check_options(self) -> None:
        """Checks that need the graph (weights...); after :meth:`check_option_values`."""

    # -- an advance over a vertex frontier's out-edges ----------------------------------
    def advance_edges(self, front: np.ndarray, front_array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The out-edges of ``front``: ``(pos, owner, counts)`` (each edge's position
        in ``col``, the frontier index of its source, each vertex's degree); counts
        the edges and the frontier vertices and, load-balanced, runs the advance's
        scan kernel (:meth:`lb_scan`)."""
        g = self.graph
        starts = g.row_ptr[front]
        counts = g.row_ptr[front + 1] - starts
        pos, owner = segments(starts, counts)
        self.gpu.count("edges", pos.size)
        self.gpu.count("frontier_vertices", front.size)
        self.lb_scan(front_array, front)
        return pos, owner, counts

    def advance_loads(self, k, front: np.ndarray, front_array, counts: np.ndarray, owner: np.ndarray) -> None:
        """The advance kernel's first accesses: the load-balancing search
        (:meth:`lb_search`), then each thread's frontier vertex and its ``row_ptr`` pair."""
        self.lb_search(k, counts, owner)
        k.load(front_array, range(front.size))
        k.load(self.dg.row_ptr, front)
        k.load(self.dg.row_ptr, front + 1)

    # -- Gunrock's load-balanced advance (mode "lb") -----------------------------------
    def lb_scan(self, front_array, front: np.ndarray) -> None:
        """The advance's first kernel: a thread per frontier vertex reads it and its
        ``row_ptr`` pair, the CTA scans the degrees (:data:`LB_SCAN_ALU`) and one
        atomic per CTA chains the CTAs (a single-pass scan), and the scanned
        offsets are stored. Nothing unless ``load_balanced``."""
        if not self.load_balanced or not front.size or not self.gpu.stats_on:
            return
        n = front.size
        off = self.gpu.queue("lb_offsets")
        with self.gpu.kernel(f"{self.name}_lb_scan", n, phases=2) as k:
            k.load(front_array, range(n))
            k.load(self.dg.row_ptr, front)
            k.load(self.dg.row_ptr, front + 1)
            k.store(off, range(n))
            k.alu(LB_SCAN_ALU * -(-n // self.gpu.config.warp_size))
            cta_atomics(k, self.counter, n)

    def lb_search(self, k, counts: np.ndarray, owner: np.ndarray, first_tid: int = 0) -> None:
        """Inside the advance kernel (threads ``first_tid ..`` one per edge, in tiles
        of :data:`LB_TILE`): each tile's first thread finds the tile's first source
        vertex by a binary search of the scanned offsets in global memory (one
        dependent load per step, the real search path), the tile's offsets are
        loaded into shared memory (a load per thread of its source's offset,
        coalesced), and every thread searches them for its source
        (:data:`LB_SEARCH_ALU` per step). Nothing unless ``load_balanced``."""
        if not self.load_balanced or not owner.size or not self.gpu.stats_on:
            return
        ws = self.gpu.config.warp_size
        off_arr = self.gpu.queue("lb_offsets")
        counts = np.asarray(counts, np.int64)
        n = counts.size
        off = np.concatenate(([0], np.cumsum(counts)))             # exclusive scan, n + 1 entries
        e0 = np.arange(0, owner.size, LB_TILE, dtype=np.int64)     # each tile's first edge
        lo, hi = np.zeros(e0.size, np.int64), np.full(e0.size, n, np.int64)
        steps = max(1, int(np.ceil(np.log2(n + 1))))
        for step in range(steps):                                   # the tiles' global binary searches
            mid = (lo + hi) // 2
            k.load(off_arr, mid, tid=first_tid + e0, slot=step)
            right = off[mid] <= e0
            lo = np.where(right, mid, lo)
            hi = np.where(right, hi, mid)
        k.load(off_arr, owner, tid=first_tid + np.arange(owner.size, dtype=np.int64))
        local = max(1, int(np.ceil(np.log2(min(LB_TILE, n) + 1))))
        k.alu(LB_SEARCH_ALU * local * -(-owner.size // ws))

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
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < V:
            raise AlgorithmError(f"source must be a vertex id in [0, {V - 1}], not {s!r}")
        self.extra["source"] = int(s)
        return int(s)

    def check_path_costs(self, values: np.ndarray) -> None:
        """Path costs (sums of weights) that overflowed float64: a vertex with an
        in-edge from a reached vertex is reached, so an infinite cost there is an
        overflow, not "unreachable" (an error rather than a silently wrong answer)."""
        g = self.graph
        if not g.num_edges or values.dtype.kind != "f":
            return
        bad = np.isfinite(values[g.src()]) & ~np.isfinite(values[g.col])
        if bad.any():
            v = int(g.col[np.flatnonzero(bad)[0]])
            raise AlgorithmError(f"{self.name}: the path cost of vertex {v} exceeds the float64 range "
                                 f"(~1.8e308): the edge weights are too large; scale them down")

    def execute(self) -> RunResult:
        t0 = time.perf_counter()
        if self.needs_weights:          # path costs are sums of weights: an overflow is an error
            with np.errstate(over="ignore"):
                values = self.run()
            self.check_path_costs(values)
        else:
            values = self.run()
        wall = time.perf_counter() - t0
        g = self.gpu
        return RunResult(self.name, self.mode, self.graph.name, self.key, values, self.iterations, wall,
                         g.report() if g.stats_on else None, dict(g.counters), dict(self.extra))
