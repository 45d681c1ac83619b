"""Testbench harness of GraphPEG: a sequencer of setup / push / run steps, the pop
monitors of every SM, random workloads, the comparison with the TLM
(:class:`golden.graphpeg.GraphPEGModel`) and with an independent expectation
computed from the graph, the RTL backend for RTL in the loop, and the demo.

What must hold (docs/graphpeg.md, "Verification"): every kernel hands out
exactly the items of the vertices pushed before it (edges of an edge kernel as a
multiset with their src, weight and index; vertices of a vertex-list kernel in
push order per SM), per SM when EF balancing is off; every batch holds at most a
warp and ends with ``warp_last``; a batch of fewer than a warp's items is an
SM's last of the kernel (its edges were all gathered) unless the SM received a
moved entry; every SM ends each kernel with one ``done`` beat; refills read
exactly the blocks that hold the vertices spilled before the kernel; statuses
(items, errors) equal the TLM's, and the exchanges and moved edges equal the
balancer's ``ef_event`` reports; with EF balancing off the memory requests per
kind equal the TLM's exactly; with ``ef_compare`` (warps held back by
``pop_hold`` past the first check, so the decisions do not depend on timing) the
balancer's decisions equal the TLM's.
"""
from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from golden.graphpeg import (CMD_OPS, EF_OUTCOMES, EFDecision, GraphPEGConfig, GraphPEGError, GraphPEGKernel,
                             GraphPEGModel, KernelResult)
from golden.graphpeg.session import reserve_spill
from golden.graphpeg.tlm import Batch
from golden.memory import AddressSpace, MemoryError_, place_array
from hw.graphpeg.engine import PopBeat, PushItem
from hw.graphpeg.top import EFEvent, GraphPEGCommand, GraphPEGStatus
from hw.mem.port import MemRequest, MemResponse

from . import funcov
from ..agents import Agent, CycleCounter, MemoryAgent, StreamSink, StreamSource
from ..codec import Codec
from ..cosim import CosimUnit, InDesignStats
from ..funcov import Covered
from ..memory import MemoryModel, MemoryTiming
from ..simmem import STREAMLOG_VERILOG, DesignEnv, start_backend, fast_array, read_logs, transfer_file

__all__ = ["Setup", "Push", "Run", "GraphPEGHarness", "make_workload", "expected_items", "GraphPEGRTLBackend",
           "classify_reads", "GraphPEGDesignEnv", "GraphPEGInDesign"]


@dataclass(frozen=True)
class Setup:
    """Clear the vertex lists; spill regions at ``spill_base`` (``stride`` bytes each)."""

    spill_base: int
    spill_stride: int


@dataclass(frozen=True)
class Push:
    """``__push_vert`` of ``vertices`` by SM ``sm``."""

    sm: int
    vertices: tuple


@dataclass(frozen=True)
class Run:
    """One kernel; ``during``: pushes made while it runs (``{sm: vertices}``), which
    go to the next kernel's lists."""

    kernel: GraphPEGKernel
    during: dict = field(default_factory=dict)


def command_fields(step, config: GraphPEGConfig) -> dict:
    if isinstance(step, Setup):
        return {"op": CMD_OPS["setup"], "spill_base": step.spill_base, "spill_stride": step.spill_stride,
                "ef_interval": config.ef_interval, "ef_shift": config.ef_shift}
    k = step.kernel
    return {"op": CMD_OPS["run"], "vertex_mode": int(k.mode == "vertex"), "csc": int(k.csc),
            "use_wt": int(k.weight is not None), "ef": int(config.ef_enabled if k.ef is None else k.ef),
            "ef_interval": k.ef_interval or config.ef_interval,
            "ef_shift": config.ef_shift if k.ef_shift is None else k.ef_shift,
            "row_ptr": k.row_ptr, "col": k.col, "weight": k.weight or 0}


#: The kind of request each GraphPEG array's reads are (region name -> kind).
_READ_KINDS = {"row_ptr": "index", "csc_row_ptr": "index", "col": "edge", "csc_col": "edge", "weight": "weight",
               "spill": "spill"}


def idle_lane_problems(sm: int, it: dict) -> list[str]:
    """A pop beat's lanes past ``n`` carry zeros (the pop port's contract,
    docs/graphpeg.md): a stale item there would reach a warp that reads every lane."""
    n = it["n"]
    for f in ("src", "dst", "wt", "idx"):
        if any(it[f][n:]):
            return [f"SM {sm}: a beat of {n} items with {f} past lane {n - 1} not zero"]
    return []


def classify_reads(space: AddressSpace, blocks) -> Counter:
    """Memory requests by the region they touch: ``index`` (a row pointer array),
    ``edge``, ``weight``, ``refill``/``spill`` (a spill region); ``?`` outside every
    region. (One search of the sorted region bases for all the addresses; regions
    that overlap fall back to :meth:`AddressSpace.region_of`, the first that holds
    the address.)"""
    a = np.asarray(blocks, np.int64).reshape(-1)
    out = Counter()
    if not a.size:
        return out
    regs = sorted(space.regions.values(), key=lambda r: r.base)
    names = [r.name.split("#")[0] for r in regs]
    bases = np.array([r.base for r in regs], np.int64)
    ends = np.array([r.end for r in regs], np.int64)
    if regs and (ends[:-1] > bases[1:]).any():
        for x in a.tolist():
            r = space.region_of(x)
            name = r.name.split("#")[0] if r is not None else "?"
            out[_READ_KINDS.get(name, name)] += 1
        return out
    i = np.searchsorted(bases, a, side="right") - 1
    inside = (i >= 0) & (a < ends[np.maximum(i, 0)])
    counts = np.bincount(np.where(inside, i, len(regs)), minlength=len(regs) + 1)
    for name, c in zip(names + ["?"], counts.tolist()):
        if c:
            out[_READ_KINDS.get(name, name)] += c
    return out


def expected_items(graph: dict, lists: list[list[int]], kernel: GraphPEGKernel) -> list[list[tuple]]:
    """What each SM must hand out for its input list, straight from the graph arrays
    (no model): ``(src, dst, wt, idx)`` per edge, ``(v, v, 0, 0)`` per vertex."""
    out = []
    rp, col, w = graph["row_ptr"], graph["col"], graph["weight"]
    rp_c, col_c = graph.get("csc_row_ptr"), graph.get("csc_col")
    for vs in lists:
        items = []
        for v in vs:
            if kernel.mode == "vertex":
                items.append((v, v, 0, 0))
                continue
            r, cl = (rp_c, col_c) if kernel.csc else (rp, col)
            for e in range(int(r[v]), int(r[v + 1])):
                wt = int(w[e]) if kernel.weight is not None else 0
                items.append((int(cl[e]), v, wt, e) if kernel.csc else (v, int(cl[e]), wt, e))
        out.append(items)
    return out


def items_from_memory(space: AddressSpace, kernel: GraphPEGKernel, lists: list) -> Counter:
    """What the SMs must hand out for their input lists, read from memory at the
    kernel's arrays (no model; all SMs together, as EF balancing moves items between
    them): ``(src, dst, wt, idx)`` per edge, ``(v, v, 0, 0)`` per vertex."""
    out = Counter()
    for vs in lists:
        v = np.asarray(list(vs), np.int64)
        if not v.size:
            continue
        if kernel.mode == "vertex":
            out.update(zip(v.tolist(), v.tolist(), [0] * v.size, [0] * v.size))
            continue
        s = space.gather_elems(kernel.row_ptr + 4 * v, 4).astype(np.int64)
        e = np.maximum(space.gather_elems(kernel.row_ptr + 4 * v + 4, 4).astype(np.int64), s)
        n = e - s
        total = int(n.sum())
        if not total:
            continue
        base = np.repeat(v, n)
        idx = np.repeat(s, n) + np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
        other = space.gather_elems(kernel.col + 4 * idx, 4).astype(np.int64)
        wt = (space.gather_elems(kernel.weight + 4 * idx, 4).astype(np.int64) if kernel.weight is not None
              else np.zeros(total, np.int64))
        src, dst = (other, base) if kernel.csc else (base, other)
        out.update(zip(src.tolist(), dst.tolist(), wt.tolist(), idx.tolist()))
    return out


def result_items(res: KernelResult) -> Counter:
    """The items a kernel handed out, ``(src, dst, wt, idx)``, counted."""
    return Counter(tuple(int(x) for x in t) for b in res.batches for t in zip(b.src, b.dst, b.wt, b.idx))


def graphpeg_difference(got: Counter, want: Counter) -> str | None:
    """How a kernel's items differ from what its lists hold: the first differing
    item (in order) with both counts; None if they agree."""
    if got == want:
        return None
    item = min((got - want) + (want - got))
    return (f"item (src, dst, weight, edge) {item} handed out {got.get(item, 0)} times, expected "
            f"{want.get(item, 0)} ({sum(got.values())} items handed out, {sum(want.values())} expected)")


def perturb_expected(want: Counter) -> None:
    """A seeded divergence (tests): the first expected item taken out."""
    if want:
        item = min(want)
        want[item] -= 1
        if not want[item]:
            del want[item]


_OUTCOME_NAMES = {v: k for k, v in EF_OUTCOMES.items()}


class _HeldSink(StreamSink):
    """A pop port whose warps take nothing in the first ``hold`` cycles of a kernel."""

    def __init__(self, harness, hold: int, *args, **kw):
        super().__init__(*args, **kw)
        self.h = harness
        self.hold = hold

    def drive(self) -> dict:
        out = super().drive()
        h = self.h
        if self.hold and isinstance(h.waiting, Run) and h.cycle - h.kernels[-1]["cycle0"] < self.hold:
            self._ready_now = 0
            out[self._readyp] = 0
        return out


class _EFMonitor(Agent):
    """Records the balancer's decisions (``ef_event`` / ``ef_info``) per kernel."""

    def __init__(self, harness):
        self.h = harness
        self.codec = Codec(EFEvent())

    def clock(self, get) -> None:
        if not get(("ef_event",)):
            return
        h = self.h
        ev = self.codec.decode(get(("ef_info",)))
        if not h.kernels or not isinstance(h.waiting, Run):
            h.problems.append(f"an EF decision outside a kernel: {ev}")
            return
        kr = h.kernels[-1]
        kr["ef"].append(EFDecision(h.cycle - kr["cycle0"], ev["donor"], ev["recv"], ev["size"],
                                   _OUTCOME_NAMES.get(ev["outcome"], f"code {ev['outcome']}"), ev["v"], ev["bw0"],
                                   ev["bw1"]))


class GraphPEGHarness(Covered, funcov=funcov):
    """Agents and bookkeeping for one run of the GraphPEG RTL on a list of steps.

    ``pop_hold``: the warps pop nothing in the first cycles of every kernel (the
    TLM's ``pop_start``); ``ef_compare``: the balancer's decisions must equal the
    TLM's (set it only when they cannot depend on timing: the checks fall inside
    the hold and the kernel ends before the next one)."""

    def __init__(self, config: GraphPEGConfig, space: AddressSpace, steps: list, *, graph: dict | None = None,
                 timing: MemoryTiming = MemoryTiming(), cmd_pause=None, push_pause=None, pop_ready=None,
                 status_ready=None, seed: int = 0, expect: bool = True, pop_hold: int = 0,
                 ef_compare: bool = False):
        self.config = config
        self.space = space
        self.steps = list(steps)
        self.graph = graph
        self.pop_hold = int(pop_hold)
        self.ef_compare = bool(ef_compare)
        self.model = MemoryModel(space, config.block_bytes, timing)
        self.cmd = StreamSource(("cmd",), Codec(GraphPEGCommand(config)), [], pause=cmd_pause, seed=seed,
                                on_send=lambda it: self.cmd_cycles.append(self.cycle))
        self.status = StreamSink(("status",), Codec(GraphPEGStatus(config)), ready=status_ready, seed=seed + 1,
                                 on_item=self._status, keep=False)
        self.mem = MemoryAgent(("mem",), Codec(MemRequest(config.port)), Codec(MemResponse(config.port)),
                               self.model)
        self.pushes = [StreamSource((f"push{k}",), Codec(PushItem()), [], pause=push_pause, seed=seed + 10 + k)
                       for k in range(config.sms)]
        self.pops = [_HeldSink(self, self.pop_hold, (f"o{k}",), Codec(PopBeat(config)), ready=pop_ready,
                               seed=seed + 20 + k, on_item=lambda it, k=k: self._beat(k, it), keep=False)
                     for k in range(config.sms)]
        self.cycle = 0
        self.next = 0
        self.cmd_cycles: list[int] = []          # the cycle each command was accepted
        self.status_cycles: list[int] = []       # and its status
        self._cmd_work: list[tuple] = []         # per command: (description, work) for the watchdog
        self._push_work: list[list] = []         # per batch of pushes: [description, sm, target, cycle, work]
        self._push_head = 0                      # the oldest batch not all accepted
        self._put = [0] * config.sms             # vertices put on each push port so far
        # the longest refusals of the harness's own ports, as a memory's (the watchdog)
        self._pop_wait = MemoryTiming(req_ready=pop_ready).request_cycles()
        self._push_wait = MemoryTiming(req_ready=push_pause).request_cycles()
        self._status_wait = MemoryTiming(req_ready=status_ready).request_cycles()
        self.waiting = None                      # the step whose status is awaited
        self.statuses: list[dict] = []           # one per setup/run step
        self.kernels: list[dict] = []            # per run: batches per SM, done beats
        self.problems: list[str] = []
        self.pending_lists = [[] for _ in range(config.sms)]   # pushed since the last run
        self._stride = 0                         # the last setup's spill region size (bytes)
        self.inputs: list[list[list[int]]] = []  # input lists of every run
        self._during = None
        self._open = [None] * config.sms         # the batch being received per SM
        self.expected = None
        if expect:
            self.expected = self._tlm()
        self._feed()

    @property
    def agents(self):
        return [self.cmd, self.status, self.mem, *self.pushes, *self.pops, _EFMonitor(self), CycleCounter(self, after=self._feed_waiting)]

    # ------------------------------------------------------------------ the TLM's answer
    def _tlm(self) -> list:
        ref = self.space.copy()
        tlm = GraphPEGModel(self.config, ref, is_error=self.model.is_error)
        self._tlm_model = tlm
        out = []
        for st in self.steps:
            if isinstance(st, Setup):
                try:
                    tlm.setup(st.spill_base, st.spill_stride)
                    out.append({"cmd_error": False})
                except GraphPEGError:
                    out.append({"cmd_error": True})
            elif isinstance(st, Push):
                try:
                    tlm.push(st.sm, st.vertices)
                except GraphPEGError:
                    pass
                out.append(None)
            else:
                try:
                    r = tlm.run(st.kernel, latency=3, pop_start=self.pop_hold)
                except GraphPEGError:
                    out.append({"cmd_error": True})
                    continue
                for sm, vs in st.during.items():
                    tlm.push(int(sm), vs)
                out.append({"cmd_error": False, "result": r, "requests": dict(r.requests)})
        return out

    # ------------------------------------------------------------------ sequencing
    def _feed_waiting(self) -> None:
        """After each edge: a command waiting for its pushes to drain."""
        if self.waiting is None and self.next < len(self.steps):
            self._feed()

    def _put_pushes(self, sm: int, vertices, what: str) -> None:
        for v in vertices:
            self.pushes[sm].put({"vertex": int(v)})
        self.pending_lists[sm] += [int(v) for v in vertices]
        self._put[sm] += len(vertices)
        self._push_work.append([f"{what} (push, SM {sm}, {len(vertices)} vertices)", sm, self._put[sm], self.cycle,
                                sum(len(p.queue) + (p.current is not None) for p in self.pushes)])

    def _kernel_edges(self, kernel: GraphPEGKernel, lists: list) -> int:
        """The edges of the vertices in ``lists``, from the row pointers in memory (0 where
        they cannot be read: the RTL refuses such a kernel)."""
        vs = np.array([v for vl in lists for v in vl], np.int64)
        if kernel.mode == "vertex" or not vs.size:
            return 0
        try:
            rp = self.space.gather_elems(kernel.row_ptr + 4 * vs, 4).astype(np.int64)
            rp1 = self.space.gather_elems(kernel.row_ptr + 4 * vs + 4, 4).astype(np.int64)
        except MemoryError_:
            return 0
        return int(np.maximum(rp1 - rp, 0).sum())

    def _feed(self) -> None:
        while self.next < len(self.steps) and self.waiting is None:
            st = self.steps[self.next]
            if isinstance(st, Push):
                self._put_pushes(st.sm, st.vertices, f"GraphPEG step {self.next}")
                self.next += 1
                continue
            if not all(p.idle() for p in self.pushes):
                return                           # pushes first
            self.cmd.put(command_fields(st, self.config))
            self.waiting = st
            k = len(self._cmd_work)
            if isinstance(st, Run):
                vertices = sum(len(vl) for vl in self.pending_lists)
                edges = self._kernel_edges(st.kernel, self.pending_lists)
                during = sum(len(vs) for vs in st.during.values())
                self._cmd_work.append((f"GraphPEG command {k} ({st.kernel.mode} kernel, {vertices} vertices, "
                                       f"{edges} edges)", vertices + edges + during))
            else:
                self._cmd_work.append((f"GraphPEG command {k} (setup)", 0))
            if isinstance(st, Run):
                # a list holds vlist_entries vertices, its spill region stride / 4 more: the
                # pushes past both are dropped (flagged overflow), not this kernel's input
                room = self.config.vlist_entries + self._stride // 4
                self.inputs.append([vl[:room] for vl in self.pending_lists])
                self.pending_lists = [[] for _ in range(self.config.sms)]
                self.kernels.append({"batches": [[] for _ in range(self.config.sms)],
                                     "done": [0] * self.config.sms, "cycle0": self.cycle, "ef": [],
                                     "reads": [len(self.model.stats.read_blocks), None]})
                self._during = st.during or None
            elif isinstance(st, Setup):
                self.pending_lists = [[] for _ in range(self.config.sms)]
                self._stride = st.spill_stride

    def submit(self, step) -> None:
        """Append one more step (RTL in the loop)."""
        self.steps.append(step)
        self._feed()

    def _start_during(self) -> None:
        if self._during:
            for sm, vs in self._during.items():
                self._put_pushes(int(sm), vs, f"GraphPEG command {len(self.statuses)}'s pushes")
        self._during = None

    #: Watchdog: a command may take at most WATCH_FIXED + the warps' hold + WATCH_PER_ELEMENT x
    #: (its work + 16) x (the memory's request bound + the pop ports' longest refusal); a
    #: kernel's work is its vertices, their edges and the pushes made while it runs, a
    #: setup's none; a batch of pushes (once no command runs) WATCH_FIXED + WATCH_PER_ELEMENT
    #: x (the vertices queued on all push ports + 16) x (the request bound + the push
    #: ports' longest pause). Calibrated on GraphPEG's tests (Icarus and Verilator, RTL in
    #: the loop with the Python memory included; 160 commands and batches of pushes): every
    #: one passes with 1/8 of this bound, the closest at 0.096 of it (1,523 cycles: a held EF
    #: run's kernel of 257 edges, its warps held for 1,100); WATCH_PER_ELEMENT 1 would fail.
    WATCH_FIXED = 2000
    WATCH_PER_ELEMENT = 2

    def watchdog(self):
        """The command in flight (commands run one at a time) or, between commands, the
        oldest batch of pushes not all taken; when its clock started and the most
        cycles it may take (:class:`sim.loop.Progress`; docs/verification.md)."""
        mem = self.model.timing.request_cycles()
        if self.waiting is not None:
            k = len(self.statuses)
            if k >= len(self.cmd_cycles):
                return None                      # not accepted yet
            what, work = self._cmd_work[k]
            hold = self.pop_hold if isinstance(self.waiting, Run) else 0
            return what, self.cmd_cycles[k], (self.WATCH_FIXED + self._status_wait + hold
                                              + self.WATCH_PER_ELEMENT * (work + 16) * (mem + self._pop_wait))
        while self._push_head < len(self._push_work):
            what, sm, target, cycle, work = self._push_work[self._push_head]
            if self.pushes[sm].sent < target:
                # the clock starts when the batch was put or the last command finished
                start = max(cycle, self.status_cycles[-1] if self.status_cycles else 0)
                return what, start, self.WATCH_FIXED + self.WATCH_PER_ELEMENT * (work + 16) * (mem + self._push_wait)
            self._push_head += 1
        return None

    def _beat(self, sm: int, it: dict) -> None:
        if not self.kernels or not isinstance(self.waiting, Run):
            self.problems.append(f"SM {sm} popped outside a kernel")
            return
        self._start_during()
        kr = self.kernels[-1]
        if it["done"]:
            if self._open[sm]:
                self.problems.append(f"SM {sm}: done beat inside a warp batch")
            kr["done"][sm] += 1
            return
        if kr["done"][sm]:
            self.problems.append(f"SM {sm}: items after its done beat")
        n = it["n"]
        if n == 0:
            self.problems.append(f"SM {sm}: an empty beat that is not done")
        self.problems += idle_lane_problems(sm, it)
        cur = self._open[sm]
        if cur is None:
            cur = self._open[sm] = {"cycle": self.cycle, "items": []}
        for j in range(n):
            cur["items"].append((it["src"][j], it["dst"][j], it["wt"][j], it["idx"][j]))
        if len(cur["items"]) > self.config.warp_size:
            self.problems.append(f"SM {sm}: a batch of more than {self.config.warp_size} items")
        if it["warp_last"]:
            kr["batches"][sm].append(cur)
            self._open[sm] = None

    def _status(self, it: dict) -> None:
        st = self.waiting
        if st is None:
            self.problems.append("a status without a command")
            return
        self._start_during()
        if isinstance(st, Run):
            self.kernels[-1]["reads"][1] = len(self.model.stats.read_blocks)
        self.statuses.append(dict(it))
        self.status_cycles.append(self.cycle)
        self.waiting = None
        self.next += 1
        self._feed()

    def done(self) -> bool:
        return self.next >= len(self.steps) and self.waiting is None and all(p.idle() for p in self.pushes)

    # ------------------------------------------------------------------ results
    def kernel_result(self, k: int = -1) -> KernelResult:
        """Run ``k`` as a :class:`KernelResult` (batches in pop order)."""
        kr = self.kernels[k]
        st = [s for s, step in zip(self.statuses, [x for x in self.steps if not isinstance(x, Push)])
              if isinstance(step, Run)][k]
        batches = []
        for sm, bs in enumerate(kr["batches"]):
            for b in bs:
                a = np.array(b["items"], np.int64).reshape(-1, 4)
                batches.append(Batch(sm, b["cycle"] - kr["cycle0"], a[:, 0], a[:, 1], a[:, 2], a[:, 3]))
        batches.sort(key=lambda b: (b.cycle, b.sm))
        sm_items = [sum(len(b["items"]) for b in bs) for bs in kr["batches"]]
        return KernelResult(batches, st["cycles"], sm_items, sm_items, {}, st["exchanges"], st["moved"],
                            bool(st["mem_error"]), bool(st["overflow"]), ef_log=list(kr["ef"]))

    def mismatches(self) -> list[str]:
        out = list(self.problems)
        if not self.done():
            out.append(f"{self.next} of {len(self.steps)} steps done")
            return out
        cmd_steps = [s for s in self.steps if not isinstance(s, Push)]
        if len(self.statuses) != len(cmd_steps):
            out.append(f"{len(self.statuses)} statuses for {len(cmd_steps)} commands")
        exp_cmd = [e for e in (self.expected or []) if e is not None]
        runs = 0
        setup, since_setup = None, 0
        for i, (step, st) in enumerate(zip(cmd_steps, self.statuses)):
            exp = exp_cmd[i] if self.expected is not None else None
            if exp is not None and bool(st["cmd_error"]) != exp["cmd_error"]:
                out.append(f"command {i}: cmd_error {st['cmd_error']}, the TLM says {exp['cmd_error']}")
            if isinstance(step, Setup) and not st["cmd_error"]:
                setup, since_setup = step, 0
            if not isinstance(step, Run):
                continue
            kr = self.kernels[runs]
            lists = self.inputs[runs]
            runs += 1
            if st["cmd_error"]:
                continue
            out += self._check_batches(runs - 1, kr)
            out += self._check_ef(runs - 1, kr, st, exp)
            if setup is not None:
                out += self._check_refill(runs - 1, kr, lists, setup, since_setup % 2)
            since_setup += 1
            if any(d != 1 for d in kr["done"]):
                out.append(f"run {runs - 1}: done beats per SM {kr['done']}, expected one each")
            if any(self._open[s] for s in range(self.config.sms)):
                out.append(f"run {runs - 1}: a batch without warp_last")
            got = [[it for b in bs for it in b["items"]] for bs in kr["batches"]]
            total = sum(len(g) for g in got)
            if st["items"] != total:
                out.append(f"run {runs - 1}: status counts {st['items']} items, the SMs handed out {total}")
            ef = self.config.ef_enabled if step.kernel.ef is None else step.kernel.ef
            if self.graph is not None:
                want = expected_items(self.graph, lists, step.kernel)
                if Counter(x for g in got for x in g) != Counter(x for w in want for x in w):
                    out.append(f"run {runs - 1}: the items differ from the graph's ({total} vs "
                               f"{sum(len(w) for w in want)})")
                if step.kernel.mode == "vertex" and got != want:
                    out.append(f"run {runs - 1}: vertex lists not handed out in push order per SM")
                elif not ef and any(Counter(g) != Counter(w) for g, w in zip(got, want)):
                    out.append(f"run {runs - 1}: with EF off, an SM handed out items of another SM's list")
            if exp is not None and not exp["cmd_error"]:
                r: KernelResult = exp["result"]
                tlm_items = Counter(tuple(int(x) for x in t) for b in r.batches
                                    for t in zip(b.src, b.dst, b.wt, b.idx))
                if Counter(x for g in got for x in g) != tlm_items:
                    out.append(f"run {runs - 1}: the items differ from the TLM's ({total} vs {r.items})")
                if bool(st["mem_error"]) != r.mem_error or bool(st["overflow"]) != r.spill_overflow:
                    out.append(f"run {runs - 1}: mem_error/overflow {st['mem_error']}/{st['overflow']}, the TLM "
                               f"says {r.mem_error}/{r.spill_overflow}")
        ef_any = any(isinstance(s, Run) and (self.config.ef_enabled if s.kernel.ef is None else s.kernel.ef)
                     for s in self.steps)
        if self.expected is not None and not ef_any:
            # Without EF balancing the requests do not depend on timing: they must be the TLM's.
            want = {k: v for k, v in self._tlm_model.requests.items() if v}
            got = classify_reads(self.space, self.model.stats.read_blocks)
            got = {"index": got.get("index", 0), "edge": got.get("edge", 0), "weight": got.get("weight", 0),
                   "refill": got.get("spill", 0), "spill": len(self.model.stats.write_blocks)}
            got = {k: v for k, v in got.items() if v}
            if got != want:
                out.append(f"memory requests by kind {dict(sorted(got.items()))}, the TLM says "
                           f"{dict(sorted(want.items()))}")
        return out


    def _check_batches(self, run: int, kr: dict) -> list[str]:
        """A batch smaller than a warp must be its SM's last of the kernel (the SM had
        gathered everything), unless the SM received a moved entry (it may have been
        drained before the entry came)."""
        out = []
        ws = self.config.warp_size
        receivers = {d.recv for d in kr["ef"] if d.outcome == "moved"}
        for sm, bs in enumerate(kr["batches"]):
            if sm in receivers:
                continue
            for j, b in enumerate(bs[:-1]):
                if len(b["items"]) < ws:
                    out.append(f"run {run}: SM {sm} handed out batch {j} of {len(bs)} with {len(b['items'])} items, "
                               f"fewer than a warp ({ws}), while it had edges left to gather")
                    break
        return out

    def _check_ef(self, run: int, kr: dict, st: dict, exp) -> list[str]:
        out = []
        log = kr["ef"]
        moved = [d for d in log if d.outcome == "moved"]
        if st["exchanges"] != len(moved) or st["moved"] != sum(d.end - d.start for d in moved):
            out.append(f"run {run}: status says {st['exchanges']} exchanges of {st['moved']} edges, the balancer "
                       f"reported {len(moved)} of {sum(d.end - d.start for d in moved)}")
        for d in log:
            if d.outcome != "moved" and (d.vertex, d.start, d.end) != (0, 0, 0):
                out.append(f"run {run}: a decision that moved nothing ({d.outcome}) reported vertex {d.vertex} and "
                           f"[{d.start}, {d.end}), not zeros")
        for d in moved:
            if not 0 < d.end - d.start <= d.size or d.donor == d.recv:
                out.append(f"run {run}: balancer moved [{d.start}, {d.end}) for a balance of {d.size} from SM "
                           f"{d.donor} to SM {d.recv}")
        if self.ef_compare and exp is not None and not exp["cmd_error"]:
            want = [d.key() for d in exp["result"].ef_log]
            got = [d.key() for d in log]
            if got != want:
                out.append(f"run {run}: balancer decisions {got}, the TLM's {want}")
        return out

    def _check_refill(self, run: int, kr: dict, lists: list, setup: Setup, parity: int) -> list[str]:
        """The refill engine reads exactly the blocks of the SM's spill region that
        hold the vertices spilled before the kernel: a list of n vertices keeps
        ``vlist_entries`` on chip and spills the rest (up to the region's size)."""
        c = self.config
        bb = c.block_bytes
        lo, hi = setup.spill_base, setup.spill_base + 2 * c.sms * setup.spill_stride
        want = Counter()
        for sm, vs in enumerate(lists):
            spilled = min(max(0, len(vs) - c.vlist_entries), setup.spill_stride // 4)
            base = setup.spill_base + (2 * sm + parity) * setup.spill_stride
            want.update(base + b * bb for b in range(-(-spilled // c.words_per_block)))
        r0, r1 = kr["reads"]
        got = Counter(a for a in self.model.stats.read_blocks[r0:r1] if lo <= a < hi)
        if got != want:
            out = sorted((got - want).items())[:4], sorted((want - got).items())[:4]
            return [f"run {run}: refill reads of the spill regions differ from the spilled vertices' blocks "
                    f"(extra {out[0]}, missing {out[1]})"]
        return []


# ---------------------------------------------------------------------- workloads
def random_graph(rng: np.random.Generator, spec: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A CSR graph: ``vertices`` vertices with degrees 0..``max_deg`` (``zero`` of them
    0), plus vertices of degree ``big`` (far above the edge buffer); or, with
    ``degrees``, exactly those degrees (vertex ``v`` has ``degrees[v]``)."""
    if "degrees" in spec:
        deg = np.asarray(spec["degrees"], np.int64)
        V = max(int(deg.size), spec.get("vertices", 0))
        deg = np.concatenate([deg, np.zeros(V - deg.size, np.int64)])
    else:
        V = spec.get("vertices", 48)
        deg = rng.integers(1, spec.get("max_deg", 10) + 1, V)
        deg[rng.random(V) < spec.get("zero", 0.15)] = 0
        for k, d in enumerate(spec.get("big", [])):
            deg[(k * 7 + 3) % V] = d
    row_ptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    col = rng.integers(0, V, int(row_ptr[-1]))
    w = rng.integers(1, 1 << 20, int(row_ptr[-1]))
    return row_ptr, col, w


def make_workload(config: GraphPEGConfig, spec: dict) -> tuple[AddressSpace, list, dict]:
    """Steps over a random graph (or ``"graph": SPEC``, a graph spec string): ``{"seed",
    "graph": {...}, "kernels": [{"mode", "ef", "ef_interval", "ef_shift", "weights", "csc",
    "lists": per-SM vertex counts or "all", "vertices": per-SM vertex lists (instead of
    "lists"), "pick": "zero" (only vertices of degree 0), "during": per-SM counts,
    "skew": bool}], "cmd_errors": bool, "spill_stride": bytes per spill region (default: room
    for every vertex; a small one overflows)}``. Returns ``(space, steps, graph)``."""
    rng = np.random.default_rng(spec.get("seed", 0))
    r = random.Random(spec.get("seed", 0))
    gs = spec.get("graph", {})
    if isinstance(gs, str):                     # a graph spec string (benchmarks)
        from golden.graphs import load_graph
        lg = load_graph(gs, weighted=True)
        row_ptr, col, w = lg.row_ptr, lg.col.astype(np.int64), lg.weight.astype(np.int64)
    else:
        row_ptr, col, w = random_graph(rng, gs)
    V = row_ptr.size - 1
    from golden.graphs import CSRGraph
    g = CSRGraph(row_ptr, col.astype(np.int32), None, True, "random")
    t = g.transpose()
    csc_w = np.zeros(t.num_edges, np.int64)
    space = AddressSpace(addr_bits=config.addr_width)
    # Arrays at unaligned offsets inside their regions: ranges start mid-block.
    off = spec.get("offset", 4)
    bases = {}
    for name, arr in (("row_ptr", row_ptr), ("col", col), ("weight", w), ("csc_row_ptr", t.row_ptr),
                      ("csc_col", t.col)):
        raw = np.concatenate([np.zeros(off // 4, np.uint32), arr.astype(np.uint32)])
        bases[name] = space.alloc(name, raw, align=256) + off
    bb = config.block_bytes
    stride = spec.get("spill_stride") or -(-4 * (int(row_ptr[-1]) + 4 * V + 64) // bb) * bb
    spill = space.reserve("spill", 2 * config.sms * stride, np.uint8, align=256)
    graph = {"row_ptr": row_ptr, "col": col, "weight": w, "csc_row_ptr": t.row_ptr, "csc_col": t.col,
             "csc_weight": csc_w, "bases": bases}
    steps: list = []
    if spec.get("cmd_errors"):
        steps.append(Run(GraphPEGKernel("edge", row_ptr=bases["row_ptr"], col=bases["col"])))   # before setup
        steps.append(Setup(spill + 4, stride))                                                   # misaligned
    steps.append(Setup(spill, stride))
    deg = np.diff(row_ptr)
    for ks in spec.get("kernels", [{}]):
        lists = ks.get("lists", [20] * config.sms)
        zero = np.flatnonzero(deg == 0)
        if ks.get("pick") == "zero" and zero.size == 0:
            raise ValueError("workload: 'pick': 'zero' needs a graph with vertices of degree 0")
        for sm in range(config.sms):
            n = 0 if lists == "all" else (lists[sm] if sm < len(lists) else 0)
            if "vertices" in ks:                # explicit lists
                vl = ks["vertices"]
                vs = list(vl[sm]) if sm < len(vl) else []
            elif ks.get("pick") == "zero":
                vs = [int(zero[r.randrange(zero.size)]) for _ in range(n)]
            elif lists == "all":                # every vertex, round robin over the SMs
                vs = list(range(sm, V, config.sms))
            elif ks.get("skew") and sm == 0:
                big = np.argsort(-deg)[:max(1, n // 4)]
                vs = list(big) + [r.randrange(V) for _ in range(n - big.size)]
            elif ks.get("skew"):
                vs = [int(v) for v in np.flatnonzero(deg <= 2)[:n]]
            else:
                vs = [r.randrange(V) for _ in range(n)]
            if vs:
                steps.append(Push(sm, tuple(int(v) for v in vs)))
        during = {sm: tuple(r.randrange(V) for _ in range(n)) for sm, n in enumerate(ks.get("during", []))
                  if n}
        csc = bool(ks.get("csc"))
        k = GraphPEGKernel(ks.get("mode", "edge"), row_ptr=bases["csc_row_ptr" if csc else "row_ptr"],
                           col=bases["csc_col" if csc else "col"],
                           weight=bases["weight"] if ks.get("weights", True) and not csc else None, csc=csc,
                           ef=ks.get("ef", False), ef_interval=ks.get("ef_interval"), ef_shift=ks.get("ef_shift"))
        steps.append(Run(k, during))
        if during and ks.get("drain", True):
            steps.append(Run(GraphPEGKernel("vertex")))
    return space, steps, graph


# ---------------------------------------------------------------------- RTL in the loop
# ---------------------------------------------------------------------- the testbench inside the design
STREAMPLAY_VERILOG = Path(__file__).resolve().parents[1] / "rtl" / "graphunits_streamplay.v"


class GraphPEGDesignEnv(DesignEnv):
    """GraphPEG's warps inside the design (with :func:`sim.simmem.with_sim_memory`):
    a stream player per SM offers the pushed vertices on ``push{k}``
    (``pushplay{k}``); recorders log every pop beat of ``o{k}`` (``poplog{k}``,
    always ready, as the cosim's harness), every balancer decision
    (``eflog``: ``ef_info`` when ``ef_event``) and the address of every memory
    request (``reqlog``: the requests by kind). The command and the status stay
    ports of the wrapper, which gains ``gp_push_idle`` (every player has offered
    all its vertices)."""

    def __init__(self, config: GraphPEGConfig, depth_log2: int = 18):
        self.config = config
        self.depth_log2 = depth_log2
        S = config.sms
        self.taken = tuple(f"push{k}" for k in range(S)) + tuple(f"o{k}" for k in range(S)) + ("ef_event", "ef_info")
        self.verilog = (STREAMPLAY_VERILOG, STREAMLOG_VERILOG)

    def params(self) -> tuple:
        return (self.config.to_json(), self.depth_log2)

    def ports(self) -> dict:
        from amaranth.lib.wiring import Out
        return {"gp_push_idle": Out(1)}

    def elaborate(self, m, top, unit) -> None:
        from amaranth import Cat, ClockSignal, Instance, ResetSignal, Signal
        S, D = self.config.sms, self.depth_log2
        clk, rst = ClockSignal(), ResetSignal()
        idle = Signal(S)
        for k in range(S):
            pu, o = getattr(unit, f"push{k}"), getattr(unit, f"o{k}")
            m.submodules[f"pushplay{k}"] = Instance(
                "graphunits_streamplay", p_W=len(pu.payload.as_value()), p_DEPTH_LOG2=D, i_clk=clk, i_rst=rst,
                o_valid=pu.valid, i_ready=pu.ready, o_payload=pu.payload.as_value(), o_idle=idle[k])
            m.submodules[f"poplog{k}"] = Instance(
                "graphunits_streamlog", p_W=len(o.payload.as_value()), p_DEPTH_LOG2=D,
                p_FILE=transfer_file(f"poplog{k}", "log"), i_clk=clk, i_rst=rst,
                i_valid=o.valid, o_ready=o.ready, i_payload=o.payload.as_value(), i_cycle=top.sm_cycle)
        m.d.comb += top.gp_push_idle.eq(idle.all())
        info = unit.ef_info.as_value()
        m.submodules.eflog = Instance(
            "graphunits_streamlog", p_W=len(info), p_DEPTH_LOG2=12, p_FILE=transfer_file("eflog", "log"), i_clk=clk, i_rst=rst, i_valid=unit.ef_event,
            i_payload=info, i_cycle=top.sm_cycle)
        req = unit.mem.req
        m.submodules.reqlog = Instance(
            "graphunits_streamlog", p_W=self.config.port.addr_width + 1, p_DEPTH_LOG2=D,
            p_FILE=transfer_file("reqlog", "log"), i_clk=clk, i_rst=rst,
            i_valid=req.valid & req.ready, i_payload=Cat(req.payload.addr, req.payload.write), i_cycle=top.sm_cycle)


class GraphPEGInDesign:
    """The testbench side of :class:`GraphPEGDesignEnv` (inside a cocotb test):
    setup, pushes and kernels as the harness runs them, each with cocotb acting once
    (hand over the vertices or the command, wait, read the logs); a kernel's
    :class:`golden.graphpeg.KernelResult` is built from the recorded pop beats as
    the harness builds it from the live ones, with the same rules on batches."""

    def __init__(self, dut, config: GraphPEGConfig, simmem):
        self.dut, self.config, self.simmem = dut, config, simmem
        self._cmd = Codec(GraphPEGCommand(config))
        self._status = Codec(GraphPEGStatus(config))
        self._pop = Codec(PopBeat(config))
        self._push = Codec(PushItem())
        self._ef = Codec(EFEvent())
        self.read_blocks: list[int] = []
        self.writes = 0
        self.problems: list[str] = []
        self.pending_lists = [[] for _ in range(config.sms)]
        self.io_s = 0.0

    def _requests(self, log: list) -> None:
        aw = self.config.port.addr_width
        for _, raw in log:
            if raw >> aw:
                self.writes += 1
            else:
                self.read_blocks.append(raw & ((1 << aw) - 1))

    async def command(self, fields: dict) -> dict:
        """Hand over one command; its status."""
        from ..cosim import edge_until
        dut = self.dut
        dut.cmd__payload.value = self._cmd.encode(fields)
        dut.cmd__valid.value = 1
        what = "GraphPEG command"
        await edge_until(dut.clk, lambda: int(dut.cmd__ready.value), self.simmem, what)
        dut.cmd__valid.value = 0
        await edge_until(dut.clk, lambda: int(dut.status__valid.value), self.simmem, what, wake=dut.status__valid)
        return self._status.decode(int(dut.status__payload.value))

    async def push(self, pushes: dict) -> None:
        from ..cosim import edge_until
        dut = self.dut
        t0 = time.perf_counter()
        for sm, vs in pushes.items():
            vs = [int(v) for v in np.asarray(vs).reshape(-1)]
            play = getattr(dut, f"pushplay{int(sm)}")
            if len(vs) > 1 << 18:
                raise ValueError(f"{len(vs)} pushes exceed the in-design player's {1 << 18}")
            ents = fast_array(play.ents)
            for k, v in enumerate(vs):
                ents.write(k, self._push.encode({"vertex": v}))
            play.n.value = len(vs)
            play.head.value = 0
            self.pending_lists[int(sm)] += vs
        self.io_s += time.perf_counter() - t0
        await edge_until(dut.clk, lambda: int(dut.gp_push_idle.value), self.simmem, "GraphPEG pushes",
                          wake=dut.gp_push_idle)

    async def run(self, kernel: GraphPEGKernel) -> tuple[dict, KernelResult, list]:
        """One kernel: ``(status, result, the input lists)``."""
        cycle0 = self.simmem.cycle
        inputs, self.pending_lists = self.pending_lists, [[] for _ in range(self.config.sms)]
        st = await self.command(command_fields(Run(kernel), self.config))
        t0 = time.perf_counter()
        if st["cmd_error"]:
            return st, None, inputs
        S, dut = self.config.sms, self.dut
        # (a beat taken at the status's edge is in its log after it)
        logs = await read_logs(dut.clk, [getattr(dut, f"poplog{sm}") for sm in range(S)] + [dut.eflog, dut.reqlog])
        batches, items = [], []
        for sm in range(S):
            got = self._batches(sm, [(cy, self._pop.decode(raw)) for cy, raw in logs[sm]])
            items.append(sum(len(b[1]) for b in got))
            for cy, its in got:
                a = np.array(its, np.int64).reshape(-1, 4)
                batches.append(Batch(sm, cy - cycle0, a[:, 0], a[:, 1], a[:, 2], a[:, 3]))
        batches.sort(key=lambda b: (b.cycle, b.sm))
        names = {v: k for k, v in EF_OUTCOMES.items()}
        ef = []
        for cy, raw in logs[S]:
            ev = self._ef.decode(raw)
            ef.append(EFDecision(cy - cycle0, ev["donor"], ev["recv"], ev["size"],
                                 names.get(ev["outcome"], f"code {ev['outcome']}"), ev["v"], ev["bw0"], ev["bw1"]))
        self._requests(logs[S + 1])
        self.io_s += time.perf_counter() - t0
        res = KernelResult(batches, st["cycles"], items, items, {}, st["exchanges"], st["moved"],
                           bool(st["mem_error"]), bool(st["overflow"]), ef_log=ef)
        return st, res, inputs

    def _batches(self, sm: int, beats: list) -> list:
        """An SM's warp batches ``[(cycle, [(src, dst, wt, idx)...])]`` from its pop
        beats, and the harness's rules on them (problems)."""
        out, cur, done = [], None, 0
        W = self.config.warp_size
        for cy, it in beats:
            if it["done"]:
                if cur:
                    self.problems.append(f"SM {sm}: done beat inside a warp batch")
                done += 1
                continue
            if done:
                self.problems.append(f"SM {sm}: items after its done beat")
            n = it["n"]
            if n == 0:
                self.problems.append(f"SM {sm}: an empty beat that is not done")
            self.problems += idle_lane_problems(sm, it)
            if cur is None:
                cur = (cy, [])
            cur[1].extend((it["src"][j], it["dst"][j], it["wt"][j], it["idx"][j]) for j in range(n))
            if len(cur[1]) > W:
                self.problems.append(f"SM {sm}: a batch of more than {W} items")
            if it["warp_last"]:
                out.append(cur)
                cur = None
        if done != 1:
            self.problems.append(f"SM {sm}: {done} done beats in a kernel (one expected)")
        return out


class GraphPEGRTLBackend(InDesignStats):
    """GraphPEG kernels run by the RTL (use inside a cocotb test); same interface as
    :class:`golden.graphpeg.session.GraphPEGTLMBackend`.

    ``memory`` None: the Python memory model and the harness, cocotb every cycle;
    a :class:`sim.simmem.SimMemoryConfig`: the memory, the push players and the
    pop, balancer and request recorders inside the design
    (:class:`GraphPEGDesignEnv`), cocotb once per setup, push batch or kernel."""

    def __init__(self, dut, config: GraphPEGConfig, space: AddressSpace | None = None,
                 timing: MemoryTiming = MemoryTiming(), sim: str = "rtl", pop_ready=None, memory=None):
        from cocotb.task import resume

        from ..cocotb_loop import CocotbLoop
        self.config = config
        self.sms = config.sms
        self.space = space or AddressSpace(addr_bits=config.addr_width)
        self.name = f"rtl-{sim}"
        self._arrays: dict = {}
        self.kernel_cycles = 0
        self.simmem = None
        self.timing = timing
        self.kernels_done = 0
        self.first_mismatch: str | None = None   # the first kernel whose items differ (mismatch triage)
        self.perturb_check_op: int | None = None  # tests: corrupt the expected items of this kernel
        self.replay_dir = None                   # where the first differing kernel's reproducer goes
        self._setup_step = None                  # (spill base, stride) of the last setup
        self._last_inputs: list = []
        if memory is None:
            self.harness = GraphPEGHarness(config, self.space, [], timing=timing, pop_ready=pop_ready, expect=False)
            self.loop = CocotbLoop(dut, self.harness.agents)
            self._push = resume(self._push_async)
            self._run = resume(self._run_async)
            self._setup = resume(self._setup_async)
        else:
            from ..simmem import SimMemory
            if pop_ready is not None:
                raise ValueError("the in-design pop recorders are always ready (pop_ready: use the Python memory)")
            self.harness = None
            self.dut = dut
            self.loop = CocotbLoop(dut, [], clock_impl="gpi")
            self.simmem = SimMemory(dut, self.space, config.port, memory, timing)
            self.in_design = GraphPEGInDesign(dut, config, self.simmem)
            self.sim_s = self.io_s = 0.0
            self._push = resume(self._push_in_design)
            self._run = resume(self._run_in_design)
            self._setup = resume(self._setup_in_design)

    async def start(self) -> None:
        await start_backend(self.loop, [self.simmem] if self.simmem is not None else [])

    def place(self, name: str, values: np.ndarray) -> int:
        return place_array(self.space, self._arrays, name, values)

    def setup(self, spill_stride: int) -> None:
        step = Setup(reserve_spill(self.space, self._arrays, self.sms, spill_stride), spill_stride)
        self._setup_step = (step.spill_base, step.spill_stride)
        st = self._setup(step)
        if st["cmd_error"]:
            raise GraphPEGError("the RTL refused the setup command")

    async def _setup_async(self, step):
        h = self.harness
        k = len(h.statuses)
        h.submit(step)
        await self.loop.run(lambda: len(h.statuses) > k, stall_cycles=20_000, what="GraphPEG setup",
                            watch=h.watchdog)
        return h.statuses[k]

    def push(self, pushes: dict) -> None:
        self._push(pushes)

    async def _push_async(self, pushes: dict):
        h = self.harness
        for sm, vs in pushes.items():
            h.submit(Push(int(sm), tuple(int(v) for v in np.asarray(vs).reshape(-1))))
        await self.loop.run(h.done, stall_cycles=20_000, what="GraphPEG pushes", watch=h.watchdog)

    def run(self, kernel: GraphPEGKernel, *, latency: int = 1, consume: float = 0.0, warps: int = 64) -> KernelResult:
        kernel.check(self.config)
        pre = self.space.copy() if self.replay_dir and self.first_mismatch is None else None
        cycle = self.loop.cycle if self.simmem is None else self.simmem.cycle
        res = self._run(kernel)
        self._check_kernel(kernel, res, pre, cycle)
        return res

    def _check_kernel(self, kernel: GraphPEGKernel, res: KernelResult, pre, cycle: int) -> None:
        """Record the first kernel whose items differ from what its input lists hold
        in memory (:func:`items_from_memory`): which kernel, its lists, the first
        differing item with both counts, the cycle it started; with a
        ``replay_dir``, write its reproducer there (:func:`write_reproducer`)."""
        k = self.kernels_done
        self.kernels_done += 1
        if self.first_mismatch is not None:
            return
        inputs = self._last_inputs
        want = items_from_memory(self.space, kernel, inputs)
        if self.perturb_check_op == k:
            perturb_expected(want)
        what = graphpeg_difference(result_items(res), want)
        if what:
            self.first_mismatch = (f"first difference at GraphPEG kernel {k} ({kernel.mode}{', CSC' if kernel.csc else ''}"
                                   f", lists of {', '.join(str(len(v)) for v in inputs)} vertices; started at RTL "
                                   f"cycle {cycle}): {what}")
            if pre is not None and self._setup_step is not None:
                path = write_reproducer(self.replay_dir, self.config, kernel, inputs, self._setup_step, pre,
                                        self.timing, k, self.first_mismatch, perturb=self.perturb_check_op == k)
                self.first_mismatch += f"; reproducer {path} (graphunits replay {path})"

    async def _run_async(self, kernel):
        h = self.harness
        k = len(h.statuses)
        h.submit(Run(kernel))
        await self.loop.run(lambda: len(h.statuses) > k, stall_cycles=20_000, what=f"GraphPEG {kernel.mode} kernel",
                            watch=h.watchdog)
        if h.statuses[k]["cmd_error"]:
            raise GraphPEGError("the RTL refused the run command")
        if h.problems:
            raise GraphPEGError(f"RTL protocol problem: {h.problems[0]}")
        return self._finish(kernel, h.kernel_result(-1), h.inputs[-1])

    def _finish(self, kernel, res: KernelResult, inputs: list) -> KernelResult:
        # Items each SM's own lists held (as if nothing moved): the degrees, read from memory.
        own = []
        for vs in inputs:
            if kernel.mode == "vertex" or not vs:
                own.append(len(vs))
                continue
            rp = self.space.gather_elems(kernel.row_ptr + 4 * np.asarray(vs, np.int64), 4).astype(np.int64)
            rp1 = self.space.gather_elems(kernel.row_ptr + 4 * np.asarray(vs, np.int64) + 4, 4).astype(np.int64)
            own.append(int(np.maximum(rp1 - rp, 0).sum()))
        res.sm_items_no_ef = own
        self.kernel_cycles += res.cycles
        self._last_inputs = [list(map(int, vs)) for vs in inputs]
        return res

    # -- the testbench inside the design
    async def _timed(self, coro):
        mem = self.simmem
        t0 = time.perf_counter()
        mem.load()
        t1 = time.perf_counter()
        io0 = self.in_design.io_s
        out = await coro
        t2 = time.perf_counter()
        await mem.unload()
        mem.check("GraphPEG")
        io = self.in_design.io_s - io0
        self.sim_s += t2 - t1 - io
        self.io_s += time.perf_counter() - t2 + t1 - t0 + io
        if self.in_design.problems:
            raise GraphPEGError(f"RTL protocol problem: {self.in_design.problems[0]}")
        return out

    async def _setup_in_design(self, step):
        self.in_design.pending_lists = [[] for _ in range(self.sms)]
        return await self._timed(self.in_design.command(command_fields(step, self.config)))

    async def _push_in_design(self, pushes: dict):
        await self._timed(self.in_design.push(pushes))

    async def _run_in_design(self, kernel):
        st, res, inputs = await self._timed(self.in_design.run(kernel))
        if st["cmd_error"]:
            raise GraphPEGError("the RTL refused the run command")
        return self._finish(kernel, res, inputs)

    def requests(self) -> dict:
        if self.simmem is None:
            blocks, writes = self.harness.model.stats.read_blocks, len(self.harness.model.stats.write_blocks)
        else:
            blocks, writes = self.in_design.read_blocks, self.in_design.writes
        got = classify_reads(self.space, blocks)
        out = {"index": got.get("index", 0), "edge": got.get("edge", 0), "weight": got.get("weight", 0),
               "refill": got.get("spill", 0), "spill": writes}
        return out


def write_reproducer(folder, config: GraphPEGConfig, kernel: GraphPEGKernel, lists: list, setup: tuple,
                     space: AddressSpace, timing: MemoryTiming, index: int, report: str, *,
                     perturb: bool = False) -> Path:
    """A self-contained reproducer of one GraphPEG kernel (``graphunits replay``): the
    configuration, the setup's spill region, each SM's input list, the kernel, the
    memory before it, the testbench memory's timing, its index in the run and the
    report. The engines start empty on replay (a setup, the lists pushed, the
    kernel)."""
    import dataclasses

    from ..replay import save_reproducer
    return save_reproducer(folder, f"graphpeg-kernel{index}", space,
                           {"unit": "graphpeg", "config": config.to_dict(), "kernel": dataclasses.asdict(kernel),
                            "lists": lists, "setup": list(setup), "op_index": index, "timing": timing,
                            "report": report, "perturb_expected": perturb})


def _cosim_backend(cfg):
    from golden.graphpeg.session import GraphPEGTLMBackend
    return GraphPEGTLMBackend(cfg)


def _cosim_check(rtl: dict, tlm: dict) -> list[str]:
    """Disagreements between the RTL run and the TLM run of one algorithm (beyond the
    result, which sim/cosim.py compares with the reference). A run that hands out
    no edges at all (an edgeless graph, a source of out-degree 0) is fine when the
    TLM run hands out none either: only one of the two running no kernel, or
    handing out no items, is a mismatch; BFS (order-independent: every kernel's
    items are fixed by the graph) must agree exactly, SSSP's items and kernels
    depend on the pop order. Every kernel's items were checked during the run
    (``first_mismatch``: the first kernel whose items differ from its lists')."""
    out = [rtl["first_mismatch"]] if rtl.get("first_mismatch") else []
    if (rtl["kernels"] == 0) != (tlm["kernels"] == 0):
        out.append(f"the RTL ran {rtl['kernels']} kernels, the TLM run {tlm['kernels']}")
    elif (rtl["items"] == 0) != (tlm["items"] == 0):
        out.append(f"the RTL handed out {rtl['items']} items, the TLM run {tlm['items']}")
    if rtl["order_independent"] and (rtl["items"] != tlm["items"] or rtl["kernels"] != tlm["kernels"]):
        out.append(f"RTL handed out {rtl['items']} items in {rtl['kernels']} kernels, the TLM run "
                   f"{tlm['items']} in {tlm['kernels']}")
    return out


def _cosim_rows(rtl: dict, tlm: dict) -> list:
    rel = "=" if rtl["order_independent"] else "vs"
    return [[f"GraphPEG kernels / items, RTL {rel} TLM", f"{rtl['kernels']} / {rtl['items']} {rel} {tlm['kernels']} / "
                                                        f"{tlm['items']}"],
            ["EF exchanges / moved edges (RTL)", f"{rtl['exchanges']} / {rtl['moved_edges']}"],
            ["engine requests, RTL / TLM", f"{rtl['engine_requests']} / {tlm['engine_requests']}"],
            ["RTL cycles (all kernels)", rtl["engine_cycles"]],
            ["items per cycle per SM (RTL)", round(rtl["edges_per_cycle_per_sm"], 3)]]


def _cosim_env(cfg):
    return GraphPEGDesignEnv(cfg)


#: RTL in the loop (its descriptor's ``cosim``, golden/graphpeg/descriptor.py).
COSIM = CosimUnit("graphpeg", ("bfs", "sssp"), ("graphpeg",), "sim", _cosim_backend,
                  "sim.graphpeg.tb_cosim", "graphpeg", _cosim_check, _cosim_rows,
                  options=lambda cfg: {"graphpeg": cfg, "compare_baseline": False},
                  in_design_memory=True, design_env=_cosim_env)


# ---------------------------------------------------------------------- demo
def demo_runs() -> list[dict]:
    """The demo's and the benchmark's RTL runs (preset ``sim``)."""
    return [{"name": "lists with spills, EF off", "seed": 5,
             "workload": {"seed": 5, "graph": {"vertices": 64, "big": [120]},
                          "kernels": [{"lists": [40, 40], "ef": False}]},
             "timing": {"latency": [1, 30], "seed": 5}},
            {"name": "skewed lists, EF on", "seed": 6,
             "workload": {"seed": 6, "graph": {"vertices": 64, "big": [300, 200]},
                          "kernels": [{"lists": [8, 8], "ef": True, "skew": True}]},
             "timing": {"latency": [1, 30], "seed": 6}}]
