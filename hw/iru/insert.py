"""Which element each bank of the IRU partition's hash inserts this cycle (IRU paper
§3.2, Fig. 5: "elements from the ring are inserted first"; docs/iru.md, "Hash")."""
from amaranth import *
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out

from golden.iru import FILTER_CODES, IRUConfig
from .layouts import BankEntry, ConfiguredComponent, FlitKind, IRUElement, RingFlit

__all__ = ["InsertSelect"]


class InsertSelect(ConfiguredComponent):
    """Insertions of partition ``index`` (comb). A ring flit for this partition (an
    ELEM flit with ``dest`` = ``index``; on the home partition also a SHIP flit) goes
    into the bank of its local set; else each bank takes the head of its queue
    (``q0``, ``q1``, ...). Either only when its entry is insertable: not full
    (``counts``), and not the locked entry (``lock_set``) while the replier
    ``offer``-s its top, unless that lane is taken (``pop``) and there is no filter
    (``filter``: a merge could hit the offered lane).

    Per bank ``b``: ``go[b]`` (an insertion), ``ins[b]`` and ``ins_set[b]`` (the
    element and its local set), ``count[b]`` (that entry's elements) and
    ``under[b]`` (its top lanes leaving this cycle, ``npop``, when it is the locked
    entry); ``ring_taken``: the ring flit went in.
    """

    def __init__(self, config: IRUConfig, index: int):
        self._index = index
        c = config
        B, SW, sw = c.banks, c.slot_bits, max(1, c.set_bits)
        ports = {"ring_in": In(RingFlit(c)), "filter": In(2), "counts": In(data.ArrayLayout(SW, c.sets)),
                 "lock_set": In(sw), "offer": In(1), "pop": In(1), "npop": In(2),
                 "go": Out(B), "ins": Out(data.ArrayLayout(IRUElement(c), B)), "ins_set": Out(data.ArrayLayout(sw, B)),
                 "count": Out(data.ArrayLayout(SW, B)), "under": Out(data.ArrayLayout(2, B)), "ring_taken": Out(1)}
        for b in range(B):
            ports[f"q{b}"] = In(stream.Signature(BankEntry(c)))
        super().__init__(config, ports)

    def elaborate(self, platform):
        c = self._config
        p = self._index
        P, S, B, E = c.partitions, c.sets, c.banks, c.entry_size
        sb, bb = c.set_bits, c.bank_bits
        m = Module()
        cnt_arr = Array(self.counts[s] for s in range(S))
        lock_set = self.lock_set
        rin = self.ring_in
        ring_here = Signal()
        if P > 1:
            m.d.comb += ring_here.eq(((rin.kind == FlitKind.ELEM) & (rin.dest == p)) |
                                     ((rin.kind == FlitKind.SHIP) & (p == 0)))
        rin_set = rin.set[:sb] if sb else C(0, 1)
        filt_on = self.filter != FILTER_CODES["none"]

        def insertable(s):
            return (cnt_arr[s] != E) & ~(self.offer & (lock_set == s) & (filt_on | ~self.pop))

        takes = []
        for b in range(B):
            q = getattr(self, f"q{b}")
            take_ring = Signal(name=f"take_ring{b}")
            if P > 1:
                m.d.comb += take_ring.eq(ring_here & ((rin_set[:bb] if bb else C(0, 1)) == b) & insertable(rin_set))
            take_local = Signal(name=f"take_local{b}")
            m.d.comb += [take_local.eq(~take_ring & q.valid & insertable(q.p.set)), q.ready.eq(take_local)]
            ins_set = self.ins_set[b]
            m.d.comb += [self.ins[b].eq(Mux(take_ring, rin.e, q.p.e)), ins_set.eq(Mux(take_ring, rin_set, q.p.set)),
                         self.go[b].eq(take_ring | take_local), self.count[b].eq(cnt_arr[ins_set]),
                         self.under[b].eq(Mux(lock_set == ins_set, self.npop, 0))]
            takes.append(take_ring)
        m.d.comb += self.ring_taken.eq(Cat(*takes).any())
        return m
