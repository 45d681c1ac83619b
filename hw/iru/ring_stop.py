"""The IRU partition's stops on its two rings (IRU paper §3.2.2, Fig. 5 "ring
interconnection"; docs/iru.md, "Ring"): :class:`RequestStop` (the request FIFO and
the request ring: a request this partition cannot answer goes round to the
others) and :class:`ElementStop` (the element ring's register: flits pass, elements
for other partitions and, at the end, the remainder shipped home enter) and the
:class:`Shipper` (when a non-home partition ships its remainder home)."""
from amaranth import *
from amaranth.lib import enum, fifo, stream
from amaranth.lib.wiring import In, Out

from golden.iru import IRUConfig
from .layouts import ConfiguredComponent, FlitKind, IRUElement, IRURequest, RingEntry, RingFlit, RingRequest

__all__ = ["RequestStop", "ElementStop", "Shipper"]


class RequestStop(ConfiguredComponent):
    """The partition's warp requests (``req``) in a FIFO of ``request_depth``; its
    oldest is ``head`` (``head_valid``) with its ``head_age``, the cycles it has been
    the oldest (saturating at the timeout; ``head_timed`` there). The replier
    ``take``-s it, or, with more than one partition, when it cannot answer it
    (``~head_ok``) and no request from the ring passes, it goes onto the request ring
    (``forwarded``) with its age. ``ring_out`` (a register) passes on ``ring_in``
    unless the replier took it (``ring_taken``), one cycle older.
    """

    def __init__(self, config: IRUConfig):
        c = config
        super().__init__(config, {
            "req": In(stream.Signature(IRURequest(c))), "head": Out(IRURequest(c)), "head_valid": Out(1),
            "head_age": Out(range(c.timeout + 1)), "head_timed": Out(1), "take": In(1), "head_ok": In(1),
            "ring_in": In(RingRequest(c)), "ring_taken": In(1), "ring_out": Out(RingRequest(c)),
            "forwarded": Out(1),
        })

    def elaborate(self, platform):
        c = self._config
        m = Module()
        reqw = c.warp_bits + c.slot_bits
        m.submodules.req_q = req_q = fifo.SyncFIFOBuffered(width=reqw, depth=c.request_depth)
        m.d.comb += [req_q.w_stream.valid.eq(self.req.valid),
                     req_q.w_stream.payload.eq(Cat(self.req.p.warp, self.req.p.threads)),
                     self.req.ready.eq(req_q.w_stream.ready)]
        hd = req_q.r_stream
        h_warp = hd.payload[:c.warp_bits]
        h_t = hd.payload[c.warp_bits:reqw]
        # The timeout counts the cycles the oldest request has been the oldest (saturating).
        h_age = self.head_age
        with m.If(~hd.valid | hd.ready):
            m.d.sync += h_age.eq(0)
        with m.Elif(h_age != c.timeout):
            m.d.sync += h_age.eq(h_age + 1)
        m.d.comb += [self.head.warp.eq(h_warp), self.head.threads.eq(h_t), self.head_valid.eq(hd.valid),
                     self.head_timed.eq(h_age == c.timeout)]
        m.d.comb += hd.ready.eq(self.take)

        rq_in, rq_out = self.ring_in, self.ring_out
        fwd = self.forwarded
        if c.partitions > 1:
            rq_pass = rq_in.valid & ~self.ring_taken
            # The oldest request goes onto the ring when this partition cannot answer it
            # now (a reply in progress aside): partitions with full entries take it.
            m.d.comb += fwd.eq(~rq_pass & hd.valid & ~self.take & ~self.head_ok)
            with m.If(rq_pass):
                m.d.sync += [rq_out.eq(rq_in),
                             rq_out.age.eq(Mux(rq_in.age == c.timeout, c.timeout, rq_in.age + 1))]
            with m.Elif(fwd):
                m.d.sync += [rq_out.valid.eq(1), rq_out.warp.eq(h_warp), rq_out.threads.eq(h_t),
                             rq_out.age.eq(h_age)]
            with m.Else():
                m.d.sync += rq_out.valid.eq(0)
            with m.If(fwd):
                m.d.comb += hd.ready.eq(1)
        return m


class ElementStop(ConfiguredComponent):
    """The element ring's register ``ring_out`` of partition ``index`` (more than one
    partition). Each cycle it takes, in this order: the flit on ``ring_in`` unless
    this partition ``consumed`` it (or it is empty); on a non-home partition while
    ``shipping`` its remainder home: the locked entry's top (``ship_e`` of local set
    ``ship_set``, when ``ship_ready``) as a SHIP flit (``ship_pop``), or nothing while
    the next entry is locked (``ship_more``: elements left; ``relock``), or the MARK
    flit (``shipped`` elements, ``tokens``; ``mark``); else the head of the ring
    queue (``queue``) as an ELEM flit; else nothing. A flit put that is not passed
    on: ``put``.
    """

    def __init__(self, config: IRUConfig, home: bool):
        self._home = home
        c = config
        S, E = c.sets, c.entry_size
        super().__init__(config, {
            "ring_in": In(RingFlit(c)), "consumed": In(1), "ring_out": Out(RingFlit(c)), "put": Out(1),
            "queue": In(stream.Signature(RingEntry(c))),
            "shipping": In(1), "ship_ready": In(1), "ship_more": In(1), "ship_set": In(max(1, c.set_bits)),
            "ship_e": In(IRUElement(c)), "shipped": In(range(S * E + 1)), "tokens": In(c.count_width + 1),
            "ship_pop": Out(1), "relock": Out(1), "mark": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        rin, ring_out, q = self.ring_in, self.ring_out, self.queue
        with m.If((rin.kind != FlitKind.NONE) & ~self.consumed):
            m.d.sync += ring_out.eq(rin)
        if not self._home:                # the home partition never ships
            with m.Elif(self.shipping):
                with m.If(self.ship_ready):
                    m.d.sync += [ring_out.kind.eq(FlitKind.SHIP), ring_out.dest.eq(0), ring_out.set.eq(self.ship_set),
                                 ring_out.e.eq(self.ship_e)]
                    m.d.comb += [self.ship_pop.eq(1), self.put.eq(1)]
                with m.Elif(self.ship_more):
                    m.d.sync += ring_out.kind.eq(FlitKind.NONE)
                    m.d.comb += self.relock.eq(1)
                with m.Else():
                    m.d.sync += [ring_out.kind.eq(FlitKind.MARK), ring_out.dest.eq(0), ring_out.e.pos.eq(self.shipped),
                                 ring_out.e.sec.eq(self.tokens)]
                    m.d.comb += self.mark.eq(1)
        with m.Elif(q.valid):
            m.d.sync += [ring_out.kind.eq(FlitKind.ELEM), ring_out.dest.eq(q.p.dest), ring_out.set.eq(q.p.set),
                         ring_out.e.eq(q.p.e)]
            m.d.comb += [q.ready.eq(1), self.put.eq(1)]
        with m.Else():
            m.d.sync += ring_out.kind.eq(FlitKind.NONE)
        return m


class _St(enum.Enum, shape=2):
    NORMAL = 0
    SHIP = 1         # shipping the remainder to the home partition
    DONE = 2


class Shipper(ConfiguredComponent):
    """The state of a non-home partition at the end of an operation (IRU paper §3.2.2:
    the remainder goes to the home partition): ``active`` (answering requests) from
    ``start`` until all input is in (``flush``), the replier is ``idle`` and less
    than a warp's worth is left (``held`` and ``tokens`` below ``entry_size``): then
    ``begin``, and ``shipping`` (the element stop ships the remainder, ``shipped``
    counts its ``ship_pop``-s) until the stop sent the ``mark``; then ``done``.
    """

    def __init__(self, config: IRUConfig):
        c = config
        super().__init__(config, {
            "start": In(1), "flush": In(1), "idle": In(1), "held": In(range(c.sets * c.entry_size + 1)),
            "tokens": In(c.count_width + 1), "ship_pop": In(1), "mark": In(1),
            "active": Out(1), "begin": Out(1), "shipping": Out(1), "done": Out(1),
            "shipped": Out(range(c.sets * c.entry_size + 1)),
        })

    def elaborate(self, platform):
        E = self._config.entry_size
        m = Module()
        pstate = Signal(_St)
        shipped = self.shipped
        m.d.comb += [self.active.eq(pstate == _St.NORMAL), self.shipping.eq(pstate == _St.SHIP),
                     self.done.eq(pstate == _St.DONE),
                     self.begin.eq((pstate == _St.NORMAL) & self.flush & self.idle & (self.held < E) &
                                   (self.tokens < E))]
        with m.If(self.ship_pop):
            m.d.sync += shipped.eq(shipped + 1)
        with m.If(self.mark):
            m.d.sync += pstate.eq(_St.DONE)
        with m.If(self.begin):
            m.d.sync += [pstate.eq(_St.SHIP), shipped.eq(0)]
        with m.If(self.start):
            m.d.sync += pstate.eq(_St.NORMAL)
        return m
