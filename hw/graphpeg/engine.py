"""GraphPEG's engine of one SM (paper §3.1, §3.3, Figs. 3, 5 and 6; docs/graphpeg.md).
Exact rules: :mod:`golden.graphpeg.tlm`.

Structure: the SM wires the components below, each in its own module of
hw/graphpeg/ with its tests in verif/graphpeg/test_engine_components.py::

    push ─► VertexLists: output list (on chip, ``vlist_entries``) ──full──► spill writer ─┐
                                                                                          │
            input list ◄── refill engine ◄─────────────────── the SM's spill region ◄─────┘
        │   (the two swap at every kernel start: KernelControl)
        ├─ edge mode ─► IndexFetch: ALWT entry (IVD ─► FI), index engine
        │               (row_ptr[v], row_ptr[v+1]) ─► fill (RD)
        │                    │ FE entry: one block of edges per cycle (ChunkIssue)
        │                    ▼
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
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out, connect

from golden.fetch import MemPortConfig
from golden.graphpeg import GraphPEGConfig
from ..fetch.engine import FetchEngine
from ..mem.arbiter import MemArbiter
from ..mem.port import MemPortSignature
from ..mem.writer import SequentialWriter
from .alwt import ALWT
from .control import KernelControl
from .edge_buffer import EdgeBuffer
from .ef import EF_IN, EF_OUT, EFExchange
from .gather import ChunkIssue, IndexFetch, Joiner
from .layouts import ConfiguredComponent, EdgeRecord, KernelParams, PopBeat, PushItem
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


class GraphPEGSM(ConfiguredComponent):
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
        A memory error since the last status that reported them (``reported``; a
        ``setup`` clears it too); a vertex dropped because its spill region was full
        (sticky until ``setup``).
    reported : In(1)
        The status took ``mem_error`` this cycle (its first cycle): errors after it
        are the next status's.
    stall_alwt, stall_buffer : Out(1)
        This cycle a vertex waits because every ALWT entry is taken; the FE entry's
        next chunk waits for room in the edge buffer.
    spill_quiet : Out(1)
        The spill writer offers no write request: a ``setup`` (which restarts the
        writer) may come without withdrawing one (the memory port's stream rule).
    """

    def __init__(self, config: GraphPEGConfig, sm: int = 0):
        check_rtl_config(config)
        self._sm = sm
        super().__init__(config, {
            "setup": In(1), "run": In(1), "params": In(KernelParams(config)), "finish": In(1),
            "running": Out(1), "idle": Out(1), "active": Out(1),
            "push": In(stream.Signature(PushItem())),
            "o": Out(stream.Signature(PopBeat(config))),
            "mem": Out(MemPortSignature(config.sm_port)),
            "efs": Out(32), "bc": In(2), "bs": Out(2), "bw_size": In(32),
            "bw0_i": In(32), "bw1_i": In(32), "bv_i": In(32),
            "bw0_o": Out(32), "bw1_o": Out(32), "bv_o": Out(32),
            "mem_error": Out(1), "overflow": Out(1), "stall_alwt": Out(1), "stall_buffer": Out(1),
            "spill_quiet": Out(1), "reported": In(1),
        })

    def elaborate(self, platform):
        c = self._config
        m = Module()
        W, aw = c.width, c.addr_width

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
        m.d.comb += self.spill_quiet.eq(~spill.mem.req.valid)
        m.submodules.vlists = lists = VertexLists(c)
        m.submodules.index = index = IndexFetch(c)
        m.submodules.chunks = chunks = ChunkIssue(c)
        m.submodules.joiner = joiner = Joiner(c)
        m.submodules.edge_buffer = buf = EdgeBuffer(c)
        m.submodules.pop = pop = PopPort(c)
        m.submodules.ef = ef = EFExchange(c)
        m.submodules.control = ctl = KernelControl(c, self._sm)

        # ---------------------------------------------------------------- kernel control
        par, run = ctl.par, ctl.running
        edge_mode = run & ~par.vertex_mode
        in_count, in_head = lists.count, lists.head
        reserved, frozen, donating = buf.reserved, ef.frozen, ef.donating
        m.d.comb += [getattr(ctl, n).eq(getattr(self, n)) for n in ("setup", "run", "params", "finish")]
        m.d.comb += [getattr(self, n).eq(getattr(ctl, n)) for n in ("running", "active", "mem_error")]
        m.d.comb += [
            ctl.ended.eq(self.o.valid & self.o.ready), ctl.parity.eq(lists.parity), ctl.spill_done.eq(spill.done),
            ctl.error.eq(spill.error | lists.error | index.error | joiner.error), ctl.reported.eq(self.reported),
            spill.start.eq(ctl.spill_start), spill.base.eq(ctl.spill_base), spill.finish.eq(ctl.spill_finish),
            lists.clear.eq(ctl.clear), lists.swap.eq(ctl.swap), alwt.clear.eq(ctl.swap),
            self.overflow.eq(lists.overflow),
        ]

        # ---------------------------------------------------------------- vertex lists, spill, refill
        connect(m, wiring.flipped(self.push), lists.push)
        connect(m, lists.refill, f_ref.cmd)
        connect(m, f_ref.o, lists.refill_data)
        m.d.comb += [
            lists.open.eq(ctl.open), lists.run.eq(run), lists.stride.eq(par.spill_stride),
            lists.in_region.eq(ctl.in_region),
            spill.i.p.data[0].eq(lists.spill.payload), spill.i.p.n.eq(1), spill.i.valid.eq(lists.spill.valid),
            lists.spill.ready.eq(spill.i.ready),
        ]

        # ---------------------------------------------------------------- ALWT: index fetch, FE entry
        connect(m, index.cmd, f_idx.cmd)
        connect(m, f_idx.o, index.beat)
        m.d.comb += [index.go.eq(edge_mode & (in_count != 0) & alwt.has_free & ~frozen), index.vertex.eq(in_head),
                     index.free_idx.eq(alwt.free_idx), index.row_ptr.eq(par.row_ptr), alwt.alloc_v.eq(in_head),
                     alwt.start_fe.eq(edge_mode & ~alwt.has_fe & alwt.has_rd & ~donating)]
        m.d.comb += [getattr(alwt, n).eq(getattr(index, n))
                     for n in ("alloc", "fill", "fill_idx", "fill_s", "fill_e", "fill_bad")]

        # ---------------------------------------------------------------- edge and weight fetch, joiner
        connect(m, chunks.cols, f_col.cmd)
        connect(m, chunks.weights, f_wt.cmd)
        connect(m, chunks.desc, joiner.desc)
        connect(m, f_col.o, joiner.edges)
        connect(m, f_wt.o, joiner.weights)
        m.d.comb += [
            chunks.fe.eq(edge_mode & alwt.has_fe), chunks.hold.eq(donating), chunks.fe_v.eq(alwt.fe_v),
            chunks.fe_s.eq(alwt.fe_s), chunks.fe_rem.eq(alwt.fe_rem), chunks.col.eq(par.col),
            chunks.weight.eq(par.weight), chunks.use_wt.eq(par.use_wt), chunks.reserved.eq(reserved),
            alwt.issue.eq(chunks.issue), alwt.issue_n.eq(chunks.chunk),
            joiner.csc.eq(par.csc), joiner.use_wt.eq(par.use_wt),
            self.stall_alwt.eq(edge_mode & (in_count != 0) & ~alwt.has_free & ~frozen),
            self.stall_buffer.eq(chunks.stall),
        ]

        # ---------------------------------------------------------------- edge buffer
        # vertex-list mode: the input list's head goes straight to the buffer
        vmove = Signal()
        m.d.comb += [vmove.eq(run & par.vertex_mode & (in_count != 0) & (reserved < c.edge_buffer_edges)),
                     lists.read.eq(index.alloc | vmove),
                     buf.reserve.eq(Mux(chunks.issue, chunks.chunk, 0) + vmove), buf.take.eq(pop.take)]
        with m.If(vmove):
            m.d.comb += [buf.write.n.eq(1), buf.write.rec[0].src.eq(in_head), buf.write.rec[0].dst.eq(in_head)]
        with m.Else():
            m.d.comb += buf.write.eq(joiner.o)

        # ---------------------------------------------------------------- pop port, EF registers
        connect(m, pop.o, wiring.flipped(self.o))
        m.d.comb += [
            pop.run.eq(run), pop.finish.eq(ctl.ending), pop.buffered.eq(buf.buffered),
            pop.drained.eq(lists.empty & ~alwt.any_valid & (reserved == buf.buffered) & ~frozen),
            pop.head.eq(buf.head), self.idle.eq(pop.idle), ef.reserved.eq(reserved),
        ]
        m.d.comb += [getattr(ef, n).eq(getattr(self, n)) for n in EF_IN]
        m.d.comb += [getattr(self, n).eq(getattr(ef, n)) for n in EF_OUT]
        m.d.comb += [getattr(ef, n).eq(getattr(alwt, n)) for n in ("remaining", "has_free", "big_rem", "big_s", "big_v")]
        m.d.comb += [getattr(alwt, n).eq(getattr(ef, n))
                     for n in ("donate", "donate_m", "receive", "recv_v", "recv_s", "recv_e")]
        return m
