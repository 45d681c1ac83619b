"""The SCU's replication (SCU paper §3.1, Fig. 7: replication compaction and the
second half of access expansion; docs/scu.md, "Operations"): one element written
``count`` times, ``width`` copies a beat."""
from amaranth import *
from amaranth.lib import stream
from amaranth.lib.wiring import In, Out

from golden.scu import SCUConfig
from ..mem.writer import WriterBeat
from .layouts import ConfiguredComponent, LaneItem, lane_bits

__all__ = ["Replicator"]


class Replicator(ConfiguredComponent):
    """Writes each lane's ``value`` ``count`` times (``count >= 1``; SCU §3.1).

    A lane on ``i`` is taken when no element is being replicated or the last beat of
    the current one leaves this cycle; ``o`` offers beats of ``min(width, left)``
    copies (``e8`` is left 0: the caller sets the element size). ``busy``: an element
    is being replicated.

    Parameters
    ----------
    config : SCUConfig
        ``width``, ``max_elem_bytes`` (lane width).
    """

    def __init__(self, config: SCUConfig):
        W = config.width
        super().__init__(config, {"i": In(stream.Signature(LaneItem(config))),
                          "o": Out(stream.Signature(WriterBeat(W, lane_bits(config)))), "busy": Out(1)})

    def elaborate(self, platform):
        m = Module()
        W = self._config.width
        cur_v = Signal()
        cur_val = Signal(lane_bits(self._config))
        cur_rem = Signal(32)
        rep_n = Signal(range(W + 1))
        o = self.o
        m.d.comb += [rep_n.eq(Mux(cur_rem > W, W, cur_rem)), o.valid.eq(cur_v), o.p.n.eq(rep_n), self.busy.eq(cur_v)]
        for k in range(W):
            m.d.comb += o.p.data[k].eq(cur_val)
        ofire = o.valid & o.ready
        m.d.comb += self.i.ready.eq(~cur_v | (ofire & (cur_rem <= W)))
        with m.If(ofire):
            m.d.sync += cur_rem.eq(cur_rem - rep_n)
            with m.If(cur_rem <= W):
                m.d.sync += cur_v.eq(0)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [cur_v.eq(1), cur_val.eq(self.i.p.value), cur_rem.eq(self.i.p.count)]
        return m
