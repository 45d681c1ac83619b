"""Formal harness of the memory port arbiter (docs/verification.md, "Formal"): the
properties of :class:`~hw.mem.arbiter.MemArbiter` as Amaranth ``Assert`` /
``Assume`` / ``Cover`` statements around it (never in the synthesized design),
checked by ``graphunits prove --unit arbiter`` (:mod:`synth.prove`).

The harness's own inputs are free (the solver picks them every cycle); the
assumptions make them a legal environment: reset held low (the registers start
at their reset values) and every initiator keeping a request offered, with the
same payload, until it transfers (the stream rule). Properties:

* the outer request obeys the stream rule (offered until taken, payload stable);
* the outer port is valid exactly when some initiator is; at most one initiator
  transfers a cycle, exactly when the outer request does, and ``grant`` names it;
* the transferred request is that initiator's, its tag ``src << inner | tag``;
* a response goes to the initiator its tag names, with its tag, data and error,
  and is always accepted;
* fairness: an initiator that keeps a request offered sees at most ``n - 1``
  other transfers before its own (round robin);
* covers: every initiator transfers, and two different ones on consecutive cycles.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, C, Cat, Cover, Elaboratable, Module, Mux, ResetSignal, Signal, Value

from golden.fetch import MemPortConfig

from .arbiter import MemArbiter

__all__ = ["ArbiterHarness"]


class ArbiterHarness(Elaboratable):
    """``inputs`` initiators (tags of ``inner_tag`` bits) on a small port (16-bit
    addresses, 4-byte blocks: the properties do not depend on the widths).
    ``arbiter``: the design under test (a variant, for the tests of the harness)."""

    def __init__(self, inputs: int = 3, inner_tag: int = 2, arbiter: MemArbiter | None = None):
        self.n = inputs
        inner = MemPortConfig(addr_width=16, block_bytes=4, tag_width=inner_tag)
        src_bits = max(1, (inputs - 1).bit_length())
        outer = MemPortConfig(addr_width=16, block_bytes=4, tag_width=inner_tag + src_bits)
        self.dut = arbiter if arbiter is not None else MemArbiter(outer, [inner] * inputs)

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = self.dut
        n, ports, o = self.n, dut.ports, dut.o
        inner, src_bits = dut.inner_bits, dut.src_bits
        m.d.comb += Assume(~ResetSignal())
        started = Signal()                      # not the first cycle: the "previous" registers are valid
        m.d.sync += started.eq(1)

        def held(req, name):
            """(was offered and not taken at the last edge, the payload then)."""
            wait = Signal(name=f"{name}_wait")
            prev = Signal.like(req.payload.as_value(), name=f"{name}_prev")
            m.d.sync += [wait.eq(req.valid & ~req.ready), prev.eq(req.payload.as_value())]
            return wait, prev

        for k, p in enumerate(ports):
            wait, prev = held(p.req, f"i{k}")
            with m.If(started & wait):
                m.d.comb += Assume(p.req.valid & (p.req.payload.as_value() == prev))
        # the outer request: the stream rule
        wait, prev = held(o.req, "o")
        with m.If(started & wait):
            m.d.comb += Assert(o.req.valid & (o.req.payload.as_value() == prev))
        fire = [p.req.valid & p.req.ready for p in ports]
        ofire = o.req.valid & o.req.ready
        m.d.comb += [
            Assert(o.req.valid == Cat(p.req.valid for p in ports).any()),
            Assert(ofire == Cat(fire).any()),
            Assert(dut.grant == Cat(fire)),
        ]
        for j in range(n):
            for k in range(j + 1, n):
                m.d.comb += Assert(~(fire[j] & fire[k]))
        for k, p in enumerate(ports):
            with m.If(fire[k]):
                m.d.comb += [
                    Assert(o.req.p.addr == p.req.p.addr),
                    Assert(o.req.p.write == p.req.p.write),
                    Assert(o.req.p.wdata == p.req.p.wdata),
                    Assert(o.req.p.wmask == p.req.p.wmask),
                    Assert(o.req.p.tag == Cat(p.req.p.tag, C(0, inner - len(p.req.p.tag)), C(k, src_bits))),
                ]
        # responses
        src = o.resp.p.tag[inner:inner + src_bits]
        m.d.comb += Assert(o.resp.ready)
        for k, p in enumerate(ports):
            m.d.comb += [
                Assert(p.resp.valid == (o.resp.valid & (src == k))),
                Assert(p.resp.p.tag == o.resp.p.tag[:len(p.resp.p.tag)]),
                Assert(p.resp.p.rdata == o.resp.p.rdata),
                Assert(p.resp.p.error == o.resp.p.error),
            ]
        # fairness: other transfers seen while an initiator waits
        for k, p in enumerate(ports):
            others = Signal(range(2 * n + 1), name=f"i{k}_passed")
            with m.If(~p.req.valid | fire[k]):
                m.d.sync += others.eq(0)
            with m.Elif(ofire & (others < 2 * n)):
                m.d.sync += others.eq(others + 1)
            m.d.comb += Assert(others <= n - 1)
        # covers
        last = Signal(range(n + 1), init=n)     # the initiator that transferred last cycle (n: none)
        with m.If(ofire):
            m.d.sync += last.eq(_index(dut.grant, n))
        with m.Else():
            m.d.sync += last.eq(n)
        for k in range(n):
            m.d.comb += Cover(fire[k])
            m.d.comb += Cover(fire[k] & (last != n) & (last != k))
        return m


def _index(onehot: Value, n: int) -> Value:
    """The position of the set bit of a one-hot value (0 if none)."""
    out = C(0, max(1, (n - 1).bit_length()))
    for k in range(n):
        out = Mux(onehot[k], k, out)
    return out
