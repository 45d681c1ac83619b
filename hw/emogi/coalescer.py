"""Warp coalescer for zero-copy reads (EMOGI §3.3, Fig. 3; docs/emogi.md, "RTL
warp coalescer"): one warp memory instruction in, the PCIe read requests of 32,
64, 96 or 128 B it needs out, in ascending address order.

Pipeline::

    i ─► W: warp register ──► line picker ──► X: line register ──► run splitter ─► o
         (lines, sector offsets,  (smallest line among      (line, sector mask,   (lowest run of
          remaining-lane mask)     the remaining lanes,       last line of warp)    contiguous sectors)
                                   its lanes' sector mask)

* **W** holds the warp. Every cycle the line picker takes the smallest line
  still touched by a remaining lane (a tree of ``lanes - 1`` comparators), ORs the
  one-hot sector offsets of every remaining lane in that line into a sector
  mask, and retires those lanes. A warp with ``k`` distinct lines takes ``k``
  cycles; W takes the next warp in the cycle it retires its last lanes. A warp
  with no active lane is dropped on input (no request).
* **X** holds one line and its sector mask. Every cycle the run splitter sends
  the lowest run of contiguous set sectors as one request (``mask + lowest bit``
  clears that run) and keeps the rest; X takes the next line in the cycle it
  sends its last run.

So a warp costs max(1, requests) cycles once the pipeline is full: one warp per
cycle when every warp is one line (one 128 B request), and the output never
idles while requests are waiting. The exact output (the request list and its
order) is the TLM's, :func:`golden.emogi.warp_requests`.
"""
from amaranth import *
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out

from golden.emogi.config import CoalescerConfig
from ..component import ConfiguredComponent

__all__ = ["WarpAccess", "ReadRequest", "WarpCoalescer"]


class WarpAccess(data.StructLayout):
    """A warp memory instruction: ``addr`` of every lane (bytes) and the active ``mask``
    (bit ``i`` = lane ``i``)."""

    def __init__(self, config: CoalescerConfig):
        super().__init__({
            "addr": data.ArrayLayout(config.addr_width, config.lanes),
            "mask": config.lanes,
        })


class ReadRequest(data.StructLayout):
    """A PCIe read: ``addr`` (sector aligned), ``size`` in bytes (a multiple of the
    sector, at most a line), ``last`` request of its warp."""

    def __init__(self, config: CoalescerConfig):
        super().__init__({
            "addr": config.addr_width,
            "size": range(config.line_bytes + 1),
            "last": 1,
        })


class WarpCoalescer(ConfiguredComponent):
    """Turns warp memory instructions into line-bounded read requests.

    Parameters
    ----------
    config : :class:`golden.emogi.CoalescerConfig`

    Attributes
    ----------
    i : In(stream.Signature(WarpAccess))
        Warp instructions.
    o : Out(stream.Signature(ReadRequest))
        Read requests, ascending address within a warp, warps in input order.

    Raises
    ------
    TypeError
        ``config`` is not a :class:`CoalescerConfig`.
    """

    def __init__(self, config: CoalescerConfig):
        if not isinstance(config, CoalescerConfig):
            raise TypeError(f"WarpCoalescer needs a CoalescerConfig, not {config!r}")
        super().__init__(config, {
            "i": In(stream.Signature(WarpAccess(config))),
            "o": Out(stream.Signature(ReadRequest(config))),
        })
        # The W and X registers, attributes so that the formal harness's invariants
        # can read them (hw/emogi/formal.py; the Verilog is the same as with locals).
        L, lw = config.lanes, config.addr_width - config.line_bits
        ow, spl = config.line_bits - config.sector_bits, config.sectors_per_line
        self.w_valid = Signal(name="w_valid")
        self.w_line = [Signal(lw, name=f"w_line{i}") for i in range(L)]
        self.w_off = [Signal(ow, name=f"w_off{i}") for i in range(L)]
        self.w_rem = Signal(L, name="w_rem")        # lanes whose line has not been picked yet
        self.x_valid = Signal(name="x_valid")
        self.x_line = Signal(lw, name="x_line")
        self.x_mask = Signal(spl, name="x_mask")
        self.x_last = Signal(name="x_last")         # the warp's last line

    def elaborate(self, platform):
        cfg = self._config
        m = Module()
        L = cfg.lanes
        sb, lb = cfg.sector_bits, cfg.line_bits
        spl = cfg.sectors_per_line
        lw = cfg.addr_width - lb             # line number width

        # ---------------------------------------------------------------- W: warp register
        w_valid, w_line, w_off, w_rem = self.w_valid, self.w_line, self.w_off, self.w_rem

        # Line picker: smallest line among the remaining lanes. The key's top bit is set
        # for lanes that are not remaining, so they lose every comparison.
        keys = []
        for i in range(L):
            k = Signal(lw + 1, name=f"key{i}")
            m.d.comb += k.eq(Cat(w_line[i], ~w_rem[i]))
            keys.append(k)
        level = 0
        while len(keys) > 1:
            nxt = []
            for j in range(0, len(keys), 2):
                a, b = keys[j], keys[j + 1]
                k = Signal(lw + 1, name=f"min{level}_{j // 2}")
                m.d.comb += k.eq(Mux(b < a, b, a))
                nxt.append(k)
            keys, level = nxt, level + 1
        pick = Signal(lw)
        m.d.comb += pick.eq(keys[0][:lw])

        match = Signal(L)
        onehots = []
        for i in range(L):
            m.d.comb += match[i].eq(w_rem[i] & (w_line[i] == pick))
            oh = Signal(spl, name=f"sec{i}")
            m.d.comb += oh.eq(Mux(match[i], (Const(1, spl) << w_off[i])[:spl], 0))
            onehots.append(oh)
        while len(onehots) > 1:
            onehots = [onehots[j] | onehots[j + 1] for j in range(0, len(onehots), 2)]
        pick_mask = Signal(spl)
        m.d.comb += pick_mask.eq(onehots[0])
        rem_next = Signal(L)
        m.d.comb += rem_next.eq(w_rem & ~match)

        # ---------------------------------------------------------------- X: line register
        x_valid, x_line, x_mask, x_last = self.x_valid, self.x_line, self.x_mask, self.x_last

        # Run splitter: ``low`` is the lowest set sector; mask + low carries through the
        # run of ones above it, so mask & ~(mask + low) is that run and mask & (mask + low)
        # what is left.
        low = Signal(spl)
        carry = Signal(spl + 1)
        run = Signal(spl)
        x_rest = Signal(spl)
        m.d.comb += [
            low.eq(x_mask & (~x_mask + 1)[:spl]),
            carry.eq(x_mask + low),
            run.eq(x_mask & ~carry[:spl]),
            x_rest.eq(x_mask & carry[:spl]),
        ]
        first = Signal(range(spl))
        for q in range(1, spl):
            with m.If(low[q]):
                m.d.comb += first.eq(q)
        nsec = Signal(range(spl + 1))
        m.d.comb += nsec.eq(sum(run[q] for q in range(spl)))

        m.d.comb += [
            self.o.valid.eq(x_valid),
            self.o.payload.addr.eq(Cat(Const(0, sb), first, x_line)),
            self.o.payload.size.eq(nsec << sb),
            self.o.payload.last.eq(x_last & (x_rest == 0)),
        ]

        # ---------------------------------------------------------------- handshakes
        x_done = Signal()                    # X sends its last run this cycle
        x_take = Signal()                    # X is free for a new line this cycle
        pick_now = Signal()                  # W hands a line to X this cycle
        w_done = Signal()                    # W retires its last lanes this cycle
        m.d.comb += [
            x_done.eq(x_valid & self.o.ready & (x_rest == 0)),
            x_take.eq(~x_valid | x_done),
            pick_now.eq(w_valid & x_take),
            w_done.eq(pick_now & (rem_next == 0)),
            self.i.ready.eq(~w_valid | w_done),
        ]

        with m.If(self.o.valid & self.o.ready):
            m.d.sync += x_mask.eq(x_rest)
            with m.If(x_rest == 0):
                m.d.sync += x_valid.eq(0)
        with m.If(pick_now):
            m.d.sync += [
                x_valid.eq(1),
                x_line.eq(pick),
                x_mask.eq(pick_mask),
                x_last.eq(rem_next == 0),
                w_rem.eq(rem_next),
            ]
            with m.If(rem_next == 0):
                m.d.sync += w_valid.eq(0)
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [
                w_valid.eq(self.i.payload.mask != 0),
                w_rem.eq(self.i.payload.mask),
            ]
            for i in range(L):
                a = self.i.payload.addr[i]
                m.d.sync += [w_line[i].eq(a[lb:]), w_off[i].eq(a[sb:lb])]
        return m
