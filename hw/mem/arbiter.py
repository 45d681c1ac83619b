"""Memory port arbiter: several initiators (fetch engines, a writer) share one
memory port (docs/architecture.md, "Memory port").

Requests are granted round robin, one per cycle. The outer tag is the
initiator's number above its own tag (``src << inner_bits | tag``); responses
are routed back by those bits. Once a request is offered on the outer port it
stays offered, with the same payload, until it transfers (the stream rule), even
if another initiator becomes valid meanwhile.
"""
from amaranth import *
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from golden.fetch import MemPortConfig
from .port import MemPortSignature

__all__ = ["MemArbiter"]


class MemArbiter(wiring.Component):
    """Round-robin arbiter of ``len(inputs)`` memory ports onto one.

    Parameters
    ----------
    outer : MemPortConfig
        The shared port; its ``tag_width`` must hold the source number and the
        widest inner tag.
    inputs : list of MemPortConfig
        The initiators' ports (same address width and block size as ``outer``).

    Attributes
    ----------
    i0, i1, ... : In(MemPortSignature)
        The initiators' ports.
    o : Out(MemPortSignature)
        The shared port.
    grant : Out(len(inputs))
        One-hot: the initiator whose request transferred this cycle (for counters).
    """

    def __init__(self, outer: MemPortConfig, inputs: list[MemPortConfig]):
        n = len(inputs)
        if n < 1:
            raise ValueError("MemArbiter needs at least one input")
        self.src_bits = max(1, ceil_log2(n))
        self.inner_bits = max(c.tag_width for c in inputs)
        for c in inputs:
            if (c.addr_width, c.block_bytes) != (outer.addr_width, outer.block_bytes):
                raise ValueError(f"input port {c} does not match the outer port {outer}")
        if outer.tag_width < self.src_bits + self.inner_bits:
            raise ValueError(f"outer tag width {outer.tag_width} cannot hold {self.src_bits} source bits "
                             f"and {self.inner_bits} tag bits")
        self._outer = outer
        self._inputs = list(inputs)
        members = {f"i{k}": In(MemPortSignature(c)) for k, c in enumerate(inputs)}
        members["o"] = Out(MemPortSignature(outer))
        members["grant"] = Out(n)
        super().__init__(members)
        # The round robin's state, created here so that the formal harness can read
        # it (hw/mem/formal.py; the generated Verilog is the same).
        self.ptr = Signal(range(n), name="ptr")            # highest priority
        self.locked = Signal(name="locked")                # a request is offered and waits
        self.held = Signal(range(n), name="held")          # the initiator it belongs to

    @property
    def ports(self):
        return [getattr(self, f"i{k}") for k in range(len(self._inputs))]

    def elaborate(self, platform):
        m = Module()
        ports = self.ports
        n = len(ports)
        o = self.o
        ptr, locked, held = self.ptr, self.locked, self.held
        sel = Signal(range(n))
        # Round robin: the first valid input at or after ptr.
        with m.If(locked):
            m.d.comb += sel.eq(held)
        with m.Else():
            # Priority order ptr, ptr+1, ..., n-1, 0, ..., ptr-1: the last matching
            # assignment wins, so go from the lowest priority to the highest.
            valids = Cat(p.req.valid for p in ports)
            for d in reversed(range(n)):
                cand = Mux(ptr + d >= n, ptr + d - n, ptr + d).as_unsigned()
                with m.If(valids.bit_select(cand, 1)):
                    m.d.comb += sel.eq(cand)
        any_valid = Signal()
        m.d.comb += any_valid.eq(Cat(p.req.valid for p in ports).any())
        m.d.comb += o.req.valid.eq(any_valid)
        with m.Switch(sel):
            for k, p in enumerate(ports):
                with (m.Case(k) if k < n - 1 else m.Default()):
                    m.d.comb += [
                        o.req.p.addr.eq(p.req.p.addr),
                        o.req.p.write.eq(p.req.p.write),
                        o.req.p.wdata.eq(p.req.p.wdata),
                        o.req.p.wmask.eq(p.req.p.wmask),
                        o.req.p.tag.eq(Cat(p.req.p.tag, C(0, self.inner_bits - len(p.req.p.tag)),
                                           C(k, self.src_bits))),
                        p.req.ready.eq(o.req.ready),
                    ]
        fire = o.req.valid & o.req.ready
        m.d.comb += self.grant.eq(Mux(fire, 1 << sel, 0))
        with m.If(fire):
            m.d.sync += [locked.eq(0), ptr.eq(Mux(sel == n - 1, 0, sel + 1))]
        with m.Elif(o.req.valid):
            m.d.sync += [locked.eq(1), held.eq(sel)]
        # Responses: always accepted by the initiators (as the fetch engine does).
        src = o.resp.p.tag[self.inner_bits:self.inner_bits + self.src_bits]
        m.d.comb += o.resp.ready.eq(1)
        for k, p in enumerate(ports):
            m.d.comb += [
                p.resp.valid.eq(o.resp.valid & (src == k)),
                p.resp.p.tag.eq(o.resp.p.tag[:len(p.resp.p.tag)]),
                p.resp.p.rdata.eq(o.resp.p.rdata),
                p.resp.p.error.eq(o.resp.p.error),
            ]
        return m
