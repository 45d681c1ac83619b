"""The SCU's status counters (SCU paper §3.2; docs/scu.md, "Operations": every
command completes with one status)."""
from amaranth import *
from amaranth.lib.wiring import In, Out

from golden.scu import STREAMS, SCUConfig
from .layouts import ConfiguredComponent, SCUStatusLayout

__all__ = ["StatusCounters"]


class StatusCounters(ConfiguredComponent):
    """The counts and flags of the command being performed, as its status (``o``).

    ``clear`` (a command taken) restarts them: ``cycles`` at 1, the rest at 0. While
    ``counting``, ``cycles`` counts and the memory arbiter's ``grant`` (one bit per
    stream, idx, cnt, mask, data, then the Data Store) counts block reads per stream
    and block writes. With ``out_inc``, ``out_add`` output elements are added;
    ``mem_error`` / ``range_error`` set sticky flags. The status: ``elements_in``
    ``n`` (0 when ``rejected``), ``mem_error`` with the Data Store's flag
    (``store_error``; never for a rejected command, which does not start it),
    ``cmd_error`` when ``rejected`` or a range error was found.

    Parameters
    ----------
    config : SCUConfig
        ``width``, ``count_width``.
    """

    def __init__(self, config: SCUConfig):
        W, CW = config.width, config.count_width
        super().__init__(config, {"clear": In(1), "counting": In(1), "grant": In(len(STREAMS) + 1),
                          "out_inc": In(1), "out_add": In(range(W + 1)), "mem_error": In(1), "range_error": In(1),
                          "n": In(CW),
                          "rejected": In(1), "store_error": In(1), "o": Out(SCUStatusLayout(config))})

    def elaborate(self, platform):
        m = Module()
        CW = self._config.count_width
        S = len(STREAMS)
        cycles = Signal(32)
        reads = [Signal(32, name=f"reads_{s}") for s in STREAMS]
        writes = Signal(32)
        out_count = Signal(CW)
        mem_err = Signal()
        rng_err = Signal()                   # a range past the top found while running
        o = self.o
        m.d.comb += [
            o.elements_in.eq(Mux(self.rejected, 0, self.n)),
            o.elements_out.eq(out_count),
            o.cycles.eq(cycles),
            o.writes.eq(writes),
            o.mem_error.eq(~self.rejected & (mem_err | self.store_error)),
            o.cmd_error.eq(self.rejected | rng_err),
        ]
        for k in range(S):
            m.d.comb += o.reads[k].eq(reads[k])
        with m.If(self.counting):
            m.d.sync += cycles.eq(cycles + 1)
            for k in range(S):
                m.d.sync += reads[k].eq(reads[k] + self.grant[k])
            m.d.sync += writes.eq(writes + self.grant[S])
        with m.If(self.clear):
            m.d.sync += [rng_err.eq(0), mem_err.eq(0), out_count.eq(0), cycles.eq(1), writes.eq(0)]
            m.d.sync += [x.eq(0) for x in reads]
        with m.If(self.out_inc):
            m.d.sync += out_count.eq(out_count + self.out_add)
        with m.If(self.mem_error):
            m.d.sync += mem_err.eq(1)
        with m.If(self.range_error):
            m.d.sync += rng_err.eq(1)
        return m
