"""Transaction-level model of GraphPEG: one engine per SM (ALWT, edge gathering, edge
buffer, warp pops, vertex lists with spill and refill) and the control
processor's EF load balancing between SMs (paper §3.3; docs/graphpeg.md).

The model advances cycle by cycle (skipping cycles in which nothing can happen)
and follows the rules that the RTL implements:

* **ALWT** (§3.3.1): each cycle an IVD entry takes the next vertex of the input
  list (state FI) and reads ``row_ptr[v]``, ``row_ptr[v+1]``; the reply makes it
  RD (or IVD again when the vertex has no edge). When no entry is FE, the
  lowest-numbered RD entry becomes FE. The FE entry reads its edges one block of
  ``col`` at a time (up to the next block boundary, with the same edges of the
  weight array when weights are on), SIndex advancing by what it read, and
  only when the edge buffer has room for the whole chunk (room is reserved at
  issue); the entry is IVD once every edge is requested.
* **Pops**: a warp takes ``min(warp_size, buffered)`` edges when at least
  ``warp_size`` are buffered, or when the SM has gathered everything it has
  (input list, refills, ALWT and fetches all empty); one pop per cycle.
* **Vertex lists**: two on-chip lists of ``vlist_entries`` vertices, input and
  output, swapped at every kernel start. Pushes beyond the output list's
  capacity are spilled, one block at a time, to the SM's region of global memory
  (two regions per SM, one per list); the input list is refilled from its
  region, one block per request, whenever a block fits.
* **Memory**: each SM's requests (and its warps' accesses, as a consumer of the
  same LD/ST unit) share one request per cycle; every request is answered after
  ``latency`` cycles.
* **EF exchange** (§3.3.2): every ``ef_interval`` cycles of a kernel the control
  processor reads R_EFS of every SM (edges reserved in the edge buffer plus the
  edges left in the ALWT) and decides with :func:`ef_decision`: if ``Rmax - Rmin
  >= Rmax >> N`` (and the difference is at least 2), the minimum SM is put in ERS
  (it stops allocating entries and reports whether it has an IVD entry); if it
  has, the maximum SM is put in ED: it takes its ALWT entry with the most edges
  left, gives away its first ``min((Rmax - Rmin) // 2, left)`` edges (R_BW0,
  R_BW1 = the old and the new SIndex, R_BV = the vertex) and the receiver
  inserts them as a new RD entry (ER). One entry moves per interval. Every
  decision and its outcome is logged (:class:`EFDecision`,
  ``KernelResult.ef_log``), as the RTL's ``ef_event`` port reports them.
* The kernel ends when every SM is idle and no exchange is in progress; the SMs
  then answer every further pop with -1 (the RTL's ``done`` beat).

What the RTL and the TLM agree on (checked by ``verif/graphpeg/test_graphpeg_rtl.py``): the
multiset of delivered items of a kernel (all SMs together; per SM when EF
balancing is off), every batch's size (at most a warp; only an SM's last batch
of a kernel may be partial unless it received a moved entry), the contents of
the vertex lists after each kernel (as multisets), the spill/refill memory
traffic, and the balancer's decisions when the state at every check does not
depend on timing (``pop_start`` holds the warps back past the check). Timing,
the order of edges inside an SM and, in general, which SM receives a moved
entry depend on the memory's latency and are not compared.
"""
from __future__ import annotations

import heapq
from collections import deque
from itertools import repeat
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..memory import AddressSpace
from .config import GraphPEGConfig

__all__ = ["GraphPEGError", "GraphPEGKernel", "Batch", "KernelResult", "GraphPEGModel", "EFDecision", "ef_decision",
           "IVD", "FI", "RD", "FE"]

IVD, FI, RD, FE = 0, 1, 2, 3
#: The SM's LD/ST port requesters in round-robin order (bits of ``_SM._wants``).
PORT_ORDER = ("index", "edge", "refill", "consumer")
#: _PICK[rr][wants]: the requester served, round robin from ``rr``.
_PICK = [[next((i for i in ((rr + j) & 3 for j in range(4)) if w >> i & 1), -1) for w in range(16)]
         for rr in range(4)]
#: Cycles of the control processor's steps of one exchange (ERS, ED, ER).
EF_STEP_CYCLES = 2


class GraphPEGError(ValueError):
    """A command the engines cannot take (bad address, missing setup...)."""



def ef_decision(efs, shift: int):
    """The control processor's check (§3.3.2) on the R_EFS values ``efs`` of the
    SMs: ``(donor, receiver, balance)`` or None.

    Donor = the SM with the largest R_EFS, receiver = the one with the smallest
    (lowest number on ties); an exchange starts when ``Rmax - Rmin >= Rmax >> N``
    (N = ``shift``) and ``Rmax - Rmin >= 2`` (a smaller difference has nothing to
    balance: half of it is 0); the balance is ``(Rmax - Rmin) // 2``, which leaves
    the two SMs equal (the paper: "the EF balance size is determined on the basis
    of the value difference between the donator's and the receiver's R_EFS").

    ``efs`` must hold at least one non-negative integer (one per SM; R_EFS counts
    edges) and ``shift`` be an integer in [0, 31] (as ``ef_shift``); anything else
    raises :class:`GraphPEGError`."""
    if isinstance(shift, bool) or not isinstance(shift, (int, np.integer)) or not 0 <= shift <= 31:
        raise GraphPEGError(f"ef_decision: shift must be an integer in [0, 31], not {shift!r}")
    try:
        efs = list(efs)
    except TypeError:
        raise GraphPEGError(f"ef_decision: efs must be a sequence of R_EFS values (one per SM), "
                            f"not {efs!r}") from None
    if not efs:
        raise GraphPEGError("ef_decision: efs is empty (it needs one R_EFS value per SM)")
    for sm, x in enumerate(efs):
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0:
            raise GraphPEGError(f"ef_decision: R_EFS of SM {sm} must be a non-negative integer, not {x!r}")
    efs = [int(x) for x in efs]
    rmax, rmin = max(efs), min(efs)
    diff = rmax - rmin
    if diff >= 2 and diff >= rmax >> shift:
        return efs.index(rmax), efs.index(rmin), diff // 2
    return None


@dataclass(frozen=True)
class EFDecision:
    """One decision of the balancer: at ``cycle`` (from the kernel's start) SM
    ``donor`` was to give ``size`` edges to SM ``recv``; ``outcome`` (a key of
    :data:`golden.graphpeg.config.EF_OUTCOMES`); for a moved entry the range ``[start, end)`` of
    ``vertex``'s edges (R_BW0, R_BW1, R_BV)."""

    cycle: int
    donor: int
    recv: int
    size: int
    outcome: str
    vertex: int = 0
    start: int = 0
    end: int = 0

    def key(self) -> tuple:
        """Everything but the cycle (what the RTL must agree on)."""
        return (self.donor, self.recv, self.size, self.outcome, self.vertex, self.start, self.end)


@dataclass(frozen=True)
class GraphPEGKernel:
    """One kernel launch on the engines.

    ``mode``: ``"edge"`` (``__pop_edge_*``) or ``"vertex"`` (``__pop_vert``).
    ``row_ptr``, ``col``, ``weight``: byte addresses of the graph's vertex array,
    edge array and weight array (4-byte elements; ``weight`` None: not loaded).
    ``csc``: the vertex array is a CSC one (pull): the base vertex of an entry is
    the edge's destination and the edge array holds sources. ``ef``,
    ``ef_interval``, ``ef_shift``: EF balancing (None: the configuration's)."""

    mode: str = "edge"
    row_ptr: int = 0
    col: int = 0
    weight: int | None = None
    csc: bool = False
    ef: bool | None = None
    ef_interval: int | None = None
    ef_shift: int | None = None

    def check(self, config: GraphPEGConfig) -> None:
        if self.mode not in ("edge", "vertex"):
            raise GraphPEGError(f"kernel mode must be 'edge' or 'vertex', not {self.mode!r}")
        top = 1 << config.addr_width
        for name in ("row_ptr", "col", "weight"):
            v = getattr(self, name)
            if v is None:
                continue
            if not isinstance(v, (int, np.integer)) or not 0 <= v < top or v % 4:
                raise GraphPEGError(f"{name}={v!r} must be a 4-byte aligned address below 2**{config.addr_width}")
        iv = self.ef_interval
        if iv is not None and not (isinstance(iv, int) and 16 <= iv < 1 << 16):
            raise GraphPEGError(f"ef_interval must be an integer in [16, 65535], not {iv!r}")
        sh = self.ef_shift
        if sh is not None and not (isinstance(sh, int) and 0 <= sh <= 31):
            raise GraphPEGError(f"ef_shift must be an integer in [0, 31], not {sh!r}")


@dataclass
class Batch:
    """One warp's pop: up to ``warp_size`` items of one SM at one cycle."""

    sm: int
    cycle: int
    src: np.ndarray
    dst: np.ndarray
    wt: np.ndarray
    idx: np.ndarray

    @property
    def n(self) -> int:
        return int(self.dst.size)


@dataclass
class KernelResult:
    """What one kernel delivered and what it cost."""

    batches: list                       # Batch, in pop order (cycle, then SM)
    cycles: int                         # from the start to the last warp's end
    sm_items: list                      # items delivered per SM
    sm_items_no_ef: list                # items per SM had nothing moved between SMs
    requests: dict = field(default_factory=dict)   # index, edge, weight, refill, spill
    exchanges: int = 0
    moved: int = 0
    mem_error: bool = False
    spill_overflow: bool = False
    finish_cycle: int = 0               # when the engines were done (before the warps' tail)
    peak_alwt: int = 0                  # most ALWT entries in use at once (any SM)
    peak_reserved: int = 0              # most edge-buffer records reserved at once (any SM)
    ef_checks: int = 0                  # checks of the R_EFS values (one per interval)
    ef_log: list = field(default_factory=list)     # EFDecision, in order
    item_arrays: dict | None = field(default=None, repr=False)   # arrays(), when the model built them

    @property
    def items(self) -> int:
        return int(sum(self.sm_items))

    def arrays(self) -> dict:
        """Every item in pop order: ``src, dst, wt, idx`` (int64), ``sm`` and
        ``batch`` (index of its batch), ``lane`` (position in it)."""
        if self.item_arrays is not None:
            return {k: v.copy() for k, v in self.item_arrays.items()}
        bs = self.batches
        if not bs:
            z = np.zeros(0, np.int64)
            return {"src": z, "dst": z, "wt": z, "idx": z, "sm": z, "batch": z, "lane": z}
        n = np.array([b.n for b in bs], np.int64)
        out = {k: np.concatenate([getattr(b, k) for b in bs]).astype(np.int64) for k in ("src", "dst", "wt", "idx")}
        out["sm"] = np.repeat(np.array([b.sm for b in bs], np.int64), n)
        out["batch"] = np.repeat(np.arange(len(bs), dtype=np.int64), n)
        out["lane"] = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
        return out


class _SM:
    """One SM's engine."""

    def __init__(self, model: "GraphPEGModel", sm: int):
        self.m = model
        self.sm = sm
        c = model.config
        self.cap = c.vlist_entries
        self.wpb = c.words_per_block
        self.C = c.edge_buffer_edges
        self.ws = c.warp_size
        self.setup_done = False
        self._port_do = (self._do_index, self._do_edge, self._do_refill, self._do_consumer)   # PORT_ORDER
        self.clear()

    # ------------------------------------------------------------------ lists
    def clear(self) -> None:
        self.lists = [deque(), deque()]
        self.p = 0                      # the output list
        self.out_spilled = 0            # vertices spilled by the output list
        self.staging: list[int] = []    # spilled vertices not yet written (one block)
        self.overflow = False

    def region(self, parity: int) -> int:
        m = self.m
        return m.spill_base + (2 * self.sm + parity) * m.spill_stride

    def push(self, v: int) -> None:
        out = self.lists[self.p]
        if len(out) < self.cap and not self.out_spilled and not self.staging:
            out.append(int(v))
            return
        if (self.out_spilled + len(self.staging) + 1) * 4 > self.m.spill_stride:
            self.overflow = True            # the region is full: the vertex is dropped
            return
        self.staging.append(int(v))
        if len(self.staging) == self.wpb:
            self._write_staging()

    def _write_staging(self) -> None:
        if not self.staging:
            return
        addr = self.region(self.p) + 4 * self.out_spilled
        self.m.space.write(addr, np.array(self.staging, np.uint32).view(np.uint8))
        self.m._count("spill", self._blocks(addr, 4 * len(self.staging)))
        self.out_spilled += len(self.staging)
        self.staging = []

    def _blocks(self, addr: int, nbytes: int) -> int:
        bb = self.m.config.block_bytes
        return (addr + nbytes - 1) // bb - addr // bb + 1 if nbytes else 0

    def list_contents(self, which: str) -> list[int]:
        """The output (or input) list: on-chip part then the spilled part, in order."""
        p = self.p if which == "output" else 1 - self.p
        out = list(self.lists[p])
        if which == "output":
            n = self.out_spilled
            if n:
                out += self.m.space.read_elems(self.region(p), n, 4).astype(np.int64).tolist()
            return out + self.staging
        return out

    # ------------------------------------------------------------------ kernel start
    def start(self, k: GraphPEGKernel, t0: int) -> None:
        self._write_staging()
        self.in_list = self.lists[self.p]
        self.in_region = self.region(self.p)
        self.in_spilled = self.out_spilled
        self.refill_pos = 0
        self.refill_pending = 0
        self.p = 1 - self.p
        self.lists[self.p] = deque()
        self.out_spilled = 0
        self.k = k
        self.edge_mode = k.mode == "edge"
        self.st: list[int] = []
        self.v: list[int] = []
        self.s: list[int] = []
        self.rem: list[int] = []
        self.free_heap: list[int] = []  # freed entries (lowest first); entries >= len(st) are free too
        self.rd_heap: list[int] = []    # RD entries (lazy: stale ids are skipped)
        self.fe = -1
        self.alwt_rem = 0
        self.nvalid = 0
        self.buffer: deque = deque()    # (src, dst, wt, idx)
        self.reserved = 0
        self.port_free = t0
        self.rr = 0
        self.resp_index: deque = deque()   # (ready, entry, s, e, err)
        self.resp_edge: deque = deque()    # (ready, list of items)
        self.resp_refill: deque = deque()  # (ready, list of vertices)
        self.warps: deque = deque()        # remaining LD/ST sectors of each busy warp
        self.backlog = 0.0
        self.frozen = False
        self.ed_block = False
        self.items = 0
        self.no_ef_items = 0
        self.batches = []
        self.consumer_done = t0
        self.peak_alwt = 0
        self.peak_reserved = 0

    # ------------------------------------------------------------------ registers (EF)
    def efs(self) -> int:
        """R_EFS: edges reserved in the edge buffer plus edges left in the ALWT."""
        return self.reserved + self.alwt_rem

    def has_free(self) -> bool:
        return self.nvalid < self.m.alwt_entries

    def _alloc(self) -> int:
        """The lowest IVD entry."""
        if self.free_heap:
            ent = heapq.heappop(self.free_heap)
        else:
            ent = len(self.st)
            self.st.append(IVD)
            self.v.append(0)
            self.s.append(0)
            self.rem.append(0)
        self.nvalid += 1
        self.peak_alwt = max(self.peak_alwt, self.nvalid)
        return ent

    def _lowest_rd(self) -> int:
        h = self.rd_heap
        while h and self.st[h[0]] != RD:
            heapq.heappop(h)
        return h[0] if h else -1

    def donate(self, size: int):
        """ED: give away the first ``min(size, left)`` edges of the entry with most left."""
        best, left = -1, 0
        for e, (st, r) in enumerate(zip(self.st, self.rem)):
            if st in (RD, FE) and r > left:
                best, left = e, r
        if best < 0:
            return None
        mv = min(size, left)
        s0 = self.s[best]
        self.s[best] += mv
        self.rem[best] -= mv
        self.alwt_rem -= mv
        if self.rem[best] == 0:
            self._free(best)
        return self.v[best], s0, s0 + mv

    def receive(self, v: int, s: int, e: int) -> None:
        """ER: insert the moved range as a new RD entry (in the lowest IVD entry)."""
        ent = self._alloc()
        self.st[ent], self.v[ent], self.s[ent], self.rem[ent] = RD, v, s, e - s
        heapq.heappush(self.rd_heap, ent)
        self.alwt_rem += e - s

    def _free(self, ent: int) -> None:
        if self.st[ent] == FE:
            self.fe = -1
        self.st[ent] = IVD
        self.nvalid -= 1
        heapq.heappush(self.free_heap, ent)

    # ------------------------------------------------------------------ state
    def input_empty(self) -> bool:
        return not self.in_list and self.refill_pos >= self.in_spilled and not self.refill_pending

    def drained(self) -> bool:
        return (self.input_empty() and self.nvalid == 0 and self.reserved == len(self.buffer)
                and not self.frozen)

    def idle(self) -> bool:
        return not self.buffer and self.drained()

    def _chunk(self) -> int:
        e = self.fe
        if e < 0:
            return 0
        a = self.k.col + 4 * self.s[e]
        to_block = self.wpb - (a % self.m.config.block_bytes) // 4
        return min(self.rem[e], to_block, self.C)

    def _wants(self, t: int) -> int:
        """Who wants the LD/ST port: a bit per requester of :data:`PORT_ORDER`."""
        w = 0
        if self.edge_mode and not self.frozen and self.in_list and self.nvalid < self.m.alwt_entries:
            w = 1                                      # index
        if self.edge_mode and self.fe >= 0 and not self.ed_block:
            n = self._chunk()
            if n and self.reserved + n <= self.C:
                w |= 2                                 # edge
        if self.refill_pos < self.in_spilled:
            n = min(self.wpb, self.in_spilled - self.refill_pos)
            if len(self.in_list) + self.refill_pending + n <= self.cap:
                w |= 4                                 # refill
        if self.warps:
            w |= 8                                     # consumer
        return w

    # ------------------------------------------------------------------ one cycle
    def step(self, t: int) -> bool:
        m = self.m
        busy = False
        # 1. replies due now
        q = self.resp_index
        while q and q[0][0] <= t:
            _, ent, s, e, err = q.popleft()
            busy = True
            if err or e <= s:
                self._free(ent)
            else:
                self.st[ent], self.s[ent], self.rem[ent] = RD, s, e - s
                heapq.heappush(self.rd_heap, ent)
                self.alwt_rem += e - s
        q = self.resp_edge
        while q and q[0][0] <= t:
            self.buffer.extend(q.popleft()[1])
            busy = True
        q = self.resp_refill
        while q and q[0][0] <= t:
            vs = q.popleft()[1]
            self.in_list.extend(vs)
            self.refill_pending -= len(vs)
            busy = True
        # 2. an RD entry becomes FE
        if self.edge_mode and self.fe < 0 and not self.ed_block:
            ent = self._lowest_rd()
            if ent >= 0:
                heapq.heappop(self.rd_heap)
                self.fe = ent
                self.st[ent] = FE
                busy = True
        # 3. vertex-list mode: the next vertex into the buffer
        if not self.edge_mode and self.in_list and self.reserved < self.C:
            v = self.in_list.popleft()
            self.buffer.append((v, v, 0, 0))
            self.reserved += 1
            self.peak_reserved = max(self.peak_reserved, self.reserved)
            self.no_ef_items += 1
            busy = True
        # 4. the LD/ST port
        if self.port_free <= t:
            wants = self._wants(t)
            if wants == 8 and self.m.batch_consumer:
                # Only the warps want the port: their requests take it cycle after cycle
                # until something else can change (a response, a warp's last request,
                # the control processor, pop_start), so issue them at once (exact).
                busy = True
                self.rr = 0
                k = self._consumer_run(t)
                self.warps[0] -= k - 1
                self.port_free = t + k - 1
                nreq = self._do_consumer(t + k - 1)
                self.port_free += nreq
            elif wants:
                # round robin from the requester after the last one served
                pick = _PICK[self.rr][wants]
                self.rr = (pick + 1) & 3
                busy = True
                nreq = self._port_do[pick](t)
                self.port_free = t + nreq
        # 5. a warp pops
        if (self.buffer and t >= m.pop_start and len(self.warps) < m.warps
                and (len(self.buffer) >= self.ws or self.drained())):
            n = min(self.ws, len(self.buffer))
            items = [self.buffer.popleft() for _ in range(n)]
            self.reserved -= n
            self.items += n
            arr = np.array(items, np.int64).reshape(n, 4)
            self.batches.append(Batch(self.sm, t, arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]))
            work = n * m.consume
            if work > 0:
                self.warps.append(work)
            busy = True
        return busy

    def _consumer_run(self, t: int) -> int:
        """How many consumer requests in a row, from cycle ``t``, issue exactly as the
        cycle-by-cycle rules would (1 if a pop, a response, a finishing warp or the
        control processor may come in between)."""
        m = self.m
        if not self.edge_mode and self.in_list and self.reserved < self.C:
            return 1                                  # the vertex list feeds the buffer every cycle
        if (self.buffer and t >= m.pop_start and len(self.warps) < m.warps
                and (len(self.buffer) >= self.ws or self.drained())):
            return 1                                  # a warp pops this cycle
        k = int(np.ceil(self.warps[0] - 1e-9)) - 1    # requests before the warp's last one
        end = m.horizon
        for q in (self.resp_index, self.resp_edge, self.resp_refill):
            if q:
                end = min(end, q[0][0])
        if self.buffer and t < m.pop_start:
            end = min(end, m.pop_start)
        return max(1, min(k, end - t)) if end != float("inf") else max(1, k)

    def _do_index(self, t: int) -> int:
        m = self.m
        v = self.in_list.popleft()
        ent = self._alloc()
        self.st[ent], self.v[ent], self.rem[ent] = FI, v, 0
        a = self.k.row_ptr + 4 * v
        err = m.is_error_range(a, 8)
        s, e = (0, 0) if err else (int(x) for x in m.space.read_elems(a, 2, 4))
        nreq = self._blocks(a, 8)
        m._count("index", nreq)
        m.mem_error |= err
        self.resp_index.append((t + nreq - 1 + m.latency, ent, s, e, err))
        self.no_ef_items += max(e - s, 0) if not err else 0
        return nreq

    def _do_edge(self, t: int) -> int:
        m = self.m
        e = self.fe
        n = self._chunk()
        s0 = self.s[e]
        k = self.k
        a = k.col + 4 * s0
        err = m.is_error_range(a, 4 * n)
        col = np.zeros(n, np.int64) if err else m.space.read_elems(a, n, 4).astype(np.int64)
        nreq = self._blocks(a, 4 * n)
        m._count("edge", nreq)
        if k.weight is not None:
            wa = k.weight + 4 * s0
            werr = m.is_error_range(wa, 4 * n)
            wt = np.zeros(n, np.int64) if werr else m.space.read_elems(wa, n, 4).astype(np.int64)
            nw = self._blocks(wa, 4 * n)
            m._count("weight", nw)
            nreq += nw
            err |= werr
        else:
            wt = np.zeros(n, np.int64)
        m.mem_error |= err
        base = self.v[e]
        cl, wl, bs, ix = col.tolist(), wt.tolist(), repeat(base, n), range(s0, s0 + n)
        items = list(zip(cl, bs, wl, ix) if k.csc else zip(bs, cl, wl, ix))
        self.resp_edge.append((t + nreq - 1 + m.latency, items))
        self.reserved += n
        self.peak_reserved = max(self.peak_reserved, self.reserved)
        self.s[e] += n
        self.rem[e] -= n
        self.alwt_rem -= n
        if self.rem[e] == 0:
            self._free(e)
        return nreq

    def _do_refill(self, t: int) -> int:
        m = self.m
        n = min(self.wpb, self.in_spilled - self.refill_pos)
        a = self.in_region + 4 * self.refill_pos
        err = m.is_error_range(a, 4 * n)
        vs = [0] * n if err else m.space.read_elems(a, n, 4).astype(np.int64).tolist()
        m.mem_error |= err
        m._count("refill", 1)
        self.refill_pos += n
        self.refill_pending += n
        self.resp_refill.append((t + m.latency, vs))
        return 1

    def _do_consumer(self, t: int) -> int:
        self.warps[0] -= 1.0
        if self.warps[0] <= 1e-9:
            self.warps.popleft()
            if not self.warps:
                self.consumer_done = t + 1
        return 1

    def next_event(self, t: int) -> float:
        """The next cycle after ``t`` at which this SM can do something by itself."""
        nxt = float("inf")
        for q in (self.resp_index, self.resp_edge, self.resp_refill):
            if q:
                nxt = min(nxt, q[0][0])
        if self._wants(t):
            nxt = min(nxt, max(self.port_free, t + 1))
        if self.buffer and t < self.m.pop_start:
            nxt = min(nxt, self.m.pop_start)
        return nxt


class GraphPEGModel:
    """GraphPEG on ``sms`` SMs over an address space.

    Parameters
    ----------
    config : GraphPEGConfig
    space : AddressSpace
        Global memory: the graph's arrays and the SMs' spill regions.
    sms : int, optional
        Engines (default ``config.sms``).
    alwt_entries : int, optional
        ALWT entries (default ``config.alwt_entries``).
    is_error : callable(block address) -> bool, optional
        Blocks that the memory answers with an error.
    """

    def __init__(self, config: GraphPEGConfig, space: AddressSpace, *, sms: int | None = None,
                 is_error: Callable[[int], bool] | None = None):
        self.config = config
        self.space = space
        self.sms = int(sms or config.sms)
        if self.sms < 1:
            raise GraphPEGError(f"GraphPEG needs at least one SM, not {self.sms}")
        self.alwt_entries = config.alwt_entries
        self.is_error = is_error or (lambda b: False)
        self._no_errors = is_error is None
        self.spill_base = 0
        self.spill_stride = 0
        self.engines = [_SM(self, k) for k in range(self.sms)]
        self.requests = {"index": 0, "edge": 0, "weight": 0, "refill": 0, "spill": 0}
        self.latency = 1
        self.consume = 0.0
        self.warps = 64
        self.pop_start = 0
        self.mem_error = False
        #: Issue runs of the warps' LD/ST requests at once (exact; False: one a step).
        self.batch_consumer = True
        self.horizon = float("inf")                   # next cycle the control processor may act

    def _count(self, kind: str, n: int) -> None:
        self.requests[kind] += n

    def is_error_range(self, addr: int, nbytes: int) -> bool:
        bb = self.config.block_bytes
        blk = addr - addr % bb
        if self._no_errors:                      # only a block past the end of the space fails: the last
            return blk < addr + nbytes and -(-(addr + nbytes) // bb) * bb > self.space.size
        while blk < addr + nbytes:
            if self.is_error(blk) or blk + bb > self.space.size:
                return True
            blk += bb
        return False

    # ------------------------------------------------------------------ commands
    def setup(self, spill_base: int, spill_stride: int) -> None:
        """Clear both vertex lists of every SM; the spill regions of SM ``k`` are
        ``spill_base + (2k + p) * spill_stride`` (``p`` = 0, 1)."""
        bb = self.config.block_bytes
        if spill_base % bb or spill_stride % bb or spill_stride <= 0:
            raise GraphPEGError(f"spill_base ({spill_base:#x}) and spill_stride ({spill_stride}) must be positive "
                                f"multiples of the {bb}-byte block")
        if spill_base + 2 * self.sms * spill_stride > 1 << self.config.addr_width:
            raise GraphPEGError("the spill regions do not fit in the address space")
        self.spill_base, self.spill_stride = int(spill_base), int(spill_stride)
        for e in self.engines:
            e.clear()
            e.setup_done = True

    def push(self, sm: int, vertices) -> None:
        """``__push_vert`` from warps of SM ``sm``, in order."""
        if not 0 <= sm < self.sms:
            raise GraphPEGError(f"SM {sm} does not exist (0..{self.sms - 1})")
        e = self.engines[sm]
        if not e.setup_done:
            raise GraphPEGError("push before setup: the spill regions are not set")
        for v in np.asarray(vertices, np.int64).reshape(-1).tolist():
            if not 0 <= v < 1 << 32:
                raise GraphPEGError(f"vertex {v} does not fit in 32 bits")
            e.push(v)

    def output_lists(self) -> list[list[int]]:
        """Every SM's output list (what the next kernel will take), in order."""
        return [e.list_contents("output") for e in self.engines]

    def run(self, kernel: GraphPEGKernel, *, latency: int = 1, consume: float = 0.0,
            warps: int = 64, pop_start: int = 0, max_cycles: int = 1 << 40) -> KernelResult:
        """Run one kernel: the output lists become the input lists and are consumed.

        ``latency``: cycles of every memory request; ``consume``: LD/ST requests
        the warps make per popped item (their share of the SM's port);
        ``warps``: warps per SM that may hold a batch; ``pop_start``: no warp pops
        before this cycle of the kernel (warps not yet scheduled; the tests use it
        to hold the engines in a state that does not depend on timing)."""
        c = self.config
        kernel.check(c)
        if not all(e.setup_done for e in self.engines):
            raise GraphPEGError("run before setup: the spill regions are not set")
        if not (isinstance(latency, int) and latency >= 1):
            raise GraphPEGError(f"latency must be an integer >= 1, not {latency!r}")
        if not (isinstance(pop_start, int) and pop_start >= 0):
            raise GraphPEGError(f"pop_start must be an integer >= 0, not {pop_start!r}")
        self.latency, self.consume, self.warps = latency, float(consume), max(1, int(warps))
        self.pop_start = pop_start
        before = dict(self.requests)
        self.mem_error = False
        t0 = 0
        for e in self.engines:
            # (``overflow`` stays set until the next setup, as the RTL's status flag:
            # a dropped vertex shows in every kernel's status after it)
            e.start(kernel, t0)
        ef = c.ef_enabled if kernel.ef is None else kernel.ef
        ef = ef and kernel.mode == "edge" and self.sms > 1
        interval = kernel.ef_interval or c.ef_interval
        shift = c.ef_shift if kernel.ef_shift is None else kernel.ef_shift
        exchanges = moved = checks = 0
        log: list[EFDecision] = []
        cp = None                       # exchange in progress: dict
        next_tick = t0 + interval if ef else float("inf")
        t = t0
        finish = None
        wake = [t0] * self.sms
        engines = self.engines
        heap = [(t0, k) for k in range(self.sms)]     # (wake, SM): the SMs due, without scanning them all
        idle = [e.idle() for e in engines]            # each SM's idle(), updated when it steps
        n_idle = sum(idle)
        while True:
            # the control processor
            if cp is not None and t >= cp["at"]:
                r, d = engines[cp["recv"]], engines[cp["donor"]]
                dec = (cp["t"], cp["donor"], cp["recv"], cp["size"])
                if cp["phase"] == "ERS":
                    if r.has_free():
                        d.ed_block = True
                        cp.update(phase="ED", at=t + EF_STEP_CYCLES)
                    else:
                        r.frozen = False
                        log.append(EFDecision(*dec, "no_entry"))
                        cp = None
                elif cp["phase"] == "ED":
                    got = d.donate(cp["size"])
                    d.ed_block = False
                    if got is None:
                        r.frozen = False
                        log.append(EFDecision(*dec, "nothing"))
                        cp = None
                    else:
                        cp.update(phase="ER", at=t + EF_STEP_CYCLES, entry=got)
                else:
                    v, s, e_ = cp["entry"]
                    r.receive(v, s, e_)
                    r.frozen = False
                    exchanges += 1
                    moved += e_ - s
                    log.append(EFDecision(*dec, "moved", v, s, e_))
                    cp = None
                wake = [min(w, t) for w in wake]
                heap = [(w, k) for k, w in enumerate(wake) if w != float("inf")]
                heapq.heapify(heap)
                idle = [e.idle() for e in engines]
                n_idle = sum(idle)
            if cp is None and t >= next_tick:
                next_tick = t + interval
                checks += 1
                dec = ef_decision([e.efs() for e in engines], shift)
                if dec is not None:
                    donor, recv, size = dec
                    engines[recv].frozen = True
                    n_idle -= idle[recv]
                    idle[recv] = engines[recv].idle()
                    n_idle += idle[recv]
                    cp = {"phase": "ERS", "at": t + EF_STEP_CYCLES, "recv": recv, "donor": donor, "size": size,
                          "t": t - t0}
            # the SMs (a run of warp requests stops before the control processor's next action)
            self.horizon = cp["at"] if cp is not None else next_tick
            due = set()
            while heap and heap[0][0] <= t:
                w, k = heapq.heappop(heap)
                if w == wake[k]:
                    due.add(k)
            for k in sorted(due):
                e = engines[k]
                wake[k] = w = t + 1 if e.step(t) else e.next_event(t)
                if w != float("inf"):
                    heapq.heappush(heap, (w, k))
                now = e.idle()
                n_idle += now - idle[k]
                idle[k] = now
            if finish is None and cp is None and n_idle == len(engines):
                finish = t
            if finish is not None and not any(e.warps for e in engines):
                break
            nxt = heap[0][0] if heap else float("inf")
            if cp is not None:
                nxt = min(nxt, cp["at"])
            elif finish is None:
                nxt = min(nxt, next_tick)
            if finish is None and nxt == float("inf"):
                raise GraphPEGError("the engines stopped with work left (model error)")
            t = max(t + 1, int(nxt)) if nxt != float("inf") else t + 1
            if t - t0 > max_cycles:
                raise GraphPEGError(f"kernel exceeded {max_cycles} cycles")
        end = max([finish] + [e.consumer_done for e in engines]) + 1
        batches = sorted((b for e in engines for b in e.batches), key=lambda b: (b.cycle, b.sm))
        req = {k: self.requests[k] - before[k] for k in self.requests}
        return KernelResult(batches, end - t0, [e.items for e in engines], [e.no_ef_items for e in engines], req,
                            exchanges, moved, self.mem_error, any(e.overflow for e in engines), finish - t0,
                            max(e.peak_alwt for e in engines), max(e.peak_reserved for e in engines), checks, log)
