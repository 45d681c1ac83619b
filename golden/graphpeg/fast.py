"""Fast model of GraphPEG's engines (docs/graphpeg.md, "Fast model"): the same
commands, vertex lists, items and request counts as the cycle-level
:class:`~golden.graphpeg.tlm.GraphPEGModel` (paper §3.3), with each SM's engine
advanced from event to event (an index request, an entry becoming FE, an edge
request, a warp's pop) instead of cycle by cycle, which is several times faster
on large kernels.

Per SM, with ``L`` the latency, ``A`` ALWT entries, ``C`` edge-buffer records:

* **index stage**: the input list's vertices take the lowest free ALWT entry
  in order, one index request (``r`` = 1 or 2 blocks of ``row_ptr``) after the
  other, while an entry is free; the spilled part of the list is read back one
  block per request once the list has room for it (:class:`_Refill`); an entry
  is RD ``r - 1 + L`` cycles after its request (a vertex without edges frees it
  then);
* **FE**: when the FE stage is free, the lowest-numbered RD entry becomes FE
  and requests its edges one chunk at a time (up to the next block boundary, its
  weight blocks with it), each when the port is free and the buffer has room for
  the whole chunk (``X + n - C`` items popped: records are reserved at the
  request and freed when a warp pops them); the entry is free again the cycle
  after its last request;
* **port**: edge requests one after the other; index requests take the port's
  idle cycles first; while the warps have LD/ST requests queued (``consume``
  per popped item) the two alternate (round robin);
* **pops**: a warp pops ``warp_size`` items when they have arrived (``L``
  after their request; one pop a cycle; at most ``warps`` warps hold a batch,
  each until its requests are served), the rest when the SM has nothing left;
  the SM is done when its last warp's requests are served.

EF balancing (§3.3.2) follows the cycle model's control processor: every
``ef_interval`` cycles it reads R_EFS of every SM (records reserved plus edges
left in RD/FE entries), decides with :func:`~golden.graphpeg.tlm.ef_decision`,
freezes the receiver's allocations (ERS: ``no_entry`` when its ALWT is still
full ``EF_STEP_CYCLES`` later), stops the donor (ED) and moves the next
``min(balance, left)`` edges of the donor's entry with the most left to a new RD
entry of the receiver (ER, ``3 * EF_STEP_CYCLES`` after the check).

What it leaves out: the port's round robin cycle by cycle (index requests and
the warps' requests are accounted as above), the cycle-exact moment of each
event inside a step. The multiset of items of a kernel, the vertex lists, the
index, refill and spill requests and, without moves, the edge and weight
requests equal the cycle model's; cycles, batches and EF decisions agree
within the bounds that ``verif/graphpeg/test_graphpeg_fast.py`` asserts
(docs/graphpeg.md). Kernels with an error-answering memory, a ``pop_start``,
an edge buffer smaller than a block, or reads outside the address space go to
the cycle model.
"""
from __future__ import annotations

import heapq
import math
from bisect import bisect_left, insort
from operator import add, itemgetter
from collections.abc import Sequence

import numpy as np

from .tlm import EF_STEP_CYCLES, Batch, EFDecision, GraphPEGKernel, GraphPEGModel, KernelResult, ef_decision

__all__ = ["GraphPEGFastModel", "GRAPHPEG_MODELS"]

#: The engines' models an algorithm may choose (option ``graphpeg_model``).
GRAPHPEG_MODELS = ("fast", "cycle")


#: An ALWT entry's number in a ``waiting`` record.
_ENTRY = itemgetter(0)


class _Seg:
    """One ALWT entry's work: edges ``[s, e)`` of vertex ``v``; ``k`` its position
    among the input vertices (-1: received from another SM, ready at ``ready``)."""

    __slots__ = ("v", "s", "e", "r", "k", "ready")

    def __init__(self, v, s, e, r, k, ready=0.0):
        self.v, self.s, self.e, self.r, self.k, self.ready = v, s, e, r, k, ready


class _Refill:
    """The input list's spilled part read back one block per request (§3.3.1): the
    block holding input position ``k`` is requested once the list has room for it
    (the vertex ``cap`` places before its end has left the list) and a cycle after
    the previous block, and arrives ``L`` cycles later."""

    def __init__(self, config, L: int, first: int):
        self.wpb = config.words_per_block
        self.cap = config.vlist_entries
        self.L = L
        self.first = first                   # input position of the first spilled vertex
        self.issued: list = []               # request cycle of each block

    def arrival(self, k: int, left: list) -> int:
        """When input vertex ``k`` (spilled) is in the list; ``left[i]``: when input
        vertex ``i`` left it (at least every vertex before ``k`` has)."""
        b = (k - self.first) // self.wpb
        while len(self.issued) <= b:
            j = len(self.issued)
            t = self.issued[-1] + 1 if self.issued else 0
            room = self.first + (j + 1) * self.wpb - self.cap - 1     # must have left first
            if room >= 0:
                t = max(t, left[min(room, len(left) - 1)] + 1)
            self.issued.append(t)
        return self.issued[b] + self.L


class _FastSM:
    """One SM's engine, entry by entry and request by request (module docstring)."""

    def __init__(self, model: "GraphPEGFastModel", inputs: list, L: int, consume: float, spilled_from: int,
                 warps: int):
        c = model.config
        self.m = model
        self.inputs = inputs
        self.next_in = 0                     # next input vertex for the index stage
        self.L = L
        self.A = model.alwt_entries
        self.C = c.edge_buffer_edges
        self.ws = c.warp_size
        self.consume = consume
        self.refill = _Refill(c, L, spilled_from)
        self.I_hist: list = []               # index request cycle of each input vertex
        self.I_prev, self.r_prev = -1, 1     # index stage: last issue and its requests
        self.frozen_until = 0                # ERS: no entry is allocated before this cycle
        self.free_ents = list(range(self.A))  # free ALWT entries (a heap: the lowest is allocated)
        self.pending_free: list = []         # (cycle, entry): entries freed at a known cycle
        self.nvalid = 0
        self.peak_alwt = 0
        self.peak_reserved = 0
        self.waiting: list = []              # [entry, RD cycle, segment, allocated at]: valid, not FE,
        #                                      in entry order (entries are distinct)
        self.last_index = 0                  # last index reply
        self.port = 0.0                      # the port is free for the next edge request
        self.idx_owed = 0                    # index requests since the last edge request
        self.fe_free = 0                     # the FE stage is free (the last entry's last request + 1)
        self.cur = None                      # the FE entry: [segment, next edge, ready, entry]
        # chunks requested: arrival, vertex, first edge, edges, items before it
        self.ch_arr: list = []
        self.ch_v: list = []
        self.ch_s: list = []
        self.ch_n: list = []
        self.ch_x: list = []
        self.X = 0                           # edges requested
        self.weight_reqs = 0                 # weight blocks requested with the chunks
        self.pops: list = []                 # (first item, end item, cycle)
        self.pop_ends: list = []             # end item of each pop (ascending)
        self.pop_ts: list = []               # cycle of each pop
        self.cbusy = 0.0                     # the warps' LD/ST requests are served until then
        self.cdone: list = []                # per pop: when its warp's last request is served
        self.W = warps                       # warps that may hold a batch
        self.pop_end = 0
        self.pop_t = -1
        self._pp = 0                         # chunk holding the next pop's last item
        self._next_pop = (-1, 0, 0)          # (pop_end, chunk, cycle) of the next full pop, once known

    # ------------------------------------------------------------------ ALWT (§3.3.1)
    def _release(self, t: float) -> None:
        pf = self.pending_free
        while pf and pf[0][0] <= t:
            _, ent = heapq.heappop(pf)
            heapq.heappush(self.free_ents, ent)
            self.nvalid -= 1

    def _next_index(self):
        """When the next input vertex's index request can issue (ignoring entries)."""
        k = self.next_in
        ti = max(self.I_prev + self.r_prev, 0, self.frozen_until)
        if k >= self.refill.first:
            ti = max(ti, self.refill.arrival(k, self.I_hist))
        return ti

    def _index_until(self, t: float) -> None:
        """Issue the index requests of the input vertices up to cycle ``t``."""
        n_in = len(self.inputs)
        first_spilled = self.refill.first
        while self.next_in < n_in:
            ti = self.I_prev + self.r_prev            # :meth:`_next_index`, inlined
            if ti < 0:
                ti = 0
            if self.frozen_until > ti:
                ti = self.frozen_until
            if self.next_in >= first_spilled:
                ti = max(ti, self.refill.arrival(self.next_in, self.I_hist))
            if ti > t:
                return
            self._release(ti)
            if not self.free_ents:
                pf = self.pending_free
                if not pf or pf[0][0] > t:
                    return
                ti = max(ti, pf[0][0])
                self._release(ti)
            seg = self.inputs[self.next_in]
            ent = heapq.heappop(self.free_ents)
            self.nvalid += 1
            self.peak_alwt = max(self.peak_alwt, self.nvalid)
            rd = ti + seg.r - 1 + self.L
            self.I_prev, self.r_prev = ti, seg.r
            self.I_hist.append(ti)
            self.idx_owed += seg.r                    # port cycles the edge requests give up
            self.last_index = max(self.last_index, rd)
            if seg.e <= seg.s:                        # no edges: free again at the reply
                heapq.heappush(self.pending_free, (rd + 1, ent))
            else:
                insort(self.waiting, [ent, rd, seg, ti], key=_ENTRY)
            self.next_in += 1

    def _pick(self, limit: float) -> bool:
        """The lowest-numbered RD entry becomes FE (at or after ``fe_free``), if before ``limit``."""
        t = self.fe_free
        while True:
            if t >= limit:
                return False
            self._index_until(t)
            best = None
            for w in self.waiting:                    # in entry order: the first RD one is the lowest
                if w[1] <= t:
                    best = w
                    break
            if best is not None:
                break
            nxt = min((w[1] for w in self.waiting), default=None)
            if nxt is None:
                if self.next_in >= len(self.inputs):
                    return False
                ti = self._next_index()
                if not self.free_ents and not self.pending_free:
                    return False
                nxt = max(ti, self.pending_free[0][0] if not self.free_ents else ti) + self.L
            t = max(t + 1, nxt)
        self.waiting.remove(best)
        ent, rd, seg, alloc = best
        if (self.ch_arr and self.pop_end < self.X and self.next_in >= len(self.inputs)
                and alloc > self.ch_arr[-1] and all(w[3] > self.ch_arr[-1] for w in self.waiting)):
            self._drain()                             # the SM had nothing left: the last warp popped
        self.cur = [seg, seg.s, t, ent]
        return True

    def _end_entry(self, t: int) -> None:
        heapq.heappush(self.pending_free, (t, self.cur[3]))
        self.fe_free = t
        self.cur = None

    # ------------------------------------------------------------------ pops
    def _full_pops(self, until_item: int, until_t: float = float("inf")) -> None:
        """Pop full warps whose last item is requested (index < ``until_item``) and,
        with ``until_t``, that pop before ``until_t``."""
        ws = self.ws
        while self.pop_end + ws <= until_item:
            if self._next_pop[0] == self.pop_end:     # known since the last pop (nothing it needs changes)
                _, j, t = self._next_pop
            else:
                i = self.pop_end + ws - 1
                j = self._pp
                while self.ch_x[j] + self.ch_n[j] <= i:
                    j += 1
                t = self.ch_arr[j]
                if self.pop_t + 1 > t:
                    t = self.pop_t + 1
                k = len(self.pops)                    # :meth:`_warp_free`, inlined
                if k >= self.W and self.cdone[k - self.W] - 1 > t:
                    t = self.cdone[k - self.W] - 1
                self._next_pop = (self.pop_end, j, t)
            if t >= until_t:
                return
            self._pp = j
            self._pop(self.pop_end + ws, t)

    def _drain(self) -> None:
        """Everything requested is popped: full warps, then the rest (partial)."""
        self._full_pops(self.X)
        if self.pop_end < self.X:
            self._pop(self.X, max(self.ch_arr[-1], self.pop_t + 1, self._warp_free()))

    def _warp_free(self) -> float:
        """When a warp can take the next batch (at most ``W`` hold one)."""
        k = len(self.pops)
        return self.cdone[k - self.W] - 1 if k >= self.W else 0

    def _pop(self, end: int, t: int) -> None:
        """A warp pops items ``[pop_end, end)`` at ``t``; its LD/ST requests queue for the port."""
        self.pops.append((self.pop_end, end, t))
        self.pop_ends.append(end)
        self.pop_ts.append(t)
        self.cbusy = max(self.cbusy, t) + self.consume * (end - self.pop_end)
        self.cdone.append(self.cbusy)
        self.pop_end = end
        self.pop_t = t

    def _popped_by(self, need: int) -> int:
        """The cycle at which ``need`` items have been popped."""
        if self.pop_end < need:
            self._full_pops(need + self.ws - 1)
        i = bisect_left(self.pop_ends, need)      # the first pop that reaches ``need``
        return self.pop_ts[i] if i < len(self.pop_ts) else self.pop_t

    # ------------------------------------------------------------------ edge requests
    def advance(self, limit: float) -> None:
        """Issue every edge request before cycle ``limit``."""
        m = self.m
        bb = m.config.block_bytes
        col = m._col
        C = self.C
        L = self.L
        cons = self.consume
        ws = self.ws
        weights = m._wgt is not None
        ch_arr, ch_v = self.ch_arr.append, self.ch_v.append
        ch_s, ch_n, ch_x = self.ch_s.append, self.ch_n.append, self.ch_x.append
        pop_ends, pop_ts = self.pop_ends, self.pop_ts
        while True:
            cur = self.cur
            if cur is None:
                if not self._pick(limit):
                    if (self.pop_end < self.X and not self.waiting and self.next_in >= len(self.inputs)
                            and self.ch_arr[-1] < limit):
                        self._drain()                 # nothing left: the last warp pops
                    return
                cur = self.cur
            seg, p, ready, _ = cur
            e = seg.e
            if p >= e:                                # emptied by a donation
                self._end_entry(ready if ready > self.fe_free else self.fe_free)
                continue
            v = seg.v
            while p < e:
                a = col + 4 * p
                n = (bb - a % bb) >> 2
                if n > e - p:
                    n = e - p
                if n > C:
                    n = C
                t = self.port if self.port > ready else ready
                if self.idx_owed:                     # index requests took the port's idle cycles first
                    t += max(0.0, self.idx_owed - (t - self.port))
                    self.idx_owed = 0
                need = self.X + n - C
                if need > 0:                          # :meth:`_popped_by`, inlined
                    if self.pop_end < need:
                        self._full_pops(need + ws - 1)
                    i = bisect_left(pop_ends, need)
                    tp = (pop_ts[i] if i < len(pop_ts) else self.pop_t) + 1
                    if tp > t:
                        t = tp
                t = math.ceil(t)
                if t >= limit:
                    cur[1] = p
                    return
                if weights:
                    wb = m._weight_blocks(p, p + n)
                    self.weight_reqs += wb
                    nreq = 1 + wb
                else:
                    nreq = 1
                port = nreq
                if cons:
                    np_ = self._next_pop
                    if self.pop_end + ws <= self.X and not (np_[0] == self.pop_end and np_[2] >= t + 1):
                        self._full_pops(self.X, t + 1)    # the warps popped by now
                    if self.cbusy > t:                # they want the port too: round robin
                        self.cbusy += port
                        port += port
                ch_arr(t + nreq - 1 + L)
                ch_v(v)
                ch_s(p)
                ch_n(n)
                ch_x(self.X)
                self.X += n
                res = self.X - self.pop_end
                if res > self.peak_reserved:
                    self.peak_reserved = res
                self.port = t + port
                p += n
            cur[1] = p
            self._end_entry(t + 1)

    def finish(self) -> None:
        self.advance(float("inf"))
        self._drain()

    def busy_at(self, t: float) -> bool:
        return bool(self.cur is not None or self.waiting or self.next_in < len(self.inputs)
                    or any(f > t for f, _ in self.pending_free) or (self.ch_arr and self.ch_arr[-1] >= t))

    # ------------------------------------------------------------------ EF registers (§3.3.2)
    def efs(self, t: float) -> int:
        """R_EFS: records reserved (requested, not popped) plus edges left in RD/FE entries."""
        self._index_until(t)
        self._full_pops(self.X, t + 1)
        left = 0
        if self.cur is not None and self.cur[2] <= t:
            left += self.cur[0].e - self.cur[1]
        for w in self.waiting:
            if w[1] <= t:
                left += w[2].e - w[2].s
        return int(self.X - self.pop_end) + left

    def entries_in_use(self, t: float) -> int:
        self._release(t)
        return self.nvalid

    def donate(self, t: float, size: int):
        """ED: the entry with the most edges left gives its next ``min(size, left)``."""
        cands = []
        if self.cur is not None and self.cur[2] <= t:
            cands.append((self.cur[3], self.cur[0].e - self.cur[1], None))
        for w in self.waiting:
            if w[1] <= t:
                cands.append((w[0], w[2].e - w[2].s, w))
        best, left = None, 0
        for ent, rem, w in sorted(cands, key=lambda c: c[0]):
            if rem > left:
                best, left = (ent, w), rem
        if best is None:
            return None
        mv = min(size, left)
        w = best[1]
        if w is None:
            seg, p = self.cur[0], self.cur[1]
            self.cur[1] = p + mv
            return seg.v, p, p + mv
        seg = w[2]
        s0 = seg.s
        w[2] = _Seg(seg.v, s0 + mv, seg.e, seg.r, seg.k)
        if s0 + mv >= seg.e:                          # nothing left: the entry is free
            self.waiting.remove(w)
            heapq.heappush(self.pending_free, (int(t), w[0]))
        return seg.v, s0, s0 + mv

    def receive(self, v: int, s: int, e: int, ready: float) -> None:
        """ER: the moved range as a new RD entry in the lowest free entry."""
        self._release(ready)
        ent = heapq.heappop(self.free_ents)
        self.nvalid += 1
        self.peak_alwt = max(self.peak_alwt, self.nvalid)
        insort(self.waiting, [ent, int(ready), _Seg(v, s, e, 0, -1, ready), int(ready)], key=_ENTRY)


class _Batches(Sequence):
    """A kernel's :class:`Batch` es, made when first looked at (the algorithms
    mostly ask only how many there are): ``rows`` (cycle, SM, ...) per batch,
    ``starts``/``n`` its items in ``arr``."""

    def __init__(self, rows, starts, n, arr):
        self._args = (rows, starts, n, arr)
        self._n = len(rows)
        self._list = None

    def _made(self) -> list:
        if self._list is None:
            r, starts, n, arr = self._args
            self._list = [Batch(int(k), int(t), arr["src"][a:a + m], arr["dst"][a:a + m], arr["wt"][a:a + m],
                                arr["idx"][a:a + m]) for t, k, a, m in zip(r[:, 0].tolist(), r[:, 1].tolist(),
                                                                            starts.tolist(), n.tolist())]
            self._args = None
        return self._list

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        return self._made()[i]

    def __iter__(self):
        return iter(self._made())

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return repr(self._made())


def _result(kernel, parts, rows, colv, wv, sm_items, no_ef, finish, ends, model, before, log, checks, exchanges,
            moved, peak_alwt, peak_res) -> KernelResult:
    """The kernel's result from every SM's items (``parts``: base vertex and edge
    index of each, in request order) and its pops (``rows``: cycle, SM, first and
    end item in the concatenation), batches in (cycle, SM) order."""
    if parts:
        base = np.concatenate([p[0] for p in parts])
        idx = np.concatenate([p[1] for p in parts])
        other = colv[idx] if colv is not None else base
        wt = wv[idx] if wv is not None else np.zeros(idx.size, np.int64)
        if colv is None:                          # vertex-list mode: the vertex, twice
            idx = np.zeros(idx.size, np.int64)
        src, dst = (other, base) if kernel.csc else (base, other)
        r = np.concatenate(rows)
        r = r[np.lexsort((r[:, 1], r[:, 0]))]
        n = r[:, 3] - r[:, 2]
        starts = np.cumsum(n) - n
        pos = np.repeat(r[:, 2] - starts, n) + np.arange(int(n.sum()), dtype=np.int64)
        arr = {"src": src[pos], "dst": dst[pos], "wt": wt[pos], "idx": idx[pos], "sm": np.repeat(r[:, 1], n),
               "batch": np.repeat(np.arange(len(r), dtype=np.int64), n),
               "lane": np.arange(int(n.sum()), dtype=np.int64) - np.repeat(starts, n)}
        batches = _Batches(r, starts, n, arr)
    else:
        z = np.zeros(0, np.int64)
        arr = {"src": z, "dst": z, "wt": z, "idx": z, "sm": z, "batch": z, "lane": z}
        batches = []
    end = int(np.ceil(max([finish] + ends))) + 1
    req = {k: model.requests[k] - before[k] for k in model.requests}
    return KernelResult(batches, end, sm_items, no_ef, req, exchanges, moved, False,
                        any(e.overflow for e in model.engines), int(finish), peak_alwt, peak_res, checks, log,
                        item_arrays=arr)


class GraphPEGFastModel(GraphPEGModel):
    """GraphPEG with the fast engine model (module docstring); ``run`` falls back
    to the cycle-level model where the fast one does not apply."""

    fast = True

    def _weight_blocks(self, s: int, e: int) -> int:
        bb = self._bb
        if self._wgt_aligned:                       # aligned alike: one weight block per chunk
            return (self._col + 4 * e - 1) // bb - (self._col + 4 * s) // bb + 1
        wpb = self.config.words_per_block
        col0 = self._col // 4
        first_end = min(e, ((col0 + s) // wpb + 1) * wpb - col0)
        starts = [s] + list(range(first_end, e, wpb))
        n = 0
        for i, cs in enumerate(starts):
            ce = starts[i + 1] if i + 1 < len(starts) else e
            a = self._wgt + 4 * cs
            n += (a + 4 * (ce - cs) - 1) // bb - a // bb + 1
        return n

    def _fits(self, addr: int, nbytes: int) -> bool:
        bb = self.config.block_bytes
        return -(-(addr + nbytes) // bb) * bb <= self.space.size

    def run(self, kernel: GraphPEGKernel, *, latency: int = 1, consume: float = 0.0, warps: int = 64,
            pop_start: int = 0, max_cycles: int = 1 << 40) -> KernelResult:
        c = self.config
        kernel.check(c)
        cycle = (not self._no_errors or pop_start != 0 or c.edge_buffer_edges < c.words_per_block
                 or not all(e.setup_done for e in self.engines)
                 or not (isinstance(latency, int) and latency >= 1))
        inputs = [np.asarray(e.list_contents("output"), np.int64) for e in self.engines] if not cycle else []
        edge = kernel.mode == "edge"
        rp = None
        if not cycle and edge:
            allv = np.concatenate(inputs) if inputs else np.zeros(0, np.int64)
            if allv.size:
                vmax = int(allv.max())
                if not self._fits(kernel.row_ptr, 4 * (vmax + 2)):
                    cycle = True
                else:
                    rp = self.space.read_elems(kernel.row_ptr, vmax + 2, 4).astype(np.int64)
                    s, e = rp[allv], rp[allv + 1]
                    emax = int(np.max(np.maximum(s, e)))
                    if not self._fits(kernel.col, 4 * emax) or (
                            kernel.weight is not None and not self._fits(kernel.weight, 4 * emax)):
                        cycle = True
        if cycle:
            return super().run(kernel, latency=latency, consume=consume, warps=warps, pop_start=pop_start,
                               max_cycles=max_cycles)
        return self._run_fast(kernel, inputs, rp, latency, float(consume), max(1, int(warps)))

    # ------------------------------------------------------------------ the fast run
    def _run_fast(self, kernel, inputs, rp, L: int, consume: float, warps: int) -> KernelResult:
        c = self.config
        bb, wpb = c.block_bytes, c.words_per_block
        self.latency, self.consume, self.warps = L, consume, warps
        self.mem_error = False
        before = dict(self.requests)
        spilled = []
        for e in self.engines:
            # (``overflow`` stays set until the next setup, as in the cycle-level model)
            e.start(kernel, 0)                        # swaps the lists, writes the staged spills
            spilled.append(e.in_spilled)
            e.in_list.clear()                         # consumed by this kernel
            e.refill_pos = e.in_spilled
        for n in spilled:
            self._count("refill", -(-n // wpb))
        self._col, self._wgt = kernel.col, kernel.weight
        self._bb = bb
        self._wgt_aligned = kernel.weight is not None and (kernel.weight // 4 - kernel.col // 4) % wpb == 0
        edge = kernel.mode == "edge"
        ef = c.ef_enabled if kernel.ef is None else kernel.ef
        ef = ef and edge and self.sms > 1
        interval = kernel.ef_interval or c.ef_interval
        shift = c.ef_shift if kernel.ef_shift is None else kernel.ef_shift
        if not edge:
            return self._run_vertex(kernel, inputs, spilled, L, consume, warps, before)
        sms = []
        no_ef = []
        for k, vs in enumerate(inputs):
            s = rp[vs] if vs.size else np.zeros(0, np.int64)
            e = rp[vs + 1] if vs.size else np.zeros(0, np.int64)
            e = np.maximum(e, s)                      # a reversed range has no edges (the cycle model's rule)
            a = kernel.row_ptr + 4 * vs
            r = (a + 7) // bb - a // bb + 1
            self._count("index", int(r.sum()))
            no_ef.append(int((e - s).sum()))
            segs = [_Seg(v, si, ei, ri, j) for j, (v, si, ei, ri) in
                    enumerate(zip(vs.tolist(), s.tolist(), e.tolist(), r.tolist()))]
            on_chip = vs.size - spilled[k]
            sms.append(_FastSM(self, segs, L, consume, on_chip, warps))
        log: list = []
        checks = exchanges = moved = 0
        if ef:
            t = float(interval)
            while True:
                for s in sms:
                    s.advance(t)
                if not any(s.busy_at(t) for s in sms):
                    break
                checks += 1
                dec = ef_decision([s.efs(t) for s in sms], shift)
                if dec is not None:
                    donor, recv, size = dec
                    tc = int(t)
                    # ERS: the receiver stops allocating entries; has it one free 2 cycles later?
                    sms[recv].frozen_until = tc + 3 * EF_STEP_CYCLES
                    if sms[recv].entries_in_use(tc + EF_STEP_CYCLES) >= self.alwt_entries:
                        sms[recv].frozen_until = tc + EF_STEP_CYCLES
                        log.append(EFDecision(tc, donor, recv, size, "no_entry"))
                    else:
                        # ED: the donor requests nothing from ERS until the entry is moved
                        d = sms[donor]
                        d.advance(tc + EF_STEP_CYCLES + 1)
                        d.port = max(d.port, tc + 2 * EF_STEP_CYCLES + 1)
                        got = d.donate(tc + 2 * EF_STEP_CYCLES, size)
                        if got is None:
                            log.append(EFDecision(tc, donor, recv, size, "nothing"))
                        else:
                            v, s0, e0 = got
                            sms[recv].receive(v, s0, e0, t + 3 * EF_STEP_CYCLES)
                            exchanges += 1
                            moved += e0 - s0
                            log.append(EFDecision(tc, donor, recv, size, "moved", v, s0, e0))
                t += interval
        for s in sms:
            s.finish()
        for s in sms:                                 # one request per chunk (+ its weight blocks)
            self._count("edge", len(s.ch_n))
            if self._wgt is not None:
                self._count("weight", s.weight_reqs)
        return self._finish(kernel, sms, no_ef, L, consume, before, log, checks, exchanges, moved)

    def _finish(self, kernel, sms, no_ef, L, consume, before, log, checks, exchanges, moved) -> KernelResult:
        sm_items = [s.X for s in sms]
        maxe = max((max(map(add, s.ch_s, s.ch_n)) for s in sms if s.ch_n), default=0)
        colv = self.space.read_elems(kernel.col, maxe, 4).astype(np.int64) if maxe else np.zeros(0, np.int64)
        wv = (self.space.read_elems(kernel.weight, maxe, 4).astype(np.int64)
              if maxe and kernel.weight is not None else None)
        finish = max([0] + [s.last_index + 1 for s in sms] + [s.ch_arr[-1] + 1 for s in sms if s.X])
        ends = [s.cbusy + 1 for s in sms if s.X]
        # every SM's items in request order, then the pops in (cycle, SM) order
        off = np.cumsum([0] + sm_items)
        parts, rows = [], []
        for k, s in enumerate(sms):
            if not s.X:
                continue
            n = np.array(s.ch_n, np.int64)
            pos = np.arange(s.X, dtype=np.int64) - np.repeat(np.array(s.ch_x, np.int64), n)
            parts.append((np.repeat(np.array(s.ch_v, np.int64), n), np.repeat(np.array(s.ch_s, np.int64), n) + pos))
            p = np.array(s.pops, np.int64).reshape(-1, 3)
            rows.append(np.column_stack((p[:, 2], np.full(len(p), k), p[:, 0] + off[k], p[:, 1] + off[k])))
        return _result(kernel, parts, rows, colv, wv, sm_items, no_ef, finish, ends, self, before, log, checks,
                       exchanges, moved, max((s.peak_alwt for s in sms), default=0),
                       max((s.peak_reserved for s in sms), default=0))

    def _run_vertex(self, kernel, inputs, spilled, L, consume, warps, before) -> KernelResult:
        """``__pop_vert``: one vertex a cycle into the edge buffer (the spilled
        part once its block is read back), a warp's pop every ``warp_size``
        vertices, its ``consume`` LD/ST requests per vertex served in pop order."""
        c = self.config
        ws = c.warp_size
        parts, rows, ends = [], [], []
        at = 0
        for k, vs in enumerate(inputs):
            n = int(vs.size)
            if not n:
                continue
            on_chip = n - spilled[k]
            if spilled[k]:                               # the spilled part: one block per request, L later
                refill = _Refill(c, L, on_chip)
                left: list = []
                for i in range(n):
                    ti = left[-1] + 1 if left else 0
                    if i >= on_chip:
                        ti = max(ti, refill.arrival(i, left))
                    left.append(ti)
                t_i = np.ceil(np.array(left, np.float64)).astype(np.int64).tolist()
            else:
                t_i = list(range(n))                     # one vertex a cycle into the buffer
            last = -1
            done: list = []                              # when each warp's requests are served
            busy = 0.0
            for a in range(0, n, ws):
                b = min(n, a + ws)
                cyc = max(t_i[b - 1], last + 1)
                if len(done) >= warps:                   # at most ``warps`` warps hold a batch
                    cyc = max(cyc, math.ceil(done[-warps]) - 1)
                last = cyc
                busy = max(busy, cyc) + consume * (b - a)
                done.append(busy)
                rows.append((cyc, k, at + a, at + b))
            parts.append((vs.astype(np.int64), np.zeros(n, np.int64)))
            ends.append(busy + 1)
            at += n
        sm_items = [int(v.size) for v in inputs]
        r = [np.array(rows, np.int64).reshape(-1, 4)] if rows else []
        finish = max((row[0] for row in rows), default=-1) + 1
        return _result(kernel, parts, r, None, None, sm_items, list(sm_items), finish, ends, self, before, [], 0, 0, 0,
                       0, min(c.edge_buffer_edges, max(sm_items, default=0)))
