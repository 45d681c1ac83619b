"""Sequential writer: stores a stream of elements at consecutive addresses through
the memory port, one write per block (SCU paper §3.2.5, Data Store: "a simple
coalescing of write operations"; docs/scu.md, "Data Store").

The elements of an operation (4- or 8-byte, up to ``width`` per beat) are packed
into 32-bit words in a buffer aligned to blocks. A write is issued when a whole
block is buffered, and once more at the end for the last, partial block; the
first block starts at the operation's base, so its leading bytes are masked off.
So an output of ``k`` bytes from ``base`` costs exactly one write per block it
touches. ``done`` rises when every write has been answered.
"""
from amaranth import *
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from golden.fetch import MemPortConfig
from .port import MemPortSignature

__all__ = ["WriterBeat", "SequentialWriter"]


class WriterBeat(data.StructLayout):
    """``n`` elements in lanes ``data[0..n)``; ``e8``: 8-byte elements (else the
    low 4 bytes of each lane)."""

    def __init__(self, width: int, lane_bits: int = 64):
        super().__init__({"data": data.ArrayLayout(lane_bits, width), "n": range(width + 1), "e8": 1})


class _State(enum.Enum, shape=2):
    IDLE = 0
    RUN = 1
    FLUSH = 2
    DONE = 3


class SequentialWriter(wiring.Component):
    """Writes element beats consecutively from ``base``.

    Parameters
    ----------
    port : MemPortConfig
        Its memory port (``tag_width`` bits of write tags: up to ``2**tag_width``
        writes in flight; tags are used in turn, and a write waits until its tag's
        previous write is answered: responses come in any order).
    width : int
        Lanes per input beat.
    lane_bits : int
        32 (4-byte elements only) or 64.

    Attributes
    ----------
    i : In(stream(WriterBeat))
    mem : Out(MemPortSignature)
    start : In(1)
        Pulse: begin an operation at byte address ``base`` (element aligned).
    base : In(addr_width)
    finish : In(1)
        Pulse: no more input for this operation.
    done : Out(1)
        Every write of the operation was answered (until the next ``start``).
    error : Out(1)
        A write of the operation was answered with an error.
    """

    def __init__(self, port: MemPortConfig, width: int, lane_bits: int = 64):
        if lane_bits not in (32, 64):
            raise ValueError(f"lane_bits must be 32 or 64, not {lane_bits}")
        self._port = port
        self._width = width
        self._lane_bits = lane_bits
        super().__init__({
            "i": In(stream.Signature(WriterBeat(width, lane_bits))),
            "mem": Out(MemPortSignature(port)),
            "start": In(1),
            "base": In(port.addr_width),
            "finish": In(1),
            "done": Out(1),
            "error": Out(1),
        })
        # The registers, attributes so that the formal harness's invariants can read
        # them (hw/mem/formal.py; the Verilog is the same as with local signals).
        bb = port.block_bytes
        WPB = bb // 4
        IW = 2 * width if lane_bits == 64 else width      # words per input beat, at most
        self.capacity = 2 * WPB + IW                        # buffer, in words
        self.state = Signal(_State, name="state")
        self.buf = Signal(self.capacity * 32, name="buf")
        self.lvl = Signal(range(self.capacity + 1), name="lvl")    # words buffered (lead words included)
        self.lead = Signal(range(WPB), name="lead")                # words before the base in the first block
        self.blk = Signal(port.addr_width - exact_log2(bb), name="blk")
        self.in_flight = Signal(1 << port.tag_width, name="in_flight")   # a bit per tag: not answered yet
        self.err = Signal(name="err")
        self.tag = Signal(port.tag_width, name="tag")

    def elaborate(self, platform):
        m = Module()
        port, W = self._port, self._width
        bb = port.block_bytes
        WPB = bb // 4
        e8_ok = self._lane_bits == 64
        IW = 2 * W if e8_ok else W          # words per input beat, at most
        CAP = self.capacity
        bb_bits = exact_log2(bb)
        max_out = 1 << port.tag_width

        state, buf, lvl, lead = self.state, self.buf, self.lvl, self.lead
        blk, in_flight, err, tag = self.blk, self.in_flight, self.err, self.tag
        m.d.comb += [self.done.eq(state == _State.DONE), self.error.eq(err)]

        # ---------------------------------------------------------------- write requests
        req = self.mem.req
        full = Signal()
        partial = Signal()
        m.d.comb += [
            full.eq(lvl >= WPB),
            partial.eq((state == _State.FLUSH) & ~full & (lvl > lead)),
            # responses come in any order: the next tag must be free, not just any tag
            req.valid.eq((full | partial) & ~in_flight.bit_select(tag, 1)),
            req.p.addr.eq(Cat(C(0, bb_bits), blk)),
            req.p.write.eq(1),
            req.p.wdata.eq(buf[:WPB * 32]),
            req.p.tag.eq(tag),
        ]
        for w in range(WPB):
            valid_word = (w >= lead) & (full | (w < lvl))
            m.d.comb += req.p.wmask[4 * w:4 * w + 4].eq(Mux(valid_word, 0xF, 0))
        fire = Signal()
        m.d.comb += fire.eq(req.valid & req.ready)

        resp = self.mem.resp
        m.d.comb += resp.ready.eq(1)
        set_tag = Signal(max_out)
        clr_tag = Signal(max_out)
        m.d.comb += [set_tag.eq(Mux(fire, 1 << tag, 0)), clr_tag.eq(Mux(resp.valid, 1 << resp.p.tag, 0))]
        m.d.sync += in_flight.eq((in_flight & ~clr_tag) | set_tag)
        with m.If(resp.valid & resp.p.error):
            m.d.sync += err.eq(1)
        with m.If(fire):
            m.d.sync += [tag.eq(tag + 1), blk.eq(blk + 1), lead.eq(0)]

        # ---------------------------------------------------------------- input
        i = self.i
        m.d.comb += i.ready.eq((state == _State.RUN) & (lvl <= CAP - IW))
        take = Signal()
        m.d.comb += take.eq(i.valid & i.ready)
        words = []
        for k in range(IW):
            if e8_ok:
                lane2, half2 = divmod(k, 2)
                w8 = i.p.data[lane2][32 * half2:32 * half2 + 32]
                w4 = i.p.data[k][:32] if k < W else C(0, 32)
                wk = Mux(i.p.e8, Mux(lane2 < i.p.n, w8, 0), Mux(k < i.p.n, w4, 0))
            else:
                wk = Mux(k < i.p.n, i.p.data[k], 0)
            words.append(wk)
        kw = Signal(range(IW + 1))
        m.d.comb += kw.eq(Mux(i.p.e8, i.p.n << 1, i.p.n) if e8_ok else i.p.n)
        shift = Signal()
        m.d.comb += shift.eq(fire & full)
        base_lvl = Signal(range(CAP + 1))
        m.d.comb += base_lvl.eq(lvl - Mux(shift, WPB, 0))
        kept = Signal(CAP * 32)
        m.d.comb += kept.eq(Mux(shift, buf >> (WPB * 32), buf))
        ins_src = Cat(C(0, CAP * 32), *words, C(0, CAP * 32))
        new_words = []
        for p in range(CAP):
            ins = ins_src.word_select((p + CAP - base_lvl).as_unsigned(), 32)
            new_words.append(kept.word_select(p, 32) | Mux(take, ins, 0))
        m.d.sync += [buf.eq(Cat(*new_words)), lvl.eq(base_lvl + Mux(take, kw, 0))]
        with m.If(fire & partial):
            m.d.sync += [buf.eq(0), lvl.eq(0)]

        # ---------------------------------------------------------------- operation
        with m.If(self.start):
            m.d.sync += [
                state.eq(_State.RUN),
                blk.eq(self.base[bb_bits:]),
                lead.eq(self.base[2:bb_bits]),
                lvl.eq(self.base[2:bb_bits]),
                buf.eq(0),
                err.eq(0),
            ]
        with m.Elif((state == _State.RUN) & self.finish):
            m.d.sync += state.eq(_State.FLUSH)
        with m.Elif((state == _State.FLUSH) & ~full & ~partial & ~in_flight.any() & ~fire):
            m.d.sync += state.eq(_State.DONE)
        return m
