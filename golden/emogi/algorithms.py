"""BFS, SSSP, CC and PageRank with the edge list (and weights) in host memory:
modes ``emogi-naive``, ``emogi-merged``, ``emogi-aligned`` (zero-copy over PCIe,
EMOGI §4) and ``uvm`` (the paper's baseline: pages migrated on demand) —
docs/emogi.md.

The algorithms are the baseline ones (golden/algorithms); each mode replaces the
kernel that reads adjacency lists with EMOGI's vertex-centric one (§4.2-4.3): one
worker (a thread, or a warp) per vertex of the graph reads the vertex's active
flag, and the active ones read their adjacency list from the host-resident edge
list. Active flags make a vertex active once per iteration however often it
entered the frontier (the baseline BFS frontier may hold duplicates). The result
computation is left as it is, so every mode gives the baseline's (and the
references') results. The vertex list, flags and per-vertex values stay in GPU
memory (EMOGI §4.2). GPU-memory accesses that follow the edge reads (the edge
frontier for the baseline's contraction, atomics on the targets) are described
as in the baseline.

Options (``run_algorithm(..., **options)``): ``pcie`` (a :class:`PCIeConfig` or a
preset name, default ``pcie3-x16``), ``uvm`` (a :class:`UVMConfig` or a preset
name), ``edge_bytes`` (4 or 8, default 8 as in the paper's main results; weights
are 4 B). Statistics: ``RunResult.extra["emogi"]`` (:meth:`HostMemory.summary`).
"""
from __future__ import annotations

import numpy as np

from ..algorithms import register_mode
from ..algorithms.bfs import BFS
from ..algorithms.cc import CC
from ..algorithms.common import AlgorithmError, cta_atomics, segments
from ..algorithms.pagerank import PageRank
from ..algorithms.sssp import SSSP
from ..config import Config, ConfigError
from .config import PCIeConfig, UVMConfig
from .host import HostMemory

__all__ = ["EMOGI_MODES", "BFSEMOGI", "SSSPEMOGI", "CCEMOGI", "PageRankEMOGI"]

#: Mode name -> variant.
EMOGI_MODES = {"emogi-naive": "naive", "emogi-merged": "merged", "emogi-aligned": "aligned", "uvm": "uvm"}


def _config(value, cls: type, default: str, option: str) -> Config:
    if value is None:
        return cls.preset(default)
    if isinstance(value, str):
        return cls.preset(value)
    if isinstance(value, cls):
        return value
    raise ConfigError(f"option {option} must be a {cls.__name__} or a preset name, not {value!r}")


class _EMOGIMode:
    """Mixin: host placement of the edge list, option checks, statistics."""

    variant = "merged"
    functional_shortcut = True

    @property
    def edge_graph(self):
        """The graph whose edge list the kernels read (CC: both directions)."""
        return getattr(self, "und", self.graph)

    def setup_host(self, weights: bool) -> None:
        o = self.options
        eb = o.get("edge_bytes", 8)
        if eb not in (4, 8) or isinstance(eb, bool):
            raise AlgorithmError(f"edge_bytes must be 4 or 8, not {eb!r}")
        g = self.edge_graph
        if eb == 4 and g.num_vertices > 1 << 32:
            raise AlgorithmError(f"4-byte edges hold at most 2**32 vertex ids, the graph has {g.num_vertices}")
        pcie = _config(o.get("pcie"), PCIeConfig, "pcie3-x16", "pcie")
        uvm = _config(o.get("uvm"), UVMConfig, "default", "uvm")
        prefix = "uvm:" if self.variant == "uvm" else "host:"
        E = g.num_edges
        self.h_col = self.gpu.array(prefix + "col", E, np.uint64 if eb == 8 else np.uint32)
        self.h_weight = self.gpu.array(prefix + "weight", E, np.float32) if weights else None
        self.a_active = self.gpu.array("emogi_active", g.num_vertices, np.uint8)
        arrays = [self.h_col] + ([self.h_weight] if weights else [])
        self.host = HostMemory(self.gpu, self.variant, pcie, uvm, arrays)

    def finish_extra(self) -> None:
        self.extra["emogi"] = self.host.summary()

    def execute(self):
        r = super().execute()
        self.finish_extra()
        r.extra = dict(self.extra)
        return r

    def active_lists(self, frontier: np.ndarray):
        """``(ids, starts, counts)``: the distinct active vertices in id order, and the
        per-vertex list ranges (``counts`` 0 for inactive vertices) the workers read."""
        g = self.edge_graph
        V = g.num_vertices
        counts = np.zeros(V, np.int64)
        ids = np.unique(frontier) if frontier.size else np.zeros(0, np.int64)
        counts[ids] = g.row_ptr[ids + 1] - g.row_ptr[ids]
        return ids, g.row_ptr[:-1], counts

    def vertex_kernel(self, k, ids: np.ndarray, per_vertex: list, arrays: list, starts, counts, *,
                      flags: bool = True) -> None:
        """The reads of one EMOGI kernel: the active flags (unless every vertex is
        active), the vertex list and ``per_vertex`` arrays of the active vertices, then
        their lists in the host ``arrays``."""
        h = self.host
        if flags:
            h.scan(k, self.a_active, self.edge_graph.num_vertices)
        h.load_active(k, self.dg.row_ptr, ids)
        h.load_active(k, self.dg.row_ptr, ids, 1)
        for arr in per_vertex:
            h.load_active(k, arr, ids)
        h.read(k, arrays, starts, counts)


# ---------------------------------------------------------------------- BFS
class BFSEMOGI(_EMOGIMode, BFS):
    """BFS whose expansion reads the frontier's adjacency lists from host memory."""

    def setup(self) -> None:
        super().setup()
        self.setup_host(weights=False)

    def expand(self, nf: np.ndarray) -> np.ndarray:
        g, h = self.graph, self.host
        ids, starts, counts = self.active_lists(nf)
        pos, _ = segments(starts[ids], counts[ids])
        self.gpu.count("edges", pos.size)
        self.gpu.count("frontier_vertices", ids.size)
        self.gpu.count("gpu_nodes", ids.size)
        threads = h.threads(g.num_vertices)
        with self.gpu.kernel("emogi_bfs_expand", threads) as k:
            self.vertex_kernel(k, ids, [], [self.h_col], starts, counts)
            k.store(self.a_ef, range(pos.size))
            cta_atomics(k, self.counter, threads)
        h.account(k)
        return g.col[pos].astype(np.int64)


# ---------------------------------------------------------------------- SSSP
class SSSPEMOGI(_EMOGIMode, SSSP):
    """Near-far SSSP whose expansion reads adjacency lists and weights from host memory."""

    def setup(self) -> None:
        super().setup()
        self.setup_host(weights=True)

    def expand(self, nf: np.ndarray, dist: np.ndarray):
        g, h = self.graph, self.host
        ids, starts, counts = self.active_lists(nf)
        pos, owner = segments(starts[ids], counts[ids])
        self.gpu.count("edges", pos.size)
        self.gpu.count("frontier_vertices", ids.size)
        self.gpu.count("gpu_nodes", ids.size)
        threads = h.threads(g.num_vertices)
        with self.gpu.kernel("emogi_sssp_expand", threads) as k:
            self.vertex_kernel(k, ids, [self.a_dist], [self.h_col, self.h_weight], starts, counts)
            k.store(self.a_ev, range(pos.size))
            k.store(self.a_ec, range(pos.size))
            cta_atomics(k, self.counter, threads)
        h.account(k)
        return g.col[pos].astype(np.int64), dist[ids][owner] + g.weight[pos]


# ---------------------------------------------------------------------- CC
class CCEMOGI(_EMOGIMode, CC):
    """Min-label propagation whose push kernel reads adjacency lists from host memory."""

    def setup(self) -> None:
        super().setup()
        self.setup_host(weights=False)

    def describe_push(self, front: np.ndarray, pos: np.ndarray, v: np.ndarray, lower: np.ndarray) -> None:
        h = self.host
        threads = h.threads(self.und.num_vertices)
        ids, all_starts, all_counts = self.active_lists(front)
        with self.gpu.kernel("emogi_cc_push", threads) as k:
            self.vertex_kernel(k, ids, [self.a_label], [self.h_col], all_starts, all_counts)
            k.atomic(self.a_label, v)
            k.store(self.a_flag, v, active=lower)
        h.account(k)


# ---------------------------------------------------------------------- PageRank
class PageRankEMOGI(_EMOGIMode, PageRank):
    """Push PageRank whose push kernel is vertex-centric over the host-resident edge list."""

    def setup(self) -> None:
        super().setup()
        self.setup_host(weights=False)

    def push(self, contrib: np.ndarray) -> np.ndarray:
        g, h = self.graph, self.host
        V, E = g.num_vertices, g.num_edges
        src = g.src()
        threads = h.threads(V)
        ids = np.arange(V, dtype=np.int64)
        with self.gpu.kernel("emogi_pr_push", threads) as k:
            self.vertex_kernel(k, ids, [self.a_contrib], [self.h_col], g.row_ptr[:-1], g.degrees(), flags=False)
            k.atomic(self.a_next, g.col)
        h.account(k)
        if not E:
            return np.zeros(V)
        return np.bincount(g.col, weights=contrib[src], minlength=V)


for _mode, _variant in EMOGI_MODES.items():
    for _algo, _base in (("bfs", BFSEMOGI), ("sssp", SSSPEMOGI), ("cc", CCEMOGI), ("pr", PageRankEMOGI)):
        _cls = type(f"{_base.__name__}_{_variant}", (_base,), {"variant": _variant, "mode": _mode})
        register_mode(_algo, _mode, _cls)
