"""The SCU's bitmask bits (SCU paper §3.2, Fig. 7: the bitmask stream that the joiner
aligns with the element beats; docs/scu.md, "Pipeline"): the mask stream's 32-bit
words turned into a queue of bits, up to ``width`` taken a cycle."""
from amaranth import *
from amaranth.lib import stream
from amaranth.lib.wiring import In, Out

from golden.scu import SCUConfig
from ..fetch.engine import FetchBeat
from .layouts import ConfiguredComponent

__all__ = ["MaskBits"]


class MaskBits(ConfiguredComponent):
    """The bits of an operation's bitmask, in order (SCU §3.2: element ``i`` is kept
    when bit ``i`` is set).

    ``i`` takes the mask fetch engine's beats (one 32-bit word, or none, a beat; the
    last ends the bitmask) while ``enable`` and at most 32 bits are held; ``bits`` are
    the oldest ``width`` held (0 past ``count``); ``take`` of them leave each cycle
    (the caller takes at most ``count``). ``last``: the final beat has been taken;
    ``mem_error`` / ``cmd_error``: that beat's error flags, in the cycle it is taken.
    ``clear`` (a new operation) empties the queue.

    Parameters
    ----------
    config : SCUConfig
        ``width`` and the mask stream's fetch configuration.
    """

    def __init__(self, config: SCUConfig):
        W = config.width
        super().__init__(config, {"i": In(stream.Signature(FetchBeat(config.mask_fetch))), "enable": In(1),
                          "bits": Out(W), "count": Out(range(65)), "take": In(range(W + 1)), "last": Out(1),
                          "mem_error": Out(1), "cmd_error": Out(1), "clear": In(1)})

    def elaborate(self, platform):
        m = Module()
        W = self._config.width
        M = self.i
        mbuf = Signal(64)
        mcnt = Signal(range(65))
        mlast = Signal()
        m.d.comb += [M.ready.eq(self.enable & ~mlast & (mcnt <= 32)), self.bits.eq(mbuf[:W]), self.count.eq(mcnt),
                     self.last.eq(mlast)]
        after = Signal(64)
        after_cnt = Signal(range(65))
        m.d.comb += [after.eq(mbuf >> self.take), after_cnt.eq(mcnt - self.take)]
        fire = M.valid & M.ready
        m.d.comb += [self.mem_error.eq(fire & M.p.last & M.p.error.mem),
                     self.cmd_error.eq(fire & M.p.last & M.p.error.cmd)]
        with m.If(fire):
            m.d.sync += [mbuf.eq(after | (Mux(M.p.n != 0, M.p.data[0][:32], 0) << after_cnt)),
                         mcnt.eq(after_cnt + (M.p.n << 5))]
            with m.If(M.p.last):
                m.d.sync += mlast.eq(1)
        with m.Else():
            m.d.sync += [mbuf.eq(after), mcnt.eq(after_cnt)]
        with m.If(self.clear):
            m.d.sync += [mbuf.eq(0), mcnt.eq(0), mlast.eq(0)]
        return m
