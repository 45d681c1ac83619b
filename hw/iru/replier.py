"""The IRU partition's data replier (IRU paper §3.2, Fig. 5 "data replier"; docs/iru.md,
"Data replier"): which request to answer and how (:class:`ReplyChoice`), and the
reply's beats of one or two lanes from the locked entry's top (:class:`ReplySender`)."""
from amaranth import *
from amaranth.lib import enum, stream
from amaranth.lib.wiring import In, Out

from golden.iru import KIND_CODES, IRUConfig
from .layouts import ConfiguredComponent, IRUElement, IRUReplyBeat, IRURequest, RingRequest

__all__ = ["ReplyChoice", "ReplySender"]


class ReplyChoice(ConfiguredComponent):
    """The replier's choice (comb): for a request of ``t`` threads the first rule
    that applies gives the reply's kind (docs/iru.md's table): ``entry`` (the fullest
    entry, ``best_cnt``, holds ``t``), ``disabled`` (``tokens >= t``), ``timeout``
    (the request ``timed`` out) or ``flush`` (``flush``) when the partition ``held``
    ``t``, and on the home partition ``final`` (``final_ok``). A request from the
    request ring (``ring``, with its age; more than one partition) goes before the
    partition's own oldest one (``head``, ``head_valid``, ``head_timed``); nothing is
    taken unless the replier is ``idle`` and the partition ``active``.

    ``take_ring`` / ``take_head``: the request taken; ``head_ok``: the oldest one
    could be answered now; ``warp``, ``threads``, ``kind``: the taken request's;
    ``live``: its live lanes (``t``, ``min(held, t)`` on a final reply, 0 on a
    disabled one).

    Parameters
    ----------
    config : IRUConfig
    home : bool
        Partition 0 (the only one that sends final replies).
    """

    def __init__(self, config: IRUConfig, home: bool):
        self._home = home
        c = config
        super().__init__(config, {
            "best_cnt": In(c.slot_bits), "tokens": In(c.count_width + 1), "held": In(range(c.sets * c.entry_size + 1)),
            "flush": In(1), "final_ok": In(1), "active": In(1), "idle": In(1),
            "ring": In(RingRequest(c)), "head_valid": In(1), "head": In(IRURequest(c)), "head_timed": In(1),
            "take_ring": Out(1), "take_head": Out(1), "head_ok": Out(1),
            "warp": Out(c.warp_bits), "threads": Out(c.slot_bits), "kind": Out(3), "live": Out(c.slot_bits),
        })

    def elaborate(self, platform):
        c = self._config
        m = Module()
        held, tokens, flush, rq = self.held, self.tokens, self.flush, self.ring

        def can(t, timed, name):
            """(ok, kind) of a request of ``t`` threads."""
            kind = Signal(3, name=f"{name}_kind")
            ok = Signal(name=f"{name}_ok")
            with m.If(self.best_cnt >= t):
                m.d.comb += [ok.eq(1), kind.eq(KIND_CODES["entry"])]
            with m.Elif(tokens >= t):
                m.d.comb += [ok.eq(1), kind.eq(KIND_CODES["disabled"])]
            with m.Elif((timed | flush) & (held >= t)):
                m.d.comb += [ok.eq(1), kind.eq(Mux(flush, KIND_CODES["flush"], KIND_CODES["timeout"]))]
            if self._home:
                with m.Elif(self.final_ok):
                    m.d.comb += [ok.eq(1), kind.eq(KIND_CODES["final"])]
            return ok & self.active, kind

        if c.partitions > 1:
            rq_ok, rq_kind = can(rq.threads, rq.age == c.timeout, "rqc")
        else:   # no request ring: nothing to compare (and no constant comparisons for lint)
            rq_ok, rq_kind = C(0, 1), C(0, 3)
        hd_ok, hd_kind = can(self.head.threads, self.head_timed, "hdc")
        idle_r = self.idle & self.active
        take_rq, take_hd = self.take_ring, self.take_head
        if c.partitions > 1:
            m.d.comb += take_rq.eq(idle_r & rq.valid & rq_ok)
        m.d.comb += [take_hd.eq(idle_r & ~take_rq & self.head_valid & hd_ok), self.head_ok.eq(hd_ok)]
        t_t = self.threads
        m.d.comb += [self.warp.eq(Mux(take_rq, rq.warp, self.head.warp)), t_t.eq(Mux(take_rq, rq.threads, self.head.threads)),
                     self.kind.eq(Mux(take_rq, rq_kind, hd_kind))]
        with m.Switch(self.kind):
            with m.Case(KIND_CODES["entry"], KIND_CODES["timeout"], KIND_CODES["flush"]):
                m.d.comb += self.live.eq(t_t)
            with m.Case(KIND_CODES["final"]):
                m.d.comb += self.live.eq(Mux(held < t_t, held, t_t))
            with m.Default():
                m.d.comb += self.live.eq(0)
        return m


class _R(enum.Enum, shape=1):
    IDLE = 0
    SEND = 1


class ReplySender(ConfiguredComponent):
    """The reply in progress: on ``take``, a reply to ``warp`` of ``threads`` lanes,
    ``live`` of them live, of ``kind``; ``busy`` until its last beat went out. Live
    lanes come first, from the locked entry (``lock_cnt`` elements; its ``top`` and
    ``top2`` below it): two a beat when the entry holds two, the last live lane with
    a disabled one; then disabled lanes, two a beat. An empty locked entry while live
    lanes are due is a bubble (``bubble``: lock the next fullest entry).

    ``offer``: the top is offered as a live lane; ``pop``: it is taken this cycle,
    ``npop`` live lanes (0-2) with it; ``dis``: disabled lanes (tokens) handed out
    this cycle; ``done``: the reply's last beat went out.

    Parameters
    ----------
    config : IRUConfig
    home : bool
        Partition 0. Only its replies can be ``final`` (the highest kind code): on
        the others the kind register leaves out that bit (no flip-flop for it).
    """

    def __init__(self, config: IRUConfig, home: bool):
        self._home = home
        c = config
        SW = c.slot_bits
        super().__init__(config, {
            "take": In(1), "warp": In(c.warp_bits), "threads": In(SW), "kind": In(3), "live": In(SW),
            "lock_cnt": In(SW), "top": In(IRUElement(c)), "top2": In(IRUElement(c)),
            "reply": Out(stream.Signature(IRUReplyBeat(c))),
            "busy": Out(1), "offer": Out(1), "pop": Out(1), "npop": Out(2), "dis": Out(2), "bubble": Out(1),
            "done": Out(1),
        })

    def elaborate(self, platform):
        c = self._config
        SW = c.slot_bits
        m = Module()
        rstate = Signal(_R)
        r_warp = Signal(c.warp_bits)
        r_t = Signal(SW)
        r_kind = Signal(3)
        r_live = Signal(SW)
        r_sent = Signal(SW)
        lock_cnt, top, top2 = self.lock_cnt, self.top, self.top2
        m.d.comb += self.busy.eq(rstate == _R.SEND)

        rp = self.reply
        live_beat = r_sent < r_live
        rem = Signal(SW + 1)        # lanes of the reply still to send
        live_rem = Signal(SW + 1)   # live lanes still to send
        m.d.comb += [rem.eq(r_t - r_sent), live_rem.eq(r_live - r_sent)]
        m.d.comb += [rp.p.warp.eq(r_warp), rp.p.kind.eq(r_kind),
                     rp.p.last.eq(r_sent + 1 + rp.p.two == r_t)]
        with m.If(rstate == _R.SEND):
            with m.If(live_beat):
                with m.If(lock_cnt != 0):
                    # two live lanes when the entry holds two; the last live lane with a disabled one
                    two_live = (live_rem >= 2) & (lock_cnt >= 2)
                    one_dis = (live_rem == 1) & (rem >= 2)
                    m.d.comb += [rp.valid.eq(1), rp.p.idx.eq(top.idx), rp.p.sec.eq(top.sec), rp.p.pos.eq(top.pos),
                                 rp.p.two.eq(two_live | one_dis), rp.p.disabled1.eq(one_dis)]
                    with m.If(two_live):
                        m.d.comb += [rp.p.idx1.eq(top2.idx), rp.p.sec1.eq(top2.sec), rp.p.pos1.eq(top2.pos)]
                    m.d.comb += [self.offer.eq(1), self.pop.eq(rp.ready),
                                 self.npop.eq(Mux(rp.ready, Mux(two_live, 2, 1), 0)),
                                 self.dis.eq(rp.ready & one_dis)]
                with m.Else():
                    m.d.comb += self.bubble.eq(1)        # the next fullest entry (a bubble)
            with m.Else():
                m.d.comb += [rp.valid.eq(1), rp.p.disabled.eq(1), rp.p.two.eq(rem >= 2), rp.p.disabled1.eq(1),
                             self.dis.eq(Mux(rp.ready, Mux(rem >= 2, 2, 1), 0))]
            with m.If(rp.valid & rp.ready):
                m.d.sync += r_sent.eq(r_sent + 1 + rp.p.two)
                with m.If(rp.p.last):
                    m.d.sync += rstate.eq(_R.IDLE)
                    m.d.comb += self.done.eq(1)
        with m.If(self.take):
            kind = self.kind if self._home else self.kind[:2]       # final (4): home only
            m.d.sync += [rstate.eq(_R.SEND), r_warp.eq(self.warp), r_t.eq(self.threads), r_kind.eq(kind),
                         r_live.eq(self.live), r_sent.eq(0)]
        return m
