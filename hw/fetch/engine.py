"""Fetch engine: reads ranges of elements through the memory port and streams them
out in order (SCU paper §3.1, Fig. 7: Address Generator, Data Fetch, Coalescing
Unit; reused by the IRU prefetcher and GraphPEG's edge fetch).

Pipeline (docs/architecture.md, "Fetch engine"), one component per stage::

    cmd ─► FetchIssue: address generator ─► coalescer ─┬─► mem.req
                       (block segments)     (window of │
                                             K blocks) └─► order FIFO ─► FetchReader ─► Packer ─► o
    mem.resp ─► block buffers (max_inflight slots, any order) ─────────────┘ (read, extract)

The exact behaviour (which reads merge, what each beat holds, how errors are
reported) is the TLM's, :func:`golden.fetch.fetch_reference`.
"""
from amaranth.hdl import C, Cat, Module, Mux, Signal
from amaranth.lib import data, fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from golden.fetch import FetchConfig
from ..component import ConfiguredComponent
from ..mem.port import MemPortSignature, MemRequest

__all__ = ["FetchCommand", "FetchError", "FetchBeat", "FetchEngine", "FetchIssue", "FetchReader", "Packer"]


class FetchCommand(data.StructLayout):
    """One range: ``base`` byte address, ``count`` elements, ``esize8`` (0: 4 B,
    1: 8 B elements), ``last`` (ends the operation)."""

    def __init__(self, config: FetchConfig):
        super().__init__({
            "base": config.addr_width,
            "count": config.count_width,
            "esize8": 1,
            "last": 1,
        })


class FetchError(data.StructLayout):
    """Error flags of an operation: ``mem`` (a response had its error flag),
    ``cmd`` (a range with a misaligned base, an unsupported element size, or
    bytes past the top of the address space; such a range reads nothing)."""

    def __init__(self):
        super().__init__({"mem": 1, "cmd": 1})


class FetchBeat(data.StructLayout):
    """Output beat: ``data`` lanes, ``n`` valid lanes (from lane 0), ``last``,
    ``error`` (valid with ``last``)."""

    def __init__(self, config: FetchConfig):
        super().__init__({
            "data": data.ArrayLayout(config.lane_bits, config.width),
            "n": range(config.width + 1),
            "last": 1,
            "error": FetchError(),
        })


class _Segment(data.StructLayout):
    # The elements of one range that lie in one block, as queued in order.
    def __init__(self, config: FetchConfig):
        wpb = config.words_per_block
        super().__init__({
            "slot": config.tag_width,
            "off": range(wpb),          # first word in the block
            "n": range(wpb + 1),        # elements
            "esize8": 1,
            "last": 1,
            "marker": 1,                # no data (empty range or command error)
            "cmd_err": 1,
            "free_to": config.tag_width + 1,
        })


class _Extracted(data.StructLayout):
    # One segment's elements, read from its block buffer and aligned to lane 0.
    def __init__(self, config: FetchConfig):
        super().__init__({
            "lanes": data.ArrayLayout(config.lane_bits, config.words_per_block),
            "n": range(config.words_per_block + 1),
            "last": 1,
            "mem_err": 1,
            "cmd_err": 1,
        })


class FetchIssue(ConfiguredComponent):
    """Address Generator and Coalescing Unit (SCU paper §3.1, Fig. 7): splits each
    range into the segments that lie in one block, reads a block unless one of
    the last ``merge_window`` blocks requested in the operation holds it (then
    the segment shares that read), and queues every segment in order (``seg``).
    Block buffer slots are allocated in a ring: ``free_ptr`` (from the reader)
    says how far they were released; ``alloc`` names a slot allocated this cycle
    (its buffer is marked empty). ``req.valid`` waits for ``seg.ready`` (a read's
    segment is queued as it is issued), so ``seg.ready`` must not fall while a
    read waits: the order FIFO's write ready falls only on a write."""

    def __init__(self, config: FetchConfig):
        tagw = config.tag_width
        super().__init__(config, {
            "cmd": In(stream.Signature(FetchCommand(config))),
            "req": Out(stream.Signature(MemRequest(config.port))),
            "seg": Out(stream.Signature(_Segment(config))),
            "free_ptr": In(tagw + 1),
            "alloc": Out(1),
            "alloc_slot": Out(tagw),
            "busy": Out(1),
        })
        # The address generator's registers and the allocation pointer: attributes
        # for the formal harness's invariants (hw/fetch/formal.py).
        self.ag_valid = Signal()
        self.ag_addr = Signal(config.addr_width)
        self.ag_rem = Signal(config.count_width)
        self.ag_e8 = Signal()
        self.ag_last = Signal()
        self.ag_bad = Signal()
        self.alloc_ptr = Signal(tagw + 1)   # A: slots allocated so far (mod 2M)
        K = config.merge_window              # the last K blocks requested, newest first
        self.win_valid = [Signal(name=f"win_valid{k}") for k in range(K)]
        self.win_block = [Signal(config.addr_width - exact_log2(config.block_bytes), name=f"win_block{k}")
                          for k in range(K)]
        self.win_slot = [Signal(tagw, name=f"win_slot{k}") for k in range(K)]
        self.win_count = Signal(range(max(K, 1) + 1))

    def elaborate(self, platform):
        cfg = self._config
        m = Module()
        bb_bits = exact_log2(cfg.block_bytes)
        wpb = cfg.words_per_block
        tagw = cfg.tag_width
        K = cfg.merge_window
        support8 = cfg.max_elem_bytes == 8

        # ---------------------------------------------------------------- address generator
        ag_valid, ag_addr, ag_rem = self.ag_valid, self.ag_addr, self.ag_rem
        ag_e8, ag_last, ag_bad = self.ag_e8, self.ag_last, self.ag_bad

        block = ag_addr[bb_bits:]
        word_off = Signal(range(wpb))
        m.d.comb += word_off.eq(ag_addr[2:bb_bits])
        elem_off = Mux(ag_e8, word_off >> 1, word_off)
        epb = Mux(ag_e8, wpb // 2, wpb)
        room = Signal(range(wpb + 1))
        m.d.comb += room.eq(epb - elem_off)
        seg_n = Signal(range(wpb + 1))
        final = Signal()
        m.d.comb += [
            final.eq(ag_bad | (ag_rem <= room)),
            seg_n.eq(Mux(ag_bad, 0, Mux(ag_rem <= room, ag_rem, room))),
        ]
        marker = Signal()
        m.d.comb += marker.eq(seg_n == 0)
        seg_last = ag_last & final

        # ---------------------------------------------------------------- coalescer
        alloc_ptr = self.alloc_ptr
        free_ptr = self.free_ptr            # F: slots released so far (mod 2M)
        slot_free = Signal()
        m.d.comb += slot_free.eq(~((alloc_ptr[tagw] != free_ptr[tagw]) &
                                   (alloc_ptr[:tagw] == free_ptr[:tagw])))

        win_valid, win_block, win_slot, win_count = self.win_valid, self.win_block, self.win_slot, self.win_count
        hit = Signal()
        hit_slot = Signal(tagw)
        for k in range(K):
            with m.If(win_valid[k] & (win_block[k] == block)):
                m.d.comb += [hit.eq(1), hit_slot.eq(win_slot[k])]

        seg_w = self.seg.p
        need_alloc = Signal()
        m.d.comb += need_alloc.eq(~marker & ~hit)
        req = self.req
        m.d.comb += [
            req.valid.eq(ag_valid & need_alloc & slot_free & self.seg.ready),
            req.p.addr.eq(Cat(C(0, bb_bits), block)),
            req.p.write.eq(0),
            req.p.tag.eq(alloc_ptr[:tagw]),
            self.seg.valid.eq(ag_valid & (~need_alloc | (slot_free & req.ready))),
        ]
        seg_take = Signal()
        m.d.comb += seg_take.eq(self.seg.valid & self.seg.ready)

        alloc_next = Signal(tagw + 1)
        count_next = Signal(range(max(K, 1) + 1))
        m.d.comb += [
            alloc_next.eq(alloc_ptr + need_alloc),
            count_next.eq(Mux(seg_last, 0, Mux(need_alloc & (win_count < K), win_count + 1, win_count)) if K else 0),
            seg_w.slot.eq(Mux(need_alloc, alloc_ptr[:tagw], hit_slot)),
            seg_w.off.eq(word_off),
            seg_w.n.eq(seg_n),
            seg_w.esize8.eq(ag_e8),
            seg_w.last.eq(seg_last),
            seg_w.marker.eq(marker),
            seg_w.cmd_err.eq(ag_bad),
            seg_w.free_to.eq(alloc_next - count_next),
            self.alloc.eq(seg_take & need_alloc),
            self.alloc_slot.eq(alloc_ptr[:tagw]),
        ]

        with m.If(seg_take):
            m.d.sync += win_count.eq(count_next)
            with m.If(need_alloc):
                m.d.sync += alloc_ptr.eq(alloc_next)
                if K:
                    m.d.sync += [win_valid[0].eq(1), win_block[0].eq(block), win_slot[0].eq(alloc_ptr[:tagw])]
                    for k in range(1, K):
                        m.d.sync += [win_valid[k].eq(win_valid[k - 1]),
                                     win_block[k].eq(win_block[k - 1]),
                                     win_slot[k].eq(win_slot[k - 1])]
            with m.If(seg_last):
                m.d.sync += [v.eq(0) for v in win_valid]

        # AG: advance within the range, or load the next command.
        m.d.comb += self.cmd.ready.eq(~ag_valid | (seg_take & final))
        with m.If(seg_take & ~final):
            m.d.sync += [
                ag_addr.eq(ag_addr + Mux(ag_e8, seg_n << 3, seg_n << 2)),
                ag_rem.eq(ag_rem - seg_n),
            ]
        # Command errors: a misaligned base, 8-byte elements on a 4-byte engine, or
        # a range whose last byte lies past the top of the address space (it would
        # wrap around to address 0): base + count * esize > 2**addr_width.
        c = self.cmd.p
        misaligned = Mux(c.esize8, c.base[:3] != 0, c.base[:2] != 0)
        cmd_end = Signal(cfg.addr_width + cfg.count_width + 4)
        cmd_bad = Signal()
        m.d.comb += [
            cmd_end.eq(c.base + Mux(c.esize8, c.count << 3, c.count << 2)),
            cmd_bad.eq(misaligned | (c.esize8 & (not support8)) | (cmd_end > (1 << cfg.addr_width))),
        ]
        with m.If(self.cmd.valid & self.cmd.ready):
            m.d.sync += [
                ag_valid.eq(1), ag_addr.eq(c.base), ag_rem.eq(c.count),
                ag_e8.eq(c.esize8), ag_last.eq(c.last), ag_bad.eq(cmd_bad),
            ]
        with m.Elif(seg_take & final):
            m.d.sync += ag_valid.eq(0)
        m.d.comb += self.busy.eq(ag_valid | (alloc_ptr != free_ptr))
        return m


class FetchReader(ConfiguredComponent):
    """Data Fetch's read side (SCU paper §3.1): takes the oldest queued segment
    once its block has arrived (``data_valid`` of its slot, kept by the engine
    from the memory's responses), reads the block buffer (``rd_*``: the
    engine's memory read port) and extracts the segment's elements into lanes
    0..n-1 (``x``). Releases the segment's slots (``free_ptr``)."""

    def __init__(self, config: FetchConfig):
        M, tagw = config.max_inflight, config.tag_width
        super().__init__(config, {
            "seg": In(stream.Signature(_Segment(config))),
            "x": Out(stream.Signature(_Extracted(config))),
            "data_valid": In(M),
            "data_error": In(M),
            "rd_addr": Out(tagw),
            "rd_en": Out(1),
            "rd_data": In(8 * config.block_bytes),
            "free_ptr": Out(tagw + 1),
        })

    def elaborate(self, platform):
        cfg = self._config
        m = Module()
        wpb = cfg.words_per_block
        LB = cfg.lane_bits
        support8 = cfg.max_elem_bytes == 8
        head = self.seg.p
        x = self.x
        x_off = Signal(range(wpb))
        x_e8 = Signal()
        x_take = Signal()
        head_ready = Signal()
        m.d.comb += [
            head_ready.eq(head.marker | self.data_valid.bit_select(head.slot, 1)),
            x_take.eq(x.valid & x.ready),
        ]
        pop = Signal()
        m.d.comb += [
            self.seg.ready.eq(head_ready & (~x.valid | x_take)),
            pop.eq(self.seg.valid & self.seg.ready),
            self.rd_addr.eq(head.slot),
            self.rd_en.eq(pop),
        ]
        with m.If(pop):
            m.d.sync += [
                x.valid.eq(1), x_off.eq(head.off), x.p.n.eq(head.n), x_e8.eq(head.esize8),
                x.p.last.eq(head.last), x.p.cmd_err.eq(head.cmd_err),
                x.p.mem_err.eq(~head.marker & self.data_error.bit_select(head.slot, 1)),
                self.free_ptr.eq(head.free_to),
            ]
        with m.Elif(x_take):
            m.d.sync += x.valid.eq(0)

        # extract: the segment's words from its offset, 4- or 8-byte lanes
        shifted = Signal(8 * cfg.block_bytes)
        m.d.comb += shifted.eq(self.rd_data >> (x_off * 32))
        for i in range(wpb):
            lane = Signal(LB, name=f"x_lane{i}")
            w32 = shifted.word_select(i, 32)
            if support8 and 2 * i + 1 < wpb:
                w64 = shifted.word_select(i, 64)
                m.d.comb += lane.eq(Mux(x_e8, w64, w32))
            elif support8:
                m.d.comb += lane.eq(Mux(x_e8, 0, w32))
            else:
                m.d.comb += lane.eq(w32)
            m.d.comb += x.p.lanes[i].eq(Mux(i < x.p.n, lane, 0))
        return m


class Packer(ConfiguredComponent):
    """Data Store's input side for the output stream (SCU paper §3.1): packs the
    extracted segments (``x``) into beats of ``width`` lanes (``o``); an
    operation's last beat is partial (possibly empty) and carries its error
    flags. Holds up to ``width + words_per_block`` lanes."""

    def __init__(self, config: FetchConfig):
        super().__init__(config, {
            "x": In(stream.Signature(_Extracted(config))),
            "o": Out(stream.Signature(FetchBeat(config))),
            "busy": Out(1),
        })
        cap = config.width + config.words_per_block
        # lanes held, and "the operation's last segment is in": attributes for the
        # formal harness's invariants (hw/fetch/formal.py)
        self.lvl = Signal(range(cap + 1))
        self.pend_last = Signal()

    def elaborate(self, platform):
        cfg = self._config
        m = Module()
        LB, W = cfg.lane_bits, cfg.width
        CAP = W + cfg.words_per_block       # capacity, in lanes
        x = self.x
        buf = Signal(CAP * LB)
        lvl, pend_last = self.lvl, self.pend_last
        err_mem = Signal()
        err_cmd = Signal()
        o = self.o
        o_fire = Signal()
        n_out = Signal(range(W + 1))
        m.d.comb += [
            o.valid.eq((lvl > W) | pend_last),
            o.p.n.eq(Mux(lvl > W, W, lvl)),
            o.p.last.eq(pend_last & (lvl <= W)),
            o.p.error.mem.eq(o.p.last & err_mem),
            o.p.error.cmd.eq(o.p.last & err_cmd),
            o.p.data.as_value().eq(buf[:W * LB]),
            o_fire.eq(o.valid & o.ready),
            n_out.eq(Mux(o_fire, o.p.n, 0)),
        ]
        base_lvl = Signal(range(CAP + 1))
        x_take = Signal()
        m.d.comb += [
            base_lvl.eq(lvl - n_out),
            x.ready.eq((~pend_last | (o_fire & o.p.last)) & (base_lvl + x.p.n <= CAP)),
            x_take.eq(x.valid & x.ready),
        ]
        keep_src = Cat(buf, C(0, W * LB))
        ins_src = Cat(C(0, CAP * LB), x.p.lanes.as_value(), C(0, CAP * LB))
        new_lanes = []
        for p in range(CAP):
            keep = keep_src.word_select(p + n_out, LB)
            ins = ins_src.word_select((p + CAP - base_lvl).as_unsigned(), LB)
            new_lanes.append(keep | Mux(x_take, ins, 0))
        m.d.sync += [
            buf.eq(Cat(*new_lanes)),
            lvl.eq(base_lvl + Mux(x_take, x.p.n, 0)),
        ]
        op_end = o_fire & o.p.last
        m.d.sync += [
            pend_last.eq((pend_last & ~op_end) | (x_take & x.p.last)),
            err_mem.eq((err_mem & ~op_end) | (x_take & x.p.mem_err)),
            err_cmd.eq((err_cmd & ~op_end) | (x_take & x.p.cmd_err)),
        ]
        m.d.comb += self.busy.eq((lvl != 0) | pend_last)
        return m


class FetchEngine(ConfiguredComponent):
    """Reads ranges of 4/8-byte elements and emits them in order, ``width`` per beat.

    Parameters
    ----------
    config : :class:`golden.fetch.FetchConfig`

    Attributes
    ----------
    cmd : In(stream.Signature(FetchCommand))
        Ranges to read; a range with ``last`` ends an operation.
    o : Out(stream.Signature(FetchBeat))
        Elements in order; one beat per ``width`` elements, the last beat of an
        operation partial (possibly empty) with ``last`` and the error flags.
    mem : Out(MemPortSignature)
        Read requests (tag = block buffer slot); responses in any order.
    busy : Out(1)
        An operation is in progress.
    """

    def __init__(self, config: FetchConfig):
        if not isinstance(config, FetchConfig):
            raise TypeError(f"FetchEngine needs a FetchConfig, not {config!r}")
        super().__init__(config, {
            "cmd": In(stream.Signature(FetchCommand(config))),
            "o": Out(stream.Signature(FetchBeat(config))),
            "mem": Out(MemPortSignature(config.port)),
            "busy": Out(1),
        })
        # The stages and the slots' flags: attributes for the formal harness's
        # invariants (hw/fetch/formal.py), which also swaps the order FIFO for one
        # whose entries it can read (``order_fifo``).
        self.issue = FetchIssue(config)
        self.order = self.order_fifo(width=_Segment(config).size, depth=config.order_depth)
        self.reader = FetchReader(config)
        self.packer = Packer(config)
        for stage in (self.issue, self.order, self.reader, self.packer):
            stage._MustUse__silence = True  # elaborated with the engine (which warns if it is not)
        M = config.max_inflight
        self.data_valid = Signal(M)         # the slot's response arrived
        self.data_error = Signal(M)         # ... with its error flag

    #: The in-order segment queue's class (Amaranth's buffered FIFO).
    order_fifo = fifo.SyncFIFOBuffered

    def elaborate(self, platform):
        cfg = self._config
        m = Module()
        m.submodules.issue = issue = self.issue
        m.submodules.order = order = self.order
        m.submodules.reader = reader = self.reader
        m.submodules.packer = packer = self.packer
        wiring.connect(m, wiring.flipped(self.cmd), issue.cmd)
        wiring.connect(m, issue.req, wiring.flipped(self.mem.req))
        m.d.comb += [
            order.w_stream.valid.eq(issue.seg.valid),
            order.w_stream.payload.eq(issue.seg.p.as_value()),
            issue.seg.ready.eq(order.w_stream.ready),
            reader.seg.valid.eq(order.r_stream.valid),
            reader.seg.p.as_value().eq(order.r_stream.payload),
            order.r_stream.ready.eq(reader.seg.ready),
            issue.free_ptr.eq(reader.free_ptr),
        ]
        wiring.connect(m, reader.x, packer.x)
        wiring.connect(m, packer.o, wiring.flipped(self.o))

        # Block buffers: one per slot, written by the responses in any order.
        M = cfg.max_inflight
        m.submodules.buffers = buffers = memory.Memory(shape=8 * cfg.block_bytes, depth=M, init=[])
        wp = buffers.write_port()
        rp = buffers.read_port(domain="sync")
        resp = self.mem.resp
        data_valid, data_error = self.data_valid, self.data_error
        m.d.comb += [
            resp.ready.eq(1),
            wp.addr.eq(resp.p.tag),
            wp.data.eq(resp.p.rdata),
            wp.en.eq(resp.valid),
            rp.addr.eq(reader.rd_addr),
            rp.en.eq(reader.rd_en),
            reader.rd_data.eq(rp.data),
            reader.data_valid.eq(data_valid),
            reader.data_error.eq(data_error),
        ]
        with m.If(issue.alloc):
            m.d.sync += data_valid.bit_select(issue.alloc_slot, 1).eq(0)
        with m.If(resp.valid):
            m.d.sync += [
                data_valid.bit_select(resp.p.tag, 1).eq(1),
                data_error.bit_select(resp.p.tag, 1).eq(resp.p.error),
            ]
        m.d.comb += self.busy.eq(issue.busy | order.r_stream.valid | reader.x.valid | packer.busy |
                                 order.level.any())
        return m
