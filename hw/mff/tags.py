"""The MFF's tag unit (MFF slides, "Internal Structure of MFF Unit": the tag unit,
a fully associative set of entries, each with a block, its line data and the list
of work registers waiting on it; docs/mff.md, "Structure")."""
from amaranth import *
from amaranth.lib import memory, stream
from amaranth.lib.wiring import In, Out

from golden.mff import MFFConfig
from ..mem.port import MemResponse
from .layouts import ConfiguredComponent, widths
from .port import WriteBack

__all__ = ["TagUnit"]


class TagUnit(ConfiguredComponent):
    """The tag entries and their line data (slides, "How MFF Unit Works": a request
    for a block already outstanding links its register into the entry's list; when
    the block's data arrives, the list is walked).

    Each entry holds a block (``valid``), whether its data has come (``ready``) and
    with an error, the head of its list of waiting registers (``NIL``: none), the
    scatter bits set in its line and not yet written back (``dirty``), whether it
    waits for the walker or is being walked, and whether a write-back of it is in
    flight.

    Lookups (combinational, the lowest matching entry): ``need_block`` gives
    ``need_hit``/``need_idx`` and that entry's ``need_ready``, ``need_err``,
    ``need_head`` and ``need_line``; ``iss_block`` gives ``iss_hit``/``iss_idx``/
    ``iss_head``. ``victim`` (``have_victim``): an entry that can be taken for a new
    block (invalid, or ready, clean, with no list, not walked nor written back),
    round robin from the one after the last taken. ``walk_pending``/``walk_sel``/
    ``walk_head``: the lowest entry waiting for the walker and its list.
    ``walk_cur``: the entry being walked (``walk_line``, ``walk_err``).
    ``flush_pending``/``flush``: the lowest dirty entry not being written back, with
    its block and byte mask; ``writing``: a write-back is in flight. ``wb_data``:
    the line of the last flush, latched when it fires (the write-back buffer's
    data, next to the line memory so that synthesis makes it its read register).

    Updates (applied together, so a response and a link in one cycle combine):
    ``alloc`` an entry for a block with one register; ``link`` a register at the head
    of an entry's list; ``walk_start`` (its list handed to the walker) and
    ``walk_done`` (of ``walk_cur``); ``set_en`` ORs bit ``set_bit`` into
    ``walk_cur``'s line; ``flush_fire``: ``flush`` latched for a write-back;
    ``invalidate`` forgets every block; ``resp``: the memory's responses (a read
    fills its entry, a write-back's ends it; ``resp_write_error``).
    """

    def __init__(self, config: MFFConfig):
        w = widths(config)
        tb, rb, BW, BB = w.tb, w.rb, w.BW, config.block_bytes
        super().__init__(config, {
            "need_block": In(BW), "need_hit": Out(1), "need_idx": Out(tb), "need_ready": Out(1), "need_err": Out(1),
            "need_head": Out(rb + 1), "need_line": Out(8 * BB),
            "iss_block": In(BW), "iss_hit": Out(1), "iss_idx": Out(tb), "iss_head": Out(rb + 1),
            "have_victim": Out(1), "victim": Out(tb),
            "walk_pending": Out(1), "walk_sel": Out(tb), "walk_head": Out(rb + 1),
            "walk_cur": In(tb), "walk_line": Out(8 * BB), "walk_err": Out(1),
            "flush_pending": Out(1), "flush": Out(WriteBack(config)), "flush_fire": In(1), "writing": Out(1),
            "wb_data": Out(8 * BB),
            "alloc_en": In(1), "alloc_entry": In(tb), "alloc_block": In(BW), "alloc_reg": In(rb),
            "link_en": In(1), "link_entry": In(tb), "link_reg": In(rb),
            "walk_start": In(1), "walk_done": In(1), "set_en": In(1), "set_bit": In(range(8 * BB)),
            "invalidate": In(1),
            "resp": In(stream.Signature(MemResponse(config.port))), "resp_write_error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        c = self._config
        w = widths(c)
        T, BB, tb, rb, NIL = c.tag_entries, c.block_bytes, w.tb, w.rb, w.NIL
        t_valid = Signal(T)
        t_ready = Signal(T)
        t_err = Signal(T)
        t_walk = Signal(T)                 # has a list waiting for the walker
        t_walking = Signal(T)              # being walked now
        t_writing = Signal(T)              # write-back in flight
        t_block = [Signal(w.BW, name=f"t_block{k}") for k in range(T)]
        t_head = [Signal(rb + 1, name=f"t_head{k}", init=NIL) for k in range(T)]
        t_dirty = [Signal(BB, name=f"t_dirty{k}") for k in range(T)]
        m.submodules.lines = lines = memory.Memory(shape=8 * BB, depth=T, init=[])
        fill_w = lines.write_port()        # responses
        or_w = lines.write_port()          # scatter bits
        line_a = lines.read_port(domain="comb")
        line_b = lines.read_port(domain="comb")
        line_c = lines.read_port(domain="comb")

        for name in ("need", "iss"):
            block, hit, idx = (getattr(self, f"{name}_{x}") for x in ("block", "hit", "idx"))
            for k in reversed(range(T)):
                with m.If(t_valid[k] & (t_block[k] == block)):
                    m.d.comb += [hit.eq(1), idx.eq(k)]
        m.d.comb += [self.need_ready.eq(t_ready.bit_select(self.need_idx, 1)),
                     self.need_err.eq(t_err.bit_select(self.need_idx, 1)),
                     self.need_head.eq(Array(t_head)[self.need_idx]), self.iss_head.eq(Array(t_head)[self.iss_idx]),
                     line_b.addr.eq(self.need_idx), self.need_line.eq(line_b.data),
                     line_a.addr.eq(self.walk_cur), self.walk_line.eq(line_a.data),
                     self.walk_err.eq(t_err.bit_select(self.walk_cur, 1))]

        # A victim: an invalid entry, else a ready one nobody waits on (round robin).
        evictable = Signal(T)
        for k in range(T):
            m.d.comb += evictable[k].eq(~t_valid[k] | (t_ready[k] & (t_head[k] == NIL) & ~t_walk[k] &
                                                       ~t_walking[k] & ~t_writing[k] & (t_dirty[k] == 0)))
        vptr = Signal(tb)
        m.d.comb += self.have_victim.eq(evictable.any())
        for d in reversed(range(T)):
            cand = Mux(vptr + d >= T, vptr + d - T, vptr + d).as_unsigned()[:tb]
            with m.If(evictable.bit_select(cand, 1)):
                m.d.comb += self.victim.eq(cand)

        # The walker's next list, and the next dirty line to write back.
        m.d.comb += self.walk_pending.eq(t_walk.any())
        for k in reversed(range(T)):
            with m.If(t_walk[k]):
                m.d.comb += self.walk_sel.eq(k)
        m.d.comb += self.walk_head.eq(Array(t_head)[self.walk_sel])
        dirty_any = Signal(T)
        for k in range(T):
            m.d.comb += dirty_any[k].eq((t_dirty[k] != 0) & ~t_writing[k])
        fl = self.flush
        for k in reversed(range(T)):
            with m.If(dirty_any[k]):
                m.d.comb += fl.entry.eq(k)
        m.d.comb += [self.flush_pending.eq(dirty_any.any()), self.writing.eq(t_writing != 0),
                     line_c.addr.eq(fl.entry), fl.block.eq(Array(t_block)[fl.entry]),
                     fl.mask.eq(Array(t_dirty)[fl.entry])]
        with m.If(self.flush_fire):
            m.d.sync += self.wb_data.eq(line_c.data)

        # Entry updates, collected per entry and applied once.
        resp = self.resp
        m.d.comb += resp.ready.eq(1)
        resp_read = resp.valid & ~resp.p.tag[tb]
        resp_write = resp.valid & resp.p.tag[tb]
        resp_entry = resp.p.tag[:tb]
        m.d.comb += [fill_w.addr.eq(resp_entry), fill_w.data.eq(Mux(resp.p.error, 0, resp.p.rdata)),
                     fill_w.en.eq(Mux(resp_read, 2 ** len(fill_w.en) - 1, 0)),
                     self.resp_write_error.eq(resp_write & resp.p.error)]
        bytepos = self.set_bit[3:]
        m.d.comb += [or_w.addr.eq(self.walk_cur), or_w.data.eq(line_a.data | (1 << self.set_bit)),
                     or_w.en.eq(Mux(self.set_en, 2 ** len(or_w.en) - 1, 0))]
        alloc_en, alloc_entry, walk_start, walk_entry = self.alloc_en, self.alloc_entry, self.walk_start, self.walk_sel
        flush_fire, flush_entry, cur_walk = self.flush_fire, fl.entry, self.walk_cur
        for k in range(T):
            head_next = Signal(rb + 1, name=f"head_next{k}")
            m.d.comb += head_next.eq(t_head[k])
            with m.If(walk_start & (walk_entry == k)):
                m.d.comb += head_next.eq(NIL)
            with m.If(self.link_en & (self.link_entry == k)):
                m.d.comb += head_next.eq(self.link_reg)
            with m.If(alloc_en & (alloc_entry == k)):
                m.d.comb += head_next.eq(self.alloc_reg)
            m.d.sync += t_head[k].eq(head_next)
            ready_next = Signal(name=f"ready_next{k}")
            m.d.comb += ready_next.eq(t_ready[k] | (resp_read & (resp_entry == k)))
            with m.If(alloc_en & (alloc_entry == k)):
                m.d.comb += ready_next.eq(0)
            m.d.sync += t_ready[k].eq(ready_next)
            with m.If(resp_read & (resp_entry == k)):
                m.d.sync += t_err[k].eq(resp.p.error)
            with m.If(alloc_en & (alloc_entry == k)):
                m.d.sync += [t_valid[k].eq(1), t_block[k].eq(self.alloc_block), t_err[k].eq(0)]
            # An entry with data and a list is walked (again if it is being walked).
            m.d.sync += t_walk[k].eq(ready_next & (head_next != NIL))
            with m.If(walk_start & (walk_entry == k)):
                m.d.sync += t_walking[k].eq(1)
            with m.If(self.walk_done & (cur_walk == k)):
                m.d.sync += t_walking[k].eq(0)
            with m.If(flush_fire & (flush_entry == k)):
                m.d.sync += [t_writing[k].eq(1), t_dirty[k].eq(0)]
            with m.If(resp_write & (resp_entry == k)):
                m.d.sync += t_writing[k].eq(0)
            with m.If(self.set_en & (cur_walk == k)):
                m.d.sync += t_dirty[k].eq(Mux(flush_fire & (flush_entry == k), 0, t_dirty[k]) | (1 << bytepos))
        with m.If(alloc_en):
            m.d.sync += vptr.eq(Mux(alloc_entry == T - 1, 0, alloc_entry + 1))
        with m.If(self.invalidate):
            m.d.sync += t_valid.eq(0)
        return m
