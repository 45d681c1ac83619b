"""GraphPEG's pop port (paper §3.2, §3.3.1, Fig. 5; docs/graphpeg.md, "RTL"): the
records of one SM's edge buffer handed to its warps in warp batches, ``width``
items a beat, and one ``done`` beat at the end of a kernel."""
from amaranth import *
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out

from golden.graphpeg import GraphPEGConfig
from .layouts import ConfiguredComponent, EdgeRecord, PopBeat

__all__ = ["PopPort"]


class PopPort(ConfiguredComponent):
    """The pop port of one SM (GraphPEG §3.2 and §3.3.1, Fig. 5: the warps' ``__pop_edge_*``
    and ``__pop_vert`` read the edge buffer): warp batches of the buffer's records.

    While ``run``, a batch opens when none is open and the buffer holds a warp's worth
    (``warp_size`` records, ``buffered``), or fewer but at least one once ``drained``
    (nothing more will come); it is handed out on ``o`` in beats of up to ``width``
    records (``head``, lanes past ``n`` zero), the last with ``warp_last``, and
    ``take`` drops each beat's records from the buffer. With ``finish`` (the kernel
    ends) and no batch open, ``o`` offers one ``done`` beat (``n = 0``). ``idle``:
    drained, the buffer empty and no batch open.

    Parameters
    ----------
    config : GraphPEGConfig
        ``width``, ``warp_size``, ``edge_buffer_edges``.
    """

    def __init__(self, config: GraphPEGConfig):
        W, C = config.width, config.edge_buffer_edges
        super().__init__(config, {"run": In(1), "finish": In(1), "drained": In(1), "buffered": In(range(C + 1)),
                          "head": In(data.ArrayLayout(EdgeRecord(), W)), "take": Out(range(W + 1)),
                          "o": Out(stream.Signature(PopBeat(config))), "idle": Out(1)})

    def elaborate(self, platform):
        m = Module()
        c = self._config
        W, C, WS = c.width, c.edge_buffer_edges, c.warp_size
        o = self.o
        batch_rem = Signal(range(WS + 1))        # records of the open batch not handed out
        k_out = Signal(range(W + 1))
        m.d.comb += k_out.eq(Mux(batch_rem < W, batch_rem, W))
        done_beat = self.finish & (batch_rem == 0)
        m.d.comb += [
            o.valid.eq((self.run & (batch_rem != 0)) | done_beat),
            o.p.n.eq(Mux(done_beat, 0, k_out)),
            o.p.warp_last.eq(~done_beat & (k_out == batch_rem)),
            o.p.done.eq(done_beat),
        ]
        for j in range(W):
            rec = self.head[j]
            on = j < k_out
            m.d.comb += [o.p.src[j].eq(Mux(on, rec.src, 0)), o.p.dst[j].eq(Mux(on, rec.dst, 0)),
                         o.p.wt[j].eq(Mux(on, rec.wt, 0)), o.p.idx[j].eq(Mux(on, rec.idx, 0))]
        take = self.take
        m.d.comb += take.eq(Mux(o.valid & o.ready & ~done_beat, k_out, 0))
        after = Signal(range(C + 1))
        rem_after = Signal(range(WS + 1))
        m.d.comb += [after.eq(self.buffered - take), rem_after.eq(batch_rem - take)]
        with m.If(self.run & (rem_after == 0) & ((after >= WS) | (self.drained & (after != 0)))):
            m.d.sync += batch_rem.eq(Mux(after < WS, after, WS))
        with m.Else():
            m.d.sync += batch_rem.eq(rem_after)
        m.d.comb += self.idle.eq(self.drained & (self.buffered == 0) & (batch_rem == 0))
        return m
