"""GraphPEG's vertex lists (paper §3.3.1, Fig. 5; docs/graphpeg.md, "RTL"): the two
on-chip lists of one SM's engine, each a ring of vertices, and the pair with the
rules that spill the output list to memory when it is full and refill the input
list from there while a kernel runs."""
from amaranth import *
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.graphpeg import GraphPEGConfig
from ..fetch.engine import FetchBeat, FetchCommand
from .layouts import ConfiguredComponent, PushItem

__all__ = ["VertexList", "VertexLists"]


class VertexList(wiring.Component):
    """One vertex list on chip (GraphPEG §3.3.1, Fig. 5: the input or the output vertex
    list, in the SM's shared memory in the paper): a ring of ``entries`` vertices.

    ``write`` appends ``wdata`` at the tail; ``read`` drops the head; ``head`` is the
    head vertex, read without a cycle of latency; ``count`` the vertices held;
    ``clear`` empties the list and wins over a write or a read of the same cycle (a
    write still stores its vertex). The user never writes a full list nor reads an
    empty one.

    Parameters
    ----------
    entries : int
        Vertices the list holds (``GraphPEGConfig.vlist_entries``).
    """

    def __init__(self, entries: int):
        if not isinstance(entries, int) or entries < 1:
            raise ValueError(f"a vertex list holds at least one vertex, not {entries!r}")
        self._entries = entries
        super().__init__({"write": In(1), "wdata": In(32), "read": In(1), "head": Out(32),
                          "count": Out(range(entries + 1)), "clear": In(1)})

    @property
    def entries(self) -> int:
        return self._entries

    def elaborate(self, platform):
        m = Module()
        CAP = self._entries
        m.submodules.vlist = mem = memory.Memory(shape=32, depth=CAP, init=[])
        wp = mem.write_port()
        rp = mem.read_port(domain="comb")
        rd_ptr = Signal(range(CAP))
        wr_ptr = Signal(range(CAP))
        m.d.comb += [wp.addr.eq(wr_ptr), wp.data.eq(self.wdata), wp.en.eq(self.write), rp.addr.eq(rd_ptr),
                     self.head.eq(rp.data)]
        with m.If(self.write):
            m.d.sync += wr_ptr.eq(Mux(wr_ptr == CAP - 1, 0, wr_ptr + 1))
        with m.If(self.read):
            m.d.sync += rd_ptr.eq(Mux(rd_ptr == CAP - 1, 0, rd_ptr + 1))
        m.d.sync += self.count.eq(self.count + self.write - self.read)
        with m.If(self.clear):
            m.d.sync += [rd_ptr.eq(0), wr_ptr.eq(0), self.count.eq(0)]
        return m


class VertexLists(ConfiguredComponent):
    """The input and the output vertex list of one SM's engine with their spill and
    refill (GraphPEG §3.3.1, Fig. 5: ``__push_vert`` fills the output list, the
    engines drain the input list; the two swap at every kernel start).

    Output side: a push goes to the output list while it has room, else to ``spill``
    (the sequential writer: the vertex is the SM's next word of its output spill
    region) while the region, ``stride`` bytes, has room, else it is dropped and
    ``overflow`` is set (until ``clear``). Pushes are taken only while ``open``.

    Input side: while ``run``, the refill asks ``refill`` (a fetch engine of width 1)
    for the next block's worth of the vertices spilled before the kernel, from
    ``in_region`` (the input list's spill region), whenever the list has room for
    them next to those already asked for; their words are appended to the input
    list. ``error``: a refill read answered with an error (one cycle). ``head`` /
    ``count`` / ``read``: the input list's head, its vertices on chip, and the read
    that drops the head; ``empty``: no vertex left on chip, in memory or on its way.

    ``clear`` (setup) empties both lists and forgets every spilled vertex; ``swap``
    (kernel start) makes the output list, with what it spilled, the input list.
    ``parity``: which of the two rings is the output list.
    """

    def __init__(self, config: GraphPEGConfig):
        CAP, aw, f1 = config.vlist_entries, config.addr_width, config.fetch(1)
        super().__init__(config, {
            "clear": In(1), "swap": In(1), "run": In(1), "open": In(1), "stride": In(aw), "in_region": In(aw),
            "push": In(stream.Signature(PushItem())), "spill": Out(stream.Signature(32)),
            "refill": Out(stream.Signature(FetchCommand(f1))), "refill_data": In(stream.Signature(FetchBeat(f1))),
            "read": In(1), "head": Out(32), "count": Out(range(CAP + 1)), "empty": Out(1),
            "parity": Out(1), "overflow": Out(1), "error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        c = self._config
        CAP, WPB = c.vlist_entries, c.words_per_block
        lists = [VertexList(CAP) for _ in range(2)]
        m.submodules.vlist0, m.submodules.vlist1 = lists
        p = self.parity                          # the output list
        out_spilled = Signal(32)                 # vertices of the output list in memory
        in_spilled = Signal(32)                  # of the input list
        refill_pos = Signal(32)                  # of those, asked for
        refill_pending = Signal(range(CAP + 1))  # asked for, not arrived
        out_count = Mux(p, lists[1].count, lists[0].count)
        m.d.comb += [self.count.eq(Mux(p, lists[0].count, lists[1].count)),
                     self.head.eq(Mux(p, lists[0].head, lists[1].head))]
        push, refill, ref_data = self.push, self.refill, self.refill_data
        push_wr = Signal()
        refill_wr = Signal()
        for j, lst in enumerate(lists):
            is_out = p == j
            m.d.comb += [lst.write.eq(Mux(is_out, push_wr, refill_wr)),
                         lst.wdata.eq(Mux(is_out, push.p.vertex, ref_data.p.data[0])),
                         lst.read.eq(~is_out & self.read)]

        # ---------------------------------------------------------------- pushes and spills
        out_full = out_count == CAP
        drop = Signal()
        m.d.comb += [drop.eq(((out_spilled + 1) << 2) > self.stride),
                     self.spill.payload.eq(push.p.vertex),
                     self.spill.valid.eq(self.open & out_full & ~drop & push.valid)]
        with m.If(~self.open):
            m.d.comb += push.ready.eq(0)
        with m.Elif(~out_full):
            m.d.comb += [push.ready.eq(1), push_wr.eq(push.valid)]
        with m.Elif(drop):
            m.d.comb += push.ready.eq(1)
            with m.If(push.valid):
                m.d.sync += self.overflow.eq(1)
        with m.Else():
            m.d.comb += push.ready.eq(self.spill.ready)
        with m.If(self.spill.valid & self.spill.ready):
            m.d.sync += out_spilled.eq(out_spilled + 1)

        # ---------------------------------------------------------------- refill
        ref_left = Signal(32)
        ref_n = Signal(range(WPB + 1))
        m.d.comb += [ref_left.eq(in_spilled - refill_pos), ref_n.eq(Mux(ref_left < WPB, ref_left, WPB))]
        m.d.comb += [
            refill.valid.eq(self.run & (ref_left != 0) & (self.count + refill_pending + ref_n <= CAP)),
            refill.p.base.eq(self.in_region + (refill_pos << 2)),
            refill.p.count.eq(ref_n),
            refill.p.last.eq(1),
            ref_data.ready.eq(1),
            refill_wr.eq(ref_data.valid & (ref_data.p.n != 0)),
            self.error.eq(ref_data.valid & ref_data.p.last & ref_data.p.error.as_value().any()),
            self.empty.eq((self.count == 0) & (refill_pos == in_spilled) & (refill_pending == 0)),
        ]
        ref_fire = refill.valid & refill.ready
        with m.If(ref_fire):
            m.d.sync += refill_pos.eq(refill_pos + ref_n)
        m.d.sync += refill_pending.eq(refill_pending + Mux(ref_fire, ref_n, 0) - refill_wr)

        # ---------------------------------------------------------------- setup and kernel start
        with m.If(self.clear):
            m.d.sync += [p.eq(0), out_spilled.eq(0), in_spilled.eq(0), refill_pos.eq(0), self.overflow.eq(0)]
            m.d.comb += [lst.clear.eq(1) for lst in lists]
        with m.If(self.swap):
            m.d.sync += [in_spilled.eq(out_spilled), out_spilled.eq(0), refill_pos.eq(0), p.eq(~p)]
        return m
