"""The SCU's joiner (SCU paper §3.2, Fig. 7: the element beats aligned with the
parameter streams and the bitmask; docs/scu.md, "Pipeline")."""
from amaranth import *
from amaranth.lib import stream
from amaranth.lib.wiring import In, Out

from golden.scu import SCUConfig
from .layouts import BeatHead, ConfiguredComponent, Joined

__all__ = ["Joiner"]


class Joiner(ConfiguredComponent):
    """Joins a beat of the primary stream ``p`` (data, or the indexes of a gather) with
    a beat of the counts ``c`` (with ``need_c``) and, with ``use_mask``, ``p.n`` bits
    of the bitmask (``mask_bits``, ``mask_count`` held; ``take`` of them consumed).

    While ``enable``, ``o`` offers the joined beat once every input is there: its
    ``n`` and ``last``, and ``bits``: lane ``k`` kept when ``k < n`` and (without a
    bitmask) always or its bit is set. When ``o`` is taken, ``p`` and ``c`` are too.
    ``done`` after the last beat (until ``clear``); ``mem_error`` / ``cmd_error``:
    the last beats' error flags (``p``'s, and ``c``'s with ``need_c``), in the cycle
    they are taken.

    Parameters
    ----------
    config : SCUConfig
        ``width``.
    """

    def __init__(self, config: SCUConfig):
        W = config.width
        super().__init__(config, {"p": In(stream.Signature(BeatHead(config))), "c": In(stream.Signature(BeatHead(config))),
                          "mask_bits": In(W), "mask_count": In(range(65)), "take": Out(range(W + 1)),
                          "use_mask": In(1), "need_c": In(1), "enable": In(1), "clear": In(1),
                          "o": Out(stream.Signature(Joined(config))), "done": Out(1),
                          "mem_error": Out(1), "cmd_error": Out(1)})

    def elaborate(self, platform):
        m = Module()
        W = self._config.width
        P, Cn, o = self.p, self.c, self.o
        use_mask, need_c = self.use_mask, self.need_c
        bits_ok = ~use_mask | (self.mask_count >= P.p.n)
        m.d.comb += [o.valid.eq(self.enable & P.valid & (~need_c | Cn.valid) & bits_ok),
                     o.p.n.eq(P.p.n), o.p.last.eq(P.p.last)]
        for k in range(W):
            m.d.comb += o.p.bits[k].eq((k < P.p.n) & (~use_mask | self.mask_bits[k]))
        jfire = Signal()
        m.d.comb += [jfire.eq(o.valid & o.ready), P.ready.eq(jfire), Cn.ready.eq(jfire & need_c)]
        with m.If(jfire & use_mask):
            m.d.comb += self.take.eq(P.p.n)
        last = jfire & P.p.last
        m.d.comb += [self.mem_error.eq(last & (P.p.error.mem | (need_c & Cn.p.error.mem))),
                     self.cmd_error.eq(last & (P.p.error.cmd | (need_c & Cn.p.error.cmd)))]
        with m.If(last):
            m.d.sync += self.done.eq(1)
        with m.If(self.clear):
            m.d.sync += self.done.eq(0)
        return m
