"""BFS, SSSP and PageRank with the IRU (IRU paper §4.1, Figs. 9-11): mode ``iru``
(docs/iru.md, "Algorithms").

The algorithms are the baseline ones (golden/algorithms); the kernel holding the
irregular access takes its indices from ``load_iru`` instead of reading them
from the frontier:

* BFS contraction (Fig. 9): indices = the edge frontier, target = ``depth``;
  no filter;
* SSSP contraction (Fig. 10): indices = the edge frontier's vertices, secondary
  = their path costs (32-bit integers), ``min`` filter, target = ``dist``;
* PR push (Fig. 11): indices = ``col``, secondary = each edge's contribution as
  binary32 (a per-edge array a first kernel writes), ``fadd`` merge, target =
  ``next``; the surviving lanes do the ``atomicAdd``.

Every operation runs on a *backend* (:class:`TLMBackend`, or the RTL under
cocotb: :class:`sim.iru.IRURTLBackend`) with the same interface
``execute(op, policy) -> IRUResult``; the kernel then uses what the backend
returned, lane by lane (thread ``32 w + l`` gets lane ``l`` of warp ``w``'s reply),
so a wrong reply changes the result. Every result is also checked with
:func:`golden.iru.check_result` (option ``iru_check``, default on).

Options: ``iru`` (an :class:`IRUConfig` or a preset name; default ``gtx980``),
``backend``, ``iru_policy`` (a :class:`RequestPolicy`; default: every resident
warp of the GPU asks at once, the next ones ``think`` = 100 cycles after a reply),
``iru_latency`` (the TLM's prefetch latency; default: the GPU's L2 hit latency
less its SM pipeline, ``l2_latency − l1_latency``, 168 cycles on the GTX 980:
the IRU sits in the memory partition and the arrays it prefetches were just
written by the GPU, so they sit in the L2), ``iru_model`` (``fast``, the
default: :class:`golden.iru.fast.IRUFastModel`; ``cycle``: the cycle-level
:class:`IRUModel`), ``iru_exact`` (PR:
quantise each contribution to a per-target power-of-two grid so that every
binary32 sum is exact and the result does not depend on which elements the IRU
merged: used by RTL in the loop, whose merges differ from the TLM's).
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from ..algorithms import register_mode
from ..algorithms.bfs import BFS
from ..algorithms.common import AlgorithmError, cta_atomics
from ..algorithms.pagerank import PageRank
from ..algorithms.sssp import SSSP
from ..config import ConfigError
from ..memory import AddressSpace
from .checks import check_result, full_reply_blocks
from .config import REPLY_KINDS, IRUConfig
from .fast import IRU_MODELS, IRUFastModel
from .ops import f32_bits
from .tlm import IRUModel, IRUOp, IRUResult, RequestPolicy

__all__ = ["TLMBackend", "IRUSession", "BFSIRU", "SSSPIRU", "PageRankIRU", "IRU_MODES", "THINK_CYCLES",
           "PREFETCH_LATENCY", "exact_contributions"]

IRU_MODES = ("iru",)
#: Cycles between a warp's reply and the request of the warp that replaces it.
THINK_CYCLES = 100
#: The TLM's prefetch latency (cycles) when no GPU names one: the arrays were just
#: written by the GPU. On a GPU model the default is ``l2_latency − l1_latency``.
PREFETCH_LATENCY = 200


class TLMBackend:
    """Runs IRU operations on the fast model (``model="fast"``, the default:
    :class:`golden.iru.fast.IRUFastModel`) or on the cycle-level model
    (``model="cycle"``, :class:`IRUModel`, the RTL's lock-step reference)."""

    name = "tlm"

    def __init__(self, config: IRUConfig, space: AddressSpace | None = None, latency: int = PREFETCH_LATENCY,
                 model: str = "fast"):
        if model not in IRU_MODELS:
            raise AlgorithmError(f"IRU model must be one of {', '.join(IRU_MODELS)}, not {model!r}")
        self.config = config
        self.space = space or AddressSpace(addr_bits=config.addr_width)
        self.model_name = model
        self.model = (IRUFastModel if model == "fast" else IRUModel)(config, self.space, latency=latency)

    def execute(self, op: IRUOp, policy: RequestPolicy) -> IRUResult:
        return self.model.execute(op, policy)


class _Layout:
    """The kernel's view of one IRU operation (thread order)."""

    def __init__(self, result: IRUResult, warp: int):
        self.result = result
        self.idx, self.sec, self.pos, self.live = result.layout(warp)
        self.tids = np.flatnonzero(self.live)
        self.n = result.op.n
        self.warps = -(-self.n // warp)


class IRUSession:
    """The IRU side of one algorithm run: its memory, the operations, their statistics."""

    def __init__(self, backend, gpu, policy: RequestPolicy, check: bool = True):
        self.backend = backend
        self.config: IRUConfig = backend.config
        self.space: AddressSpace = backend.space
        self.gpu = gpu
        self.policy = policy
        self.check = check
        self._bufs: dict[str, tuple[int, int]] = {}
        self._serial = 0
        self.ops = 0
        self.by_kernel = Counter()
        self.elements = 0
        self.live = 0
        self.disabled = 0
        self.kinds = Counter()
        self.forwarded = 0
        self.ring = 0
        self.cycles = 0.0
        self.measured = True
        self.blocks = 0
        self.full_replies = 0
        self.prefetch = 0
        self.problems: list[str] = []

    def put(self, name: str, values: np.ndarray) -> int:
        raw = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
        base, cap = self._bufs.get(name, (0, -1))
        if raw.size > cap:
            cap = max(raw.size, 2 * cap, 256)
            self._serial += 1
            base = self.space.reserve(f"iru:{name}#{self._serial}", cap, np.uint8, align=256)
            self._bufs[name] = (base, cap)
        if raw.size:
            self.space.write(base, raw)
        return base

    def run(self, kernel: str, idx: np.ndarray, target, *, sec: np.ndarray | None = None,
            op: str = "none") -> _Layout:
        """``load_iru`` over the indices ``idx`` (and secondary values ``sec``) for an
        irregular access of the GPU array ``target``."""
        cfg = self.config
        idx = np.asarray(idx, np.int64)
        n = idx.size
        if n > cfg.max_n:
            raise AlgorithmError(f"the IRU takes at most {cfg.max_n} elements per operation (count_width="
                                 f"{cfg.count_width}), {kernel} needs {n}")
        ib = self.put("idx", idx.astype(np.uint32))
        sb = self.put("sec", np.asarray(sec, np.uint32)) if sec is not None else None
        tgt = target.base & ((1 << cfg.addr_width) - 1)
        iop = IRUOp(n, ib, sb, op, target=tgt, esize=target.esize)
        res = self.backend.execute(iop, self.policy)
        if self.check:
            probs = check_result(cfg, idx & ((1 << cfg.index_bits) - 1),
                                 np.zeros(n, np.uint32) if sec is None else np.asarray(sec, np.uint32), res)
            if probs:
                self.problems += probs
                raise AlgorithmError(f"IRU ({getattr(self.backend, 'name', 'backend')}) broke its rules in "
                                     f"{kernel}: {probs[0]}")
        if res.status.cmd_error:
            # The unit read nothing (an array past the top of its address space): every
            # lane disabled, so the kernel would silently skip its work.
            raise AlgorithmError(f"IRU ({getattr(self.backend, 'name', 'backend')}) reported a command error in "
                                 f"{kernel}: an array of {n} elements runs past the top of its "
                                 f"{cfg.addr_width}-bit address space")
        st = res.status
        self.ops += 1
        self.by_kernel[kernel] += 1
        self.elements += n
        self.live += st.live
        self.disabled += st.disabled
        self.kinds.update({k: v for k, v in st.kinds.items() if v})
        self.forwarded += st.forwarded
        self.ring += st.ring
        self.cycles += st.cycles
        self.measured &= res.measured
        k, blocks = full_reply_blocks(cfg, res, tgt, target.esize)
        self.full_replies += k
        self.blocks += blocks
        return _Layout(res, self.gpu.config.warp_size)

    def prefetch_sectors(self, n: int, sec: bool) -> int:
        """Sectors the prefetcher reads (indices and secondary values)."""
        s = self.gpu.config.sector_bytes
        sectors = (2 if sec else 1) * (-(-4 * n // s))
        self.prefetch += sectors
        return sectors

    def summary(self) -> dict:
        return {"backend": getattr(self.backend, "name", type(self.backend).__name__),
                "model": getattr(self.backend, "model_name", None),
                "config": self.config.to_dict(), "ops": self.ops, "by_kernel": dict(self.by_kernel),
                "elements": self.elements, "live": self.live, "disabled": self.disabled,
                "filtered_share": self.disabled / self.elements if self.elements else 0.0,
                "kinds": {k: self.kinds.get(k, 0) for k in REPLY_KINDS}, "forwarded": self.forwarded,
                "ring": self.ring, "cycles": self.cycles, "cycles_measured": self.measured,
                "full_replies": self.full_replies, "prefetch_sectors": self.prefetch,
                "blocks_per_reply": self.blocks / self.full_replies if self.full_replies else None,
                "problems": len(self.problems)}


def exact_contributions(contrib: np.ndarray, src: np.ndarray, col: np.ndarray, indeg: np.ndarray) -> np.ndarray:
    """Per-edge contributions rounded to a power-of-two grid of their target so that
    any binary32 sum of the values of one target is exact (``iru_exact``): the grid
    of ``v`` is ``2**(ceil(log2(indeg[v] * max c)) - 23)``, so every partial sum is an
    integer multiple of it below ``2**24``."""
    c = contrib[src]
    maxc = float(contrib.max()) if contrib.size else 0.0
    if maxc <= 0:
        return np.zeros(c.size, np.float32)
    bound = indeg[col].astype(np.float64) * maxc
    q = np.exp2(np.ceil(np.log2(bound)) - 23)
    return (np.round(c / q) * q).astype(np.float32)


class _IRUMode:
    """Mixin: the IRU session, option checks, statistics."""

    mode = "iru"
    functional_shortcut = False        # every IRU operation runs

    def setup_iru(self) -> None:
        o = self.options
        backend = o.get("backend")
        cfg = o.get("iru")
        if backend is None:
            if cfg is None:
                cfg = IRUConfig.preset("gtx980")
            elif isinstance(cfg, str):
                cfg = IRUConfig.preset(cfg)
            elif not isinstance(cfg, IRUConfig):
                raise ConfigError(f"option iru must be an IRUConfig or a preset name, not {cfg!r}")
            c = self.gpu.config
            lat = o.get("iru_latency", max(c.l2_latency - c.l1_latency, 1))
            if not isinstance(lat, int) or lat < 1:
                raise AlgorithmError(f"iru_latency must be a positive number of cycles, not {lat!r}")
            backend = TLMBackend(cfg, latency=lat, model=o.get("iru_model", "fast"))
        cfg = backend.config
        ws = self.gpu.config.warp_size
        if cfg.entry_size != ws:
            raise AlgorithmError(f"the IRU's entries hold {cfg.entry_size} elements, the GPU's warps "
                                 f"{ws} threads: they must be equal")
        if self.graph.num_vertices > 1 << cfg.index_bits:
            raise AlgorithmError(f"the IRU's {cfg.index_bits}-bit indices hold at most {1 << cfg.index_bits} "
                                 f"vertices, the graph has {self.graph.num_vertices}")
        policy = o.get("iru_policy")
        if policy is None:
            policy = RequestPolicy(resident=self.gpu.config.resident_warps, think=THINK_CYCLES)
        elif not isinstance(policy, RequestPolicy):
            raise AlgorithmError(f"iru_policy must be a RequestPolicy, not {policy!r}")
        self.iru = IRUSession(backend, self.gpu, policy, check=o.get("iru_check", True))

    def finish_extra(self) -> None:
        s = self.iru.summary()
        self.extra["iru"] = s
        gpu_cycles = self.gpu.totals()["cycles"] if self.gpu.stats_on else 0.0
        self.extra["time"] = {"gpu_cycles": gpu_cycles, "iru_cycles": s["cycles"], "total_cycles": gpu_cycles}

    def load_iru(self, k, lay: _Layout, arrays: list) -> None:
        """The kernel's ``load_iru``: one warp instruction per warp (two with a
        secondary array); the IRU's prefetches of ``arrays`` (the indices and the
        secondary values, read linearly, a sector a request) go through the L2
        slices of the memory partitions (and DRAM on a miss) like the GPU's own
        requests, and its time is unit work the kernel waits for (docs/iru.md,
        "Time")."""
        k.alu(lay.warps * len(arrays))
        s = self.gpu.config.sector_bytes
        for arr in arrays:
            nbytes = lay.n * arr.esize
            if nbytes:
                k.unit_requests("load", arr.base + np.arange(0, nbytes, s, dtype=np.int64), s, place="partition")
        self.iru.prefetch_sectors(lay.n, len(arrays) > 1)
        k.unit(0, lay.result.status.cycles)


# ---------------------------------------------------------------------- BFS
class BFSIRU(_IRUMode, BFS):
    """BFS whose contraction takes the edge frontier from the IRU (Fig. 9)."""

    def setup(self) -> None:
        super().setup()
        self.setup_iru()

    def run(self) -> np.ndarray:
        depth = super().run()
        self.finish_extra()
        return depth

    def contract(self, ef: np.ndarray, level: int, depth: np.ndarray, visited: np.ndarray) -> np.ndarray:
        lay = self.iru.run("bfs_contract", ef, self.a_depth)
        efr = lay.idx                      # every lane is live (no filter)
        unvisited, keep = self.contract_masks(efr, visited)
        n = ef.size
        self.gpu.count("gpu_edges", n)
        with self.gpu.kernel("iru_bfs_contract", n) as k:
            self.load_iru(k, lay, [self.a_ef])
            k.load(self.a_visited, efr >> 5)
            k.load(self.a_depth, efr, active=unvisited)
            k.store(self.a_depth, efr, active=keep)
            k.store(self.a_visited, efr >> 5, active=keep)
            nf = efr[keep]
            k.store(self.a_nf, range(nf.size), tid=np.flatnonzero(keep))
            cta_atomics(k, self.counter, n)
        return self.visit(nf, level, depth, visited)


# ---------------------------------------------------------------------- SSSP
class SSSPIRU(_IRUMode, SSSP):
    """Near-far SSSP whose contraction takes (vertex, cost, position) from the IRU,
    duplicates of a vertex merged keeping the lowest cost (Fig. 10)."""

    def check_options(self) -> None:
        super().check_options()
        w = self.graph.weight
        if w is not None and w.size and (np.any(w != np.round(w)) or
                                         w.max() * max(self.graph.num_vertices, 1) >= 2 ** 32):
            raise AlgorithmError("sssp with the IRU needs integer weights whose path costs fit in 32 bits "
                                 "(the IRU compares 32-bit integers)")

    def setup(self) -> None:
        super().setup()
        self.setup_iru()

    def run(self) -> np.ndarray:
        dist = super().run()
        self.finish_extra()
        return dist

    def contract(self, ev, ec, dist, threshold):
        lay = self.iru.run("sssp_contract", ev, self.a_dist, sec=ec.astype(np.uint32), op="min")
        tids = lay.tids
        v = lay.idx[tids]
        c = lay.sec[tids].astype(np.float64)
        improving, near_cand, far, win = self.contract_masks(v, c, dist, threshold)
        n = ev.size
        self.gpu.count("gpu_edges", n)
        with self.gpu.kernel("iru_sssp_contract", n) as k:
            self.load_iru(k, lay, [self.a_ev, self.a_ec])
            k.load(self.a_dist, v, tid=tids)
            k.atomic(self.a_dist, v, tid=tids, active=improving)
            k.store(self.a_lookup, v, tid=tids, active=near_cand)
            k.load(self.a_lookup, v, tid=tids, active=near_cand)
            k.store(self.a_nf, range(int(win.sum())), tid=tids[win])
            nfar = int(far.sum())
            k.store(self.a_far_v, range(nfar), tid=tids[far])
            k.store(self.a_far_c, range(nfar), tid=tids[far])
            cta_atomics(k, self.counter, n)
        np.minimum.at(dist, v[improving], c[improving])
        return v[win], v[far], c[far]


# ---------------------------------------------------------------------- PageRank
class PageRankIRU(_IRUMode, PageRank):
    """Push PageRank whose atomicAdds take (target, summed contribution) from the IRU,
    contributions to one target merged by binary32 addition (Fig. 11). A first
    kernel writes each edge's contribution (the IRU's secondary array)."""

    def setup(self) -> None:
        super().setup()
        self.setup_iru()
        E = self.graph.num_edges
        self.a_wf = self.gpu.array("iru_wf", E)
        self.exact = bool(self.options.get("iru_exact", False))
        if self.exact:
            self.indeg = np.bincount(self.graph.col, minlength=self.graph.num_vertices)
            self.a_grid = self.gpu.array("iru_grid", self.graph.num_vertices)

    def run(self) -> np.ndarray:
        rank = super().run()
        self.finish_extra()
        return rank

    def push(self, contrib: np.ndarray) -> np.ndarray:
        g = self.graph
        V, E = g.num_vertices, g.num_edges
        src = g.src()
        if self.exact:
            with self.gpu.kernel("iru_pr_grid", V) as k:
                k.load(self.a_contrib, range(V))
                k.store(self.a_grid, range(V))
            wf = exact_contributions(contrib, src, g.col, self.indeg)
        else:
            wf = contrib[src].astype(np.float32)
        with self.gpu.kernel("iru_pr_weights", E) as k:
            k.load(self.a_contrib, src)
            if self.exact:
                k.load(self.a_grid, g.col)
            k.store(self.a_wf, range(E))
        lay = self.iru.run("pr_push", g.col, self.a_next, sec=f32_bits(wf), op="fadd")
        tids = lay.tids
        v = lay.idx[tids]
        s = lay.sec[tids].view(np.float32).astype(np.float64)
        with self.gpu.kernel("iru_pr_push", E) as k:
            self.load_iru(k, lay, [self.dg.col, self.a_wf])
            k.atomic(self.a_next, v, tid=tids)
        if not E:
            self._push_error = 0.0
            return np.zeros(V)
        total = np.bincount(v, weights=s, minlength=V)
        # The error bound of this push (docs/iru.md, "PageRank's precision"): every
        # contribution rounded to binary32 (relative 2^-24), and every binary32 addition
        # of a merge off by at most 2^-24 of its partial sum, which (all contributions
        # being >= 0) is at most the target's total; a target of in-degree n reached
        # by L live lanes had n - L additions.
        indeg = self.indeg if self.exact else np.bincount(g.col, minlength=V)
        lanes = np.bincount(v, minlength=V)
        merged = np.maximum(indeg - lanes, 0)
        u = 2.0 ** -24
        if self.exact:
            # the sums are exact; what differs from the float64 push is the rounding of
            # each contribution to its target's grid, known edge by edge
            self._push_error = float(np.abs(contrib[src] - wf.astype(np.float64)).sum())
        else:
            self._push_error = float(u * (np.abs(wf.astype(np.float64)).sum() + (merged * np.abs(total)).sum()))
        return total

    def push_error(self) -> float:
        """The last push's error bound (with ``iru_exact``: the rounding of the
        contributions to their grids, every sum being exact)."""
        return getattr(self, "_push_error", 0.0)


for _algo, _cls in (("bfs", BFSIRU), ("sssp", SSSPIRU), ("pr", PageRankIRU)):
    register_mode(_algo, "iru", _cls)
