"""GraphPEG's edge gathering in one SM (paper §3.3.1, Fig. 5; docs/graphpeg.md, "RTL"):
the index stage that gives the input list's vertices ALWT entries and reads their
row pointers, the chunk issue that asks the edge and weight engines for the FE
entry's edges a block at a time, and the joiner that turns their beats into edge
records."""
from amaranth import *
from amaranth.lib import fifo, stream
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2, exact_log2

from golden.graphpeg import GraphPEGConfig
from ..fetch.engine import FetchBeat, FetchCommand
from .layouts import ChunkDesc, ConfiguredComponent, EdgeBeat

__all__ = ["IndexFetch", "ChunkIssue", "Joiner"]


class IndexFetch(ConfiguredComponent):
    """The index stage of one SM (GraphPEG §3.3.1, Fig. 5: a vertex of the input list
    takes an IVD entry of the ALWT, FI until its ``row_ptr[v]`` and ``row_ptr[v + 1]``
    arrive, then RD).

    While ``go`` (a vertex waits, an entry is free, no exchange freezes the ALWT), the
    head vertex ``vertex`` is allocated (``alloc``) the free entry ``free_idx`` when
    the index engine (``cmd``: two 4-byte words at ``row_ptr + 4 * vertex``) and the
    queue of entries waiting for their reply (``alwt_entries`` deep) both take it in
    this cycle (so ``cmd.valid`` depends on ``cmd.ready``). The replies come in
    order, one beat of two words per entry (``beat``): each fills the oldest waiting
    entry (``fill``, ``fill_idx``, ``fill_s``, ``fill_e``; ``fill_bad``: an error
    flag or not two words). ``error``: a fill with an error flag (one cycle). Port
    names are the ALWT's.
    """

    def __init__(self, config: GraphPEGConfig):
        f2, eb = config.fetch(2), max(1, ceil_log2(config.alwt_entries))
        super().__init__(config, {"go": In(1), "vertex": In(32), "free_idx": In(eb), "row_ptr": In(config.addr_width),
                          "cmd": Out(stream.Signature(FetchCommand(f2))), "beat": In(stream.Signature(FetchBeat(f2))),
                          "alloc": Out(1), "fill": Out(1), "fill_idx": Out(eb), "fill_s": Out(32), "fill_e": Out(32),
                          "fill_bad": Out(1), "error": Out(1)})

    def elaborate(self, platform):
        m = Module()
        c = self._config
        eb = max(1, ceil_log2(c.alwt_entries))
        m.submodules.order = order = fifo.SyncFIFOBuffered(width=eb, depth=c.alwt_entries)
        cmd, beat, alloc = self.cmd, self.beat, self.alloc
        m.d.comb += [
            alloc.eq(self.go & cmd.ready & order.w_stream.ready),
            cmd.valid.eq(alloc),
            cmd.p.base.eq(self.row_ptr + (self.vertex << 2)),
            cmd.p.count.eq(2),
            cmd.p.last.eq(1),
            order.w_stream.valid.eq(alloc),
            order.w_stream.payload.eq(self.free_idx),
        ]
        # replies come in order: one beat of two elements per allocated entry
        m.d.comb += [
            beat.ready.eq(order.r_stream.valid),
            order.r_stream.ready.eq(beat.valid),
            self.fill.eq(beat.valid & order.r_stream.valid),
            self.fill_idx.eq(order.r_stream.payload),
            self.fill_s.eq(beat.p.data[0]), self.fill_e.eq(beat.p.data[1]),
            self.fill_bad.eq(beat.p.error.as_value().any() | (beat.p.n != 2)),
            self.error.eq(self.fill & beat.p.error.as_value().any()),
        ]
        return m


class ChunkIssue(ConfiguredComponent):
    """The chunk issue of one SM (GraphPEG §3.3.1, Fig. 5: the FE entry of the ALWT
    gathers its vertex's edges, at most a block of them per cycle).

    While ``fe`` (the ALWT has an FE entry: vertex ``fe_v``, next edge ``fe_s``,
    ``fe_rem`` edges left) and not ``hold`` (a donation takes the ALWT this cycle),
    the next chunk is the edges left up to the end of the block of ``col`` that holds
    edge ``fe_s``, and at most ``min(words_per_block, edge_buffer_edges)``. It is issued
    (``issue``, ``chunk`` edges) when the edge buffer has room for it next to the
    ``reserved`` records and the edge engine (``cols``), the weight engine
    (``weights``, only with ``use_wt``) and the joiner's descriptor queue (``desc``)
    all take it in this cycle; so ``valid`` of those streams depends on the others'
    ``ready``. ``stall``: ``fe``, a chunk, and no room for it in the buffer.
    """

    def __init__(self, config: GraphPEGConfig):
        aw, WPB, fw = config.addr_width, config.words_per_block, config.fetch(config.width)
        super().__init__(config, {"fe": In(1), "hold": In(1), "fe_v": In(32), "fe_s": In(32), "fe_rem": In(32),
                          "col": In(aw), "weight": In(aw), "use_wt": In(1),
                          "reserved": In(range(config.edge_buffer_edges + 1)),
                          "cols": Out(stream.Signature(FetchCommand(fw))),
                          "weights": Out(stream.Signature(FetchCommand(fw))),
                          "desc": Out(stream.Signature(ChunkDesc())),
                          "issue": Out(1), "chunk": Out(range(WPB + 1)), "stall": Out(1)})

    def elaborate(self, platform):
        m = Module()
        c = self._config
        C, WPB, bbb = c.edge_buffer_edges, c.words_per_block, exact_log2(c.block_bytes)
        col_addr = Signal(c.addr_width)
        m.d.comb += col_addr.eq(self.col + (self.fe_s << 2))
        to_block = Signal(range(WPB + 1))         # edges up to the end of the block
        m.d.comb += to_block.eq(WPB - col_addr[2:bbb])
        chunk, rem = self.chunk, self.fe_rem
        lim = min(WPB, C)
        with m.If((rem < to_block) & (rem < lim)):
            m.d.comb += chunk.eq(rem)
        with m.Elif(to_block < lim):
            m.d.comb += chunk.eq(to_block)
        with m.Else():
            m.d.comb += chunk.eq(lim)
        issue = self.issue
        cols, weights, desc, use_wt = self.cols, self.weights, self.desc, self.use_wt
        m.d.comb += [
            issue.eq(self.fe & ~self.hold & (chunk != 0) & (self.reserved + chunk <= C) &
                     cols.ready & (~use_wt | weights.ready) & desc.ready),
            cols.valid.eq(issue),
            cols.p.base.eq(col_addr), cols.p.count.eq(chunk), cols.p.last.eq(1),
            weights.valid.eq(issue & use_wt),
            weights.p.base.eq(self.weight + (self.fe_s << 2)), weights.p.count.eq(chunk), weights.p.last.eq(1),
            desc.valid.eq(issue),
            desc.p.v.eq(self.fe_v), desc.p.s.eq(self.fe_s),
            self.stall.eq(self.fe & (chunk != 0) & (self.reserved + chunk > C)),
        ]
        return m


class Joiner(ConfiguredComponent):
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
    """

    def __init__(self, config: GraphPEGConfig):
        fw = config.fetch(config.width)
        super().__init__(config, {"csc": In(1), "use_wt": In(1), "desc": In(stream.Signature(ChunkDesc())),
                          "edges": In(stream.Signature(FetchBeat(fw))), "weights": In(stream.Signature(FetchBeat(fw))),
                          "o": Out(EdgeBeat(config)), "error": Out(1)})

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
