"""The GraphPEG side of an algorithm run: the graph's arrays in the engines' memory,
the vertex lists fed through ``__push_vert``, kernels run by a *backend* (the TLM,
or the RTL under cocotb: ``sim/graphpeg/``), their description for the GPU model,
and the statistics (docs/graphpeg.md, "Algorithms").

A backend has ``config``, ``sms``, ``space``, ``name`` and the methods
``place(name, values) -> address``, ``setup(spill_stride)``, ``push({sm: vertices})``,
``run(kernel, latency=, consume=, warps=) -> KernelResult`` and ``requests() -> dict``
(the engines' memory requests so far, by kind).
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ..algorithms.common import CTA_THREADS, AlgorithmError
from ..memory import AddressSpace, place_array
from .config import GraphPEGConfig
from .fast import GRAPHPEG_MODELS, GraphPEGFastModel
from .tlm import GraphPEGError, GraphPEGKernel, GraphPEGModel, KernelResult

__all__ = ["GraphPEGTLMBackend", "GraphPEGSession", "first_occurrence", "reserve_spill", "REQUEST_KINDS"]

REQUEST_KINDS = ("index", "edge", "weight", "refill", "spill")


def reserve_spill(space: AddressSpace, arrays: dict, sms: int, spill_stride: int) -> int:
    """Reserve the vertex lists' spill region (two lists per SM, ``spill_stride``
    bytes each) after the arrays placed in ``space``; returns its base (TLM and RTL
    backends alike)."""
    base = space.reserve(f"spill#{len(arrays)}", 2 * sms * spill_stride, np.uint8, align=256)
    arrays["spill"] = (base, 0)
    return base


class GraphPEGTLMBackend:
    """GraphPEG kernels run by a transaction-level model: ``model="fast"``
    (:class:`~golden.graphpeg.fast.GraphPEGFastModel`, the default of the
    algorithm runs) or ``"cycle"`` (:class:`GraphPEGModel`, the RTL's reference)."""

    name = "tlm"

    def __init__(self, config: GraphPEGConfig, *, sms: int | None = None, space: AddressSpace | None = None,
                 model: str = "cycle"):
        if model not in GRAPHPEG_MODELS:
            raise AlgorithmError(f"graphpeg_model must be one of {', '.join(GRAPHPEG_MODELS)}, not {model!r}")
        self.config = config
        self.sms = int(sms or config.sms)
        self.space = space or AddressSpace(addr_bits=config.addr_width)
        self.model_name = model
        cls = GraphPEGFastModel if model == "fast" else GraphPEGModel
        self.model = cls(config, self.space, sms=self.sms)
        self._arrays: dict = {}

    def place(self, name: str, values: np.ndarray) -> int:
        return place_array(self.space, self._arrays, name, values)

    def setup(self, spill_stride: int) -> None:
        self.model.setup(reserve_spill(self.space, self._arrays, self.sms, spill_stride), spill_stride)

    def push(self, pushes: dict) -> None:
        for sm, vs in pushes.items():
            self.model.push(sm, vs)

    def run(self, kernel: GraphPEGKernel, *, latency: int = 1, consume: float = 0.0, warps: int = 64) -> KernelResult:
        return self.model.run(kernel, latency=latency, consume=consume, warps=warps)

    def requests(self) -> dict:
        return dict(self.model.requests)


def first_occurrence(values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Positions (ascending) of the first occurrence of every distinct value among
    ``values[mask]``: the lanes whose atomic operation wins, in pop order."""
    idx = np.arange(values.size) if mask is None else np.flatnonzero(mask)
    if idx.size == 0:
        return idx
    v = values[idx]
    # only the first of a run of equal neighbours can be a first occurrence: the
    # sort below sees the runs' heads (a kernel's items come vertex by vertex)
    head = np.empty(v.size, bool)
    head[0] = True
    np.not_equal(v[1:], v[:-1], out=head[1:])
    idx, v = idx[head], v[head]
    _, first = np.unique(v, return_index=True)
    return np.sort(idx[first])


class GraphPEGSession:
    """One algorithm run's use of GraphPEG.

    Parameters
    ----------
    backend : GraphPEGTLMBackend or an RTL backend
    gpu : golden.gpu.GPU
    graph : CSRGraph
        Placed as ``row_ptr``/``col`` (and ``weight`` with ``weights``, 32-bit
        unsigned integers); with ``csc`` its transpose too (pull kernels).
    latency : int or None
        Memory latency of the TLM's requests (cycles). None (the default): the
        engines' requests go through the GPU's memory system (their SM's L1, the
        L2, DRAM) and the TLM runs each kernel at the mean load latency of that
        kernel's previous launch (its first at the L2 hit latency): docs/graphpeg.md,
        "Time".
    """

    def __init__(self, backend, gpu, graph, *, weights: bool = False, csc: bool = False,
                 latency: int | None = None):
        self.backend = backend
        self.config: GraphPEGConfig = backend.config
        self.sms = backend.sms
        self.gpu = gpu
        self.fixed_latency = None if latency is None else int(latency)
        self.latency = self.fixed_latency or gpu.config.l2_latency
        self._lat: dict[str, float] = {}
        V, E = graph.num_vertices, graph.num_edges
        # The engines' requests on the GPU's memory system: the GPU's arrays.
        self.on_memory_system = self.fixed_latency is None and bool(getattr(gpu, "stats_on", False))
        self.g_arrays = {"row_ptr": gpu.array("row_ptr", V + 1), "col": gpu.array("col", E)}
        if weights:
            self.g_arrays["weight"] = gpu.array("weight", E)
        if csc:
            self.g_arrays["csc_row_ptr"] = gpu.array("csc_row_ptr", V + 1)
            self.g_arrays["csc_col"] = gpu.array("csc_col", E)
        self.g_spill = gpu.queue("graphpeg_spill")
        self._spill_pos = 0
        self._last = None
        if V >= 1 << 32 or E >= 1 << 32:
            raise AlgorithmError("GraphPEG's 32-bit vertex ids and edge indices hold at most 2**32 - 1 vertices "
                                 "and edges")
        self.row_ptr = backend.place("row_ptr", graph.row_ptr.astype(np.uint32))
        self.col = backend.place("col", graph.col.astype(np.uint32))
        self.weight = backend.place("weight", graph.weight.astype(np.uint32)) if weights else None
        if csc:
            t = graph.transpose()
            self.csc_row_ptr = backend.place("csc_row_ptr", t.row_ptr.astype(np.uint32))
            self.csc_col = backend.place("csc_col", t.col.astype(np.uint32))
        bb = self.config.block_bytes
        # A list never holds more than one push per edge (plus the host's pushes).
        stride = 4 * (max(V, E) + 2 * bb)
        backend.setup(-(-stride // bb) * bb)
        self.kernels = 0
        self.items = 0
        self.batches = 0
        self.engine_cycles = 0
        self.exchanges = 0
        self.moved = 0
        self.imb = [0.0, 0.0, 0]            # sum of items x imbalance (with, without EF), items
        self.pushed = 0
        self.mem_error = False
        self.overflow = False
        self.consume: dict[str, float] = {}
        self._req_seen = {k: 0 for k in REQUEST_KINDS}

    # ------------------------------------------------------------------ vertex lists
    def push(self, sms: np.ndarray, vertices: np.ndarray) -> int:
        """``__push_vert`` of ``vertices[i]`` by a warp on SM ``sms[i]`` (in order)."""
        vertices = np.asarray(vertices, np.int64)
        sms = np.asarray(sms, np.int64)
        if vertices.size == 0:
            return 0
        order = np.argsort(sms, kind="stable")
        s_sorted = sms[order]
        cut = np.flatnonzero(np.diff(s_sorted)) + 1
        groups = {}
        for part in np.split(order, cut):
            groups[int(sms[part[0]])] = vertices[part]
        try:
            self.backend.push(groups)
        except GraphPEGError as e:
            raise AlgorithmError(f"GraphPEG: {e}") from None
        self.pushed += int(vertices.size)
        return int(vertices.size)

    def push_threads(self, vertices: np.ndarray, tids: np.ndarray | None = None) -> int:
        """``__push_vert(vertices[i])`` by thread ``tids[i]`` (default ``i``) of a GPU
        kernel: thread blocks of 256 threads go to the SMs round robin."""
        vertices = np.asarray(vertices, np.int64)
        t = np.arange(vertices.size, dtype=np.int64) if tids is None else np.asarray(tids, np.int64)
        return self.push((t // CTA_THREADS) % self.sms, vertices)

    # ------------------------------------------------------------------ kernels
    def run(self, name: str, mode: str = "edge", *, csc: bool = False, weights: bool = False):
        """Run one kernel; returns ``(KernelResult, items)`` where ``items`` are the
        popped items in pop order (:meth:`KernelResult.arrays`) plus ``tid``: the
        thread of each item (one warp per batch)."""
        if mode == "edge":
            k = GraphPEGKernel("edge", row_ptr=self.csc_row_ptr if csc else self.row_ptr,
                               col=self.csc_col if csc else self.col,
                               weight=self.weight if weights else None, csc=csc)
        else:
            k = GraphPEGKernel("vertex")
        lat = self.fixed_latency or int(round(self._lat.get(name, self.gpu.config.l2_latency)))
        self._last = (mode, csc, weights)
        try:
            res = self.backend.run(k, latency=lat, consume=self.consume.get(name, 1.0),
                                   warps=max(1, self.gpu.config.threads_per_sm // self.gpu.config.warp_size))
        except GraphPEGError as e:
            raise AlgorithmError(f"GraphPEG: {e}") from None
        if res.mem_error:
            raise AlgorithmError(f"GraphPEG reported a memory error in kernel {name}")
        self.overflow |= res.spill_overflow
        if res.spill_overflow:
            raise AlgorithmError(f"GraphPEG: a vertex list overflowed its spill region in kernel {name}")
        a = res.arrays()
        a["tid"] = a["batch"] * self.gpu.config.warp_size + a["lane"]
        n = res.items
        self.kernels += 1
        self.items += n
        self.batches += len(res.batches)
        self.engine_cycles += res.cycles
        self.exchanges += res.exchanges
        self.moved += res.moved
        if n:
            mean = n / self.sms
            self.imb[0] += n * max(res.sm_items) / mean
            self.imb[1] += n * max(res.sm_items_no_ef) / mean
            self.imb[2] += n
        self.gpu.count("gpu_edges" if mode == "edge" else "gpu_nodes", n)
        return res, a

    def _sectors(self, name: str) -> int:
        st = self.gpu.kernels.get(name) if self.gpu.stats_on else None
        return st.sectors if st is not None else 0

    def _engine_request_counts(self) -> dict:
        """The engines' requests per kind since the last call (the TLM's counts)."""
        now = self.backend.requests()
        d = {k: now.get(k, 0) - self._req_seen[k] for k in REQUEST_KINDS}
        self._req_seen = {k: now.get(k, 0) for k in REQUEST_KINDS}
        return d

    @contextmanager
    def describe(self, name: str, res: KernelResult, items: dict):
        """The GPU kernel that consumed ``res``: the body describes the warps'
        accesses (thread ``items['tid']``); the engine's requests and cycles are
        added as the unit's work, and the kernel's sectors per item become the
        consumer's LD/ST demand of its next launch."""
        ws = self.gpu.config.warp_size
        before = self._sectors(name)
        with self.gpu.kernel(name, max(len(res.batches), 1) * ws) as k:
            yield k
            # one pop and a loop branch per batch, plus the final pop that returns -1
            k.alu(2 * len(res.batches) + 2 * self.sms)
            bb = self.config.block_bytes
            sec = self.gpu.config.sector_bytes
            delta = self._engine_request_counts()
            if self.on_memory_system:
                self._engine_traffic(k, items, delta)
                k.unit(0, res.cycles)
            else:
                k.unit(sum(delta.values()) * max(1, bb // sec), res.cycles)
        if self.gpu.stats_on and res.items:
            self.consume[name] = (self._sectors(name) - before) / res.items
        if self.on_memory_system and self.gpu.stats_on:
            self._lat[name] = float(k.stats.latency)      # the next launch's engine latency

    def _engine_traffic(self, k, items: dict, delta: dict) -> None:
        """The engines' requests of one kernel on the GPU's memory system, from the
        SM that issued them (docs/graphpeg.md, "Time"): an edge kernel's engines
        read ``row_ptr[v]`` and ``row_ptr[v + 1]`` of every vertex they pop (a
        sector each, distinct per SM), the blocks of ``col`` (and ``weight``) that
        hold the popped edges (distinct per SM, in pop order); the vertex lists'
        spills and refills (the TLM's counts) go to a spill region, SM by SM."""
        mode, csc, weights = self._last
        bb = self.config.block_bytes
        line = self.gpu.config.line_bytes
        step = min(bb, line)
        sm = np.asarray(items.get("sm", np.zeros(0, np.int64)), np.int64)

        def distinct(sms, addrs, size):
            if addrs.size == 0:
                return
            first = first_occurrence(sms * (1 << 40) + addrs // size)
            blk = (addrs[first] // size) * size
            reps = max(1, size // step)
            a = (blk[:, None] + np.arange(0, size, step, dtype=np.int64)[None, :]).reshape(-1)
            k.unit_requests("load", a, step, place="sm", sm=np.repeat(sms[first], reps))

        if mode == "edge" and sm.size:
            rp = self.g_arrays["csc_row_ptr" if csc else "row_ptr"]
            cl = self.g_arrays["csc_col" if csc else "col"]
            src, idx = np.asarray(items["src"], np.int64), np.asarray(items["idx"], np.int64)
            sec = self.gpu.config.sector_bytes
            distinct(np.concatenate((sm, sm)), np.concatenate((rp.addr(src), rp.addr(src + 1))), sec)
            distinct(sm, cl.addr(idx), bb)
            if weights and "weight" in self.g_arrays:
                distinct(sm, self.g_arrays["weight"].addr(idx), bb)
        for kind in ("spill", "refill"):
            n = int(delta.get(kind, 0))
            if n:
                addrs = self.g_spill.base + (self._spill_pos + np.arange(n, dtype=np.int64)) * bb
                self._spill_pos += n
                sms = np.arange(n, dtype=np.int64) % self.sms
                reps = max(1, bb // step)
                a = (addrs[:, None] + np.arange(0, bb, step, dtype=np.int64)[None, :]).reshape(-1)
                k.unit_requests("store" if kind == "spill" else "load", a, step, place="sm",
                                sm=np.repeat(sms, reps))

    # ------------------------------------------------------------------ results
    def summary(self) -> dict:
        req = self.backend.requests()
        eng = int(sum(req.get(k, 0) for k in REQUEST_KINDS))
        lanes = self.items
        d = {"backend": getattr(self.backend, "name", type(self.backend).__name__),
             "model": getattr(self.backend, "model_name", None), "sms": self.sms,
             "alwt_entries": self.config.alwt_entries, "ef_enabled": self.config.ef_enabled,
             "kernels": self.kernels, "items": self.items, "warp_batches": self.batches,
             "engine_cycles": self.engine_cycles,
             "edges_per_cycle_per_sm": self.items / (self.engine_cycles * self.sms) if self.engine_cycles else 0.0,
             "warp_utilisation": lanes / (self.batches * self.config.warp_size) if self.batches else 0.0,
             "load_imbalance": self.imb[0] / self.imb[2] if self.imb[2] else 1.0,
             "load_imbalance_no_ef": self.imb[1] / self.imb[2] if self.imb[2] else 1.0,
             "exchanges": self.exchanges, "moved_edges": self.moved, "pushed": self.pushed,
             "engine_requests": eng}
        for k in REQUEST_KINDS:
            d[f"{k}_requests"] = int(req.get(k, 0))
        return d
