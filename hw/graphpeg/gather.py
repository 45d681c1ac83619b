"""GraphPEG's edge gathering in one SM (paper §3.3.1, Fig. 5; docs/graphpeg.md, "RTL"):
the joiner that turns the edge and weight engines' beats into edge records."""
from amaranth import *
from amaranth.lib import fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.graphpeg import GraphPEGConfig
from ..fetch.engine import FetchBeat
from .layouts import ChunkDesc, EdgeBeat

__all__ = ["Joiner"]


class Joiner(wiring.Component):
    """The joiner of one SM (GraphPEG §3.3.1, Fig. 5: the gathered edges, with their
    source vertex and edge index, go to the edge buffer): it pairs each beat of the
    edge engine (``edges``, neighbours) with the same beat of the weight engine
    (``weights``, only with ``use_wt``) and with the descriptor of its chunk
    (``desc``: vertex and first edge index, queued in issue order, up to
    ``fetch_inflight`` of them, until the chunk's last beat).

    ``o``: the beat's records (``n = 0`` in a cycle without one): ``src`` the vertex
    and ``dst`` the neighbour (``csc``: the other way round), ``wt`` the weight (0
    without ``use_wt``), ``idx`` the edge index. There is no back-pressure on ``o``:
    the buffer has room (the chunk reserved it). ``error``: a joined beat carries an
    error flag of the edge engine, or of the weight engine with ``use_wt`` (one cycle).

    Parameters
    ----------
    config : GraphPEGConfig
    """

    def __init__(self, config: GraphPEGConfig):
        self._config = config
        fw = config.fetch(config.width)
        super().__init__({"csc": In(1), "use_wt": In(1), "desc": In(stream.Signature(ChunkDesc())),
                          "edges": In(stream.Signature(FetchBeat(fw))), "weights": In(stream.Signature(FetchBeat(fw))),
                          "o": Out(EdgeBeat(config)), "error": Out(1)})

    @property
    def config(self) -> GraphPEGConfig:
        return self._config

    def elaborate(self, platform):
        m = Module()
        c = self._config
        W, WPB = c.width, c.words_per_block
        m.submodules.desc = desc = fifo.SyncFIFOBuffered(width=ChunkDesc().size, depth=c.fetch_inflight)
        m.d.comb += [desc.w_stream.valid.eq(self.desc.valid), desc.w_stream.payload.eq(self.desc.payload),
                     self.desc.ready.eq(desc.w_stream.ready)]
        dv = ChunkDesc()(desc.r_stream.payload)
        edges, weights, use_wt = self.edges, self.weights, self.use_wt
        j_off = Signal(range(WPB + 1))           # edges of the chunk joined so far
        join = Signal()
        m.d.comb += [
            join.eq(edges.valid & (~use_wt | weights.valid) & desc.r_stream.valid),
            edges.ready.eq(join),
            weights.ready.eq(join & use_wt),
            desc.r_stream.ready.eq(join & edges.p.last),
            self.error.eq(join & (edges.p.error.as_value().any() | (use_wt & weights.p.error.as_value().any()))),
        ]
        with m.If(join):
            m.d.sync += j_off.eq(Mux(edges.p.last, 0, j_off + edges.p.n))
            m.d.comb += self.o.n.eq(edges.p.n)
            for i in range(W):
                nb = edges.p.data[i][:32]
                rec = self.o.rec[i]
                m.d.comb += [rec.src.eq(Mux(self.csc, nb, dv.v)), rec.dst.eq(Mux(self.csc, dv.v, nb)),
                             rec.wt.eq(Mux(use_wt, weights.p.data[i][:32], 0)), rec.idx.eq(dv.s + j_off + i)]
        return m
