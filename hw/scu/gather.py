"""The SCU's gathers (SCU paper §3.1, Fig. 7: access compaction and access
expansion compaction; docs/scu.md, "Operations" and "Errors"): one range of the
data array per lane, read by the data fetch engine, and its elements on to the
Data Store."""
from amaranth import *
from amaranth.lib import stream
from amaranth.lib.wiring import In, Out

from golden.scu import SCUConfig
from ..fetch.engine import FetchBeat, FetchCommand
from ..mem.writer import WriterBeat
from .layouts import ConfiguredComponent, LaneItem, lane_bits

__all__ = ["GatherIssue"]


class GatherIssue(ConfiguredComponent):
    """The gathers of ``access`` and ``expand`` (SCU §3.1).

    While ``enable``, each lane on ``lane`` becomes a range command on ``cmd``: base
    ``base + index * esize`` (``e8``: 8-byte elements), ``count`` elements with
    ``expand``, else 1. A lane whose base lies at or past the top of the address
    space is not issued (it would wrap around): it leaves at once with ``skip`` (a
    range error). After the last lane (``lanes_done``) one closing command (count 0,
    ``last``) ends the data engine's operation. The engine's beats (``d``) go on to
    ``o`` unchanged; ``done`` after the last of them, ``mem_error`` / ``cmd_error``:
    its error flags, in the cycle it leaves. ``clear``: a new operation.

    Parameters
    ----------
    config : SCUConfig
        ``width``, ``addr_width`` and the data stream's fetch configuration.
    """

    def __init__(self, config: SCUConfig):
        W, AW = config.width, config.addr_width
        super().__init__(config, {"lane": In(stream.Signature(LaneItem(config))), "enable": In(1), "base": In(AW),
                          "e8": In(1), "expand": In(1), "lanes_done": In(1), "clear": In(1),
                          "cmd": Out(stream.Signature(FetchCommand(config.data_fetch))), "skip": Out(1),
                          "d": In(stream.Signature(FetchBeat(config.data_fetch))),
                          "o": Out(stream.Signature(WriterBeat(W, lane_bits(config)))), "done": Out(1),
                          "mem_error": Out(1), "cmd_error": Out(1)})

    def elaborate(self, platform):
        m = Module()
        AW = self._config.addr_width
        lane, cmd = self.lane, self.cmd
        # The ranges.
        closing_sent = Signal()
        g_base = Signal(AW + 36)
        g_over = Signal()
        m.d.comb += [g_base.eq(self.base + (lane.p.index << Mux(self.e8, 3, 2))), g_over.eq(g_base >= (1 << AW)),
                     cmd.p.esize8.eq(self.e8)]
        with m.If(lane.valid):
            m.d.comb += [cmd.valid.eq(self.enable & ~g_over), cmd.p.base.eq(g_base[:AW]),
                         cmd.p.count.eq(Mux(self.expand, lane.p.count, 1)), cmd.p.last.eq(0)]
        with m.Elif(self.lanes_done & ~closing_sent):
            m.d.comb += [cmd.valid.eq(self.enable), cmd.p.base.eq(self.base), cmd.p.count.eq(0), cmd.p.last.eq(1)]
        fire = cmd.valid & cmd.ready
        with m.If(fire & ~lane.valid):
            m.d.sync += closing_sent.eq(1)
        m.d.comb += [self.skip.eq(self.enable & lane.valid & g_over), lane.ready.eq((fire & lane.valid) | self.skip)]
        # The gathered elements.
        d, o = self.d, self.o
        m.d.comb += [o.valid.eq(d.valid), o.p.n.eq(d.p.n), o.p.data.eq(d.p.data), d.ready.eq(o.ready)]
        dlast = d.valid & d.ready & d.p.last
        m.d.comb += [self.mem_error.eq(dlast & d.p.error.mem), self.cmd_error.eq(dlast & d.p.error.cmd)]
        with m.If(dlast):
            m.d.sync += self.done.eq(1)
        with m.If(self.clear):
            m.d.sync += [closing_sent.eq(0), self.done.eq(0)]
        return m
