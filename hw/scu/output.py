"""The SCU's output cut (docs/scu.md, "Errors"): the operation's output beats on to
the Data Store (SCU paper §3.2, Fig. 7) with the elements that would lie past the
top of the address space dropped."""
from amaranth import *
from amaranth.lib import stream
from amaranth.lib.wiring import In, Out

from golden.scu import SCUConfig
from ..mem.writer import WriterBeat
from .layouts import ConfiguredComponent, lane_bits

__all__ = ["OutputCut"]


class OutputCut(ConfiguredComponent):
    """Passes beats from ``i`` to ``o`` (the Data Store, which writes them in order
    from ``base``), each with its ``n`` cut to the elements (4 or 8 bytes, ``e8``)
    that still fit below the top of the address space: the writer would wrap around
    to address 0. ``cut``: a beat that lost elements leaves this cycle (the status's
    ``cmd_error``). ``start`` (a new operation) takes ``base``.

    Parameters
    ----------
    config : SCUConfig
        ``width``, ``addr_width``, ``max_elem_bytes`` (lane width).
    """

    def __init__(self, config: SCUConfig):
        W, AW, LB = config.width, config.addr_width, lane_bits(config)
        super().__init__(config, {"i": In(stream.Signature(WriterBeat(W, LB))), "o": Out(stream.Signature(WriterBeat(W, LB))),
                          "base": In(AW), "start": In(1), "cut": Out(1)})

    def elaborate(self, platform):
        m = Module()
        W, AW = self._config.width, self._config.addr_width
        top = 1 << AW
        i, o = self.i, self.o
        wpos = Signal(AW + 1)                # the next output byte's address (<= top)
        room = Signal(AW + 1)                # output elements that still fit below the top
        fit = Signal(range(W + 1))
        m.d.comb += [
            room.eq(Mux(i.p.e8, (top - wpos) >> 3, (top - wpos) >> 2)),
            fit.eq(Mux(room < i.p.n, room, i.p.n)),
            o.valid.eq(i.valid), i.ready.eq(o.ready),
            o.p.data.eq(i.p.data), o.p.e8.eq(i.p.e8), o.p.n.eq(fit),
        ]
        fire = i.valid & i.ready
        m.d.comb += self.cut.eq(fire & (fit != i.p.n))
        with m.If(fire):
            m.d.sync += wpos.eq(wpos + Mux(i.p.e8, fit << 3, fit << 2))
        with m.If(self.start):
            m.d.sync += wpos.eq(self.base)
        return m
