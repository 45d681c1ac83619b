"""Formal harness of the IRU (docs/verification.md, "Formal"): the protocol and
conservation rules of :class:`~hw.iru.unit.IRU` seen from its ports, checked by
``graphunits prove --unit iru`` (one partition) and ``--unit iru_ring`` (two,
joined by the element and request rings).

Configuration: the ``tiny`` preset cut down so that an operation fits in a few
dozen cycles: one partition of 2 sets (one bank) of 4-element entries, 8-byte
blocks, 16-bit addresses, 8-bit indices and counts, a timeout of 4 cycles, two
prefetches and two warp requests in flight (``iru_ring``: two such partitions).
Environment: reset low; commands of at most 3 elements held until taken (stream
rule), any bases (command errors included) and any filter operation; the memory
answers only requests in flight on each partition's port (any order, any data,
any error flag); the kernel's warps 0 and 1 (warp w asking partition w % P)
send requests of 1 to 4 threads while an operation runs, of the operation's n
threads in all (as the GPU's kernel has one thread per element), a warp its
next request only after the last beat of its reply; the reply and status
outputs' ready free. A position the solver picks (fixed) is followed.
Properties:

* the memory request, reply and status streams obey the stream rule;
* memory: a request's tag is not in flight already;
* replies: only for a warp with a request outstanding, never more lanes than it
  asked for;
* conservation: the reply lanes since the command never exceed its elements and
  equal them at the status, whose element, live and disabled counts agree; the
  followed position is replied live at most once, and exactly once by the status
  of a reorder-only (``none``) operation without errors;
* covers: a reorder-only operation of three elements completes; a two-lane beat;
  a timeout reply; a merged (disabled) lane of a ``min`` or ``fadd`` operation;
  a memory error reaches the status; with two partitions, an operation with a
  request forwarded on the request ring, and a reorder-only one with flits on
  the element ring.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Cat, Cover, Elaboratable, Mux, Signal

from golden.iru import IRUConfig, KIND_CODES

from ..formal import fixed, harness_module, memory_port, stream_rule
from .unit import IRU

__all__ = ["IRUHarness"]

#: Elements of an operation at most, and warps that send requests.
MAX_N = 3
WARPS = 2


class IRUHarness(Elaboratable):
    def __init__(self, iru_cls: type = IRU, partitions: int = 1):
        self.config = IRUConfig.preset("tiny").replace(addr_width=16, block_bytes=8, partitions=partitions, sets=2,
                                                      banks=1, entry_size=4, index_bits=8, count_width=8, timeout=4,
                                                      prefetch_inflight=2, request_depth=2, queue_depth=2)
        self.dut = iru_cls(self.config)
        self.watch = Signal(self.config.count_width)     # free: the position to follow
        self.free = [self.watch]

    def elaborate(self, platform):
        m, started = harness_module(self.dut)
        u = self.dut
        cfg = self.config
        P = cfg.partitions
        cmd, status = u.cmd, u.status
        mems = [getattr(u, f"mem{p}") for p in range(P)]
        reqs = [getattr(u, f"req{p}") for p in range(P)]
        replies = [getattr(u, f"reply{p}") for p in range(P)]
        n = Signal(cfg.count_width)        # the operation's elements
        op_none = Signal()
        # ---- environment: commands
        stream_rule(m, cmd, started, check=False, name="cmd")
        with m.If(cmd.valid):
            m.d.comb += [Assume(cmd.p.n <= MAX_N), Assume(cmd.p.op <= 2)]
        cfire, sfire = cmd.valid & cmd.ready, status.valid & status.ready
        # ---- each partition's memory port (responses only for its tags in flight)
        for p, mem in enumerate(mems):
            memory_port(m, mem, started, name=f"mem{p}")
        # ---- environment: warp requests; the kernel's n threads: requests (their threads)
        # during the operation, n in all; warp w asks partition w % P
        pending = Signal(WARPS)
        asked = [Signal(range(cfg.entry_size + 1), name=f"asked{w}") for w in range(WARPS)]
        got = [Signal(range(2 * cfg.entry_size + 1), name=f"got{w}") for w in range(WARPS)]
        active = Signal()
        threads = Signal(range(MAX_N + 1))
        offered = sum(Mux(q.valid, q.p.threads, 0) for q in reqs)
        fired = sum(Mux(q.valid & q.ready, q.p.threads, 0) for q in reqs)
        for p, q in enumerate(reqs):
            stream_rule(m, q, started, check=False, name=f"req{p}")
            with m.If(q.valid):
                m.d.comb += [Assume(q.p.warp < WARPS), Assume(q.p.warp % P == p),
                             Assume(~pending.bit_select(q.p.warp, 1)),
                             Assume((q.p.threads >= 1) & (q.p.threads <= cfg.entry_size)),
                             Assume(active), Assume(threads + offered <= n)]
        # ---- the output streams
        for p, r in enumerate(replies):
            stream_rule(m, r, started, check=True, name=f"reply{p}")
        stream_rule(m, status, started, check=True, name="status")
        # ---- replies: for an outstanding request, within its threads
        lanes = [Signal(2, name=f"lanes{p}") for p in range(P)]
        pfires = [r.valid & r.ready for r in replies]
        for p, r in enumerate(replies):
            m.d.comb += lanes[p].eq(1 + r.p.two)
            with m.If(r.valid):
                m.d.comb += Assert(pending.bit_select(r.p.warp, 1))
        for w in range(WARPS):
            q = reqs[w % P]
            ask = q.valid & q.ready & (q.p.warp == w)
            offer = sum(Mux(r.valid & (r.p.warp == w), lanes[p], 0) for p, r in enumerate(replies))
            take = sum(Mux(f & (r.p.warp == w), lanes[p], 0) for p, (f, r) in enumerate(zip(pfires, replies)))
            last = Cat(*[f & (r.p.warp == w) & r.p.last for f, r in zip(pfires, replies)]).any()
            m.d.comb += Assert(got[w] + offer <= asked[w])
            with m.If(ask):
                m.d.sync += [pending[w].eq(1), asked[w].eq(q.p.threads), got[w].eq(0)]
            with m.Else():
                m.d.sync += got[w].eq(got[w] + take)
                with m.If(last):
                    m.d.sync += pending[w].eq(0)
        with m.If(cfire):
            m.d.sync += [n.eq(cmd.p.n), op_none.eq(cmd.p.op == 0), active.eq(1), threads.eq(0)]
        with m.Else():
            with m.If(sfire):
                m.d.sync += active.eq(0)
            m.d.sync += threads.eq(threads + fired)
        # ---- conservation over the operation
        total = Signal(range(4 * MAX_N + 1))
        seen = Signal(2)                   # live lanes that carried the followed position
        watch = self.watch
        fixed(m, watch, started)
        now = sum(Mux(f, lanes[p], 0) for p, f in enumerate(pfires))
        hits = sum(Mux(f & ~r.p.disabled & (r.p.pos == watch), 1, 0) +
                   Mux(f & r.p.two & ~r.p.disabled1 & (r.p.pos1 == watch), 1, 0) for f, r in zip(pfires, replies))
        with m.If(cfire):
            m.d.sync += [total.eq(0), seen.eq(0)]
        with m.Else():
            m.d.sync += [total.eq(total + now), seen.eq(seen + hits)]
        m.d.comb += [Assert(total + now <= n), Assert(seen + hits <= 1)]
        st = status.p
        with m.If(status.valid):
            m.d.comb += [Assert(total == n), Assert(st.n == n), Assert(st.live + st.disabled == n)]
            with m.If(op_none & ~st.mem_error & ~st.cmd_error & (watch < n)):
                m.d.comb += Assert(seen == 1)
        # ---- covers
        merged = Signal()
        with m.If(cfire):
            m.d.sync += merged.eq(0)
        with m.Elif(Cat(*[f & r.p.disabled for f, r in zip(pfires, replies)]).any() & ~op_none):
            m.d.sync += merged.eq(1)
        m.d.comb += [Cover(sfire & op_none & (n == MAX_N) & ~st.mem_error & ~st.cmd_error),
                     Cover(Cat(*[f & r.p.two for f, r in zip(pfires, replies)]).any()),
                     Cover(Cat(*[f & (r.p.kind == KIND_CODES["timeout"]) for f, r in zip(pfires, replies)]).any()),
                     Cover(sfire & merged & ~st.cmd_error),
                     Cover(sfire & st.mem_error)]
        if P > 1:
            # the ring: a request forwarded, an element of another partition's set shipped
            m.d.comb += [Cover(sfire & (st.forwarded != 0) & (n == MAX_N)),
                         Cover(sfire & (st.ring != 0) & op_none & ~st.mem_error)]
        return m


class IRURingHarness(IRUHarness):
    """The same harness on two partitions joined by the element and request rings
    (``graphunits prove --unit iru_ring``): requests forwarded, elements of the
    other partition's sets shipped, remainders sent home."""

    def __init__(self, iru_cls: type = IRU):
        super().__init__(iru_cls, partitions=2)
