"""The SCU's lane unit (SCU paper §3.2, Fig. 7, and §4, Fig. 8; docs/scu.md,
"Pipeline"): a joined beat held while its lanes are handed one a cycle to the
serial operations (gathers, replication, filtering, grouping)."""
from amaranth import *
from amaranth.lib import stream
from amaranth.lib.wiring import In, Out

from golden.scu import SCUConfig
from .layouts import ConfiguredComponent, HeldBeat, LaneItem

__all__ = ["LaneUnit"]


class LaneUnit(ConfiguredComponent):
    """Holds one beat of ``i`` and offers its pending lanes (``pend``) on ``o``, lowest
    first, one at a time: a lane leaves when ``o.ready`` (the serial operation is done
    with it). A new beat is taken when none is held or the last pending lane leaves
    this cycle (a beat without pending lanes is dropped the cycle after it is taken).
    ``done``: the lanes of the beat marked ``last`` have all left (until ``clear``,
    a new operation, which also drops the held beat).

    Parameters
    ----------
    config : SCUConfig
        ``width``, ``max_elem_bytes`` (lane width).
    """

    def __init__(self, config: SCUConfig):
        super().__init__(config, {"i": In(stream.Signature(HeldBeat(config))), "o": Out(stream.Signature(LaneItem(config))),
                          "done": Out(1), "clear": In(1)})

    def elaborate(self, platform):
        m = Module()
        W = self._config.width
        h = Signal(HeldBeat(self._config))
        hv = Signal()                     # a beat is held
        lane = Signal(range(max(W, 2)))
        for k in reversed(range(W)):
            with m.If(h.pend[k]):
                m.d.comb += lane.eq(k)
        o = self.o
        m.d.comb += [o.valid.eq(hv & (h.pend != 0)), o.p.value.eq(h.data[lane]), o.p.index.eq(h.idx[lane]),
                     o.p.count.eq(h.cnt[lane]), o.p.bit.eq(h.bits.bit_select(lane, 1))]
        pend_next = Signal(W)
        m.d.comb += pend_next.eq(Mux(o.ready, h.pend & ~(1 << lane), h.pend))
        m.d.comb += self.i.ready.eq(~hv | (pend_next == 0))
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [hv.eq(1), h.eq(self.i.p)]
        with m.Elif(hv):
            m.d.sync += h.pend.eq(pend_next)
            with m.If(pend_next == 0):
                m.d.sync += hv.eq(0)
        with m.If(hv & h.last & (pend_next == 0)):
            m.d.sync += self.done.eq(1)
        with m.If(self.clear):
            m.d.sync += [self.done.eq(0), hv.eq(0)]
        return m
