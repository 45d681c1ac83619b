"""The enhanced SCU's Filtering/Grouping unit (SCU paper §4.1–4.3), with its hashes
in on-chip memory (``amaranth.lib.memory``). The rules are the TLM's,
:mod:`golden.scu.hashes`; docs/scu.md states them.

Both hashes keep one memory row per set: every way's entry plus the set's
round-robin pointer. An element's set is read in one cycle and written back in
the next, when the element's result is taken; the read port is transparent to
the write port, so the next element may read the same set in that cycle. The
filter's rows (entries and pointers) persist until a clear; the grouping
flush leaves every row zero.
"""
from amaranth import *
from amaranth.lib import data, memory, stream
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from golden.scu import SCUConfig
from ..component import ConfiguredComponent

__all__ = ["fold", "FilterUnit", "GroupUnit"]


def fold(key: Value, bits: int, key_width: int) -> Value:
    """XOR of the ``bits``-wide chunks of ``key`` (golden.scu.hashes.fold)."""
    if bits == 0:
        return C(0, 1)
    h = C(0, bits)
    for shift in range(0, key_width, bits):
        h = h ^ key[shift:min(shift + bits, key_width)]
    return h


def _victim(m: Module, valids: list, ptr: Value, ways: int, name: str):
    """Lowest invalid way, else ``ptr``; and whether the pointer advances."""
    victim = Signal(range(max(ways, 2)), name=f"{name}_victim")
    any_free = Signal(name=f"{name}_free")
    m.d.comb += [victim.eq(ptr), any_free.eq(0)]
    for w in reversed(range(ways)):
        with m.If(~valids[w]):
            m.d.comb += [victim.eq(w), any_free.eq(1)]
    return victim, ~any_free


class FilterEntry(data.StructLayout):
    def __init__(self):
        super().__init__({"valid": 1, "key": 32, "cost": 32})


class FilterUnit(ConfiguredComponent):
    """Filtering by unique element / unique best cost, one element per cycle.

    Attributes
    ----------
    i : In(stream({key, cost, probe, best}))
        ``probe = 0``: the element is not looked up and gets ``keep = 0``.
    o : Out(stream({keep}))
        One result per element, in order.
    clear : In(1)
        Pulse: invalidate every entry (takes ``filter_sets`` cycles; ``busy`` meanwhile).
    busy : Out(1)
        Clearing, or an element in flight.
    """

    def __init__(self, config: SCUConfig):
        super().__init__(config, {
            "i": In(stream.Signature(data.StructLayout({"key": 32, "cost": 32, "probe": 1, "best": 1}))),
            "o": Out(stream.Signature(data.StructLayout({"keep": 1}))),
            "clear": In(1),
            "busy": Out(1),
        })
        # The hash, its ports and the pipeline's registers: attributes for the formal
        # harness's invariants (hw/scu/formal.py), which reads the hash's sets.
        S, WAYS = config.filter_sets, config.filter_ways
        sb = S.bit_length() - 1
        self.row = data.StructLayout({"e": data.ArrayLayout(FilterEntry(), WAYS),
                                      "ptr": max(1, ceil_log2(WAYS))})
        self.mem = memory.Memory(shape=self.row, depth=S, init=[])
        self.mem._MustUse__silence = True   # elaborated with the unit (which warns if it is not)
        self.wp = self.mem.write_port()
        self.rp = self.mem.read_port(domain="sync", transparent_for=(self.wp,))
        self.clearing = Signal()
        self.ccount = Signal(range(S + 1))
        self.v1 = Signal()
        self.key1, self.cost1 = Signal(32, name="key1"), Signal(32, name="cost1")
        self.probe1, self.best1 = Signal(name="probe1"), Signal(name="best1")
        self.set1 = Signal(max(sb, 1))

    def elaborate(self, platform):
        cfg = self._config
        m = Module()
        S, WAYS = cfg.filter_sets, cfg.filter_ways
        sb = S.bit_length() - 1
        row = self.row
        m.submodules.mem = self.mem
        wp, rp = self.wp, self.rp

        clearing, ccount, v1 = self.clearing, self.ccount, self.v1
        key1, cost1, probe1, best1, set1 = self.key1, self.cost1, self.probe1, self.best1, self.set1
        m.d.comb += self.busy.eq(clearing | v1)

        i, o = self.i, self.o
        fire = Signal()
        m.d.comb += [fire.eq(o.valid & o.ready), i.ready.eq(~clearing & (~v1 | fire))]
        load = Signal()
        m.d.comb += load.eq(i.valid & i.ready)
        in_set = fold(i.p.key, sb, 32)
        m.d.comb += [rp.addr.eq(in_set), rp.en.eq(load)]
        with m.If(load):
            m.d.sync += [v1.eq(1), key1.eq(i.p.key), cost1.eq(i.p.cost), probe1.eq(i.p.probe),
                         best1.eq(i.p.best), set1.eq(in_set)]
        with m.Elif(fire):
            m.d.sync += v1.eq(0)

        # ---------------------------------------------------------------- lookup
        cur = rp.data
        hits = [Signal(name=f"hit{w}") for w in range(WAYS)]
        for w in range(WAYS):
            m.d.comb += hits[w].eq(cur.e[w].valid & (cur.e[w].key == key1))
        hit = Signal()
        hit_way = Signal(range(max(WAYS, 2)))
        for w in reversed(range(WAYS)):
            with m.If(hits[w]):
                m.d.comb += [hit.eq(1), hit_way.eq(w)]
        victim, advance = _victim(m, [cur.e[w].valid for w in range(WAYS)], cur.ptr, WAYS, "f")
        better = Signal()
        m.d.comb += better.eq(cost1 < cur.e[hit_way].cost)
        keep = Signal()
        new = Signal(row)
        m.d.comb += new.eq(cur)
        with m.If(~probe1):
            m.d.comb += keep.eq(0)
        with m.Elif(hit):
            with m.If(best1 & better):
                m.d.comb += [keep.eq(1), new.e[hit_way].cost.eq(cost1)]
        with m.Else():
            m.d.comb += [keep.eq(1), new.e[victim].valid.eq(1), new.e[victim].key.eq(key1),
                         new.e[victim].cost.eq(Mux(best1, cost1, 0))]
            with m.If(advance):
                m.d.comb += new.ptr.eq(Mux(cur.ptr == WAYS - 1, 0, cur.ptr + 1))
        m.d.comb += [o.valid.eq(v1), o.p.keep.eq(keep)]

        # ---------------------------------------------------------------- write back / clear
        with m.If(clearing):
            m.d.comb += [wp.en.eq(1), wp.addr.eq(ccount), wp.data.eq(0)]
            m.d.sync += ccount.eq(ccount + 1)
            with m.If(ccount == S - 1):
                m.d.sync += clearing.eq(0)
        with m.Else():
            m.d.comb += [wp.en.eq(fire & probe1), wp.addr.eq(set1), wp.data.eq(new)]
        with m.If(self.clear & ~clearing):
            m.d.sync += [clearing.eq(1), ccount.eq(0)]
        return m


class GroupUnit(ConfiguredComponent):
    """Grouping by memory block: elements in, their positions out in grouped order.

    Attributes
    ----------
    i : In(stream({key, pos}))
        ``key``: the element's memory block number; ``pos``: its position.
    o : Out(stream({data[width], n}))
        Positions in grouped order, up to ``width`` per beat.
    flush : In(1)
        Pulse, once every element was sent: emit what the hash holds, set by set,
        way by way, writing an all-zero row after each set (entries invalid,
        round-robin pointer 0, as ``GroupHash.flush``); ``busy`` falls when done.
    clear : In(1)
        Pulse: invalidate every entry without emitting (after reset).
    busy : Out(1)
    """

    def __init__(self, config: SCUConfig):
        W, CW = config.width, config.count_width
        super().__init__(config, {
            "i": In(stream.Signature(data.StructLayout({"key": config.group_tag_bits, "pos": CW}))),
            "o": Out(stream.Signature(data.StructLayout({"data": data.ArrayLayout(CW, W), "n": range(W + 1)}))),
            "flush": In(1),
            "clear": In(1),
            "busy": Out(1),
        })
        # The hash, its ports and the registers: attributes for the formal harness's
        # invariants (hw/scu/formal.py, GroupInductionHarness), which reads the hash.
        S, WAYS, G = config.group_sets, config.group_ways, config.group_size
        TB = config.group_tag_bits
        sb = S.bit_length() - 1
        pb = max(1, ceil_log2(WAYS))
        entry = data.StructLayout({"valid": 1, "tag": TB, "count": range(G + 1), "pos": data.ArrayLayout(CW, G)})
        self.row = data.StructLayout({"e": data.ArrayLayout(entry, WAYS), "ptr": pb})
        self.mem = memory.Memory(shape=self.row, depth=S, init=[])
        self.mem._MustUse__silence = True   # elaborated with the unit (which warns if it is not)
        self.wp = self.mem.write_port()
        self.rp = self.mem.read_port(domain="sync", transparent_for=(self.wp,))
        self.ebuf = Signal(data.ArrayLayout(CW, G), name="ebuf")    # the emitter's positions
        self.eleft = Signal(range(G + 1), name="eleft")             # ... still to send
        self.v1 = Signal(name="v1")                                 # an element in stage 1
        self.key1, self.pos1 = Signal(TB, name="key1"), Signal(CW, name="pos1")
        self.set1 = Signal(max(sb, 1), name="set1")
        self.flushing = Signal(name="flushing")
        self.freq = Signal(name="freq")           # flush requested, waiting for the last element
        self.clearing = Signal(name="clearing")
        self.fset = Signal(range(S + 1), name="fset")
        self.fway = Signal(range(WAYS + 1), name="fway")
        self.fread = Signal(name="fread")         # the row of fset is on rp.data

    def elaborate(self, platform):
        cfg = self._config
        m = Module()
        S, WAYS, G, W, CW = cfg.group_sets, cfg.group_ways, cfg.group_size, cfg.width, cfg.count_width
        TB = cfg.group_tag_bits
        sb = S.bit_length() - 1
        pb = max(1, ceil_log2(WAYS))
        row = self.row
        m.submodules.mem = self.mem
        wp, rp = self.wp, self.rp

        # ---------------------------------------------------------------- emitter
        ebuf, eleft = self.ebuf, self.eleft
        o = self.o
        ofire = Signal()
        m.d.comb += [o.valid.eq(eleft != 0), o.p.n.eq(Mux(eleft > W, W, eleft)), ofire.eq(o.valid & o.ready)]
        for k in range(W):
            m.d.comb += o.p.data[k].eq(ebuf[k] if k < G else 0)
        emit_load = Signal()
        emit_pos = Signal(data.ArrayLayout(CW, G))
        emit_n = Signal(range(G + 1))
        with m.If(emit_load):
            m.d.sync += [ebuf.eq(emit_pos), eleft.eq(emit_n)]
        with m.Elif(ofire):
            m.d.sync += [ebuf.eq(ebuf.as_value() >> (CW * W)), eleft.eq(eleft - o.p.n)]
        emit_idle = Signal()
        m.d.comb += emit_idle.eq((eleft == 0) | (ofire & (eleft <= W)))

        # ---------------------------------------------------------------- elements
        v1, key1, pos1, set1 = self.v1, self.key1, self.pos1, self.set1
        flushing, freq, clearing = self.flushing, self.freq, self.clearing
        fset, fway, fread = self.fset, self.fway, self.fread
        i = self.i
        fire = Signal()
        m.d.comb += [fire.eq(v1 & emit_idle), i.ready.eq(~flushing & ~clearing & ~freq & (~v1 | fire))]
        load = Signal()
        m.d.comb += load.eq(i.valid & i.ready)
        in_set = fold(i.p.key, sb, TB)
        with m.If(load):
            m.d.sync += [v1.eq(1), key1.eq(i.p.key), pos1.eq(i.p.pos), set1.eq(in_set)]
        with m.Elif(fire):
            m.d.sync += v1.eq(0)

        cur = rp.data
        hit = Signal()
        hit_way = Signal(range(max(WAYS, 2)))
        for w in reversed(range(WAYS)):
            with m.If(cur.e[w].valid & (cur.e[w].tag == key1)):
                m.d.comb += [hit.eq(1), hit_way.eq(w)]
        victim, advance = _victim(m, [cur.e[w].valid for w in range(WAYS)], cur.ptr, WAYS, "g")
        way = Signal(range(max(WAYS, 2)))
        m.d.comb += way.eq(Mux(hit, hit_way, victim))
        old = cur.e[way]
        new = Signal(row)
        m.d.comb += new.eq(cur)
        base_count = Signal(range(G + 1))
        m.d.comb += base_count.eq(Mux(hit, old.count, 0))
        # The entry after adding this element.
        grown = Signal(data.ArrayLayout(CW, G))
        m.d.comb += grown.eq(Mux(hit, old.pos.as_value(), 0))
        for k in range(G):
            with m.If(base_count == k):
                m.d.comb += grown[k].eq(pos1)
        full = Signal()
        m.d.comb += full.eq(base_count + 1 == G)
        m.d.comb += [new.e[way].tag.eq(key1), new.e[way].count.eq(Mux(full, 0, base_count + 1)),
                     new.e[way].valid.eq(~full), new.e[way].pos.eq(Mux(full, 0, grown.as_value()))]
        with m.If(~hit & advance):
            m.d.comb += new.ptr.eq(Mux(cur.ptr == WAYS - 1, 0, cur.ptr + 1))

        # ---------------------------------------------------------------- flush
        fentry = cur.e[fway[:max(pb, 1)] if WAYS > 1 else 0]
        m.d.comb += self.busy.eq(v1 | flushing | freq | clearing | (eleft != 0))
        with m.If(clearing):
            m.d.comb += [wp.en.eq(1), wp.addr.eq(fset), wp.data.eq(0)]
            m.d.sync += fset.eq(fset + 1)
            with m.If(fset == S - 1):
                m.d.sync += clearing.eq(0)
        with m.Elif(flushing):
            m.d.comb += [rp.addr.eq(fset), rp.en.eq(~fread)]
            with m.If(~fread):
                m.d.sync += [fread.eq(1), fway.eq(0)]
            with m.Elif(fway < WAYS):
                with m.If(~fentry.valid):
                    m.d.sync += fway.eq(fway + 1)
                with m.Elif(emit_idle):
                    m.d.comb += [emit_load.eq(1), emit_pos.eq(fentry.pos), emit_n.eq(fentry.count)]
                    m.d.sync += fway.eq(fway + 1)
            with m.Else():
                m.d.comb += [wp.en.eq(1), wp.addr.eq(fset), wp.data.eq(0)]
                m.d.sync += [fread.eq(0), fset.eq(fset + 1)]
                with m.If(fset == S - 1):
                    m.d.sync += flushing.eq(0)
        with m.Else():
            m.d.comb += [rp.addr.eq(in_set), rp.en.eq(load)]
            m.d.comb += [wp.en.eq(fire), wp.addr.eq(set1), wp.data.eq(new)]
            with m.If(fire):
                with m.If(full):
                    m.d.comb += [emit_load.eq(1), emit_pos.eq(grown), emit_n.eq(G)]
                with m.Elif(~hit & old.valid):
                    m.d.comb += [emit_load.eq(1), emit_pos.eq(old.pos), emit_n.eq(old.count)]
            with m.If((self.flush | freq) & ~v1):
                m.d.sync += [flushing.eq(1), freq.eq(0), fset.eq(0), fread.eq(0)]
            with m.Elif(self.flush):
                m.d.sync += freq.eq(1)
            with m.If(self.clear):
                m.d.sync += [clearing.eq(1), fset.eq(0)]
        return m
