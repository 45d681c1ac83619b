"""Formal harness of the MFF unit (docs/verification.md, "Formal"): the protocol
and conservation rules of :class:`~hw.mff.unit.MFF` seen from its ports, checked
by ``graphunits prove --unit mff``.

Configuration: the ``tiny`` preset (4 work registers, 2 tag entries, 2 job
entries: exhaustion, retries and evictions within a few cycles) with 16-bit
addresses, 16-byte blocks, 2-bit warp ids and 8-bit scratchpad addresses.
Environment: reset low; thread entries held until taken (stream rule), C and V
bases aligned, gathers of 4-byte values with at most 2 elements a thread,
scatters of size 0 or 1; a warp sends a command only when its previous one is
done (as the GPU does: a warp waits for its completion); the memory answers only
requests in flight (any order, any data, any error flag); the outputs' ready
free. A warp the solver picks (fixed) is followed.
Properties:

* the scratchpad, done and memory request streams obey the stream rule;
* memory: a request's tag is not in flight already;
* completion: a done beat only for a warp whose command was sent whole, one per
  command; the followed warp's scratchpad writes never exceed the elements its
  gather asked for, and equal them at its done beat (no value lost or
  repeated), unless that done beat carries the error flag;
* covers: the followed warp's gather of 2 elements done, its scatter of a bit
  done; a done beat with the error flag.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Cover, Elaboratable, Mux, Signal

from golden.mff import MFFConfig

from ..formal import fixed, harness_module, memory_port, stream_rule
from .unit import MFF

__all__ = ["MFFHarness"]


class MFFHarness(Elaboratable):
    def __init__(self, mff_cls: type = MFF):
        self.config = MFFConfig.preset("tiny").replace(addr_width=16, block_bytes=16, warp_bits=2, target_width=8,
                                                       size_width=2)
        self.dut = mff_cls(self.config)
        self.watch = Signal(self.config.warp_bits)       # free: the warp to follow
        self.free = [self.watch]

    def elaborate(self, platform):
        m, started = harness_module(self.dut)
        u = self.dut
        cfg = self.config
        cmd, spad, done = u.cmd, u.spad, u.done
        W = 1 << cfg.warp_bits
        # ---- environment: thread entries
        stream_rule(m, cmd, started, check=False, name="cmd")
        c = cmd.p
        with m.If(cmd.valid):
            m.d.comb += [Assume(c.op <= 1), Assume(c.cbase[:2] == 0), Assume(c.vbase[:2] == 0),
                         Assume(c.vsize8 == 0), Assume(c.target[:2] == 0)]
            with m.If(c.op == 1):
                m.d.comb += Assume(c.size <= 1)
        cfire, dfire, sfire = cmd.valid & cmd.ready, done.valid & done.ready, spad.valid & spad.ready
        # per warp: a command whose entries are being sent, one sent whole and not done
        sending, sent = Signal(W), Signal(W)
        with m.If(cmd.valid):
            # a warp's next command once its previous one is done; one command's entries
            # are sent together (not interleaved with another warp's)
            m.d.comb += [Assume(~sent.bit_select(c.warp, 1)),
                         Assume((sending == 0) | sending.bit_select(c.warp, 1))]
        # ---- the memory port (responses only for tags in flight) and the output streams
        memory_port(m, u.mem, started)
        for s, name in ((spad, "spad"), (done, "done")):
            stream_rule(m, s, started, check=True, name=name)
        # ---- completion: the warps' commands
        for w in range(W):
            mine = cfire & (c.warp == w)
            with m.If(mine & c.last):
                m.d.sync += [sending[w].eq(0), sent[w].eq(1)]
            with m.Elif(mine):
                m.d.sync += sending[w].eq(1)
            with m.If(dfire & (done.p.warp == w)):
                m.d.sync += sent[w].eq(0)
        with m.If(done.valid):
            m.d.comb += Assert(sent.bit_select(done.p.warp, 1))
        # the followed warp: elements asked for and values written to its scratchpad
        asked, wrote = Signal(4), Signal(4)
        watch = self.watch
        fixed(m, watch, started)                            # the same warp all along
        gather = Signal()                  # its command is a gather
        with m.If(cfire & (c.warp == watch)):
            m.d.sync += gather.eq(c.op == 0)
        m.d.comb += Assume(~cfire | (c.warp != watch) | (asked + Mux(c.op == 0, c.size, 0) <= 6))
        end = dfire & (done.p.warp == watch)
        m.d.sync += [asked.eq(Mux(end, 0, asked) + Mux(cfire & (c.warp == watch) & (c.op == 0), c.size, 0)),
                     wrote.eq(Mux(end, 0, wrote) + (sfire & (spad.p.warp == watch)))]
        m.d.comb += Assert(wrote + (sfire & (spad.p.warp == watch)) <= asked + Mux(cfire & (c.warp == watch) &
                                                                                   (c.op == 0), c.size, 0))
        with m.If(end & ~done.p.error & gather):
            m.d.comb += Assert(wrote + (sfire & (spad.p.warp == watch)) == asked)
        # ---- covers
        bits = Signal(3)                   # the followed warp's scatter: bits it sets
        m.d.sync += bits.eq(Mux(end, 0, bits) + (cfire & (c.warp == watch) & (c.op == 1) & (c.size == 1)))
        m.d.comb += [Cover(end & ~done.p.error & gather & (asked >= 2)),
                     Cover(end & ~gather & (bits >= 1)),
                     Cover(dfire & done.p.error)]
        return m

