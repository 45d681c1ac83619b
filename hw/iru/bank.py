"""A bank of the IRU partition's reordering hash (IRU paper §3.2, Fig. 5 "hash", and
§4 (filtering and merging); docs/iru.md, "Hash"): its entries' elements, one
insertion a cycle (append, or merge with an equal index under a filter) and
combinational reads of an entry's top two slots for the replier and shipping."""
from amaranth import *
from amaranth.lib import memory
from amaranth.lib.wiring import In, Out

from golden.iru import FILTER_CODES, IRUConfig
from .fadd import fadd32
from .layouts import ConfiguredComponent, IRUElement

__all__ = ["HashBank"]


class HashBank(ConfiguredComponent):
    """Bank ``index`` of a partition's hash: ``rows = sets / banks`` entries of
    ``entry_size`` slots; local set ``s`` lives in bank ``s mod banks``, row
    ``s / banks``. The entries' indices are one memory row per entry (``entry_idx``,
    written slot by slot), their {secondary, position} one word per slot
    (``slot_data``); reads are combinational, so an insertion reads, compares and
    writes its row in one cycle.

    Insertion (``go``): element ``ins`` into the entry of local set ``ins_set``, which
    holds ``count`` elements, ``under`` of them (its top) leaving this cycle. With a
    filter (``filter``: golden.iru.FILTER_CODES) an element whose index equals one in
    the entry (the lowest such slot) merges into it (``hit``): ``min`` keeps the
    smaller secondary value and its position, ``fadd`` adds the secondary values
    (binary32) and keeps the first position. Otherwise it is appended in slot
    ``count - under``.

    Reads, of the entry of local set ``rd_set``: its row of indices (``rd_row``,
    ``entry_size`` fields of ``index_bits``) and the {secondary, position} words
    (``rd_word``, ``rd_word2``) of slots ``rd_slot`` and ``rd_slot2``. The slot's
    index is picked from the row after the bank (the partition picks the locked
    entry's bank first, so the ``entry_size``-way pick is not repeated per bank).
    """

    def __init__(self, config: IRUConfig):
        c = config
        sw = max(1, c.set_bits)
        super().__init__(config, {
            "filter": In(2), "go": In(1), "ins": In(IRUElement(c)), "ins_set": In(sw), "count": In(c.slot_bits),
            "under": In(2), "hit": Out(1),
            "rd_set": In(sw), "rd_slot": In(range(c.entry_size)), "rd_slot2": In(range(c.entry_size)),
            "rd_row": Out(c.entry_size * c.index_bits), "rd_word": Out(32 + c.count_width),
            "rd_word2": Out(32 + c.count_width),
        })

    def elaborate(self, platform):
        c = self._config
        E, SW, IB, bb = c.entry_size, c.slot_bits, c.index_bits, c.bank_bits
        m = Module()
        DW = 32 + c.count_width
        m.submodules.entry_idx = im = memory.Memory(shape=E * IB, depth=c.rows, init=[])
        m.submodules.slot_data = dm = memory.Memory(shape=DW, depth=c.rows * E, init=[])
        iw = im.write_port(granularity=IB)
        ip = im.read_port(domain="comb")       # insertion: compare
        ir = im.read_port(domain="comb")       # replies, shipping
        dw = dm.write_port()
        dp = dm.read_port(domain="comb")       # insertion: merge
        dr = dm.read_port(domain="comb")       # replies, shipping
        dr2 = dm.read_port(domain="comb")      # replies: the second lane
        slot_bits = (E - 1).bit_length()

        def row_of(s):
            return s[bb:] if c.rows > 1 else C(0, 1)

        def slot_addr(slot, s):
            return Cat(slot, row_of(s)) if c.rows > 1 else slot

        ins, ins_set, n_here, go = self.ins, self.ins_set, self.count, self.go
        filt_on = self.filter != FILTER_CODES["none"]
        is_min = self.filter == FILTER_CODES["min"]
        m.d.comb += ip.addr.eq(row_of(ins_set))
        row = ip.data
        match = Signal(E)
        for k in range(E):
            m.d.comb += match[k].eq((k < n_here) & (row[k * IB:(k + 1) * IB] == ins.idx))
        hit = self.hit
        m.d.comb += hit.eq(filt_on & match.any())
        hit_k = Signal(range(E))
        for k in reversed(range(E)):
            with m.If(match[k]):
                m.d.comb += hit_k.eq(k)
        tail = Signal(SW)
        m.d.comb += tail.eq(n_here - self.under)
        slot = Signal(slot_bits)
        m.d.comb += slot.eq(Mux(hit, hit_k, tail))
        m.d.comb += dp.addr.eq(slot_addr(slot, ins_set))
        old_sec, old_pos = dp.data[:32], dp.data[32:]
        added = fadd32(m, old_sec, ins.sec, name="fadd")
        new_min = ins.sec < old_sec
        w_sec = Signal(32)
        w_pos = Signal(c.count_width)
        with m.If(~hit):
            m.d.comb += [w_sec.eq(ins.sec), w_pos.eq(ins.pos)]
        with m.Elif(is_min):
            m.d.comb += [w_sec.eq(Mux(new_min, ins.sec, old_sec)), w_pos.eq(Mux(new_min, ins.pos, old_pos))]
        with m.Else():
            m.d.comb += [w_sec.eq(added), w_pos.eq(old_pos)]
        m.d.comb += [dw.addr.eq(dp.addr), dw.data.eq(Cat(w_sec, w_pos)), dw.en.eq(go),
                     iw.addr.eq(row_of(ins_set)), iw.data.eq(ins.idx.replicate(E)),
                     iw.en.eq(Mux(go & ~hit, C(1, E) << tail, 0))]

        # Reads: the entry's row of indices, two slots' {secondary, position}.
        rd = self.rd_set
        m.d.comb += [ir.addr.eq(row_of(rd)), dr.addr.eq(slot_addr(self.rd_slot, rd)),
                     dr2.addr.eq(slot_addr(self.rd_slot2, rd)),
                     self.rd_row.eq(ir.data), self.rd_word.eq(dr.data), self.rd_word2.eq(dr2.data)]
        return m
