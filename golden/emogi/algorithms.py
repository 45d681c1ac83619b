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

Options (``run_algorithm(..., **options)``, all checked, bad values raise
:class:`AlgorithmError` or :class:`ConfigError` with a one-line message):

* ``pcie``: a :class:`PCIeConfig` or a preset name (``pcie3-x16``, the default;
  ``pcie4-x16``); every mode;
* ``edge_bytes``: 4 or 8 (default 8 as in the paper's main results; weights are
  4 B); every mode;
* ``uvm``: a :class:`UVMConfig` or a preset name (``default``, ``v100``,
  ``fits``); mode ``uvm`` only;
* ``uvm_capacity``: GPU memory for migrated pages, a ratio of the host data
  (``0.5``, ``"0.5"``) or a size with a unit (``"8GiB"``, ``"512MB"``,
  :func:`parse_capacity`); replaces the capacity of ``uvm``; mode ``uvm`` only;
* ``backend``: a warp-coalescer backend (:mod:`.datapath`; the RTL in
  ``graphunits cosim --unit coalescer``) through which every host read goes:
  the lanes take the edge list and weights from its requests' payloads; the
  zero-copy modes only.

Statistics: ``RunResult.extra["emogi"]`` (:meth:`HostMemory.summary`).
"""
from __future__ import annotations

import numpy as np

from ..perf import unique
from ..algorithms import register_mode
from ..algorithms.bfs import BFS
from ..algorithms.cc import CC
from ..algorithms.common import AlgorithmError, cta_atomics, segments
from ..algorithms.pagerank import PageRank
from ..algorithms.sssp import SSSP
from ..config import Config, ConfigError
from .config import PCIeConfig, UVMConfig, parse_capacity
from .datapath import CoalescerError
from .host import HostMemory

__all__ = ["EMOGI_MODES", "BFSEMOGI", "SSSPEMOGI", "CCEMOGI", "PageRankEMOGI"]

#: Mode name -> variant.
EMOGI_MODES = {"emogi-naive": "naive", "emogi-merged": "merged", "emogi-aligned": "aligned", "uvm": "uvm"}
EMOGI_MODE_OF = {v: k for k, v in EMOGI_MODES.items()}


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

    @property
    def functional_shortcut(self) -> bool:
        # With a coalescer in the loop the lists must be read even without statistics.
        return self.options.get("backend") is None

    @property
    def edge_graph(self):
        """The graph whose edge list the kernels read (CC: both directions)."""
        return getattr(self, "und", self.graph)

    def setup_host(self, weights: bool) -> None:
        o = self.options
        mode = EMOGI_MODE_OF[self.variant]
        eb = o.get("edge_bytes", 8)
        if isinstance(eb, bool) or eb not in (4, 8):
            raise AlgorithmError(f"edge_bytes must be 4 or 8, not {eb!r}")
        g = self.edge_graph
        if eb == 4 and g.num_vertices > 1 << 32:
            raise AlgorithmError(f"4-byte edges hold at most 2**32 vertex ids, the graph has {g.num_vertices}")
        pcie = _config(o.get("pcie"), PCIeConfig, "pcie3-x16", "pcie")
        for name in ("uvm", "uvm_capacity"):
            if o.get(name) is not None and self.variant != "uvm":
                raise AlgorithmError(f"option {name} applies to mode uvm, not {mode}")
        uvm = _config(o.get("uvm"), UVMConfig, "default", "uvm")
        if o.get("uvm_capacity") is not None:
            uvm = uvm.replace(**parse_capacity(o["uvm_capacity"]))
        backend = o.get("backend")
        if backend is not None and self.variant == "uvm":
            raise AlgorithmError("option backend (a warp coalescer in the loop) needs a zero-copy mode "
                                 "(emogi-naive, emogi-merged, emogi-aligned), not uvm")
        prefix = "uvm:" if self.variant == "uvm" else "host:"
        E = g.num_edges
        col_t = np.uint64 if eb == 8 else np.uint32
        host = self.variant != "uvm"        # zero-copy: the edge list stays in pinned host memory
        self.h_col = self.gpu.array(prefix + "col", E, col_t, host=host)
        self.h_weight = self.gpu.array(prefix + "weight", E, np.float32, host=host) if weights else None
        self.a_active = self.gpu.array("emogi_active", g.num_vertices, np.uint8)
        arrays = [self.h_col] + ([self.h_weight] if weights else [])
        values = None
        if backend is not None:
            values = [g.col.astype(col_t)]
            if weights:
                w32 = g.weight.astype(np.float32)
                bad = np.flatnonzero(w32.astype(np.float64) != g.weight)
                if bad.size:
                    w = float(g.weight[bad[0]])
                    raise AlgorithmError(f"the host array of weights holds 4-byte floats; weight {w!r} "
                                         f"(edge {int(bad[0])}) is not one")
                values.append(w32)
        try:
            self.host = HostMemory(self.gpu, self.variant, pcie, uvm, arrays, backend=backend, values=values)
        except ValueError as e:
            raise AlgorithmError(str(e)) from None

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
        ids = unique(frontier) if frontier.size else np.zeros(0, np.int64)
        counts[ids] = g.row_ptr[ids + 1] - g.row_ptr[ids]
        return ids, g.row_ptr[:-1], counts

    @staticmethod
    def lane_values(got, j: int, pos: np.ndarray, fallback: np.ndarray) -> np.ndarray:
        """Elements ``pos`` of host array ``j`` as the lanes read them (a coalescer
        in the loop), or ``fallback[pos]`` (the graph's arrays) without one."""
        if got is None:
            return fallback[pos]
        values, filled = got[j]
        if not filled[pos].all():
            p = int(pos[np.flatnonzero(~filled[pos])[0]])
            raise CoalescerError(f"element {p} of host array {j} was read by no lane")
        return values[pos]

    def vertex_kernel(self, k, ids: np.ndarray, per_vertex: list, arrays: list, starts, counts, *,
                      flags: bool = True):
        """The reads of one EMOGI kernel: the active flags (unless every vertex is
        active), the vertex list and ``per_vertex`` arrays of the active vertices, then
        their lists in the host ``arrays``. Returns :meth:`HostMemory.read`'s
        lane data (a coalescer in the loop) or ``None``."""
        h = self.host
        if flags:
            h.scan(k, self.a_active, self.edge_graph.num_vertices)
        h.load_active(k, self.dg.row_ptr, ids)
        h.load_active(k, self.dg.row_ptr, ids, 1)
        for arr in per_vertex:
            h.load_active(k, arr, ids)
        return h.read(k, arrays, starts, counts)


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
            got = self.vertex_kernel(k, ids, [], [self.h_col], starts, counts)
            k.store(self.a_ef, range(pos.size))
            cta_atomics(k, self.counter, threads)
        h.account(k)
        return self.lane_values(got, 0, pos, g.col).astype(np.int64)


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
            got = self.vertex_kernel(k, ids, [self.a_dist], [self.h_col, self.h_weight], starts, counts)
            k.store(self.a_ev, range(pos.size))
            k.store(self.a_ec, range(pos.size))
            cta_atomics(k, self.counter, threads)
        h.account(k)
        w = self.lane_values(got, 1, pos, g.weight).astype(np.float64)
        return self.lane_values(got, 0, pos, g.col).astype(np.int64), dist[ids][owner] + w


# ---------------------------------------------------------------------- CC
class CCEMOGI(_EMOGIMode, CC):
    """Min-label propagation whose push kernel reads adjacency lists from host memory
    (cc.py's loop; only its push kernel differs)."""

    def setup(self) -> None:
        super().setup()
        self.setup_host(weights=False)

    def push(self, front, pos, owner, label):
        """The push kernel: ``(neighbours, lowers their label)`` of every edge of the front."""
        h = self.host
        threads = h.threads(self.und.num_vertices)
        ids, all_starts, all_counts = self.active_lists(front)
        with self.gpu.kernel("emogi_cc_push", threads) as k:
            got = self.vertex_kernel(k, ids, [self.a_label], [self.h_col], all_starts, all_counts)
            v = self.lane_values(got, 0, pos, self.und.col).astype(np.int64)
            lower = label[front][owner] < label[v]
            k.atomic(self.a_label, v)
            k.store(self.a_flag, v, active=lower)
        h.account(k)
        return v, lower


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
            got = self.vertex_kernel(k, ids, [self.a_contrib], [self.h_col], g.row_ptr[:-1], g.degrees(),
                                     flags=False)
            col = self.lane_values(got, 0, np.arange(E), g.col).astype(np.int64)
            k.atomic(self.a_next, col)
        h.account(k)
        if not E:
            return np.zeros(V)
        return np.bincount(col, weights=contrib[src], minlength=V)


for _mode, _variant in EMOGI_MODES.items():
    for _algo, _base in (("bfs", BFSEMOGI), ("sssp", SSSPEMOGI), ("cc", CCEMOGI), ("pr", PageRankEMOGI)):
        _cls = type(f"{_base.__name__}_{_variant}", (_base,), {"variant": _variant, "mode": _mode})
        register_mode(_algo, _mode, _cls)
