"""Formal harness of the enhanced SCU's filtering unit (SCU paper §4.2, unique
element and unique best cost; docs/verification.md, "Formal"): the properties of
:class:`~hw.scu.hashes.FilterUnit` as Amaranth ``Assert`` / ``Assume`` /
``Cover`` statements around it (never in the synthesized design), checked by
``graphunits prove --unit scu_filter`` (:mod:`synth.prove`).

Configuration: the SCU's ``tiny`` preset with a filter of 2 sets of 2 ways
(the properties do not depend on the sizes; a clear takes a cycle per set). The harness follows one key ``watch``
that the solver picks (held for the whole trace). Environment (``Assume``):
reset low; elements held until taken (stream rule); ``clear`` only while the
unit is idle and no element is offered (the SCU pulses it in its IDLE state);
results taken freely; the elements' keys differ from the watched one in their
low 8 bits only and their costs lie below 256 (every set, hit, miss and
eviction is still reachable: the fold takes the set from every 2-bit chunk; the
solver's time at depth 10 drops from over 10 minutes to seconds). Properties:

* the results obey the stream rule; exactly one result per element, in order
  (a result is offered exactly while an element is in flight);
* ``probe = 0``: the element is not looked up and gets ``keep = 0``;
* no false drop: an element of the watched key is kept unless that key was
  kept since the last clear (a key can only be found after it was inserted);
* duplicates: an element of the watched key right after another one (no other
  element between them) is dropped, unless it is a best-cost probe;
* best cost: a best-cost element of the watched key right after a best-cost
  element of that key with a cost at most its own is dropped (the stored cost
  is at most the earlier one's);
* covers: a duplicate dropped; a better cost kept after a hit; the watched key
  kept again after a clear.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Cover, Elaboratable, Signal

from golden.scu import SCUConfig

from ..formal import fixed, flag, harness_module, stream_rule
from .hashes import FilterUnit, GroupUnit

__all__ = ["FilterHarness", "FilterInductionHarness", "GroupHarness", "GroupInductionHarness"]


class FilterHarness(Elaboratable):
    """``filter_cls``: the design under test's class (a variant, for the tests of
    the harness)."""

    def __init__(self, filter_cls: type = FilterUnit):
        self.config = SCUConfig.from_dict({**SCUConfig.preset("tiny").to_dict(), "filter_sets": 2})
        self.dut = filter_cls(self.config)
        self.watch = Signal(32)
        self.free = [self.watch]

    def elaborate(self, platform):
        m, started = harness_module(self.dut)
        f = self.dut
        i, o = f.i, f.o
        stream_rule(m, i, started, check=False, name="i")
        stream_rule(m, o, started, check=True, name="o")
        # the watched key is fixed for the trace; clear only while idle
        fixed(m, self.watch, started)
        m.d.comb += Assume(~f.clear | (~f.busy & ~i.valid))        # (the SCU clears in its IDLE state)
        # keys share their upper 24 bits with the watched key, costs lie below 256: the
        # solver still reaches every set, hits, misses and evictions (a smaller search)
        m.d.comb += [Assume(i.p.key[8:] == self.watch[8:]), Assume(i.p.cost < 256)]

        # ---- the element in flight (a ghost copy) and one result per element
        ifire, ofire = i.valid & i.ready, o.valid & o.ready
        inflight = Signal()
        key, cost, probe, best = Signal(32), Signal(32), Signal(), Signal()
        with m.If(ifire):
            m.d.sync += [inflight.eq(1), key.eq(i.p.key), cost.eq(i.p.cost), probe.eq(i.p.probe),
                         best.eq(i.p.best)]
        with m.Elif(ofire):
            m.d.sync += inflight.eq(0)
        m.d.comb += Assert(o.valid == inflight)
        with m.If(inflight & ~ofire):
            m.d.comb += Assert(~ifire)                 # no second element before the result is taken

        # ---- what the watched key went through since the last clear
        clear_start = Signal()
        m.d.comb += clear_start.eq(f.clear)
        seen = Signal()                                # kept (inserted) since the last clear
        prev_w = Signal()                              # the previous result was the watched key's (probed)
        prev_best, prev_cost = Signal(), Signal(32)
        is_w = Signal()
        m.d.comb += is_w.eq(inflight & probe & (key == self.watch))
        with m.If(clear_start):
            m.d.sync += [seen.eq(0), prev_w.eq(0)]
        with m.Elif(ofire):
            m.d.sync += [prev_w.eq(is_w), prev_best.eq(best), prev_cost.eq(cost)]
            with m.If(is_w & o.p.keep):
                m.d.sync += seen.eq(1)

        with m.If(o.valid):
            with m.If(~probe):
                m.d.comb += Assert(~o.p.keep)                   # not probed: not kept
            with m.If(is_w & ~seen):
                m.d.comb += Assert(o.p.keep)                    # no false drop
            with m.If(is_w & prev_w & ~best):
                m.d.comb += Assert(~o.p.keep)                   # a duplicate is dropped
            with m.If(is_w & prev_w & best & prev_best & (cost >= prev_cost)):
                m.d.comb += Assert(~o.p.keep)                   # a cost no better is dropped

        # ---- covers
        cleared_once = Signal()
        with m.If(clear_start & seen):
            m.d.sync += cleared_once.eq(1)
        m.d.comb += [
            Cover(ofire & is_w & prev_w & ~best & ~o.p.keep),
            Cover(ofire & is_w & prev_w & best & prev_best & (cost < prev_cost) & o.p.keep),
            Cover(ofire & is_w & cleared_once & o.p.keep),
        ]
        self.invariants(m, inflight=inflight, key=key, cost=cost, probe=probe, best=best, seen=seen,
                        prev_w=prev_w, prev_best=prev_best, prev_cost=prev_cost)
        return m

    def invariants(self, m, **trackers) -> None:
        """Checked invariants for k-induction (:class:`FilterInductionHarness`); none here."""


class FilterInductionHarness(FilterHarness):
    """The filter harness for k-induction (``graphunits prove --unit scu_filter
    --mode prove``): the harness reads the hash's sets through a read port of its
    own (never in the synthesized design) and ties its trackers to the unit by
    checked invariants:

    * the element in flight is the unit's stage-1 element (key, cost, probe, best),
      never during a clear; the set read for it is the hash's set now;
    * the watched key sits in at most one way of its set, and in no set but its own;
    * not kept since the last clear: the watched key is not in the hash (a clear
      in progress has wiped the sets below its counter);
    * the previous result was the watched key's: it is in the hash, with a stored
      cost at most that element's when it was a best-cost probe.
    """

    def invariants(self, m, *, inflight, key, cost, probe, best, seen, prev_w, prev_best, prev_cost) -> None:
        from .hashes import fold
        f, cfg = self.dut, self.config
        S, WAYS = cfg.filter_sets, cfg.filter_ways
        sb = S.bit_length() - 1
        sets = []
        for s in range(S):
            rp = f.mem.read_port(domain="comb")
            m.d.comb += rp.addr.eq(s)
            sets.append(rp.data)
        w_set = fold(self.watch, sb, 32)
        m.d.comb += [Assert(inflight == f.v1), Assert(~(f.clearing & f.v1))]
        with m.If(f.v1):
            m.d.comb += [Assert(f.key1 == key), Assert(f.cost1 == cost), Assert(f.probe1 == probe),
                         Assert(f.best1 == best), Assert(f.set1 == fold(f.key1, sb, 32))]
            for s in range(S):
                with m.If(f.set1 == s):
                    m.d.comb += Assert(f.rp.data.as_value() == sets[s].as_value())
        with m.If(f.clearing):
            m.d.comb += Assert(f.ccount < S)
        for s in range(S):
            has = [sets[s].e[w].valid & (sets[s].e[w].key == self.watch) for w in range(WAYS)]
            for a in range(WAYS):
                for b in range(a + 1, WAYS):
                    m.d.comb += Assert(~(has[a] & has[b]))
            present = sum(has) != 0
            with m.If(w_set != s):
                m.d.comb += Assert(~present)
            with m.Else():
                stale = f.clearing & (f.ccount <= s)      # a clear has not reached it yet
                with m.If(~seen & ~stale):
                    m.d.comb += Assert(~present)
                with m.If(prev_w & ~f.clearing):
                    m.d.comb += Assert(present)
                    with m.If(prev_best):
                        for w in range(WAYS):
                            with m.If(has[w]):
                                m.d.comb += Assert(sets[s].e[w].cost <= prev_cost)


class GroupHarness(Elaboratable):
    """The grouping unit (SCU paper §4.3, :class:`~hw.scu.hashes.GroupUnit`): the
    ``tiny`` preset with one set of 2 ways (every key meets every other: the
    shortest traces to evictions and to the end of a flush), groups of 4, 2
    positions a beat.
    Environment: reset low; elements held until taken; element positions distinct
    within an operation, keys below 8 (every hit, eviction and full group stays
    reachable); one ``flush`` ends an operation, and no element comes
    after it until the unit is idle; ``clear`` only between operations (the unit
    idle, no element offered or held since the last flush, never with a flush:
    the SCU pulses it in its IDLE state, the flush at an operation's end); beats taken freely. The harness follows one position
    ``watch`` (the solver's, fixed). Properties:

    * the beats obey the stream rule and carry 1 to ``width`` positions;
    * conservation: the watched position comes out at most as often as it went
      in, and exactly as often once the flush is over (no position lost or
      duplicated, however the hash evicts, fills or flushes);
    * covers: a beat of ``width`` positions before the flush (a full group or an
      evicted entry); the watched position out, once, when the flush is over.
    """

    def __init__(self, group_cls: type = GroupUnit, **changes):
        self.config = SCUConfig.from_dict({**SCUConfig.preset("tiny").to_dict(), "group_sets": 1, **changes})
        self.dut = group_cls(self.config)
        self.watch = Signal(self.config.count_width)
        self.free = [self.watch]

    def elaborate(self, platform):
        m, started = harness_module(self.dut)
        g = self.dut
        i, o = g.i, g.o
        W = self.config.width
        stream_rule(m, i, started, check=False, name="i")
        stream_rule(m, o, started, check=True, name="o")
        fixed(m, self.watch, started)
        m.d.comb += Assume(i.p.key < 8)
        ifire, ofire = i.valid & i.ready, o.valid & o.ready
        # ---- the operation: elements, then one flush; clear only when idle
        # a flush was given: no element until idle; elements of an operation whose flush is not over
        flushed = flag(m, set=g.flush, clear=~g.busy, name="flushed")      # (falls once idle)
        in_op = flag(m, set=ifire, clear=flushed & ~g.busy, name="in_op")
        m.d.comb += [Assume(~(flushed & i.valid)), Assume(~(g.flush & (flushed | i.valid | g.clear))),
                     Assume(~g.clear | (~g.busy & ~i.valid & ~flushed & ~in_op))]
        # ---- the watched position: in at most once per operation, counted out
        n_in, n_out = Signal(2), Signal(3)
        with m.If(ifire & (i.p.pos == self.watch)):
            m.d.sync += n_in.eq(n_in + 1)
        m.d.comb += Assume(~(i.valid & (i.p.pos == self.watch) & (n_in != 0)))
        hits = sum((ofire & (o.p.data[k] == self.watch) & (k < o.p.n)).as_unsigned() for k in range(W))
        m.d.sync += n_out.eq(n_out + hits)
        with m.If(o.valid):
            m.d.comb += [Assert(o.p.n >= 1), Assert(o.p.n <= W)]
        m.d.comb += Assert(n_out <= n_in)
        over = Signal()                          # the flush is over: the unit went idle after it
        m.d.comb += over.eq(flushed & ~g.busy & ~g.flush)
        with m.If(over):
            m.d.comb += Assert(n_out == n_in)
        # ---- covers
        full_beat = Signal()
        m.d.comb += full_beat.eq(ofire & ~flushed & (o.p.n == W))
        m.d.comb += [Cover(full_beat), Cover(over & (n_out == 1))]
        self.invariants(m, n_in=n_in, n_out=n_out, flushed=flushed, in_op=in_op)
        return m

    def invariants(self, m, **trackers) -> None:
        """Checked invariants for k-induction (:class:`GroupInductionHarness`); none here."""


class GroupInductionHarness(GroupHarness):
    """The grouping harness for k-induction (``graphunits prove --unit scu_group
    --mode prove``): the harness reads the hash's row through a read port of its
    own (never in the synthesized design) and ties its counters to the unit by
    checked invariants:

    * conservation, everywhere: the watched position went in as often as it came
      out plus where it is now, in one place at most: the stage-1 element, the
      hash's valid entries (their first ``count`` positions; during a flush only the
      ways not yet emitted), the emitter's positions still to send; it went in at
      most once;
    * the hash's row as the unit sees it: the row read for the element in stage 1,
      or for the flush, is the row in memory;
    * a valid entry holds fewer than ``group_size`` positions (a full one is
      emitted); the emitter holds at most ``group_size``; the flush's way and set
      counters stay in range; a flush runs with no element in stage 1, a clear
      with neither an element nor a flush;
    * a flush in progress (or requested) was given (``flushed``); once it is over,
      and while clearing, no entry is valid (nor, once it is over, an element in
      stage 1); between operations (no element taken
      since the last flush was over) the unit holds nothing: no entry, no element,
      nothing to emit, no flush.
    """

    #: The "in one place at most" invariants (False: a test's weaker variant).
    one_place = True

    def __init__(self, group_cls: type = GroupUnit):
        # 8-bit positions and 16-bit addresses (9-bit tags): the properties do not
        # depend on the widths, and the solver's time for the induction step drops
        # from over 10 minutes (32-bit positions) to about 50 s
        super().__init__(group_cls, count_width=8, addr_width=16)

    def invariants(self, m, *, n_in, n_out, flushed, in_op) -> None:
        g, cfg = self.dut, self.config
        S, WAYS, G = cfg.group_sets, cfg.group_ways, cfg.group_size
        assert S == 1, "the invariants read the single set of the harness's configuration"
        rp = g.mem.read_port(domain="comb")
        m.d.comb += rp.addr.eq(0)
        row, watch = rp.data, self.watch
        live = [~g.flushing | ~g.fread | (g.fway <= w) for w in range(WAYS)]    # not yet emitted by a flush
        in_hash = [row.e[w].valid & live[w] & (k < row.e[w].count) & (row.e[w].pos[k] == watch)
                   for w in range(WAYS) for k in range(G)]
        in_emitter = [(k < g.eleft) & (g.ebuf[k] == watch) for k in range(G)]
        # in one place at most (pairwise: a solver proves that far faster than a sum)
        places = [g.v1 & (g.pos1 == watch)] + in_hash + in_emitter
        for a in range(len(places) if self.one_place else 0):
            for b in range(a + 1, len(places)):
                m.d.comb += Assert(~(places[a] & places[b]))
        present = Signal()
        m.d.comb += present.eq(sum(p.as_unsigned() for p in places) != 0)
        m.d.comb += [Assert(n_in <= 1), Assert(n_out <= 1),
                     Assert(n_in[0] == (n_out[0] | present)), Assert(~(n_out[0] & present))]
        with m.If(g.v1 | (g.flushing & g.fread)):
            m.d.comb += Assert(g.rp.data.as_value() == row.as_value())
        valid = [row.e[w].valid for w in range(WAYS)]
        for w in range(WAYS):
            with m.If(valid[w]):
                m.d.comb += Assert(row.e[w].count < G)
        m.d.comb += [Assert(g.eleft <= G), Assert(g.fway <= WAYS),
                     Assert((~g.flushing & ~g.clearing) | (g.fset < S)),
                     Assert(~(g.flushing | g.freq) | flushed),
                     Assert(~g.flushing | (~g.v1 & ~g.freq)), Assert(~g.clearing | (~g.v1 & ~g.flushing & ~g.freq))]
        empty = ~sum(v.as_unsigned() for v in valid).bool()
        done = flushed & ~g.flushing & ~g.freq                  # the flush is over
        between = ~in_op & ~flushed                            # no operation
        m.d.comb += [Assert(~done | (empty & ~g.v1)), Assert(~g.clearing | empty),
                     Assert(~between | (empty & ~g.v1 & ~g.flushing & ~g.freq & (g.eleft == 0)))]
