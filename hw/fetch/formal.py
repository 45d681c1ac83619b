"""Formal harness of the fetch engine (docs/verification.md, "Formal"): the memory
port's rules and the conservation of elements of
:class:`~hw.fetch.engine.FetchEngine`, checked by ``graphunits prove --unit fetch``.

Small configuration: 16-bit addresses, 8-byte blocks, one 4-byte lane, two
reads in flight, a merge window of one block, counts below 8. Environment: reset
low; commands held until taken (stream rule), 4-byte elements at aligned bases
that end below the top of the address space (no command errors: those are the
TLM tests' job), one operation at a time (its first range offered once the
previous one's last beat is out); a response only for a tag in flight; the
output ready freely.
Properties:

* the read requests obey the stream rule and are reads;
* a request's tag is not in flight already (tags unique); at most two in flight;
* conservation: the elements out never exceed the elements commanded, and
  equal them at the operation's ``last`` beat; a beat holds at most ``width``;
* covers: an operation of two ranges completes with both reads in flight at
  once; a memory error reaches the last beat.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Cover, Elaboratable, Mux, Signal

from golden.fetch import FetchConfig

from ..formal import flag, harness_module, memory_port, stream_rule
from .engine import FetchEngine

__all__ = ["FetchHarness"]


class FetchHarness(Elaboratable):
    def __init__(self, engine_cls: type = FetchEngine):
        self.config = FetchConfig(addr_width=16, block_bytes=8, width=1, max_elem_bytes=4, max_inflight=2,
                                  merge_window=1, count_width=3)
        self.dut = engine_cls(self.config)

    def elaborate(self, platform):
        m, started = harness_module(self.dut)
        e = self.dut
        cfg = self.config
        n_tags = cfg.max_inflight
        cmd, o, req = e.cmd, e.o, e.mem.req
        # ---- environment: commands
        stream_rule(m, cmd, started, check=False, name="cmd")
        with m.If(cmd.valid):
            m.d.comb += [Assume(cmd.p.esize8 == 0), Assume(cmd.p.base[:2] == 0),
                         Assume(cmd.p.base + 4 * cmd.p.count < (1 << cfg.addr_width))]
        # ---- the memory port: responses for tags in flight; stream rule, unique tags, reads
        inflight = memory_port(m, e.mem, started)
        with m.If(req.valid):
            m.d.comb += Assert(~req.p.write)
        count = Signal(range(n_tags + 1))
        m.d.comb += count.eq(sum(inflight[t] for t in range(n_tags)))
        m.d.comb += Assert(count <= n_tags)
        # ---- conservation of elements (one operation at a time: the next operation's
        # first range is offered once this one's last beat is out)
        cfire, ofire = cmd.valid & cmd.ready, o.valid & o.ready
        elems_in, elems_out = Signal(6), Signal(6)
        end = ofire & o.p.last
        closed = flag(m, set=cfire & cmd.p.last, clear=end, name="closed")
        m.d.comb += Assume(~cmd.valid | ~closed)
        m.d.sync += [elems_in.eq(Mux(end, 0, elems_in) + Mux(cfire, cmd.p.count, 0)),
                     elems_out.eq(Mux(end, 0, elems_out + Mux(ofire, o.p.n, 0)))]
        with m.If(o.valid):
            m.d.comb += Assert(o.p.n <= cfg.width)
        m.d.comb += Assert(elems_out + Mux(ofire, o.p.n, 0) <= elems_in + Mux(cfire, cmd.p.count, 0))
        with m.If(end):
            m.d.comb += Assert(elems_out + o.p.n == elems_in)
        # ---- covers
        ranges = Signal(3)
        with m.If(end):
            m.d.sync += ranges.eq(0)
        with m.Elif(cfire):
            m.d.sync += ranges.eq(ranges + 1)
        both = Signal()
        with m.If(count == n_tags):
            m.d.sync += both.eq(1)
        with m.If(end):
            m.d.sync += both.eq(0)
        m.d.comb += [Cover(end & (ranges >= 2) & both & (elems_in >= 2)),
                     Cover(end & o.p.error.mem)]
        return m
