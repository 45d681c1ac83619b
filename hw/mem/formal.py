"""Formal harness of the memory port arbiter (docs/verification.md, "Formal"): the
properties of :class:`~hw.mem.arbiter.MemArbiter` as Amaranth ``Assert`` /
``Assume`` / ``Cover`` statements around it (never in the synthesized design),
checked by ``graphunits prove --unit arbiter`` (:mod:`synth.prove`).

The harness's own inputs are free (the solver picks them every cycle); the
assumptions make them a legal environment: reset held low (the registers start
at their reset values) and every initiator keeping a request offered, with the
same payload, until it transfers (the stream rule). Properties:

* the outer request obeys the stream rule (offered until taken, payload stable);
* the outer port is valid exactly when some initiator is; at most one initiator
  transfers a cycle, exactly when the outer request does, and ``grant`` names it;
* the transferred request is that initiator's, its tag ``src << inner | tag``;
* a response goes to the initiator its tag names, with its tag, data and error,
  and is always accepted;
* fairness: an initiator that keeps a request offered sees at most ``n - 1``
  other transfers before its own (round robin);
* covers: every initiator transfers, and two different ones on consecutive cycles.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, C, Cat, Cover, Elaboratable, Mux, Signal, Value, signed

from golden.fetch import MemPortConfig

from ..formal import harness_module, stream_rule
from .arbiter import MemArbiter

__all__ = ["ArbiterHarness"]


class ArbiterHarness(Elaboratable):
    """``inputs`` initiators (tags of ``inner_tag`` bits) on a small port (16-bit
    addresses, 4-byte blocks: the properties do not depend on the widths).
    ``arbiter_cls``: the design under test's class (a variant, for the tests of
    the harness)."""

    def __init__(self, inputs: int = 3, inner_tag: int = 2, arbiter_cls: type = MemArbiter):
        self.n = inputs
        inner = MemPortConfig(addr_width=16, block_bytes=4, tag_width=inner_tag)
        src_bits = max(1, (inputs - 1).bit_length())
        outer = MemPortConfig(addr_width=16, block_bytes=4, tag_width=inner_tag + src_bits)
        self.dut = arbiter_cls(outer, [inner] * inputs)

    def elaborate(self, platform):
        m, started = harness_module(self.dut)
        dut = self.dut
        n, ports, o = self.n, dut.ports, dut.o
        inner, src_bits = dut.inner_bits, dut.src_bits
        waits = [stream_rule(m, p.req, started, check=False, name=f"i{k}") for k, p in enumerate(ports)]
        owait = stream_rule(m, o.req, started, check=True, name="o")
        fire = [p.req.valid & p.req.ready for p in ports]
        ofire = o.req.valid & o.req.ready
        m.d.comb += [
            Assert(o.req.valid == Cat(p.req.valid for p in ports).any()),
            Assert(ofire == Cat(fire).any()),
            Assert(dut.grant == Cat(fire)),
        ]
        for j in range(n):
            for k in range(j + 1, n):
                m.d.comb += Assert(~(fire[j] & fire[k]))
        for k, p in enumerate(ports):
            with m.If(fire[k]):
                m.d.comb += [
                    Assert(o.req.p.addr == p.req.p.addr),
                    Assert(o.req.p.write == p.req.p.write),
                    Assert(o.req.p.wdata == p.req.p.wdata),
                    Assert(o.req.p.wmask == p.req.p.wmask),
                    Assert(o.req.p.tag == Cat(p.req.p.tag, C(0, inner - len(p.req.p.tag)), C(k, src_bits))),
                ]
        # responses
        src = o.resp.p.tag[inner:inner + src_bits]
        m.d.comb += Assert(o.resp.ready)
        for k, p in enumerate(ports):
            m.d.comb += [
                Assert(p.resp.valid == (o.resp.valid & (src == k))),
                Assert(p.resp.p.tag == o.resp.p.tag[:len(p.resp.p.tag)]),
                Assert(p.resp.p.rdata == o.resp.p.rdata),
                Assert(p.resp.p.error == o.resp.p.error),
            ]
        # fairness: other transfers seen while an initiator waits
        # Invariants for k-induction (``--mode prove``): a locked request is the one
        # that waited on the outer port, of an initiator that waited; and a valid
        # initiator k has seen at most n - 1 - (its distance from the next to be
        # served: ``held`` when locked, else ``ptr``) other transfers.
        ptr, locked, held = dut.ptr, dut.locked, dut.held
        with m.If(started):
            m.d.comb += Assert(locked == owait)
        with m.If(locked):
            m.d.comb += Assert(Cat(waits).bit_select(held, 1))
        nxt = Mux(locked, held, ptr)
        for k, p in enumerate(ports):
            others = Signal(range(2 * n + 1), name=f"i{k}_passed")
            with m.If(~p.req.valid | fire[k]):
                m.d.sync += others.eq(0)
            with m.Elif(ofire & (others < 2 * n)):
                m.d.sync += others.eq(others + 1)
            m.d.comb += Assert(others <= n - 1)
            dist = Signal(range(n), name=f"i{k}_dist")       # (k - nxt) mod n
            m.d.comb += dist.eq(Mux(nxt <= k, k - nxt, k + n - nxt))
            with m.If(p.req.valid):
                m.d.comb += Assert(others + dist <= n - 1)
        # covers
        last = Signal(range(n + 1), init=n)     # the initiator that transferred last cycle (n: none)
        with m.If(ofire):
            m.d.sync += last.eq(_index(dut.grant, n))
        with m.Else():
            m.d.sync += last.eq(n)
        for k in range(n):
            m.d.comb += Cover(fire[k])
            m.d.comb += Cover(fire[k] & (last != n) & (last != k))
        return m


def _index(onehot: Value, n: int) -> Value:
    """The position of the set bit of a one-hot value (0 if none)."""
    out = C(0, max(1, (n - 1).bit_length()))
    for k in range(n):
        out = Mux(onehot[k], k, out)
    return out


class WriterHarness(Elaboratable):
    """The sequential writer (:class:`~hw.mem.writer.SequentialWriter`) with
    ``width`` lanes of 4-byte words, 8-byte blocks (two words) and 2-bit tags
    (four writes in flight). Environment: reset low; ``start`` only between
    operations (never while one runs), ``finish`` once, after ``start``; input
    beats only between them, held until taken (stream rule); responses only for
    writes in flight. Properties:

    * the write requests obey the stream rule and are writes;
    * at most ``2**tag_width`` writes in flight;
    * the writes of an operation go to consecutive blocks from the base's block;
    * conservation: the bytes written (mask bits) never exceed 4 x the words
      taken, and equal them once ``done`` rises; ``done`` only with no write in flight;
    * data: a word chosen by the solver (its position fixed at ``start``) is
      written, in the write that carries it, with the value it had on input;
    * covers: an operation done after two writes from an unaligned base; an
      error response reported.
    """

    def __init__(self, width: int = 1, writer_cls: type | None = None):
        from .writer import SequentialWriter
        self.port = MemPortConfig(addr_width=16, block_bytes=8, tag_width=2)
        self.width = width
        self.dut = (writer_cls or SequentialWriter)(self.port, width, lane_bits=32)
        self.watch = Signal(6)              # free: which word of the operation the data check follows
        self.free = [self.watch]

    def elaborate(self, platform):
        from amaranth.utils import exact_log2
        m, started = harness_module(self.dut)
        w = self.dut
        port, W = self.port, self.width
        bb_bits = exact_log2(port.block_bytes)
        wpb = port.block_bytes // 4
        max_out = 1 << port.tag_width
        # ---- the environment
        active, finished = Signal(), Signal()
        with m.If(w.start):
            m.d.sync += [active.eq(1), finished.eq(0)]
        with m.Elif(w.finish):
            m.d.sync += finished.eq(1)
        with m.Elif(w.done & finished):       # (a start in the same cycle begins the next operation)
            m.d.sync += active.eq(0)
        m.d.comb += [
            Assume(~(w.start & active)),
            Assume(~(w.start & w.finish)),
            Assume(~w.finish | (active & ~finished)),
            Assume(~w.i.valid | (active & ~finished & ~w.start)),
            Assume(w.base[:2] == 0),                            # element aligned
            Assume(~w.i.valid | (w.i.p.n <= W)),
            Assume(w.i.p.e8 == 0),                              # 4-byte lanes only (lane_bits 32)
        ]
        stream_rule(m, w.i, started, check=False, name="i")
        inflight = Signal(range(2 * max_out + 2))
        req, resp = w.mem.req, w.mem.resp
        fire = req.valid & req.ready
        m.d.sync += inflight.eq(inflight + fire - (resp.valid & resp.ready))
        # a response only for a write in flight: the tags the harness saw go out
        # and not come back yet (any order)
        outstanding = Signal(max_out)
        m.d.sync += outstanding.eq((outstanding & ~Mux(resp.valid & resp.ready, 1 << resp.p.tag, 0)) |
                                   Mux(fire, 1 << req.p.tag, 0))
        m.d.comb += Assume(~resp.valid | outstanding.bit_select(resp.p.tag, 1))
        # ---- the write requests
        stream_rule(m, req, started, check=True, name="req")
        with m.If(req.valid):
            m.d.comb += Assert(req.p.write)
        m.d.comb += Assert(inflight <= max_out)
        # consecutive blocks from the base's block
        nxt = Signal(port.addr_width - bb_bits)
        with m.If(w.start):
            m.d.sync += nxt.eq(w.base[bb_bits:])
        with m.Elif(fire):
            m.d.sync += nxt.eq(nxt + 1)
        with m.If(fire & active):
            m.d.comb += Assert(req.p.addr == Cat(C(0, bb_bits), nxt))
        # conservation of bytes
        take = w.i.valid & w.i.ready
        words_in = Signal(8)
        bytes_out = Signal(10)
        nbytes = Signal(range(port.block_bytes + 1))
        m.d.comb += nbytes.eq(sum(req.p.wmask[b] for b in range(port.block_bytes)))
        with m.If(w.start):
            m.d.sync += [words_in.eq(0), bytes_out.eq(0)]
        with m.Else():
            m.d.sync += [words_in.eq(words_in + Mux(take, w.i.p.n, 0)),
                         bytes_out.eq(bytes_out + Mux(fire, nbytes, 0))]
        # operations of at most 48 words (the counters' range: no wrap-around)
        m.d.comb += Assume(~take | (words_in + w.i.p.n <= 48))
        m.d.comb += Assert(bytes_out <= 4 * words_in)
        with m.If(w.done & active & finished):
            m.d.comb += [Assert(bytes_out == 4 * words_in), Assert(inflight == 0)]
        # data: follow the word at position ``watch`` of the operation
        watch = Signal(6)
        with m.If(w.start):
            m.d.sync += watch.eq(self.watch)
        lead = Signal(range(wpb))
        with m.If(w.start):
            m.d.sync += lead.eq(w.base[2:bb_bits])
        seen, value = Signal(), Signal(32)
        with m.If(w.start):
            m.d.sync += seen.eq(0)
        for k in range(W):
            with m.If(take & (k < w.i.p.n) & (words_in + k == watch)):
                m.d.sync += [seen.eq(1), value.eq(w.i.p.data[k][:32])]
        # the watched word's block and word within it
        pos = Signal(8)
        m.d.comb += pos.eq(lead + watch)
        written = Signal(8)                 # writes of this operation so far
        with m.If(w.start):
            m.d.sync += written.eq(0)
        with m.Elif(fire):
            m.d.sync += written.eq(written + 1)
        with m.If(fire & seen & (written == pos // wpb)):
            for j in range(wpb):
                with m.If(pos % wpb == j):
                    m.d.comb += [Assert(req.p.wmask[4 * j:4 * j + 4] == 0xF),
                                 Assert(req.p.wdata[32 * j:32 * j + 32] == value)]
        # ---- invariants for k-induction (``--mode prove``): the harness's trackers
        # and the writer's registers (its attributes) agree in every reachable state
        from .writer import _State
        st = w.state
        m.d.comb += [
            Assert(outstanding == w.in_flight),
            Assert(inflight == sum(outstanding[t] for t in range(max_out))),
            Assert(nxt == w.blk),
            Assert(w.lead == Mux(written == 0, lead, 0)),
            Assert(w.lvl >= w.lead),
            Assert(w.lvl <= w.capacity),
            Assert(seen == (words_in > watch)),
            Assert(words_in <= 48),
        ]
        # the buffer: the words past the level are zero (the next beat is ORed in)
        for p in range(w.capacity):
            with m.If(w.lvl <= p):
                m.d.comb += Assert(w.buf.word_select(p, 32) == 0)
        with m.If(~active):
            m.d.comb += [Assert((st == _State.IDLE) | (st == _State.DONE)), Assert(outstanding == 0),
                         Assert(w.lvl == w.lead), Assert(bytes_out == 4 * words_in)]
            with m.If(st == _State.IDLE):
                m.d.comb += [Assert(w.lvl == 0), Assert(~started | (words_in == 0))]
        with m.Elif(~finished):
            m.d.comb += Assert(st == _State.RUN)
        with m.Else():
            m.d.comb += Assert((st == _State.FLUSH) | (st == _State.DONE))
            with m.If(st == _State.DONE):
                m.d.comb += [Assert(w.lvl == w.lead), Assert(outstanding == 0)]
        # the writes so far: whole blocks, the first without its lead words; one
        # partial block at the end (in FLUSH, emptying the buffer) leaves a slack
        slack = Signal(signed(12))
        m.d.comb += slack.eq(4 * written * wpb - bytes_out - 4 * lead)
        with m.If(written == 0):
            m.d.comb += Assert(bytes_out == 0)
        with m.Else():
            m.d.comb += Assert((slack == 0) | ((st != _State.RUN) & (w.lvl == 0) & (slack >= 4) &
                                               (slack <= 4 * (wpb - 1))))
        with m.If(active):
            # words taken = bytes written / 4 + the data words buffered
            m.d.comb += Assert(4 * words_in == bytes_out + 4 * (w.lvl - w.lead))
            # the watched word, taken and not written yet, sits in the buffer with its value
            slot = Signal(8)
            m.d.comb += slot.eq(pos - written * wpb)
            with m.If(seen & (written * wpb <= pos)):
                m.d.comb += [Assert(slot < w.lvl), Assert(w.buf.word_select(slot[:4], 32) == value)]
        # covers
        m.d.comb += [Cover(w.done & finished & (written >= 2) & (lead != 0)),
                     Cover(w.error & active)]
        return m
