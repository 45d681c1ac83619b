"""GraphPEG on ``sms`` SMs: one engine per SM, the EF balancer and the memory
arbiter (paper §3.3.2, Fig. 6; docs/graphpeg.md).

The balancer is the control processor's EF policy, in RTL: the paper runs it on
the GPU's control processor through each SM's registers R_EFS, R_BC, R_BS,
R_BW0, R_BW1; here a small state machine drives the same registers (so the top
is self-contained and runs at simulator speed without Python in every cycle).
Every ``ef_interval`` cycles of a kernel it reads R_EFS of every SM; if ``Rmax -
Rmin >= 2`` and ``>= Rmax >> N`` it puts the minimum SM in ERS, and when that SM
reports a free ALWT entry, the maximum SM in ED with the balance ``(Rmax - Rmin)
// 2``; the donor reports the range it gave (R_BW0, R_BW1 and the vertex), which
the balancer copies to the receiver in ER. Each step waits one cycle and then
for the SM's R_BS. The kernel ends when every SM is idle and no exchange is in
progress. Every decision ends with a one-cycle ``ef_event`` and its ``ef_info``
(donor, receiver, balance, outcome, moved range): the TLM's ``EFDecision`` log.

Commands (``cmd``): ``setup`` (clear the vertex lists, set the spill regions)
and ``run`` (one kernel); each completes with one ``status``.
"""
from amaranth import *
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from golden.graphpeg import CMD_OPS, EF_BC, EF_BS, EF_OUTCOMES, GraphPEGConfig
from ..mem.arbiter import MemArbiter
from ..mem.port import MemPortSignature
from .engine import GraphPEGSM, PopBeat, PushItem, check_rtl_config
from .layouts import ConfiguredComponent

__all__ = ["GraphPEGCommand", "GraphPEGStatus", "EFEvent", "EFRegisters", "EFBalancer", "GraphPEG"]


class GraphPEGCommand(data.StructLayout):
    """``op`` (0 setup, 1 run), the kernel's ``vertex_mode``, ``csc``, ``use_wt``,
    ``row_ptr``, ``col``, ``weight``; EF balancing ``ef``, ``ef_interval``,
    ``ef_shift``; setup's ``spill_base`` and ``spill_stride``."""

    def __init__(self, config: GraphPEGConfig):
        aw = config.addr_width
        super().__init__({"op": 1, "vertex_mode": 1, "csc": 1, "use_wt": 1, "ef": 1, "ef_interval": 16,
                          "ef_shift": 5, "row_ptr": aw, "col": aw, "weight": aw, "spill_base": aw,
                          "spill_stride": aw})


class GraphPEGStatus(data.StructLayout):
    """Completion of a command: ``cycles`` (command to status), ``items`` handed out,
    EF ``exchanges`` and ``moved`` edges, ``alwt_full`` and ``buffer_full`` (SM-cycles
    in which a vertex waited for an ALWT entry, and the FE entry for room in the
    edge buffer), ``mem_error``, ``overflow`` (a spill region was full),
    ``cmd_error`` (run before setup, misaligned spill regions)."""

    def __init__(self, config: GraphPEGConfig):
        super().__init__({"op": 1, "cycles": 32, "items": 32, "exchanges": 16, "moved": 32, "alwt_full": 32,
                          "buffer_full": 32, "mem_error": 1, "overflow": 1, "cmd_error": 1})


class EFEvent(data.StructLayout):
    """One decision of the balancer, reported when it ends: SM ``donor`` was to give
    ``size`` edges (the balance) to SM ``recv``; ``outcome`` (``EF_OUTCOMES``: moved,
    no_entry, nothing); for a moved entry ``[bw0, bw1)`` of vertex ``v`` (R_BW0,
    R_BW1, R_BV), else zeros."""

    def __init__(self):
        super().__init__({"donor": 8, "recv": 8, "size": 32, "outcome": 2, "v": 32, "bw0": 32, "bw1": 32})


class _Top(enum.Enum, shape=3):
    IDLE = 0
    PULSE = 1
    START = 2
    RUN = 3
    FINISH = 4
    STATUS = 5


class _Bal(enum.Enum, shape=2):
    IDLE = 0
    ERS = 1
    ED = 2
    ER = 3


class EFRegisters(wiring.Signature):
    """One SM's EF registers as the balancer sees them (paper §3.3.2): R_EFS (edges
    left in its FE entries), R_BS (its answer), R_BW0, R_BW1 and the vertex of a
    range it gave (``*_o``) in; R_BC (the command), the balance (``bw_size``) and a
    range to take (``*_i``) out."""

    def __init__(self):
        super().__init__({"efs": In(32), "bs": In(2), "bw0_o": In(32), "bw1_o": In(32), "bv_o": In(32),
                          "bc": Out(2), "bw_size": Out(32), "bw0_i": Out(32), "bw1_i": Out(32), "bv_i": Out(32)})


class EFBalancer(wiring.Component):
    """The control processor's EF policy in RTL (paper §3.3.2; the module
    docstring): every ``ef_interval`` cycles of a running kernel (``running``) it
    compares the SMs' R_EFS and moves half the difference from the fullest to the
    emptiest through ERS, ED and ER. ``clear`` (a command starts) resets its timer
    and its counts of ``exchanges`` and ``moved`` edges; ``idle``: no decision in
    progress. Every decision ends with ``event`` and its ``info``."""

    def __init__(self, sms: int):
        self._sms = sms
        super().__init__({"sm": Out(EFRegisters()).array(sms), "running": In(1), "clear": In(1), "ef": In(1),
                          "ef_interval": In(16), "ef_shift": In(5), "idle": Out(1), "exchanges": Out(16),
                          "moved": Out(32), "event": Out(1), "info": Out(EFEvent())})

    def elaborate(self, platform):
        m = Module()
        N = self._sms
        sms = self.sm
        bal = Signal(_Bal)
        armed = Signal()
        pending = Signal()
        timer = Signal(16)
        donor = Signal(range(max(N, 2)))
        recv = Signal(range(max(N, 2)))
        size = Signal(32)
        bw0 = Signal(32)
        bw1 = Signal(32)
        bv = Signal(32)
        exchanges, moved = self.exchanges, self.moved
        efs = [sm.efs for sm in sms]
        rmax, imax, rmin, imin = efs[0], C(0, max(1, (N - 1).bit_length())), efs[0], C(0, max(1, (N - 1).bit_length()))
        for k in range(1, N):
            hi = efs[k] > rmax
            lo = efs[k] < rmin
            rmax, imax = Mux(hi, efs[k], rmax), Mux(hi, k, imax)
            rmin, imin = Mux(lo, efs[k], rmin), Mux(lo, k, imin)
        diff = Signal(32)
        m.d.comb += diff.eq(rmax - rmin)
        trigger = Signal()
        m.d.comb += [trigger.eq((diff >= 2) & (diff >= (rmax >> self.ef_shift))), self.idle.eq(bal == _Bal.IDLE)]
        running = self.running
        with m.If(running & ~pending):
            with m.If(timer == self.ef_interval - 1):
                m.d.sync += [pending.eq(1), timer.eq(0)]
            with m.Else():
                m.d.sync += timer.eq(timer + 1)
        m.d.sync += armed.eq(1)
        for k, sm in enumerate(sms):
            m.d.comb += [sm.bw_size.eq(size), sm.bw0_i.eq(bw0), sm.bw1_i.eq(bw1), sm.bv_i.eq(bv)]
            with m.If(((bal == _Bal.ERS) | (bal == _Bal.ED)) & (recv == k)):
                m.d.comb += sm.bc.eq(EF_BC["ERS"])
            with m.Elif((bal == _Bal.ER) & (recv == k)):
                m.d.comb += sm.bc.eq(EF_BC["ER"])
            with m.Elif((bal == _Bal.ED) & (donor == k)):
                m.d.comb += sm.bc.eq(EF_BC["ED"])
        bs_recv = Array(sm.bs for sm in sms)[recv]
        bs_donor = Array(sm.bs for sm in sms)[donor]
        # The report reuses the balancer's registers (they hold until the next decision
        # starts); only the pulse and the outcome are added.
        ev = self.info
        outcome = Signal(2)
        was_moved = outcome == EF_OUTCOMES["moved"]
        m.d.comb += [ev.donor.eq(donor), ev.recv.eq(recv), ev.size.eq(size), ev.outcome.eq(outcome),
                     ev.v.eq(Mux(was_moved, bv, 0)), ev.bw0.eq(Mux(was_moved, bw0, 0)),
                     ev.bw1.eq(Mux(was_moved, bw1, 0))]
        m.d.sync += self.event.eq(0)

        def report(name):
            m.d.sync += [self.event.eq(1), outcome.eq(EF_OUTCOMES[name])]

        with m.Switch(bal):
            with m.Case(_Bal.IDLE):
                with m.If(running & pending):
                    m.d.sync += pending.eq(0)
                    with m.If(self.ef & trigger):
                        m.d.sync += [bal.eq(_Bal.ERS), armed.eq(0), donor.eq(imax), recv.eq(imin),
                                     size.eq(diff >> 1)]
            with m.Case(_Bal.ERS):
                with m.If(armed & (bs_recv == EF_BS["ok"])):
                    m.d.sync += [bal.eq(_Bal.ED), armed.eq(0)]
                with m.Elif(armed & (bs_recv == EF_BS["fail"])):
                    m.d.sync += bal.eq(_Bal.IDLE)
                    report("no_entry")
            with m.Case(_Bal.ED):
                with m.If(armed & (bs_donor == EF_BS["ok"])):
                    m.d.sync += [bal.eq(_Bal.ER), armed.eq(0), bw0.eq(Array(sm.bw0_o for sm in sms)[donor]),
                                 bw1.eq(Array(sm.bw1_o for sm in sms)[donor]),
                                 bv.eq(Array(sm.bv_o for sm in sms)[donor])]
                with m.Elif(armed & (bs_donor == EF_BS["fail"])):
                    m.d.sync += bal.eq(_Bal.IDLE)
                    report("nothing")
            with m.Case(_Bal.ER):
                with m.If(armed & (bs_recv == EF_BS["ok"])):
                    m.d.sync += [bal.eq(_Bal.IDLE), exchanges.eq(exchanges + 1), moved.eq(moved + bw1 - bw0)]
                    report("moved")
        with m.If(self.clear):
            m.d.sync += [exchanges.eq(0), moved.eq(0), timer.eq(0), pending.eq(0)]
        return m


class GraphPEG(ConfiguredComponent):
    """GraphPEG engines of ``config.sms`` SMs.

    Attributes
    ----------
    cmd : In(stream(GraphPEGCommand))
    status : Out(stream(GraphPEGStatus))
    mem : Out(MemPortSignature(config.port))
    push0, push1, ... : In(stream(PushItem))
        ``__push_vert`` of each SM's warps.
    o0, o1, ... : Out(stream(PopBeat))
        Each SM's pops (``__pop_edge_*`` / ``__pop_vert``).
    ef_event : Out(1)
        One cycle at the end of every balancing decision, with ``ef_info``.
    ef_info : Out(EFEvent)
        The decision, valid while ``ef_event`` is high.
    busy : Out(1)
    """

    def __init__(self, config: GraphPEGConfig):
        check_rtl_config(config)
        members = {"cmd": In(stream.Signature(GraphPEGCommand(config))),
                   "status": Out(stream.Signature(GraphPEGStatus(config))),
                   "mem": Out(MemPortSignature(config.port)), "busy": Out(1),
                   "ef_event": Out(1), "ef_info": Out(EFEvent())}
        for k in range(config.sms):
            members[f"push{k}"] = In(stream.Signature(PushItem()))
            members[f"o{k}"] = Out(stream.Signature(PopBeat(config)))
        super().__init__(config, members)

    def elaborate(self, platform):
        c = self._config
        m = Module()
        N = c.sms
        sms = []
        for k in range(N):
            sm = GraphPEGSM(c, k)
            m.submodules[f"sm{k}"] = sm
            sms.append(sm)
            connect(m, flipped(getattr(self, f"push{k}")), sm.push)
            connect(m, sm.o, flipped(getattr(self, f"o{k}")))
        if N == 1:
            connect(m, sms[0].mem, flipped(self.mem))
        else:
            m.submodules.arbiter = arb = MemArbiter(c.port, [c.sm_port] * N)
            for k, sm in enumerate(sms):
                connect(m, sm.mem, arb.ports[k])
            connect(m, arb.o, flipped(self.mem))

        # ---------------------------------------------------------------- commands
        state = Signal(_Top)
        cur = Signal(GraphPEGCommand(c))
        setup_done = Signal()
        cmd_err = Signal()
        cycles = Signal(32)
        items = Signal(32)
        exchanges = Signal(16)              # the balancer's counts
        moved = Signal(32)
        bb = c.block_bytes
        for sm in sms:
            m.d.comb += [sm.params.vertex_mode.eq(cur.vertex_mode), sm.params.csc.eq(cur.csc),
                         sm.params.use_wt.eq(cur.use_wt), sm.params.row_ptr.eq(cur.row_ptr),
                         sm.params.col.eq(cur.col), sm.params.weight.eq(cur.weight),
                         sm.params.spill_base.eq(cur.spill_base), sm.params.spill_stride.eq(cur.spill_stride)]
        all_running = Cat(*(sm.running for sm in sms)).all()
        any_running = Cat(*(sm.running for sm in sms)).any()
        all_idle = Cat(*(sm.idle for sm in sms)).all()
        popped = sum(Mux(getattr(self, f"o{k}").valid & getattr(self, f"o{k}").ready, getattr(self, f"o{k}").p.n, 0)
                     for k in range(N))
        m.d.comb += self.cmd.ready.eq(state == _Top.IDLE)
        with m.If((state != _Top.IDLE) & (state != _Top.STATUS)):     # the status holds while offered
            m.d.sync += cycles.eq(cycles + 1)
        m.d.sync += items.eq(items + popped)
        alwt_full = Signal(32)
        buffer_full = Signal(32)
        m.d.sync += [alwt_full.eq(alwt_full + sum(sm.stall_alwt for sm in sms)),
                     buffer_full.eq(buffer_full + sum(sm.stall_buffer for sm in sms))]
        st = self.status
        # the SMs' sticky flags as they are in the status's first cycle, held while it is
        # offered (a spill write answered with an error meanwhile must not change it)
        flags_now = Cat(Cat(*(sm.mem_error for sm in sms)).any(), Cat(*(sm.overflow for sm in sms)).any())
        flags_held = Signal(2)
        first = Signal()
        m.d.sync += first.eq(state != _Top.STATUS)
        with m.If(first):
            m.d.sync += flags_held.eq(flags_now)
        flags = Mux(first, flags_now, flags_held)
        # the SMs' memory errors up to the status's first cycle are this status's; later ones the next's
        m.d.comb += [sm.reported.eq((state == _Top.STATUS) & first) for sm in sms]
        m.d.comb += [st.valid.eq(state == _Top.STATUS), st.p.op.eq(cur.op), st.p.cycles.eq(cycles),
                     st.p.items.eq(items), st.p.exchanges.eq(exchanges), st.p.moved.eq(moved),
                     st.p.alwt_full.eq(alwt_full), st.p.buffer_full.eq(buffer_full),
                     st.p.mem_error.eq(flags[0]), st.p.overflow.eq(flags[1]), st.p.cmd_error.eq(cmd_err)]
        m.d.comb += self.busy.eq(state != _Top.IDLE)

        # ---------------------------------------------------------------- balancer
        m.submodules.balancer = bal = EFBalancer(N)
        for k, sm in enumerate(sms):
            r = bal.sm[k]
            m.d.comb += [r.efs.eq(sm.efs), r.bs.eq(sm.bs), r.bw0_o.eq(sm.bw0_o), r.bw1_o.eq(sm.bw1_o),
                         r.bv_o.eq(sm.bv_o), sm.bc.eq(r.bc), sm.bw_size.eq(r.bw_size), sm.bw0_i.eq(r.bw0_i),
                         sm.bw1_i.eq(r.bw1_i), sm.bv_i.eq(r.bv_i)]
        m.d.comb += [bal.running.eq(state == _Top.RUN), bal.ef.eq(cur.ef), bal.ef_interval.eq(cur.ef_interval),
                     bal.ef_shift.eq(cur.ef_shift), self.ef_event.eq(bal.event), self.ef_info.eq(bal.info),
                     exchanges.eq(bal.exchanges), moved.eq(bal.moved)]

        # ---------------------------------------------------------------- the command sequence
        bad_spill = (cur.spill_base[:bb.bit_length() - 1] != 0) | (cur.spill_stride[:bb.bit_length() - 1] != 0) | \
            (cur.spill_stride == 0)
        with m.Switch(state):
            with m.Case(_Top.IDLE):
                with m.If(self.cmd.valid):
                    m.d.sync += [cur.eq(self.cmd.p), state.eq(_Top.PULSE), cycles.eq(1), items.eq(0), cmd_err.eq(0),
                                 alwt_full.eq(0), buffer_full.eq(0)]
                    m.d.comb += bal.clear.eq(1)
            with m.Case(_Top.PULSE):
                with m.If(cur.op == CMD_OPS["setup"]):
                    # a setup restarts the spill writers: it waits until none offers a write
                    # (pushes between kernels may have filled a block whose write is not taken yet)
                    with m.If(bad_spill):
                        m.d.sync += [cmd_err.eq(1), state.eq(_Top.STATUS)]
                    with m.Elif(Cat(*(sm.spill_quiet for sm in sms)).all()):
                        m.d.comb += [sm.setup.eq(1) for sm in sms]
                        m.d.sync += [setup_done.eq(1), state.eq(_Top.STATUS)]
                with m.Elif(~setup_done):
                    m.d.sync += [cmd_err.eq(1), state.eq(_Top.STATUS)]
                with m.Else():
                    m.d.comb += [sm.run.eq(1) for sm in sms]
                    m.d.sync += state.eq(_Top.START)
            with m.Case(_Top.START):
                with m.If(all_running):
                    m.d.sync += state.eq(_Top.RUN)
            with m.Case(_Top.RUN):
                with m.If(all_idle & bal.idle):
                    m.d.sync += state.eq(_Top.FINISH)
            with m.Case(_Top.FINISH):
                m.d.comb += [sm.finish.eq(1) for sm in sms]
                with m.If(~any_running & ~Cat(*(sm.active for sm in sms)).any()):
                    m.d.sync += state.eq(_Top.STATUS)
            with m.Case(_Top.STATUS):
                with m.If(st.ready):
                    m.d.sync += state.eq(_Top.IDLE)
        return m
