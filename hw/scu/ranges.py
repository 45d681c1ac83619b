"""The SCU's linear ranges (SCU paper §3.2, Fig. 7: the range commands that start
the fetch engines of an operation's linear streams; docs/scu.md, "Pipeline")."""
from amaranth import *
from amaranth.lib import stream
from amaranth.lib.wiring import In, Out

from golden.scu import STREAMS, SCUConfig
from ..fetch.engine import FetchCommand
from .layouts import ConfiguredComponent, SCUCommand

__all__ = ["LinearRanges"]


class LinearRanges(ConfiguredComponent):
    """On ``start``, one range command for each linear stream the operation ``op``
    reads, offered until taken: ``data`` (``n`` elements of 4 or 8 bytes; not for a
    gather, whose data ranges come from :class:`GatherIssue`), ``idx`` (gathers),
    ``cnt`` (``need_c``), ``mask`` (with a bitmask: ``ceil(n / 32)`` words). Each is
    the whole range (``last``). ``idle``: none is waiting.
    """

    def __init__(self, config: SCUConfig):
        ports = {"start": In(1), "op": In(SCUCommand(config)), "gather": In(1), "need_c": In(1), "idle": Out(1)}
        for s in STREAMS:
            ports[s] = Out(stream.Signature(FetchCommand(config.stream_fetch(s))))
        super().__init__(config, ports)

    def elaborate(self, platform):
        m = Module()
        r = self.op
        lin = {"data": (r.data, r.n, r.esize8), "idx": (r.idx, r.n, 0), "cnt": (r.cnt, r.n, 0),
               "mask": (r.mask, (r.n + 31) >> 5, 0)}
        first = {"data": ~self.gather, "idx": self.gather, "cnt": self.need_c, "mask": r.use_mask}
        pend = {s: Signal(name=f"pend_{s}") for s in STREAMS}
        for s in STREAMS:
            base, count, es8 = lin[s]
            ec = getattr(self, s)
            m.d.comb += [ec.valid.eq(pend[s]), ec.p.base.eq(base), ec.p.count.eq(count), ec.p.esize8.eq(es8),
                         ec.p.last.eq(1)]
            with m.If(self.start):
                m.d.sync += pend[s].eq(first[s])
            with m.If(ec.valid & ec.ready & pend[s]):
                m.d.sync += pend[s].eq(0)
        m.d.comb += self.idle.eq(~pend["data"] & ~pend["idx"] & ~pend["cnt"] & ~pend["mask"])
        return m
