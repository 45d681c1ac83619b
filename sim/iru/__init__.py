"""Testbench harness of the IRU: agents for its command, status, memory, request and
reply ports, the warp-request generator (the kernel's ``load_iru`` calls, as a
:class:`golden.iru.RequestPolicy` says, with optional random jitter), the
collection of replies, random workloads, the checks against the TLM, the RTL
backend for RTL in the loop and the unit's registration with ``graphunits cosim``.

What must hold between the RTL and the TLM (docs/iru.md, "What must hold"):
:func:`golden.iru.check_result` on every RTL result (replies, conservation,
positions, filter/merge results, full replies, no early timeout), the same
per-index minima and float sums (within the documented tolerance) as the TLM,
the status counters equal to the replies, the memory- and command-error flags
equal to the TLM's (a command error, an array past the top of the address
space, must also be the operation's: ``check_result``), the timeout bound
(:func:`golden.iru.checks.timeout_violations`: the repliers never sit idle
past the timeout while requests wait and a partition holds enough data; runs
with ``monitor``), and an average number of distinct
key blocks per full reply within 10 % of the TLM's on the same input and
request policy.
"""
from __future__ import annotations

import random
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from golden.iru import (FILTER_OPS, REPLY_KINDS, IRUConfig, IRUModel, IRUOp, IRUReply, IRUResult, IRUStatus,
                        RequestPolicy, check_result, reply_quality, warp_threads)
from golden.iru.checks import compare_aggregates, timeout_slack, timeout_violations
from golden.iru.ops import f32_bits
from golden.memory import AddressSpace
from hw.iru import IRUCommand, IRUReplyBeat, IRURequest, IRUStatusLayout
from hw.mem.port import MemRequest, MemResponse

from . import funcov
from ..funcov import Covered
from ..agents import Agent, CycleCounter, MemoryAgent, StreamSink, StreamSource
from ..codec import Codec
from ..cosim import CosimUnit
from ..memory import MemoryModel, MemoryTiming
from ..simmem import STREAMLOG_VERILOG, DesignEnv, start_backend, read_logs, transfer_file

__all__ = ["IRUHarness", "IRURTLBackend", "Jitter", "make_workload", "timeout_slack", "QUALITY_TOLERANCE",
           "IRUDesignEnv", "IRUInDesign", "beat_lanes", "lane_problems", "lanes_reply"]

#: The RTL's mean distinct key blocks per full reply may differ from the TLM's by this share.
QUALITY_TOLERANCE = 0.10


@dataclass(frozen=True)
class Jitter:
    """Random additions to a request policy in the testbench: each warp's request
    comes up to ``gap`` cycles later than the policy says (seeded)."""

    gap: int = 0
    seed: int = 0


class _Sequencer(Agent):
    """Runs the operations one after another and issues the warp requests (first agent).
    With the monitor on, it also notes when each partition's reply ``valid`` rises
    (before the reply sinks see the edge), the cycle a reply's first lane is offered."""

    def __init__(self, h: "IRUHarness"):
        self.h = h
        self.cycle = 0
        self._valid = [0] * h.P
        self.rise = [0] * h.P

    def drive(self):
        self.h._tick(self.cycle)
        return {}

    def clock(self, get):
        if self.h.monitor:
            for p in range(self.h.P):
                v = get((f"reply{p}", "valid"))
                if v and not self._valid[p]:
                    self.rise[p] = self.cycle
                self._valid[p] = v


def _sample(h: "IRUHarness"):
    """The monitor of the IRU harness: samples the monitored outputs at each edge,
    before the cycle count moves (the transfers of a cycle are recorded with that
    cycle's number)."""
    def before(get):
        if h.monitor:
            held = max(get((f"held{p}",)) for p in range(h.P))
            tok = max(get((f"tokens{p}",)) for p in range(h.P))
            h.trace.append((held, tok, get(("flush",))))
    return before


def beat_lanes(beat: dict) -> list[dict]:
    """The lanes of a reply beat (one or two), each as an item of its own."""
    if not beat.get("two"):
        return [beat]
    return [dict(beat, last=0), dict(beat, idx=beat["idx1"], sec=beat["sec1"], pos=beat["pos1"],
                                     disabled=beat["disabled1"])]


def lane_problems(p: int, lanes: list, item: dict) -> list[str]:
    """What a new lane ``item`` of partition ``p`` breaks, after the ``lanes`` of the
    reply it continues: the lanes of two warps interleaved, a live lane after a
    disabled one."""
    out = []
    if lanes and (lanes[0]["warp"] != item["warp"] or lanes[0]["kind"] != item["kind"]):
        out.append(f"partition {p}: reply lanes of warps {lanes[0]['warp']} and {item['warp']} interleaved")
    if item["disabled"] == 0 and lanes and lanes[-1]["disabled"]:
        out.append(f"partition {p}: warp {item['warp']}: a live lane after a disabled one")
    return out


def lanes_reply(p: int, lanes: list, sent: int, first: int, last: int) -> IRUReply:
    """The :class:`golden.iru.IRUReply` of a reply's lanes (the last one ends it)."""
    live = [b for b in lanes if not b["disabled"]]
    item = lanes[-1]
    kind = REPLY_KINDS[item["kind"]] if item["kind"] < len(REPLY_KINDS) else f"?{item['kind']}"
    return IRUReply(item["warp"], p, kind, np.array([b["idx"] for b in live], np.int64),
                    np.array([b["sec"] for b in live], np.uint32), np.array([b["pos"] for b in live], np.int64),
                    len(lanes) - len(live), sent, first, last)


class IRUHarness(Covered, funcov=funcov):
    """Agents and bookkeeping for running IRU operations on the RTL.

    Parameters
    ----------
    config : IRUConfig
    space : AddressSpace
        Holds the arrays; every partition's memory model serves from it.
    ops : list of IRUOp
        Operations run one after another (more with :meth:`submit`).
    policy : RequestPolicy
    jitter : Jitter
    timing : MemoryTiming
        Of every partition's memory (seeds differ per partition).
    reply_ready, req_pause, cmd_pause, status_ready : patterns (sim.memory.Pattern)
    expect : bool
        Run the TLM on every operation (with ``latency``) for the comparison.
    monitor : bool
        Sample every partition's ``held``/``tokens`` and ``flush`` each cycle (timeout check).
    """

    def __init__(self, config: IRUConfig, space: AddressSpace, ops: list, *, policy: RequestPolicy = RequestPolicy(),
                 jitter: Jitter = Jitter(), timing: MemoryTiming = MemoryTiming(), reply_ready=None, req_pause=None,
                 cmd_pause=None, status_ready=None, seed: int = 0, expect: bool = True, latency: int | None = None,
                 monitor: bool = False):
        self.config = config
        self.space = space
        self.P = P = config.partitions
        self.policy = policy
        self.jitter = jitter
        self._rng = random.Random(jitter.seed)
        lo, hi = timing.latency_range
        self.latency = latency or max(1, (lo + hi) // 2)
        self.models = []
        for p in range(P):
            t = MemoryTiming(**{**timing.__dict__, "seed": timing.seed + 101 * p})
            self.models.append(MemoryModel(space, config.block_bytes, t))
        self.mems = [MemoryAgent((f"mem{p}",), Codec(MemRequest(config.port)), Codec(MemResponse(config.port)),
                                 self.models[p]) for p in range(P)]
        self.cmd = StreamSource(("cmd",), Codec(IRUCommand(config)), [], pause=cmd_pause, seed=seed,
                                on_send=self._cmd_sent)
        self.status = StreamSink(("status",), Codec(IRUStatusLayout(config)), ready=status_ready, seed=seed + 1,
                                 on_item=self._status, keep=False)
        self.reqs = [StreamSource((f"req{p}",), Codec(IRURequest(config)), [], pause=req_pause, seed=seed + 10 + p,
                                  on_send=self._sent) for p in range(P)]
        self.replies = [StreamSink((f"reply{p}",), Codec(IRUReplyBeat(config)), ready=reply_ready,
                                   seed=seed + 20 + p, on_item=self._beat(p), keep=False) for p in range(P)]
        self.monitor = monitor
        # the longest refusals of the harness's own ports, as a memory's (the watchdog)
        self._port_wait = sum(MemoryTiming(req_ready=pat).request_cycles() for pat in (reply_ready, req_pause))
        self._status_wait = MemoryTiming(req_ready=status_ready).request_cycles()
        self.seq = _Sequencer(self)
        self._clock = CycleCounter(self.seq, before=_sample(self))
        self.trace: list = []                # monitor: per cycle (most held, most tokens, flush)
        self.offers: list[list] = []         # monitor: per operation, the cycle each reply's first lane was offered
        self.cmd_cycles: list[int] = []      # cycle each operation's command was accepted
        self.expect = expect
        self.ops: list[tuple] = []           # (op, policy)
        self.results: list[IRUResult] = []
        self.expected: list[IRUResult] = []
        self.inputs: list[tuple] = []
        self.problems: list[str] = []
        self.statuses: list[dict] = []
        self._cur = None
        for op in ops:
            self.submit(op)

    @property
    def agents(self):
        return [self.seq, self.cmd, self.status, *self.mems, *self.reqs, *self.replies, self._clock]

    # ------------------------------------------------------------------ operations
    def submit(self, op: IRUOp, policy: RequestPolicy | None = None) -> int:
        """Queue one more operation; returns its number."""
        op.check(self.config)
        self.ops.append((op, policy or self.policy))
        return len(self.ops) - 1

    def done(self) -> bool:
        return len(self.results) >= len(self.ops)

    #: Watchdog: an operation may take at most WATCH_FIXED + the request policy's start
    #: + its warps x (the policy's gap and think time + the jitter + the IRU's timeout)
    #: + WATCH_PER_ELEMENT x (its elements + 16) x (a partition memory's request bound
    #: + the longest refusals of the reply and request ports). Calibrated on the IRU's
    #: tests (Icarus and Verilator, RTL in the loop with the Python memory included; 266
    #: operations): every one passes with 1/8 of this bound, the closest at 0.094 of it
    #: (463 cycles: a calibration run's 69 elements, its warps asking after 322 cycles);
    #: WATCH_PER_ELEMENT 2 would leave 0.119.
    WATCH_FIXED = 2000
    WATCH_PER_ELEMENT = 4

    def watchdog(self):
        """The operation in flight (the harness runs one at a time), when its command
        was accepted and the most cycles it may take (:class:`sim.loop.Progress`;
        docs/verification.md)."""
        k = len(self.results)
        if k >= len(self.cmd_cycles) or k >= len(self.ops):
            return None
        op, pol = self.ops[k]
        warps = -(-op.n // self.config.entry_size)
        per = max(m.timing.request_cycles() for m in self.models) + self._port_wait
        bound = (self.WATCH_FIXED + self._status_wait + pol.start
                 + warps * (pol.gap + pol.think + self.jitter.gap + self.config.timeout)
                 + self.WATCH_PER_ELEMENT * (op.n + 16) * per)
        return f"IRU operation {k} ({op.op}, {op.n} elements)", self.cmd_cycles[k], bound

    def _start(self, k: int, cycle: int) -> None:
        op, policy = self.ops[k]
        model = IRUModel(self.config, self.space, latency=self.latency, is_error=self.models[0].is_error)
        self.inputs.append(model.inputs(op))
        if self.expect:
            self.expected.append(model.execute(op, policy))
        threads = warp_threads(op.n, self.config.entry_size)
        self._cur = {"k": k, "op": op, "policy": policy, "threads": threads, "issued": 0, "due": deque(),
                     "sent": {}, "replies": [], "beats": [[] for _ in range(self.P)], "cmd_cycle": None,
                     "started": False, "first": {}, "offer": {}, "offers": []}
        self.cmd.put(op.fields(self.config))

    def _cmd_sent(self, item: dict) -> None:
        self.cmd_cycles.append(self.seq.cycle)

    def _tick(self, cycle: int) -> None:
        """Each cycle: start the next operation, move due requests to their ports."""
        if self._cur is None:
            if len(self.results) < len(self.ops):
                self._start(len(self.results), cycle)
            else:
                return
        cur = self._cur
        if not cur["started"]:
            if self.cmd.idle():
                cur["started"] = True
                cur["cmd_cycle"] = cycle
                pol: RequestPolicy = cur["policy"]
                first = min(len(cur["threads"]), pol.resident)
                for w in range(first):
                    self._due(cur, cycle + pol.start + w * pol.gap)
            return
        due = cur["due"]
        while due and due[0][0] <= cycle:
            _, w = due.popleft()
            self.reqs[w % self.P].put({"warp": w, "threads": cur["threads"][w]})

    def _due(self, cur, cycle: int) -> None:
        w = cur["issued"]
        if w >= len(cur["threads"]):
            return
        cur["issued"] += 1
        if self.jitter.gap:
            cycle += self._rng.randint(0, self.jitter.gap)
        due = cur["due"]
        # Keep the queue ordered by due cycle (jitter may reorder warps).
        if due and due[-1][0] > cycle:
            items = sorted(list(due) + [(cycle, w)])
            due.clear()
            due.extend(items)
        else:
            due.append((cycle, w))

    def _sent(self, item: dict) -> None:
        cur = self._cur
        if cur is not None:
            cur["sent"][item["warp"]] = self.seq.cycle

    def _beat(self, p: int):
        def on(beat: dict) -> None:
            for item in beat_lanes(beat):
                lane(item)

        def lane(item: dict) -> None:
            cur = self._cur
            if cur is None:
                self.problems.append(f"partition {p}: a reply lane with no operation running")
                return
            beats = cur["beats"][p]
            if not beats:
                cur["first"][p] = self.seq.cycle
                cur["offer"][p] = self.seq.rise[p] if self.monitor else self.seq.cycle
            self.problems += lane_problems(p, beats, item)
            beats.append(item)
            if item["last"]:
                cur["replies"].append(lanes_reply(p, beats, cur["sent"].get(item["warp"], -1), cur["first"][p],
                                                  self.seq.cycle))
                cur["offers"].append(cur["offer"][p])
                cur["beats"][p] = []
                pol = cur["policy"]
                self._due(cur, self.seq.cycle + 1 + pol.think)
        return on

    def _status(self, item: dict) -> None:
        cur = self._cur
        if cur is None:
            self.problems.append("a status with no operation running")
            return
        kinds = {k: item["kinds"][i] for i, k in enumerate(REPLY_KINDS)}
        st = IRUStatus(n=item["n"], live=item["live"], disabled=item["disabled"], replies=item["replies"],
                       kinds=kinds, forwarded=item["forwarded"], ring=item["ring"], cycles=item["cycles"],
                       mem_error=bool(item["mem_error"]), cmd_error=bool(item["cmd_error"]))
        self.statuses.append(item)
        self.offers.append(cur["offers"])
        res = IRUResult(cur["op"], cur["replies"], st, measured=True)
        self.results.append(res)
        self._cur = None

    # ------------------------------------------------------------------ checks
    def mismatches(self) -> list[str]:
        out = list(self.problems)
        if len(self.results) != len(self.ops):
            out.append(f"{len(self.results)} of {len(self.ops)} operations completed")
        for k, res in enumerate(self.results):
            op = res.op
            idx_in, sec_in = self.inputs[k]
            name = f"op {k} ({op.op}, n={op.n})"
            out += [f"{name}: {p}" for p in check_result(self.config, idx_in, sec_in, res)]
            st = res.status
            kinds = {kk: sum(r.kind == kk for r in res.replies) for kk in REPLY_KINDS}
            got = (st.n, st.live, st.disabled, st.replies, st.kinds)
            want = (op.n, sum(r.idx.size for r in res.replies), sum(r.disabled for r in res.replies),
                    len(res.replies), kinds)
            if got != want:
                out.append(f"{name}: status {got} but the replies give {want}")
            if self.expect:
                tlm = self.expected[k]
                if st.mem_error != tlm.status.mem_error:
                    out.append(f"{name}: mem_error {st.mem_error}, the TLM says {tlm.status.mem_error}")
                if st.cmd_error != tlm.status.cmd_error:
                    out.append(f"{name}: cmd_error {st.cmd_error}, the TLM says {tlm.status.cmd_error}")
                out += [f"{name}: {p}" for p in compare_aggregates(op.op, res, tlm, idx_in, sec_in)]
        return out

    def timeout_violations(self) -> list[str]:
        """With the monitor on: the timeout bound (:func:`golden.iru.checks.timeout_violations`)
        on every operation's replies, the offers of their first lanes and the
        monitored ``held``/``tokens``/``flush``."""
        out = []
        for k, res in enumerate(self.results):
            out += [f"op {k}: {p}" for p in timeout_violations(self.config, res.replies, self.trace, self.offers[k])]
        return out[:8]

    def flush_cycles(self) -> list:
        """With the monitor on: per operation, cycles from the command's acceptance
        to the first cycle with all input in the hashes (the TLM's ``flush_cycle``)."""
        out = []
        for h in self.cmd_cycles[:len(self.results)]:
            out.append(next((c - h for c in range(h + 1, len(self.trace)) if self.trace[c][2]), None))
        return out

    def quality(self) -> list[tuple]:
        """(RTL, TLM) mean distinct key blocks per full reply, per operation."""
        return [(reply_quality(self.config, r), reply_quality(self.config, e) if self.expect else None)
                for r, e in zip(self.results, self.expected or [None] * len(self.results))]


# ---------------------------------------------------------------------- workloads
def make_workload(config: IRUConfig, spec: dict) -> tuple[AddressSpace, list[IRUOp]]:
    """Random operations over freshly filled memory. ``spec``: ``{"seed", "ops",
    "max_n", "kinds": [...filter ops], "sizes": [...], "id_range", "dist"}``. Sizes
    include 0, 1, around the warp size; index arrays are 4-byte aligned but not
    block aligned; distributions are uniform, hot (a few blocks take most indices)
    or clustered (runs of nearby indices)."""
    if spec.get("kind") == "graph":
        return graph_workload(config, spec)
    if spec.get("kind") == "ops":
        return ops_workload(config, spec)
    if spec.get("kind") == "block":
        # ``n`` indices cycling through one key block (timing probes).
        space = AddressSpace(addr_bits=config.addr_width)
        n = spec.get("n", 64)
        ib = space.alloc("idx", (np.arange(n) % (config.key_block_bytes // 4)).astype(np.uint32), align=256)
        return space, [IRUOp(n, ib, target=0x100000)]
    rng = np.random.default_rng(spec.get("seed", 0))
    r = random.Random(spec.get("seed", 0))
    E = config.entry_size
    space = AddressSpace(addr_bits=config.addr_width)
    max_n = min(spec.get("max_n", 600), config.max_n)
    kinds = spec.get("kinds", list(FILTER_OPS))
    sizes = spec.get("sizes", [0, 1, E - 1, E, E + 1, 3 * E + 5, max_n, r.randint(2, max_n)])
    id_range = spec.get("id_range", 400)
    ops = []
    for k in range(spec.get("ops", 4)):
        n = sizes[k % len(sizes)] if k < len(sizes) else r.randint(0, max_n)
        n = min(n, max_n)
        kind = kinds[k % len(kinds)]
        dist = spec.get("dist", r.choice(["uniform", "hot", "clustered"]))
        if dist == "hot":
            hot = rng.integers(0, id_range, 6)
            idx = np.where(rng.random(n) < 0.7, rng.choice(hot, n), rng.integers(0, id_range, n))
        elif dist == "clustered":
            idx = (rng.integers(0, id_range, n // 8 + 1).repeat(8)[:n] + rng.integers(0, 24, n)) % id_range
        else:
            idx = rng.integers(0, id_range, n)
        idx = idx.astype(np.uint32)
        if r.random() < 0.3:
            idx |= np.uint32(rng.integers(1, 255) << config.index_bits) if config.index_bits < 32 else np.uint32(0)
        if kind == "fadd":
            sec = f32_bits(rng.random(n) * 100 + 1e-3)
        else:
            sec = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        off = 4 * r.randrange(0, 24)
        ib = space.alloc(f"idx{k}", np.concatenate([np.zeros(off // 4, np.uint32), idx]), align=64) + off
        use_sec = kind != "none" or r.random() < 0.5
        sb = None
        if use_sec:
            soff = 4 * r.randrange(0, 24)
            sb = space.alloc(f"sec{k}", np.concatenate([np.zeros(soff // 4, np.uint32), sec]), align=64) + soff
        target = r.choice([0x100000, 0x100040, 0x200004])
        esize = r.choice([4, 4, 8])
        ops.append(IRUOp(n, ib, sb, kind, target=target, esize=esize))
    return space, ops


def ops_workload(config: IRUConfig, spec: dict) -> tuple[AddressSpace, list[IRUOp]]:
    """Operations at given addresses (``{"kind": "ops", "seed", "ops": [{"n", "idx",
    "sec", "op", "target", "esize"}]}``; ``sec`` may be None): random indices below
    ``id_range`` (default 400) and secondary values are written to the words of each
    array that lie in the address space (an array may run past its top: a command
    error, docs/iru.md)."""
    rng = np.random.default_rng(spec.get("seed", 0))
    space = AddressSpace(addr_bits=config.addr_width)
    top = 1 << config.addr_width
    ops = []
    for d in spec["ops"]:
        n, kind = int(d["n"]), d.get("op", "none")
        op = IRUOp(n, int(d["idx"]), None if d.get("sec") is None else int(d["sec"]), kind,
                   target=int(d.get("target", 0x100000)), esize=int(d.get("esize", 4)))
        op.check(config)
        idx = rng.integers(0, spec.get("id_range", 400), n).astype(np.uint32)
        sec = f32_bits(rng.random(n) * 100 + 1e-3) if kind == "fadd" else \
            rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        for base, vals in ((op.idx, idx), (op.sec, sec)):
            if base is not None:
                k = max(0, min(n, (top - base) // 4))
                if k:
                    space.write(base, vals[:k].view(np.uint8))
        ops.append(op)
    return space, ops


def graph_workload(config: IRUConfig, spec: dict) -> tuple[AddressSpace, list[IRUOp]]:
    """The edge frontier of a BFS level of a graph (``{"kind": "graph", "graph",
    "op"}``): the IRU's real input, for the reply-quality comparison and the benchmark."""
    from golden.graphs import load_graph
    g = load_graph(spec.get("graph", "kron:scale=9,edgefactor=8,seed=1"))
    rng = np.random.default_rng(spec.get("seed", 0))
    n = min(spec.get("n", g.num_edges), g.num_edges, config.max_n)
    start = int(rng.integers(0, max(1, g.num_edges - n)))
    idx = g.col[start:start + n].astype(np.uint32)
    space = AddressSpace(addr_bits=config.addr_width)
    ib = space.alloc("idx", idx, align=256)
    kind = spec.get("op", "none")
    sb = None
    if kind != "none" or spec.get("sec", False):
        sec = f32_bits(rng.random(n) + 0.5) if kind == "fadd" else rng.integers(0, 1 << 20, n).astype(np.uint32)
        sb = space.alloc("sec", sec, align=256)
    return space, [IRUOp(n, ib, sb, kind, target=0x10000000)]


# ---------------------------------------------------------------------- the testbench inside the design
IRUWARPS_VERILOG = Path(__file__).resolve().parents[1] / "rtl" / "graphunits_iruwarps.v"


class IRUDesignEnv(DesignEnv):
    """The IRU's warps inside the design (with :func:`sim.simmem.with_sim_memory`,
    which gives every partition's ``mem{p}`` port a memory of its own): the
    warp-request generator ``warps`` (``graphunits_iruwarps``: the harness's
    :class:`golden.iru.RequestPolicy` rules, no jitter) drives ``req{p}``;
    recorders log every ``reply{p}`` beat (``replylog{p}``, always ready, as the
    cosim's harness) and every request taken (``reqlog{p}``, the cycles the warps
    asked). The command and the status stay ports of the wrapper."""

    def __init__(self, config: IRUConfig, depth_log2: int = 18, fifo_log2: int = 12):
        self.config = config
        self.depth_log2 = depth_log2
        self.fifo_log2 = fifo_log2
        P = config.partitions
        self.taken = tuple(f"req{p}" for p in range(P)) + tuple(f"reply{p}" for p in range(P))
        self.verilog = (IRUWARPS_VERILOG, STREAMLOG_VERILOG)

    def params(self) -> tuple:
        return (self.config.to_json(), self.depth_log2, self.fifo_log2)

    def elaborate(self, m, top, unit) -> None:
        from amaranth import Cat, ClockSignal, Instance, ResetSignal, Signal
        c, P = self.config, self.config.partitions
        clk, rst = ClockSignal(), ResetSignal()
        reqs = [getattr(unit, f"req{p}") for p in range(P)]
        reps = [getattr(unit, f"reply{p}") for p in range(P)]
        wb, tb = c.warp_bits, c.slot_bits
        valid, warp, threads = Signal(P), Signal(P * wb), Signal(P * tb)
        for p, r in enumerate(reqs):
            m.d.comb += [r.valid.eq(valid[p]), r.payload.warp.eq(warp[p * wb:(p + 1) * wb]),
                         r.payload.threads.eq(threads[p * tb:(p + 1) * tb])]
        m.submodules.warps = Instance(
            "graphunits_iruwarps", p_P=P, p_WB=wb, p_TB=tb, p_FIFO_LOG2=self.fifo_log2,
            i_clk=clk, i_rst=rst, i_cycle=top.sm0_cycle, i_cmd_fire=unit.cmd.valid & unit.cmd.ready,
            i_reply_done=Cat(*[r.valid & r.ready & r.payload.last for r in reps]),
            o_req_valid=valid, i_req_ready=Cat(*[r.ready for r in reqs]), o_req_warp=warp, o_req_threads=threads)
        for p in range(P):
            r = reps[p]
            m.submodules[f"replylog{p}"] = Instance(
                "graphunits_streamlog", p_W=len(r.payload.as_value()), p_DEPTH_LOG2=self.depth_log2,
                p_FILE=transfer_file(f"replylog{p}", "log"), i_clk=clk,
                i_rst=rst, i_valid=r.valid, o_ready=r.ready, i_payload=r.payload.as_value(), i_cycle=top.sm0_cycle)
            q = reqs[p]
            m.submodules[f"reqlog{p}"] = Instance(
                "graphunits_streamlog", p_W=len(q.payload.as_value()), p_DEPTH_LOG2=self.depth_log2,
                p_FILE=transfer_file(f"reqlog{p}", "log"), i_clk=clk,
                i_rst=rst, i_valid=q.valid & q.ready, i_payload=q.payload.as_value(), i_cycle=top.sm0_cycle)


class IRUInDesign:
    """The testbench side of :class:`IRUDesignEnv` (inside a cocotb test): one
    operation (configure the warps, hand over the command, wait for the status,
    read the logs) and its :class:`golden.iru.IRUResult`, built from the recorded
    beats as the harness builds it from the live ones (with the same rules on
    interleaved warps and live lanes after disabled ones)."""

    def __init__(self, dut, config: IRUConfig, mems: list):
        self.dut, self.config, self.mems = dut, config, mems
        self.P = config.partitions
        self._cmd = Codec(IRUCommand(config))
        self._status = Codec(IRUStatusLayout(config))
        self._beat = Codec(IRUReplyBeat(config))
        self._req = Codec(IRURequest(config))
        self.io_s = 0.0
        self.problems: list[str] = []

    async def execute(self, op: IRUOp, policy: RequestPolicy) -> IRUResult:
        from ..cosim import edge_until
        dut, c = self.dut, self.config
        t0 = time.perf_counter()
        threads = warp_threads(op.n, c.entry_size)
        g = dut.warps
        g.cfg_nwarps.value = len(threads)
        g.cfg_first.value = min(len(threads), policy.resident)
        g.cfg_start.value = policy.start
        g.cfg_gap.value = policy.gap
        g.cfg_think.value = policy.think
        g.cfg_full.value = c.entry_size
        g.cfg_last.value = threads[-1] if threads else c.entry_size
        dut.cmd__payload.value = self._cmd.encode(op.fields(c))
        dut.cmd__valid.value = 1
        what = f"IRU {op.op} of {op.n} elements"
        mem = self.mems[0]
        t1 = time.perf_counter()
        await edge_until(dut.clk, lambda: int(dut.cmd__ready.value), mem, what)
        dut.cmd__valid.value = 0
        await edge_until(dut.clk, lambda: int(dut.status__valid.value), mem, what, wake=dut.status__valid,
                          stall_cycles=20_000 + 4 * c.timeout)
        item = self._status.decode(int(dut.status__payload.value))
        t2 = time.perf_counter()
        if int(g.overflow.value):
            raise RuntimeError("the in-design warps' queue overflowed (IRUDesignEnv.fifo_log2)")
        # (a reply beat taken at the status's edge is in its log after it)
        logs = await read_logs(dut.clk, [getattr(dut, f"{kind}log{p}") for kind in ("req", "reply")
                                         for p in range(self.P)])
        sent = {}
        for log in logs[:self.P]:
            for cy, raw in log:
                sent[self._req.decode(raw)["warp"]] = cy
        beats = [[(cy, self._beat.decode(raw)) for cy, raw in log] for log in logs[self.P:]]
        replies = self._replies(beats, sent)
        self.io_s += t1 - t0 + time.perf_counter() - t2
        kinds = {k: item["kinds"][i] for i, k in enumerate(REPLY_KINDS)}
        st = IRUStatus(n=item["n"], live=item["live"], disabled=item["disabled"], replies=item["replies"],
                       kinds=kinds, forwarded=item["forwarded"], ring=item["ring"], cycles=item["cycles"],
                       mem_error=bool(item["mem_error"]), cmd_error=bool(item["cmd_error"]))
        return IRUResult(op, replies, st, measured=True)

    def _replies(self, beats: list, sent: dict) -> list:
        """Replies from each partition's recorded beats (one or two lanes a beat), in
        the order they ended (partition order within a cycle)."""
        done = []
        for p, plog in enumerate(beats):
            cur, first = [], None
            for cy, beat in plog:
                for item in beat_lanes(beat):
                    if not cur:
                        first = cy
                    self.problems += lane_problems(p, cur, item)
                    cur.append(item)
                    if item["last"]:
                        done.append((cy, p, lanes_reply(p, cur, sent.get(item["warp"], -1), first, cy)))
                        cur = []
            if cur:
                self.problems.append(f"partition {p}: warp {cur[0]['warp']}'s reply has no last lane")
        done.sort(key=lambda x: (x[0], x[1]))
        return [r for _, _, r in done]


# ---------------------------------------------------------------------- RTL in the loop
class IRURTLBackend:
    """IRU operations executed by the RTL (use inside a cocotb test); same interface
    as :class:`golden.iru.algorithms.TLMBackend`.

    ``memory`` None: the Python memory models and the harness, cocotb every cycle.
    ``memory`` a :class:`sim.simmem.SimMemoryConfig`: the build has a memory per
    partition, the warps and the reply recorders inside (:class:`IRUDesignEnv`);
    cocotb acts once per operation (load the arrays the algorithm wrote into every
    partition's memory, command, status, read the logs)."""

    def __init__(self, dut, config: IRUConfig, space: AddressSpace | None = None,
                 timing: MemoryTiming = MemoryTiming(), sim: str = "rtl", memory=None):
        from cocotb.task import resume

        from ..cocotb_loop import CocotbLoop
        self.config = config
        self.space = space or AddressSpace(addr_bits=config.addr_width)
        self.name = f"rtl-{sim}"
        self.simmems = None
        self.timing = timing
        self.ops_done = 0
        self.first_mismatch: str | None = None   # the first operation that broke the rules (mismatch triage)
        self.perturb_check_op: int | None = None  # tests: corrupt the inputs the check of this operation reads
        self.replay_dir = None                   # where the first such operation's reproducer goes
        if memory is None:
            self.harness = IRUHarness(config, self.space, [], timing=timing, expect=False)
            self.loop = CocotbLoop(dut, self.harness.agents)
            self._exec = resume(self._execute)
        else:
            from ..simmem import SimMemory
            self.harness = None
            self.loop = CocotbLoop(dut, [], clock_impl="gpi")
            # every partition's memory with the harness's seed (timing.seed + 101 p)
            self.simmems = [SimMemory(dut, self.space, config.port, memory,
                                      MemoryTiming(**{**timing.__dict__, "seed": timing.seed + 101 * p}), suffix=str(p))
                            for p in range(config.partitions)]
            self.in_design = IRUInDesign(dut, config, self.simmems)
            self.dut = dut
            self.sim_s = self.io_s = 0.0
            self._exec = resume(self._execute_in_design)

    async def start(self) -> None:
        await start_backend(self.loop, self.simmems or [])

    def execute(self, op: IRUOp, policy: RequestPolicy) -> IRUResult:
        """Run ``op`` on the RTL; its result is checked against the IRU's rules for
        the inputs in memory (:func:`golden.iru.check_result`) as it ends."""
        cycle = self.sim_cycles
        res = self._exec(op, policy)
        self._check(op, policy, res, cycle)
        return res

    def _check(self, op: IRUOp, policy: RequestPolicy, res: IRUResult, cycle: int) -> None:
        """Record the first operation whose replies break the rules for its inputs:
        which operation, its size, the first problem, the cycle it started; with a
        ``replay_dir``, write its reproducer there (:func:`write_reproducer`; the
        unit writes no memory, so the memory now is the memory before it)."""
        k = self.ops_done
        self.ops_done += 1
        if self.first_mismatch is not None:
            return
        idx_in, sec_in = IRUModel(self.config, self.space).inputs(op)
        if self.perturb_check_op == k:
            idx_in, sec_in = perturb_inputs(idx_in, sec_in)
        probs = check_result(self.config, idx_in, sec_in, res)
        if probs:
            self.first_mismatch = (f"first difference at IRU operation {k} ({op.op}, n={op.n}; started at RTL "
                                   f"cycle {cycle}): {probs[0]}")
            if self.replay_dir:
                path = write_reproducer(self.replay_dir, self.config, op, policy, self.space, self.timing, k,
                                        self.first_mismatch, perturb=self.perturb_check_op == k)
                self.first_mismatch += f"; reproducer {path} (graphunits replay {path})"

    @property
    def sim_cycles(self) -> int:
        return self.loop.cycle if self.simmems is None else self.simmems[0].cycle

    def memory_stats(self) -> list:
        """Each partition's memory counters."""
        if self.simmems is None:
            return [m.stats.as_dict() for m in self.harness.models]
        return [{**m.stats(), "simulate_s": round(self.sim_s, 3), "load_read_back_s": round(self.io_s, 3)}
                for m in self.simmems]

    async def _execute(self, op: IRUOp, policy: RequestPolicy) -> IRUResult:
        h = self.harness
        k = h.submit(op, policy)
        await self.loop.run(lambda: len(h.results) > k, stall_cycles=20_000 + 4 * self.config.timeout,
                            what=f"IRU operation {op.op} of {op.n} elements", watch=h.watchdog)
        if h.problems:
            raise AssertionError(f"IRU RTL: {h.problems[0]}")
        return h.results[k]

    async def _execute_in_design(self, op: IRUOp, policy: RequestPolicy) -> IRUResult:
        t0 = time.perf_counter()
        for mem in self.simmems:
            mem.load()
        t1 = time.perf_counter()
        io0 = self.in_design.io_s
        res = await self.in_design.execute(op, policy)
        t2 = time.perf_counter()
        io = self.in_design.io_s - io0
        for mem in self.simmems:
            mem.check(f"IRU {op.op} of {op.n} elements")
        self.sim_s += t2 - t1 - io
        self.io_s += t1 - t0 + io
        if self.in_design.problems:
            raise AssertionError(f"IRU RTL: {self.in_design.problems[0]}")
        return res


def perturb_inputs(idx_in: np.ndarray, sec_in: np.ndarray) -> tuple:
    """A seeded divergence (tests): the checked inputs with the first index's lowest
    bit flipped."""
    idx_in = np.array(idx_in, copy=True)
    if idx_in.size:
        idx_in[0] ^= 1
    return idx_in, sec_in


def write_reproducer(folder, config: IRUConfig, op: IRUOp, policy: RequestPolicy, space: AddressSpace,
                     timing: MemoryTiming, index: int, report: str, *, perturb: bool = False) -> Path:
    """A self-contained reproducer of one IRU operation (``graphunits replay``): the
    configuration, the operation, the warps' request policy, the memory (its
    indices and secondary values), the testbench memory's timing, its index in the
    run and the report. The unit starts empty on replay, as at every operation."""
    import dataclasses

    from ..replay import save_reproducer
    return save_reproducer(folder, f"iru-op{index}", space,
                           {"unit": "iru", "config": config.to_dict(), "op": dataclasses.asdict(op),
                            "policy": dataclasses.asdict(policy), "op_index": index, "timing": timing,
                            "report": report, "perturb_inputs": perturb})


#: The TLM's prefetch latency in ``graphunits cosim`` (its memory answers in 1-20 cycles).
COSIM_LATENCY = 10


def _iru_backend(cfg):
    # the RTL's reference run: the cycle-level model (docs/iru.md, "Fast model")
    from golden.iru.algorithms import TLMBackend
    return TLMBackend(cfg, latency=COSIM_LATENCY, model="cycle")


def _iru_check(rtl: dict, tlm: dict) -> list[str]:
    out = [rtl["first_mismatch"]] if rtl.get("first_mismatch") else []
    if rtl["ops"] != tlm["ops"]:
        out.append(f"the RTL ran {rtl['ops']} IRU operations, the TLM run {tlm['ops']}")
    if rtl.get("problems"):
        out.append(f"RTL replies broke the IRU's rules: {rtl['problems'][0]}")
    return out


def _iru_rows(rtl: dict, tlm: dict) -> list:
    def q(d):
        return "-" if d.get("blocks_per_reply") is None else round(d["blocks_per_reply"], 2)
    return [["IRU operations (RTL = TLM)", f"{rtl['ops']} = {tlm['ops']}"],
            ["elements, RTL / TLM run", f"{rtl['elements']} / {tlm['elements']}"],
            ["filtered or merged, RTL / TLM run", f"{rtl['disabled']} / {tlm['disabled']}"],
            ["key blocks per full reply, RTL / TLM run", f"{q(rtl)} / {q(tlm)}"],
            ["IRU cycles, RTL measured / TLM", f"{round(rtl['cycles'])} / {round(tlm['cycles'])}"],
            ["replies by kind (RTL)", ", ".join(f"{k} {v}" for k, v in rtl["kinds"].items() if v)]]


def _iru_env(cfg):
    return IRUDesignEnv(cfg)


#: RTL in the loop (its descriptor's ``cosim``, golden/iru/descriptor.py).
COSIM = CosimUnit("iru", ("bfs", "sssp", "pr"), ("iru",), "small", _iru_backend, "sim.iru.tb_cosim", "iru",
                  _iru_check, _iru_rows, options=lambda cfg: {"iru": cfg, "iru_exact": True},
                  model_at_testbench_latency=True, in_design_memory=True, design_env=_iru_env)
