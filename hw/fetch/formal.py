"""Formal harness of the fetch engine (docs/verification.md, "Formal"): the memory
port's rules and the conservation of elements of
:class:`~hw.fetch.engine.FetchEngine`, checked by ``graphunits prove --unit fetch``.

Small configuration: 16-bit addresses, 8-byte blocks, one 4-byte lane, two
reads in flight, a merge window of one block, counts below 8. Environment: reset
low; commands held until taken (stream rule), 4-byte elements at aligned bases
that end below the top of the address space (no command errors: those are the
TLM tests' job), one operation at a time (its first range offered once the
previous one's last beat is out), of at most 48 elements (the counters' range);
a response only for a tag in flight; the output ready freely.
Properties:

* the read requests obey the stream rule and are reads;
* a request's tag is not in flight already (tags unique); at most two in flight;
* conservation: the elements out never exceed the elements commanded, and
  equal them at the operation's ``last`` beat; a beat holds at most ``width``;
* covers: an operation of two ranges completes with both reads in flight at
  once; a memory error reaches the last beat.

:class:`FetchInductionHarness` adds the invariants that make these properties
4-inductive (``graphunits prove --unit fetch --mode prove --depth 4``).
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Cover, Elaboratable, Module, Mux, Signal
from amaranth.lib import stream

from golden.fetch import FetchConfig

from ..formal import flag, harness_module, memory_port, stream_rule
from .engine import FetchEngine

__all__ = ["FetchHarness", "FetchInductionHarness"]


class FetchHarness(Elaboratable):
    def __init__(self, engine_cls: type = FetchEngine):
        self.config = FetchConfig(addr_width=16, block_bytes=8, width=1, max_elem_bytes=4, max_inflight=2,
                                  merge_window=1, count_width=3)
        self.dut = engine_cls(self.config)

    def elaborate(self, platform):
        m, started = harness_module(self.dut)
        e = self.dut
        cfg = self.config
        n_tags = cfg.max_inflight
        cmd, o, req = e.cmd, e.o, e.mem.req
        # ---- environment: commands
        stream_rule(m, cmd, started, check=False, name="cmd")
        with m.If(cmd.valid):
            m.d.comb += [Assume(cmd.p.esize8 == 0), Assume(cmd.p.base[:2] == 0),
                         Assume(cmd.p.base + 4 * cmd.p.count < (1 << cfg.addr_width))]
        # ---- the memory port: responses for tags in flight; stream rule, unique tags, reads
        inflight = memory_port(m, e.mem, started)
        with m.If(req.valid):
            m.d.comb += Assert(~req.p.write)
        count = Signal(range(n_tags + 1))
        m.d.comb += count.eq(sum(inflight[t] for t in range(n_tags)))
        m.d.comb += Assert(count <= n_tags)
        # ---- conservation of elements (one operation at a time: the next operation's
        # first range is offered once this one's last beat is out)
        cfire, ofire = cmd.valid & cmd.ready, o.valid & o.ready
        elems_in, elems_out = Signal(6), Signal(6)
        end = ofire & o.p.last
        closed = flag(m, set=cfire & cmd.p.last, clear=end, name="closed")
        m.d.comb += Assume(~cmd.valid | ~closed)
        m.d.sync += [elems_in.eq(Mux(end, 0, elems_in) + Mux(cfire, cmd.p.count, 0)),
                     elems_out.eq(Mux(end, 0, elems_out + Mux(ofire, o.p.n, 0)))]
        with m.If(o.valid):
            m.d.comb += Assert(o.p.n <= cfg.width)
        m.d.comb += Assert(elems_out + Mux(ofire, o.p.n, 0) <= elems_in + Mux(cfire, cmd.p.count, 0))
        with m.If(end):
            m.d.comb += Assert(elems_out + o.p.n == elems_in)
        # ---- covers
        ranges = Signal(3)
        with m.If(end):
            m.d.sync += ranges.eq(0)
        with m.Elif(cfire):
            m.d.sync += ranges.eq(ranges + 1)
        both = Signal()
        with m.If(count == n_tags):
            m.d.sync += both.eq(1)
        with m.If(end):
            m.d.sync += both.eq(0)
        m.d.comb += [Cover(end & (ranges >= 2) & both & (elems_in >= 2)),
                     Cover(end & o.p.error.mem)]
        # operations of at most 48 elements (the counters' range: no wrap-around)
        m.d.comb += Assume(~cfire | (elems_in + cmd.p.count <= 48))
        self.invariants(m, inflight=inflight, elems_in=elems_in, elems_out=elems_out, closed=closed)
        return m

    def invariants(self, m, **trackers) -> None:
        """Checked invariants for k-induction (:class:`FetchInductionHarness`); none here."""


class _RegisterFIFO(Elaboratable):
    """The order FIFO of :class:`FetchInductionHarness`: the stream contract of
    Amaranth's ``SyncFIFOBuffered`` as the engine uses it (``w_stream.ready``
    while fewer than ``depth`` entries are held, falling only on a write;
    ``r_stream`` offers the oldest entry while any is held; ``level``), its
    entries in registers that the invariants can read (entry 0 the oldest)."""

    def __init__(self, *, width: int, depth: int):
        self.width, self.depth = width, depth
        self.w_stream = stream.Signature(width).create()
        self.r_stream = stream.Signature(width).create()
        self.level = Signal(range(depth + 1))
        self.entries = [Signal(width, name=f"entry{i}") for i in range(depth)]

    def elaborate(self, platform):
        m = Module()
        w, r, lvl = self.w_stream, self.r_stream, self.level
        m.d.comb += [w.ready.eq(lvl < self.depth), r.valid.eq(lvl != 0), r.payload.eq(self.entries[0])]
        wr, rd = w.valid & w.ready, r.valid & r.ready
        pos = Mux(rd, lvl - 1, lvl)
        for i in range(self.depth):
            kept = Mux(rd, self.entries[i + 1] if i + 1 < self.depth else 0, self.entries[i])
            m.d.sync += self.entries[i].eq(Mux(wr & (pos == i), w.payload, kept))
        m.d.sync += lvl.eq(lvl + wr - rd)
        return m


class _EngineWithRegisterFIFO(FetchEngine):
    order_fifo = _RegisterFIFO


class FetchInductionHarness(FetchHarness):
    """The fetch harness for k-induction (``graphunits prove --unit fetch --mode
    prove``): the engine's order FIFO is :class:`_RegisterFIFO` (the same stream
    contract as Amaranth's buffered FIFO, whose entries sit in a memory that no
    invariant can name; Amaranth tests its own FIFOs formally), and the
    harness's trackers are tied to the engine's registers by checked invariants:

    * elements commanded = elements out + the address generator's remaining
      range + the queued segments' elements + the extracted segment's + the
      packer's lanes;
    * the operation's last token (a last range in the address generator, a last
      segment queued or extracted, the packer's pending last) is there once the
      last range was taken, never before, and is the youngest thing in the engine;
    * the slots: at most ``max_inflight`` allocated (ring ``free_ptr`` ..
      ``alloc_ptr``); a tag in flight is an allocated slot without its data; an
      allocated slot without its data is the slot of a queued segment; queued
      segments free slots in order (none frees a slot a later one reads) and
      within the allocated ring;
    * the address generator holds no command error (the environment gives none).
    """

    def __init__(self, engine_cls: type = _EngineWithRegisterFIFO):
        super().__init__(engine_cls)

    def invariants(self, m, *, inflight, elems_in, elems_out, closed) -> None:
        from .engine import _Segment
        e, cfg = self.dut, self.config
        iss, q, rd, pk = e.issue, e.order, e.reader, e.packer
        M, tagw = cfg.max_inflight, cfg.tag_width
        segs = [_Segment(cfg)(v) for v in q.entries]
        held = [Signal(name=f"held{i}") for i in range(q.depth)]
        m.d.comb += [held[i].eq(i < q.level) for i in range(q.depth)]
        x = rd.x
        m.d.comb += Assert(q.level <= q.depth)
        with m.If(x.valid):
            m.d.comb += Assert(x.p.n <= cfg.words_per_block)
        # elements
        pipe = Signal(8)
        m.d.comb += pipe.eq(Mux(iss.ag_valid, iss.ag_rem, 0) + sum(Mux(held[i], segs[i].n, 0) for i in range(q.depth)) +
                            Mux(x.valid, x.p.n, 0) + pk.lvl)
        m.d.comb += [Assert(elems_in == elems_out + pipe), Assert(elems_in <= 48)]
        # the last token
        tokens = Signal(range(q.depth + 4))
        m.d.comb += tokens.eq((iss.ag_valid & iss.ag_last) + sum(held[i] & segs[i].last for i in range(q.depth)) +
                              (x.valid & x.p.last) + pk.pend_last)
        m.d.comb += Assert(tokens == closed)
        with m.If(pk.pend_last):
            m.d.comb += Assert(~x.valid & (q.level == 0) & ~iss.ag_valid)
        with m.If(x.valid & x.p.last):
            m.d.comb += Assert((q.level == 0) & ~iss.ag_valid)
        for i in range(q.depth):
            with m.If(held[i] & segs[i].last):
                m.d.comb += Assert((q.level == i + 1) & ~iss.ag_valid)
        with m.If(iss.ag_valid):
            m.d.comb += [Assert(~iss.ag_bad), Assert(~iss.ag_e8)]
        # the slots: offsets in the ring from the reader's free pointer
        F, A = rd.free_ptr, iss.alloc_ptr
        dist = Signal(tagw + 1)
        m.d.comb += [dist.eq(A - F), Assert(dist <= M)]

        def off(slot):              # a slot's place in the ring (0: the oldest allocated)
            return (slot - F[:tagw])[:tagw] if tagw else 0

        def off_ptr(ptr):           # a pointer's distance from F
            return (ptr - F)[:tagw + 1]

        for s in range(M):
            allocated = off(s) < dist
            referenced = sum(held[i] & ~segs[i].marker & (segs[i].slot == s) for i in range(q.depth)) != 0
            with m.If(inflight[s]):
                m.d.comb += Assert(allocated & ~e.data_valid[s])
            with m.If(allocated & ~e.data_valid[s]):
                m.d.comb += Assert(referenced)
        # the merge window: the newest allocated slots, newest first, still allocated;
        # no queued segment frees them
        K = cfg.merge_window
        m.d.comb += Assert(iss.win_count == sum(iss.win_valid[k] for k in range(K)))
        for k in range(K):
            with m.If(iss.win_valid[k]):
                m.d.comb += [Assert(iss.win_slot[k] == (A - 1 - k)[:tagw]), Assert(k < dist),
                             # the issue clears the window with the operation's last segment
                             Assert(~closed | (iss.ag_valid & iss.ag_last))]
                if k:
                    m.d.comb += Assert(iss.win_valid[k - 1])
        for i in range(q.depth):
            with m.If(held[i]):
                m.d.comb += [Assert(off_ptr(segs[i].free_to) <= dist),
                             Assert(segs[i].n <= cfg.words_per_block),
                             Assert(segs[i].marker == (segs[i].n == 0))]
                with m.If(~segs[i].last):
                    m.d.comb += Assert(off_ptr(segs[i].free_to) <= dist - iss.win_count)
                with m.If(~segs[i].marker):
                    m.d.comb += Assert(off(segs[i].slot) < dist)
                for j in range(i + 1, q.depth):
                    with m.If(held[j]):
                        m.d.comb += Assert(off_ptr(segs[i].free_to) <= off_ptr(segs[j].free_to))
                        with m.If(~segs[j].marker):
                            m.d.comb += Assert(off(segs[j].slot) >= off_ptr(segs[i].free_to))
