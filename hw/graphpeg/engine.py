"""GraphPEG's engine of one SM (paper §3.1, §3.3, Figs. 3, 5 and 6; docs/graphpeg.md).
Exact rules: :mod:`golden.graphpeg.tlm`.

Structure::

    push ─► output vertex list (on chip, ``vlist_entries``) ──full──► spill writer ─┐
                                                                                    │
    input vertex list ◄── refill engine ◄─────────── the SM's spill region ◄────────┘
        │ (swapped with the output list at every kernel start; both: VertexLists)
        ├─ edge mode ─► ALWT ─► IndexFetch: index engine (row_ptr[v], row_ptr[v+1]) ─► fill (RD)
        │               │ FE entry: one block of edges per cycle (ChunkIssue)
        │               ▼
        │          edge engine (col) + weight engine ─► Joiner (+ src, index) ─┐
        └─ vertex mode ───────────────────────────────────────────────────────┤
                                                                               ▼
                EdgeBuffer: ``width`` banks, ``edge_buffer_edges`` records
                                                                               ▼
                  PopPort ─► o: warp batches, ``width`` items per beat, then ``done``
    mem ◄── arbiter ◄── index, edge, weight, refill engines (hw/fetch) and the writer (hw/mem/writer.py)

EF exchange registers (§3.3.2; EFExchange), driven by the balancer of the top: ``efs``
(R_EFS: edges reserved in the buffer plus edges left in the ALWT), ``bc``
(R_BC), ``bs`` (R_BS), ``bw_size`` (the balance), ``bw0_i/bw1_i/bv_i`` (R_BW0,
R_BW1 and the vertex given to a receiver) and ``bw0_o/bw1_o/bv_o`` (what a donor
gave). The engine acts once on the first cycle of every new ``bc`` value.
"""
from amaranth import *
from amaranth.lib import data, enum, fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out, connect
from amaranth.utils import ceil_log2, exact_log2

from golden.fetch import MemPortConfig
from golden.graphpeg import EF_BC, EF_BS, GraphPEGConfig
from ..fetch.engine import FetchEngine
from ..mem.arbiter import MemArbiter
from ..mem.port import MemPortSignature
from ..mem.writer import SequentialWriter
from .alwt import ALWT
from .edge_buffer import EdgeBuffer
from .ef import EF_IN, EF_OUT, EFExchange
from .gather import ChunkIssue, IndexFetch, Joiner
from .layouts import EdgeRecord, KernelParams, PopBeat, PushItem
from .pop import PopPort
from .vlist import VertexLists

__all__ = ["EdgeRecord", "PopBeat", "PushItem", "KernelParams", "GraphPEGSM", "check_rtl_config"]


def check_rtl_config(config: GraphPEGConfig) -> None:
    """The limits of the RTL beyond the configuration's own checks (the TLM has none)."""
    if not isinstance(config, GraphPEGConfig):
        raise TypeError(f"GraphPEG's RTL needs a GraphPEGConfig, not {config!r}")
    C = config.edge_buffer_edges
    if C & (C - 1):
        raise ValueError(f"the RTL's edge buffer holds a power of two of edges, not {C} "
                         f"(edge_buffer_bytes={config.edge_buffer_bytes})")
    if config.alwt_entries > 64:
        raise ValueError(f"the RTL's ALWT has at most 64 entries, not {config.alwt_entries}")


class _State(enum.Enum, shape=3):
    IDLE = 0
    FLUSH = 1
    SWAP = 2
    RUN = 3
    DONE = 4


class GraphPEGSM(wiring.Component):
    """GraphPEG engine of SM number ``sm``.

    Attributes
    ----------
    setup, run : In(1)
        Pulses from the top: clear the vertex lists / start a kernel (``params`` valid).
    params : In(KernelParams)
    finish : In(1)
        Every SM is idle and no exchange is in progress: end the kernel.
    running, idle, active : Out(1)
        In a kernel; nothing left to gather or hand out; not waiting for a command.
    push : In(stream(PushItem))
    o : Out(stream(PopBeat))
    mem : Out(MemPortSignature)
    efs, bc, bs, bw_size, bw0_i, bw1_i, bv_i, bw0_o, bw1_o, bv_o
        The EF exchange registers.
    mem_error, overflow : Out(1)
        Sticky until ``setup``: a memory error; a vertex dropped because its spill
        region was full.
    stall_alwt, stall_buffer : Out(1)
        This cycle a vertex waits because every ALWT entry is taken; the FE entry's
        next chunk waits for room in the edge buffer.
    """

    def __init__(self, config: GraphPEGConfig, sm: int = 0):
        check_rtl_config(config)
        self._config = config
        self._sm = sm
        super().__init__({
            "setup": In(1), "run": In(1), "params": In(KernelParams(config)), "finish": In(1),
            "running": Out(1), "idle": Out(1), "active": Out(1),
            "push": In(stream.Signature(PushItem())),
            "o": Out(stream.Signature(PopBeat(config))),
            "mem": Out(MemPortSignature(config.sm_port)),
            "efs": Out(32), "bc": In(2), "bs": Out(2), "bw_size": In(32),
            "bw0_i": In(32), "bw1_i": In(32), "bv_i": In(32),
            "bw0_o": Out(32), "bw1_o": Out(32), "bv_o": Out(32),
            "mem_error": Out(1), "overflow": Out(1), "stall_alwt": Out(1), "stall_buffer": Out(1),
        })

    @property
    def config(self) -> GraphPEGConfig:
        return self._config

    def elaborate(self, platform):
        c = self._config
        m = Module()
        W = c.width
        lw = exact_log2(W)
        C = c.edge_buffer_edges
        cb = exact_log2(C)
        D = C // W
        WPB = c.words_per_block
        bbb = exact_log2(c.block_bytes)
        WS = c.warp_size
        aw = c.addr_width
        p_in = self.params

        # ---------------------------------------------------------------- submodules
        m.submodules.alwt = alwt = ALWT(c.alwt_entries)
        m.submodules.fetch_index = f_idx = FetchEngine(c.fetch(2))
        m.submodules.fetch_edge = f_col = FetchEngine(c.fetch(W))
        m.submodules.fetch_weight = f_wt = FetchEngine(c.fetch(W))
        m.submodules.fetch_refill = f_ref = FetchEngine(c.fetch(1))
        wport = MemPortConfig(addr_width=aw, block_bytes=c.block_bytes, tag_width=c.writer_tag_width)
        m.submodules.spill = spill = SequentialWriter(wport, 1, 32)
        ports = [c.fetch(2).port, c.fetch(W).port, c.fetch(W).port, c.fetch(1).port, wport]
        m.submodules.arbiter = arb = MemArbiter(c.sm_port, ports)
        for k, e in enumerate([f_idx, f_col, f_wt, f_ref, spill]):
            connect(m, e.mem, arb.ports[k])
        connect(m, arb.o, wiring.flipped(self.mem))

        # ---------------------------------------------------------------- kernel state
        state = Signal(_State)
        setup_done = Signal()
        par = Signal(KernelParams(c))            # latched at run / setup
        mem_err = Signal()
        m.submodules.vlists = lists = VertexLists(c)
        p = lists.parity                          # the output list
        m.d.comb += [self.running.eq(state == _State.RUN), self.active.eq(state != _State.IDLE),
                     self.mem_error.eq(mem_err), self.overflow.eq(lists.overflow)]

        def region(parity):
            return par.spill_base + par.spill_stride * (2 * self._sm) + Mux(parity, par.spill_stride, 0)

        # ---------------------------------------------------------------- vertex lists, spill, refill
        run = state == _State.RUN
        in_count, in_head, in_rd = lists.count, lists.head, lists.read
        connect(m, wiring.flipped(self.push), lists.push)
        connect(m, lists.refill, f_ref.cmd)
        connect(m, f_ref.o, lists.refill_data)
        m.d.comb += [
            lists.open.eq(setup_done & ((state == _State.IDLE) | (state == _State.RUN) | (state == _State.DONE))),
            lists.run.eq(run), lists.stride.eq(par.spill_stride), lists.in_region.eq(region(~p)),
            spill.i.p.data[0].eq(lists.spill.payload), spill.i.p.n.eq(1), spill.i.valid.eq(lists.spill.valid),
            lists.spill.ready.eq(spill.i.ready),
        ]
        with m.If(spill.error | lists.error):
            m.d.sync += mem_err.eq(1)

        # ---------------------------------------------------------------- edge buffer
        m.submodules.edge_buffer = buf = EdgeBuffer(c)
        reserved, buffered = buf.reserved, buf.buffered
        bw_n, bw_rec = buf.write.n, buf.write.rec       # records written this cycle

        # ---------------------------------------------------------------- EF registers
        m.submodules.ef = ef = EFExchange(c)
        frozen, donating = ef.frozen, ef.donating
        m.d.comb += [getattr(ef, n).eq(getattr(self, n)) for n in EF_IN]
        m.d.comb += [getattr(self, n).eq(getattr(ef, n)) for n in EF_OUT]
        m.d.comb += [getattr(ef, n).eq(getattr(alwt, n)) for n in ("remaining", "has_free", "big_rem", "big_s", "big_v")]
        m.d.comb += [getattr(alwt, n).eq(getattr(ef, n))
                     for n in ("donate", "donate_m", "receive", "recv_v", "recv_s", "recv_e")]
        m.d.comb += ef.reserved.eq(reserved)

        # ---------------------------------------------------------------- ALWT: index fetch
        edge_mode = run & ~par.vertex_mode
        m.submodules.index = index = IndexFetch(c)
        alloc = index.alloc
        connect(m, index.cmd, f_idx.cmd)
        connect(m, f_idx.o, index.beat)
        m.d.comb += [index.go.eq(edge_mode & (in_count != 0) & alwt.has_free & ~frozen), index.vertex.eq(in_head),
                     index.free_idx.eq(alwt.free_idx), index.row_ptr.eq(par.row_ptr), alwt.alloc_v.eq(in_head)]
        m.d.comb += [getattr(alwt, n).eq(getattr(index, n))
                     for n in ("alloc", "fill", "fill_idx", "fill_s", "fill_e", "fill_bad")]
        with m.If(index.error):
            m.d.sync += mem_err.eq(1)

        # ---------------------------------------------------------------- ALWT: edge fetch
        m.d.comb += alwt.start_fe.eq(edge_mode & ~alwt.has_fe & alwt.has_rd & ~donating)
        m.submodules.joiner = joiner = Joiner(c)
        m.submodules.chunks = chunks = ChunkIssue(c)
        issue, chunk = chunks.issue, chunks.chunk
        connect(m, chunks.cols, f_col.cmd)
        connect(m, chunks.weights, f_wt.cmd)
        connect(m, chunks.desc, joiner.desc)
        m.d.comb += [
            chunks.fe.eq(edge_mode & alwt.has_fe), chunks.hold.eq(donating), chunks.fe_v.eq(alwt.fe_v),
            chunks.fe_s.eq(alwt.fe_s), chunks.fe_rem.eq(alwt.fe_rem), chunks.col.eq(par.col),
            chunks.weight.eq(par.weight), chunks.use_wt.eq(par.use_wt), chunks.reserved.eq(reserved),
            alwt.issue.eq(issue), alwt.issue_n.eq(chunk),
        ]

        m.d.comb += [
            self.stall_alwt.eq(edge_mode & (in_count != 0) & ~alwt.has_free & ~frozen),
            self.stall_buffer.eq(chunks.stall),
        ]

        # ---------------------------------------------------------------- joiner
        connect(m, f_col.o, joiner.edges)
        connect(m, f_wt.o, joiner.weights)
        m.d.comb += [joiner.csc.eq(par.csc), joiner.use_wt.eq(par.use_wt)]
        with m.If(joiner.error):
            m.d.sync += mem_err.eq(1)

        # vertex-list mode: the input list's head goes straight to the buffer
        vmove = Signal()
        m.d.comb += vmove.eq(run & par.vertex_mode & (in_count != 0) & (reserved < C))
        m.d.comb += in_rd.eq(alloc | vmove)
        with m.If(vmove):
            m.d.comb += [bw_n.eq(1), bw_rec[0].src.eq(in_head), bw_rec[0].dst.eq(in_head)]
        with m.Else():
            m.d.comb += buf.write.eq(joiner.o)

        # ---------------------------------------------------------------- output: warp batches
        drained = Signal()
        m.d.comb += drained.eq(lists.empty & ~alwt.any_valid & (reserved == buffered) & ~frozen)
        m.submodules.pop = pop = PopPort(c)
        o = self.o
        connect(m, pop.o, wiring.flipped(o))
        m.d.comb += [pop.run.eq(state == _State.RUN), pop.finish.eq(state == _State.DONE), pop.drained.eq(drained),
                     pop.buffered.eq(buffered), pop.head.eq(buf.head), self.idle.eq(pop.idle)]
        m.d.comb += [buf.take.eq(pop.take), buf.reserve.eq(Mux(issue, chunk, 0) + vmove)]

        # ---------------------------------------------------------------- control
        m.d.comb += [spill.base.eq(region(p)), alwt.clear.eq(0)]
        with m.Switch(state):
            with m.Case(_State.IDLE):
                with m.If(self.setup):
                    m.d.sync += [par.eq(p_in), setup_done.eq(1), mem_err.eq(0)]
                    m.d.comb += lists.clear.eq(1)
                    # the writer starts at region(0) of the new parameters
                    m.d.comb += [spill.start.eq(1),
                                 spill.base.eq(p_in.spill_base + p_in.spill_stride * (2 * self._sm))]
                with m.Elif(self.run & setup_done):
                    m.d.sync += [par.vertex_mode.eq(p_in.vertex_mode), par.csc.eq(p_in.csc),
                                 par.use_wt.eq(p_in.use_wt), par.row_ptr.eq(p_in.row_ptr), par.col.eq(p_in.col),
                                 par.weight.eq(p_in.weight), state.eq(_State.FLUSH)]
                    m.d.comb += spill.finish.eq(1)
            with m.Case(_State.FLUSH):
                with m.If(spill.done):
                    m.d.sync += state.eq(_State.SWAP)
            with m.Case(_State.SWAP):
                m.d.sync += state.eq(_State.RUN)
                m.d.comb += [lists.swap.eq(1), spill.start.eq(1), spill.base.eq(region(~p)), alwt.clear.eq(1)]
            with m.Case(_State.RUN):
                with m.If(self.finish):
                    m.d.sync += state.eq(_State.DONE)
            with m.Case(_State.DONE):
                with m.If(o.valid & o.ready):
                    m.d.sync += state.eq(_State.IDLE)
        return m
