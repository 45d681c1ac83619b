"""The IRU partition's prefetcher (IRU paper §3.2, Fig. 5 "prefetcher"; docs/iru.md):
the range generators that read this partition's interleave chunks of the index
and secondary arrays through two fetch engines, and the pairing of their beats
into elements in input order."""
from amaranth import *
from amaranth.lib import stream
from amaranth.lib.wiring import In, Out

from golden.iru import IRUConfig
from ..fetch.engine import FetchBeat, FetchCommand
from .layouts import ConfiguredComponent, Fetched, IRUCommand

__all__ = ["IRUPrefetcher", "first_position"]


def first_position(m: Module, c: IRUConfig, p: int, wbase) -> Value:
    """First position of partition ``p``'s first interleave chunk of an array at word
    ``wbase`` (may be >= n)."""
    WW = c.addr_width - 2
    cb = (c.interleave_bytes // 4).bit_length() - 1
    chunk = wbase >> cb
    c0 = Signal(WW + 1, name="first_chunk")
    m.d.comb += c0.eq(chunk + ((p - chunk) & (c.partitions - 1)))
    start_w = Signal(WW + cb + 2)
    m.d.comb += start_w.eq(c0 << cb)
    return Mux(start_w > wbase, start_w - wbase, 0)


class IRUPrefetcher(ConfiguredComponent):
    """Prefetcher of partition ``index``: on ``start`` (``op`` holds from then on), range
    commands for the partition's chunks (``interleave_bytes`` each; chunk ``k`` of the
    index array belongs to partition ``k mod P``, by word address) of the index array
    on ``idx_cmd`` and, with ``op.use_sec``, of the secondary array on ``sec_cmd``;
    the fetch engines' beats (one lane each) come back on ``idx_data`` / ``sec_data``
    and leave paired as elements on ``o`` (position = place in the input). A
    ``reject``-ed operation reads nothing. ``done``: the last beat went out;
    ``mem_error``: a beat of the operation had a memory error.
    """

    def __init__(self, config: IRUConfig, index: int):
        self._index = index
        fc = config.fetch
        super().__init__(config, {
            "start": In(1), "op": In(IRUCommand(config)), "reject": In(1),
            "idx_cmd": Out(stream.Signature(FetchCommand(fc))), "sec_cmd": Out(stream.Signature(FetchCommand(fc))),
            "idx_data": In(stream.Signature(FetchBeat(fc))), "sec_data": In(stream.Signature(FetchBeat(fc))),
            "o": Out(stream.Signature(Fetched(config))), "done": Out(1), "mem_error": Out(1),
        })

    def elaborate(self, platform):
        c = self._config
        p = self._index
        P = c.partitions
        m = Module()
        op = self.op
        WW = c.addr_width - 2                       # word addresses
        cb = (c.interleave_bytes // 4).bit_length() - 1
        CW = 1 << cb                                # words per interleave chunk
        NW = c.count_width

        def generator(cmd, base_word, enable, name):
            # Ranges of the partition's chunks (positions from the index array's
            # interleave), read from ``base_word`` (the index or the secondary array).
            active = Signal(name=f"{name}_active")
            pos = Signal(WW + cb + 2, name=f"{name}_pos")
            wbase = op.idx
            with m.If(self.start):
                m.d.sync += [active.eq(enable & ~self.reject), pos.eq(first_position(m, c, p, wbase))]
            chunk_end = Signal(WW + cb + 2, name=f"{name}_end")      # position where this chunk ends
            m.d.comb += chunk_end.eq((((wbase + pos) >> cb) + 1 << cb) - wbase)
            next_first = Signal(WW + cb + 3, name=f"{name}_next")
            m.d.comb += next_first.eq(chunk_end + (P - 1) * CW)
            empty = pos >= op.n
            cnt = Mux(empty, 0, Mux(chunk_end < op.n, chunk_end, op.n) - pos)
            m.d.comb += [cmd.valid.eq(active & ~self.start),
                         cmd.p.base.eq(Cat(C(0, 2), (base_word + pos)[:WW])),
                         cmd.p.count.eq(cnt), cmd.p.esize8.eq(0),
                         cmd.p.last.eq(empty | (next_first >= op.n))]
            with m.If(cmd.valid & cmd.ready):
                m.d.sync += pos.eq(next_first)
                with m.If(cmd.p.last):
                    m.d.sync += active.eq(0)

        generator(self.idx_cmd, op.idx, 1, "gen_idx")
        generator(self.sec_cmd, op.sec, op.use_sec, "gen_sec")

        # Pairing: one index lane (and one secondary lane) per element.
        fetch_done = Signal()
        mem_err = Signal()
        epos = Signal(WW + cb + 2)               # position of the next element
        with m.If(self.start):      # a rejected operation reads nothing: its input is all in at once
            m.d.sync += [fetch_done.eq(self.reject), mem_err.eq(0), epos.eq(first_position(m, c, p, op.idx))]
        m.d.comb += [self.mem_error.eq(mem_err), self.done.eq(fetch_done)]
        io, so, o = self.idx_data, self.sec_data, self.o
        m.d.comb += [o.valid.eq(io.valid & (so.valid | ~op.use_sec) & ~fetch_done & ~self.start),
                     o.p.has.eq(io.p.n != 0), o.p.last.eq(io.p.last),
                     o.p.e.idx.eq(io.p.data[0][:c.index_bits]), o.p.e.sec.eq(Mux(op.use_sec, so.p.data[0][:32], 0)),
                     o.p.e.pos.eq(epos[:NW])]
        fire = Signal()
        m.d.comb += [fire.eq(o.valid & o.ready), io.ready.eq(fire), so.ready.eq(fire & op.use_sec)]
        with m.If(fire):
            with m.If(o.p.has):
                chunk_last = ((op.idx + epos + 1) & (CW - 1)) == 0
                m.d.sync += epos.eq(epos + 1 + Mux(chunk_last, (P - 1) * CW, 0))
            with m.If(io.p.last):
                m.d.sync += [fetch_done.eq(1), mem_err.eq(mem_err | io.p.error.mem | (so.p.error.mem & op.use_sec))]
        return m
