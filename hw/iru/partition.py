"""One IRU partition (IRU paper §3.2, Fig. 5; docs/iru.md, "RTL structure"):
prefetcher, classifier, ring stops, banked reordering hash and data replier, each a
component of its own; this module wires them and holds the lock (the entry the
replier or shipping takes from). The rules are the TLM's (:mod:`golden.iru.tlm`).

Structure (instance names in brackets)::

    op ─► [prefetch] IRUPrefetcher ─► [fetch_idx, fetch_sec] ─► [arbiter] ─► mem
              │ elements, one per cycle
              ▼
          [classifier] IRUClassifier: hash of the key block ─► bank queues │ ring queue
                                                              │            ▼
    ring_in ─► [insert] InsertSelect (ring first) ─► [bank{b}] HashBank    [ring_stop] ElementStop ─► ring_out
                                                       │ top, top2   ▲ ship ([shipper] Shipper, non-home)
    [entry_counts] EntryCounts (entry sizes, held, tokens, argmax); [remainders] RemainderTally (home)
                                                       ▼
    req ─► [req_stop] RequestStop ─► [reply_choice] ReplyChoice ─► [replier] ReplySender ─► reply
    rq_in ─► [req_stop] (request ring register) ─► rq_out   (forward what this partition cannot answer)

Banks: ``amaranth.lib.memory`` of ``sets / banks`` rows, one row = one entry of
``entry_size`` elements {index, secondary, position} written element by element
(write granularity); the entry sizes are registers (the argmax and the "full"
checks need them all at once). Reads are combinational: an insertion reads,
compares and writes its row in one cycle.
"""
from amaranth import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.iru import IRUConfig
from ..component import ConfiguredComponent
from ..fetch.engine import FetchEngine
from ..mem.arbiter import MemArbiter
from ..mem.port import MemPortSignature
from .layouts import FlitKind, IRUCommand, IRUElement, IRUReplyBeat, IRURequest, RingFlit, RingRequest
from .bank import HashBank
from .classifier import IRUClassifier
from .insert import InsertSelect
from .counts import EntryCounts, RemainderTally
from .prefetch import IRUPrefetcher
from .replier import ReplyChoice, ReplySender
from .ring_stop import ElementStop, RequestStop, Shipper


__all__ = ["IRUCommand", "IRURequest", "IRUReplyBeat", "RingFlit", "RingRequest", "FlitKind", "IRUPartition"]


class IRUPartition(ConfiguredComponent):
    """Partition ``index`` of an IRU (partition 0 is the home partition).

    Parameters
    ----------
    config : IRUConfig
    index : int

    Attributes
    ----------
    start : In(1)
        One cycle at the beginning of an operation (``op`` holds it from then on).
    op : In(IRUCommand)
    reject : In(1)
        With ``op``: the operation is a command error (an array runs past the top
        of the address space); the partition reads nothing and the home
        partition starts with ``op.n`` tokens, so every lane is answered disabled.
    flush : In(1)
        All input of all partitions is in the hashes (the top's AND of ``idle``).
    idle : Out(1)
        No input of this partition outside the hashes (prefetch done, queues and
        ring slot without elements).
    finished : Out(1)
        Home: every remainder arrived; others: remainder shipped.
    mem : Out(MemPortSignature)
    ring_in, ring_out : In/Out(RingFlit)
        The element ring (``ring_out`` is this partition's ring register).
    rq_in, rq_out : In/Out(RingRequest)
        The request ring.
    req : In(stream(IRURequest))
    reply : Out(stream(IRUReplyBeat))
    held, tokens : Out
        Elements in the hash; disabled-thread tokens (filtered or merged elements
        not yet replied).
    mem_error, forwarded, ring_put : Out(1)
        A memory error in this operation; a request went onto the request ring
        this cycle; an element or remainder flit entered the ring this cycle.
    """

    def __init__(self, config: IRUConfig, index: int):
        if not isinstance(config, IRUConfig):
            raise TypeError(f"IRUPartition needs an IRUConfig, not {config!r}")
        if not 0 <= index < config.partitions:
            raise ValueError(f"partition index must be in [0, {config.partitions - 1}], not {index!r}")
        self._index = index
        c = config
        super().__init__(config, {
            "start": In(1), "op": In(IRUCommand(c)), "reject": In(1), "flush": In(1),
            "idle": Out(1), "finished": Out(1),
            "mem": Out(MemPortSignature(c.port)),
            "ring_in": In(RingFlit(c)), "ring_out": Out(RingFlit(c)),
            "rq_in": In(RingRequest(c)), "rq_out": Out(RingRequest(c)),
            "req": In(stream.Signature(IRURequest(c))), "reply": Out(stream.Signature(IRUReplyBeat(c))),
            "held": Out(range(c.sets * c.entry_size + 1)), "tokens": Out(c.count_width + 1),
            "mem_error": Out(1), "forwarded": Out(1), "ring_put": Out(1),
        })

    def elaborate(self, platform):
        c = self._config
        p = self._index
        P, B, E = c.partitions, c.banks, c.entry_size
        sb, bb = c.set_bits, c.bank_bits
        home = p == 0
        m = Module()
        op = self.op

        # ================================================================ prefetcher
        m.submodules.fetch_idx = f_idx = FetchEngine(c.fetch)
        m.submodules.fetch_sec = f_sec = FetchEngine(c.fetch)
        m.submodules.arbiter = arb = MemArbiter(c.port, [c.fetch.port, c.fetch.port])
        wiring.connect(m, f_idx.mem, arb.i0)
        wiring.connect(m, f_sec.mem, arb.i1)
        wiring.connect(m, arb.o, wiring.flipped(self.mem))

        m.submodules.prefetch = pf = IRUPrefetcher(c, p)
        m.d.comb += [pf.start.eq(self.start), pf.op.eq(op), pf.reject.eq(self.reject), self.mem_error.eq(pf.mem_error)]
        wiring.connect(m, pf.idx_cmd, f_idx.cmd)
        wiring.connect(m, pf.sec_cmd, f_sec.cmd)
        wiring.connect(m, f_idx.o, pf.idx_data)
        wiring.connect(m, f_sec.o, pf.sec_data)

        # ================================================================ classifier
        m.submodules.classifier = cl = IRUClassifier(c, p)
        m.d.comb += cl.op.eq(op)
        wiring.connect(m, pf.o, cl.i)
        bank_q = [getattr(cl, f"bank{b}") for b in range(B)]
        ring_q = cl.ring if P > 1 else None

        # ================================================================ hash state
        m.submodules.entry_counts = ec = EntryCounts(c)
        held, tokens, best_set, best_cnt = ec.held, ec.tokens, ec.best_set, ec.best_cnt
        m.d.comb += [self.held.eq(held), self.tokens.eq(tokens)]
        lock_valid, lock_set = Signal(), Signal(max(1, sb))      # the entry the replier / shipping takes from
        lock_cnt = ec.pop_cnt
        top_slot, top2_slot = Signal(range(E)), Signal(range(E))
        m.d.comb += [top_slot.eq(lock_cnt - 1), top2_slot.eq(lock_cnt - 2)]

        banks = [HashBank(c) for _ in range(B)]
        for b, bank in enumerate(banks):
            m.submodules[f"bank{b}"] = bank

        # ---------------------------------------------------------------- insertions
        # The replier offers the locked entry's top (``offer``) and pops it when taken
        # (``pop``): an element appended to that entry then takes the popped slot.
        rin = self.ring_in
        m.submodules.replier = snd = ReplySender(c, home)
        npop = snd.npop             # live lanes popped from the locked entry this cycle (0, 1, 2)
        m.submodules.insert = ins = InsertSelect(c, p)
        m.d.comb += [ins.ring_in.eq(rin), ins.filter.eq(op.op), ins.counts.eq(ec.counts), ins.lock_set.eq(lock_set),
                     ins.offer.eq(snd.offer), ins.pop.eq(snd.pop), ins.npop.eq(npop)]
        appends = []        # (valid, set) per bank
        merges = []
        for b in range(B):
            wiring.connect(m, bank_q[b], getattr(ins, f"q{b}"))
            bank = banks[b]
            m.d.comb += [bank.filter.eq(op.op), bank.go.eq(ins.go[b]), bank.ins.eq(ins.ins[b]),
                         bank.ins_set.eq(ins.ins_set[b]), bank.count.eq(ins.count[b]), bank.under.eq(ins.under[b]),
                         bank.rd_set.eq(lock_set), bank.rd_slot.eq(top_slot), bank.rd_slot2.eq(top2_slot)]
            appends.append((ins.go[b] & ~bank.hit, ins.ins_set[b]))
            merges.append(ins.go[b] & bank.hit)
        ring_taken = ins.ring_taken

        # ---------------------------------------------------------------- home: remainders
        mark_here = Signal()
        final_ok = Signal()
        if home:
            if P > 1:
                m.d.comb += mark_here.eq(rin.kind == FlitKind.MARK)
            m.submodules.remainders = rt = RemainderTally(c)
            m.d.comb += [rt.start.eq(self.start), rt.mark.eq(mark_here), rt.mark_count.eq(rin.e.pos),
                         rt.ship_got.eq(ring_taken & (rin.kind == FlitKind.SHIP) if P > 1 else 0),
                         rt.flush.eq(self.flush), final_ok.eq(rt.final_ok)]

        # ================================================================ replier
        if not home:                # at the end, the remainder goes home
            m.submodules.shipper = sh = Shipper(c)
        m.submodules.req_stop = rs = RequestStop(c)
        wiring.connect(m, wiring.flipped(self.req), rs.req)
        m.d.comb += [rs.ring_in.eq(self.rq_in), self.rq_out.eq(rs.ring_out), self.forwarded.eq(rs.forwarded)]

        active = C(1, 1) if home else sh.active

        m.submodules.reply_choice = ch = ReplyChoice(c, home)
        m.d.comb += [ch.best_cnt.eq(best_cnt), ch.tokens.eq(tokens), ch.held.eq(held), ch.flush.eq(self.flush),
                     ch.final_ok.eq(final_ok), ch.active.eq(active), ch.idle.eq(~snd.busy), ch.ring.eq(self.rq_in),
                     ch.head_valid.eq(rs.head_valid), ch.head.eq(rs.head), ch.head_timed.eq(rs.head_timed)]
        take_rq, take_hd = ch.take_ring, ch.take_head
        m.d.comb += [rs.take.eq(take_hd), rs.head_ok.eq(ch.head_ok), rs.ring_taken.eq(take_rq)]

        # Reply / ship reads: the locked entry's top element and the one below it.
        row, w1, w2 = Signal(E * c.index_bits), Signal(32 + c.count_width), Signal(32 + c.count_width)
        with m.Switch(lock_set[:bb] if bb else C(0, 1)):
            for b in range(B):
                with m.Case(b):
                    m.d.comb += [row.eq(banks[b].rd_row), w1.eq(banks[b].rd_word), w2.eq(banks[b].rd_word2)]
        idxs = Array(row[k * c.index_bits:(k + 1) * c.index_bits] for k in range(E))
        top, top2 = Signal(IRUElement(c)), Signal(IRUElement(c))
        m.d.comb += [top.eq(Cat(idxs[top_slot], w1)), top2.eq(Cat(idxs[top2_slot], w2))]

        m.d.comb += [snd.take.eq(take_rq | take_hd), snd.warp.eq(ch.warp), snd.threads.eq(ch.threads),
                     snd.kind.eq(ch.kind), snd.live.eq(ch.live), snd.lock_cnt.eq(lock_cnt), snd.top.eq(top),
                     snd.top2.eq(top2)]
        wiring.connect(m, snd.reply, wiring.flipped(self.reply))
        dis_beat = snd.dis
        with m.If(snd.bubble):
            m.d.sync += lock_set.eq(best_set)
        with m.If(snd.done):
            m.d.sync += lock_valid.eq(0)
        with m.If(take_rq | take_hd):
            m.d.sync += [lock_valid.eq(ch.live != 0), lock_set.eq(best_set)]

        # ---------------------------------------------------------------- element ring out, shipping
        ship_pop = put = mark_sent = C(0, 1)
        if P > 1:
            m.submodules.ring_stop = es = ElementStop(c, home)
            wiring.connect(m, ring_q, es.queue)
            m.d.comb += [es.ring_in.eq(rin), es.consumed.eq(ring_taken | mark_here), self.ring_out.eq(es.ring_out),
                         es.ship_ready.eq(lock_valid & (lock_cnt != 0)), es.ship_more.eq(held != 0),
                         es.ship_set.eq(lock_set), es.ship_e.eq(top), es.tokens.eq(tokens)]
            ship_pop, put, mark_sent = es.ship_pop, es.put, es.mark
            with m.If(es.relock):
                m.d.sync += [lock_set.eq(best_set), lock_valid.eq(1)]
            with m.If(es.mark):
                m.d.sync += lock_valid.eq(0)
        m.d.comb += self.ring_put.eq(put)
        if not home:
            m.d.comb += [sh.start.eq(self.start), sh.flush.eq(self.flush), sh.idle.eq(~snd.busy & ~take_rq & ~take_hd),
                         sh.held.eq(held), sh.tokens.eq(tokens), sh.ship_pop.eq(ship_pop), sh.mark.eq(mark_sent),
                         es.shipping.eq(sh.shipping), es.shipped.eq(sh.shipped)]
            with m.If(sh.begin):    # less than a warp left once all input is in
                m.d.sync += [lock_valid.eq(held != 0), lock_set.eq(best_set)]

        # ---------------------------------------------------------------- counters
        m.d.comb += [ec.start.eq(self.start), ec.tokens_init.eq(Mux(self.reject, op.n, 0) if home else 0),
                     ec.app_valid.eq(Cat(*[v for v, _ in appends])), ec.app_set.eq(Cat(*[st for _, st in appends])),
                     ec.merges.eq(sum(merges)), ec.pop_set.eq(lock_set), ec.n_pop.eq(npop + ship_pop),
                     ec.dis.eq(dis_beat), ec.tokens_clear.eq(mark_sent)]
        if home and P > 1:
            m.d.comb += ec.tokens_add.eq(Mux(mark_here, rin.e.sec, 0))

        # ---------------------------------------------------------------- status to the top
        m.d.comb += self.idle.eq(pf.done & cl.empty &
                                 ((self.ring_out.kind != FlitKind.ELEM) if P > 1 else C(1, 1)))
        m.d.comb += self.finished.eq(final_ok if home else sh.done)
        return m

