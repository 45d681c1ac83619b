"""GraphPEG's edge buffer (paper §3.3.1, Fig. 5; docs/graphpeg.md, "RTL"): the
gathered edges of one SM waiting for its warps, as ``width`` memory banks so that
a beat of up to ``width`` records is written and read every cycle."""
from amaranth import *
from amaranth.lib import data, memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from golden.graphpeg import GraphPEGConfig
from .layouts import ConfiguredComponent, EdgeBeat, EdgeRecord

__all__ = ["EdgeBuffer"]


class EdgeBuffer(ConfiguredComponent):
    """The edge buffer of one SM (GraphPEG §3.3.1, Fig. 5: the gathered edges in the
    SM's shared memory, which the warps pop): a ring of ``edge_buffer_edges``
    records in ``width`` banks, record ``i`` in bank ``i % width``.

    ``write``: this cycle's beat, lanes ``0..n`` appended in order (at any position:
    the lanes rotate onto the banks). ``head``: the ``width`` oldest records, lane
    ``j`` the ``j``-th (lanes past ``buffered`` hold stale records); ``take`` drops
    that many of them. ``reserve``: records claimed this cycle for edges on their way
    (a chunk issued to the edge engine, a vertex moved in vertex-list mode);
    ``reserved`` counts those claimed and not yet taken, ``buffered`` those written
    and not yet taken. The user writes only what it reserved and takes only what is
    buffered.

    Parameters
    ----------
    config : GraphPEGConfig
        ``width`` and ``edge_buffer_edges`` (powers of two).
    """

    def __init__(self, config: GraphPEGConfig):
        W, C = config.width, config.edge_buffer_edges
        exact_log2(C)                            # a power of two (check_rtl_config says so)
        super().__init__(config, {"write": In(EdgeBeat(config)), "reserve": In(range(C + 1)), "take": In(range(W + 1)),
                          "head": Out(data.ArrayLayout(EdgeRecord(), W)),
                          "reserved": Out(range(C + 1)), "buffered": Out(range(C + 1))})

    def elaborate(self, platform):
        m = Module()
        c = self._config
        W, C = c.width, c.edge_buffer_edges
        lw, cb = exact_log2(W), exact_log2(C)
        wptr = Signal(cb)
        rptr = Signal(cb)
        wr = self.write
        banks_r = []
        for b in range(W):
            bank = memory.Memory(shape=EdgeRecord(), depth=C // W, init=[])
            m.submodules[f"bank{b}"] = bank
            bwp = bank.write_port()
            brp = bank.read_port(domain="comb")
            lane = Signal(max(1, lw), name=f"wlane{b}")  # the beat's lane that goes to this bank
            pos = Signal(cb + 1, name=f"wpos{b}")
            m.d.comb += [lane.eq((b - wptr[:lw]) if lw else 0), pos.eq(wptr + lane),
                         bwp.en.eq(lane < wr.n), bwp.addr.eq(pos[lw:cb] if lw < cb else 0),
                         bwp.data.as_value().eq(Array(r.as_value() for r in wr.rec)[lane])]
            rlane = Signal(max(1, lw), name=f"rlane{b}")
            rpos = Signal(cb + 1, name=f"rpos{b}")
            m.d.comb += [rlane.eq((b - rptr[:lw]) if lw else 0), rpos.eq(rptr + rlane),
                         brp.addr.eq(rpos[lw:cb] if lw < cb else 0)]
            banks_r.append(brp.data.as_value())
        for j in range(W):
            m.d.comb += self.head[j].eq(Array(banks_r)[(rptr[:lw] + j)[:max(1, lw)] if lw else 0])
        m.d.sync += [
            wptr.eq(wptr + wr.n),
            rptr.eq(rptr + self.take),
            self.buffered.eq(self.buffered + wr.n - self.take),
            self.reserved.eq(self.reserved + self.reserve - self.take),
        ]
        return m
