"""The SCU's bit packer (SCU paper §3.2.4 and §4.2; docs/scu.md, "Pipeline"): the
bits that the bitmask constructor and the filtering unit produce, packed in order
into 32-bit words for the Data Store."""
from amaranth import *
from amaranth.lib import stream
from amaranth.lib.wiring import In, Out

from golden.scu import SCUConfig
from .layouts import ConfiguredComponent

__all__ = ["BitPacker"]


class BitPacker(ConfiguredComponent):
    """Packs up to ``width`` bits a cycle into 32-bit words (bit ``i`` of the output
    is the ``i``-th bit given; SCU §3.2.4: a bitmask is written as packed words).

    Each cycle the first ``k`` bits of ``bits`` are appended (the caller gives ``k > 0``
    only while ``ready``; the other lanes are ignored). ``o`` offers the oldest 32 bits
    once it holds them, or the rest (zero-padded) while ``flush`` is high. ``ready``:
    room for ``width`` more bits, counting a word that leaves this cycle. ``empty``:
    no bit held. ``clear`` (a new operation) drops everything, over the cycle's input.

    Parameters
    ----------
    config : SCUConfig
        ``width``.
    """

    def __init__(self, config: SCUConfig):
        W = config.width
        super().__init__(config, {"bits": In(W), "k": In(range(W + 1)), "ready": Out(1), "flush": In(1), "clear": In(1),
                          "o": Out(stream.Signature(32)), "empty": Out(1)})

    def elaborate(self, platform):
        m = Module()
        W = self._config.width
        pk = Signal(32 + W)
        pk_cnt = Signal(range(32 + W + 1))
        m.d.comb += [self.o.valid.eq((pk_cnt >= 32) | (self.flush & (pk_cnt != 0))), self.o.payload.eq(pk[:32]),
                     self.empty.eq(pk_cnt == 0)]
        pk_out = Signal()
        m.d.comb += pk_out.eq(self.o.valid & self.o.ready)
        m.d.comb += self.ready.eq((pk_cnt < 32) | (pk_out & (pk_cnt >= 32)))
        pk_base = Signal(32 + W)
        pk_base_cnt = Signal(range(32 + W + 1))
        m.d.comb += [pk_base.eq(Mux(pk_out, pk >> 32, pk)),
                     pk_base_cnt.eq(Mux(pk_out, Mux(pk_cnt >= 32, pk_cnt - 32, 0), pk_cnt))]
        pk_mask = Signal(W)
        for k in range(W):
            m.d.comb += pk_mask[k].eq(k < self.k)
        m.d.sync += [pk.eq(pk_base | ((self.bits & pk_mask) << pk_base_cnt)), pk_cnt.eq(pk_base_cnt + self.k)]
        with m.If(self.clear):
            m.d.sync += [pk.eq(0), pk_cnt.eq(0)]
        return m
