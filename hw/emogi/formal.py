"""Formal harness of EMOGI's warp coalescer (docs/verification.md, "Formal"),
checked by ``graphunits prove --unit coalescer``.

Small configuration: 4 lanes, 16-bit addresses, 32-byte sectors, 128-byte lines.
Environment: reset low; warps held until taken (stream rule); the requests'
consumer ready freely. A lane chosen by the solver (``watch``) is followed
through the warp that is in the coalescer. Properties:

* the requests obey the stream rule; each is sector aligned, a non-zero
  multiple of the sector, at most a line, and inside one line;
* within a warp the requests ascend without overlap;
* every warp with an active lane ends with exactly one ``last`` request, and no
  more ``last`` requests come out than such warps went in;
* coverage: the watched lane's sector, if the lane is active, is read by one of
  its warp's requests by the time the warp's ``last`` request is out;
* covers: a warp split into three requests; two warps back to back.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, C, Cat, Cover, Elaboratable, Mux, Signal

from golden.emogi.config import CoalescerConfig

from ..formal import harness_module, stream_rule
from .coalescer import WarpCoalescer

__all__ = ["CoalescerHarness"]


class CoalescerHarness(Elaboratable):
    def __init__(self, coalescer_cls: type = WarpCoalescer):
        self.config = CoalescerConfig(lanes=4, addr_width=16, sector_bytes=32, line_bytes=128)
        self.dut = coalescer_cls(self.config)
        self.watch = Signal(2)                  # free: the lane to follow
        self.free = [self.watch]

    def elaborate(self, platform):
        m, started = harness_module(self.dut)
        c = self.dut
        cfg = self.config
        sb, lb = cfg.sector_bits, cfg.line_bits
        i, o = c.i, c.o
        stream_rule(m, i, started, check=False, name="i")
        stream_rule(m, o, started, check=True, name="o")
        ifire, ofire = i.valid & i.ready, o.valid & o.ready
        end = o.p.addr + o.p.size                 # one past the request's last byte (17 bits)
        with m.If(o.valid):
            m.d.comb += [
                Assert(o.p.addr[:sb] == 0),
                Assert(o.p.size[:sb] == 0),
                Assert((o.p.size != 0) & (o.p.size <= cfg.line_bytes)),
                Assert(o.p.addr[lb:] == (end - 1)[lb:]),
            ]
        # ascending without overlap within a warp
        prev_end = Signal(17)
        in_warp = Signal()
        with m.If(ofire):
            m.d.sync += [prev_end.eq(end), in_warp.eq(~o.p.last)]
        with m.If(ofire & in_warp):
            m.d.comb += Assert(o.p.addr >= prev_end)
        # warps with an active lane in, last requests out
        warps_in, lasts_out = Signal(4), Signal(4)
        active = ifire & (i.p.mask != 0)
        m.d.sync += [warps_in.eq(warps_in + active), lasts_out.eq(lasts_out + (ofire & o.p.last))]
        m.d.comb += [Assume(warps_in < 15), Assert(lasts_out <= warps_in)]
        # the watched lane of the oldest warp not finished: its sector is read before its last request
        # (a FIFO of the watched sector of each warp; the coalescer holds at most two warps)
        q_valid = Signal(3)
        q_sector = [Signal(16 - sb, name=f"q_sector{k}") for k in range(3)]
        q_on = [Signal(name=f"q_on{k}") for k in range(3)]
        covered = Signal()
        lane_addr = i.p.addr[self.watch]
        lane_on = i.p.mask.bit_select(self.watch, 1)
        hit = Signal()
        m.d.comb += hit.eq(ofire & q_valid[0] & (q_sector[0] >= o.p.addr[sb:]) & (q_sector[0] < end[sb:]))
        head_done = ofire & o.p.last & q_valid[0]
        with m.If(head_done):
            m.d.comb += Assert(~q_on[0] | covered | hit)
        # the FIFO: pop at the head's last request, push a warp with an active lane
        pop = head_done
        for k in range(3):
            src_valid = q_valid[k + 1] if k < 2 else 0
            nxt_valid = Mux(pop, src_valid, q_valid[k])
            push_here = active & ~nxt_valid & (k == 0 or Mux(pop, q_valid[k], q_valid[k - 1]))
            with m.If(push_here):
                m.d.sync += [q_valid[k].eq(1), q_sector[k].eq(lane_addr[sb:]), q_on[k].eq(lane_on)]
            with m.Elif(pop):
                if k < 2:
                    m.d.sync += [q_valid[k].eq(q_valid[k + 1]), q_sector[k].eq(q_sector[k + 1]),
                                 q_on[k].eq(q_on[k + 1])]
                else:
                    m.d.sync += q_valid[k].eq(0)
        with m.If(pop):
            m.d.sync += covered.eq(0)
        with m.Elif(hit):
            m.d.sync += covered.eq(1)
        m.d.comb += Assume(~active | ~q_valid[2])          # at most three warps followed (depth bound)
        # ---- invariants for k-induction (``--mode prove``): the harness's trackers
        # and the coalescer's W and X registers (its attributes) agree
        L, spl = cfg.lanes, cfg.sectors_per_line
        x_here = c.x_valid & c.x_last                 # X holds the last line of the oldest warp
        held = Signal(range(3))
        m.d.comb += held.eq(c.w_valid + x_here)
        m.d.comb += [
            Assert((q_valid == 0) | (q_valid == 1) | (q_valid == 3)),
            Assert(q_valid[0] + q_valid[1] + q_valid[2] == held),
            Assert(warps_in - lasts_out == held),
            Assert(~c.x_valid | (c.x_mask != 0)),
            Assert(~c.w_valid | (c.w_rem != 0)),
            Assert(~c.x_valid | c.x_last | c.w_valid),   # a warp's earlier line: the rest in W
            Assert(~in_warp | c.x_valid),
        ]
        # W's lanes still to pick lie above X's line when both hold the same warp
        for k in range(L):
            with m.If(c.x_valid & ~c.x_last & c.w_rem[k]):
                m.d.comb += Assert(c.w_line[k] > c.x_line)
        # what X still holds lies above what the warp sent
        low = Signal(spl)
        m.d.comb += low.eq(c.x_mask & (~c.x_mask + 1)[:spl])
        first = Signal(range(spl))
        for q in range(1, spl):
            with m.If(low[q]):
                m.d.comb += first.eq(q)
        with m.If(in_warp):
            m.d.comb += Assert(Cat(C(0, sb), first, c.x_line) >= prev_end)

        def in_w(sector):
            return Cat(*[c.w_rem[k] & (Cat(c.w_off[k], c.w_line[k]) == sector) for k in range(L)]).any()

        def in_x(sector):
            off, line = sector[:lb - sb], sector[lb - sb:]
            return c.x_valid & (c.x_line == line) & c.x_mask.bit_select(off, 1)

        # the followed sector of the oldest warp, not sent yet, is in X or in W's lanes to pick
        with m.If(q_valid[0] & q_on[0] & ~covered):
            m.d.comb += Assert(in_x(q_sector[0]) | (c.w_valid & ~x_here & in_w(q_sector[0])))
        # the next warp waits whole in W (none of its lines picked while X holds the last one)
        with m.If(q_valid[1] & q_on[1]):
            m.d.comb += Assert(in_w(q_sector[1]))
        # covers
        parts = Signal(3)
        with m.If(ofire):
            m.d.sync += parts.eq(Mux(o.p.last, 0, parts + 1))
        back = Signal()
        m.d.sync += back.eq(ofire & o.p.last)
        m.d.comb += [Cover(ofire & o.p.last & (parts >= 2)),
                     Cover(back & ofire & o.p.last)]
        return m
