"""The IRU top: P partitions joined by an element ring and a request ring, one memory
port, one warp-request port and one reply port per partition (IRU paper §3.1-3.2,
Fig. 4a and 5; docs/iru.md).

The top takes ``configure_iru`` commands, checks that the index and secondary
arrays end at or below the top of the address space (otherwise the operation is
a command error: the partitions read nothing and answer every lane disabled,
``IRUStatusLayout.cmd_error``), starts the partitions, raises ``flush``
once no partition has input outside the hashes, counts the reply lanes and
reports an :class:`IRUStatusLayout` when every lane of the operation was answered
and the partitions are quiet again.
"""
from amaranth import *
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.iru import IRUConfig, REPLY_KINDS
from ..component import ConfiguredComponent
from ..mem.port import MemPortSignature
from .partition import FlitKind, IRUCommand, IRUPartition, IRUReplyBeat, IRURequest

__all__ = ["IRU", "IRUStatusLayout"]


class IRUStatusLayout(data.StructLayout):
    """Completion of an operation: elements, live and disabled lanes, replies (by
    kind, in golden.iru.REPLY_KINDS order), forwarded requests, ring flits, cycles
    from command to status, memory error, command error (the index or the
    secondary array runs past the top of the address space: nothing read, every
    lane disabled)."""

    def __init__(self, c: IRUConfig):
        super().__init__({"n": c.count_width, "live": c.count_width + 1, "disabled": c.count_width + 1,
                          "replies": c.count_width + 1,
                          "kinds": data.ArrayLayout(c.count_width + 1, len(REPLY_KINDS)),
                          "forwarded": 32, "ring": 32, "cycles": 32, "mem_error": 1, "cmd_error": 1})


class _T(enum.Enum, shape=2):
    IDLE = 0
    RUN = 1
    STATUS = 2


class IRU(ConfiguredComponent):
    """Irregular accesses Reorder Unit of ``config.partitions`` partitions.

    Attributes
    ----------
    cmd : In(stream(IRUCommand))
    status : Out(stream(IRUStatusLayout))
    mem0, mem1, ... : Out(MemPortSignature)
        One memory port per partition (its prefetcher).
    req0, req1, ... : In(stream(IRURequest))
        Warp requests addressed to each partition.
    reply0, reply1, ... : Out(stream(IRUReplyBeat)): one or two lanes a cycle
        Reply lanes from each partition, one per cycle.
    held0, tokens0, ... : Out
        Each partition's elements in the hash and disabled-thread tokens.
    flush : Out(1)
        All input of the current operation is in the hashes.
    busy : Out(1)
    """

    def __init__(self, config: IRUConfig):
        if not isinstance(config, IRUConfig):
            raise TypeError(f"IRU needs an IRUConfig, not {config!r}")
        c = config
        members = {"cmd": In(stream.Signature(IRUCommand(c))), "status": Out(stream.Signature(IRUStatusLayout(c))),
                   "flush": Out(1), "busy": Out(1)}
        for p in range(c.partitions):
            members[f"mem{p}"] = Out(MemPortSignature(c.port))
            members[f"req{p}"] = In(stream.Signature(IRURequest(c)))
            members[f"reply{p}"] = Out(stream.Signature(IRUReplyBeat(c)))
            members[f"held{p}"] = Out(range(c.sets * c.entry_size + 1))
            members[f"tokens{p}"] = Out(c.count_width + 1)
        super().__init__(config, members)

    def elaborate(self, platform):
        c = self._config
        P = c.partitions
        m = Module()
        parts = []
        for p in range(P):
            part = IRUPartition(c, p)
            m.submodules[f"part{p}"] = part
            parts.append(part)
            wiring.connect(m, part.mem, wiring.flipped(getattr(self, f"mem{p}")))
            wiring.connect(m, wiring.flipped(getattr(self, f"req{p}")), part.req)
            wiring.connect(m, part.reply, wiring.flipped(getattr(self, f"reply{p}")))
            m.d.comb += [getattr(self, f"held{p}").eq(part.held), getattr(self, f"tokens{p}").eq(part.tokens)]
        for p in range(P):
            prev = parts[p - 1]
            if P > 1:
                m.d.comb += [parts[p].ring_in.eq(prev.ring_out), parts[p].rq_in.eq(prev.rq_out)]

        state = Signal(_T)
        op = Signal(IRUCommand(c))
        start = Signal()
        reject = Signal()
        # Command error: n words from the index (or secondary) array's word address
        # end past the top of the address space (word 2**(addr_width - 2)).
        cp = self.cmd.payload
        WT = 1 << (c.addr_width - 2)
        idx_end = Signal(max(c.addr_width - 2, c.count_width) + 1)
        sec_end = Signal(max(c.addr_width - 2, c.count_width) + 1)
        cmd_bad = Signal()
        m.d.comb += [idx_end.eq(cp.idx + cp.n), sec_end.eq(cp.sec + cp.n),
                     cmd_bad.eq((idx_end > WT) | (cp.use_sec & (sec_end > WT)))]
        flush = Signal()
        st = Signal(IRUStatusLayout(c))
        m.d.sync += start.eq(0)
        for part in parts:
            m.d.comb += [part.start.eq(start), part.op.eq(op), part.reject.eq(reject), part.flush.eq(flush)]
        m.d.comb += [self.flush.eq(flush), self.busy.eq(state != _T.IDLE)]

        # Reply lanes of this cycle (a beat carries one or two).
        fires = [part.reply.valid & part.reply.ready for part in parts]
        lanes = sum(Mux(f, 1 + part.reply.p.two, 0) for f, part in zip(fires, parts))
        dis = sum(Mux(f, part.reply.p.disabled + (part.reply.p.two & part.reply.p.disabled1), 0)
                  for f, part in zip(fires, parts))
        lasts = [f & part.reply.p.last for f, part in zip(fires, parts)]
        slots = Signal(c.count_width + 1)
        all_idle = Cat(*[part.idle for part in parts]).all()
        all_done = Cat(*[part.finished for part in parts]).all()
        rings_empty = Cat(*[(part.ring_out.kind == FlitKind.NONE) & ~part.rq_out.valid for part in parts]).all() \
            if P > 1 else C(1, 1)

        m.d.comb += self.cmd.ready.eq(state == _T.IDLE)
        m.d.comb += [self.status.valid.eq(state == _T.STATUS), self.status.payload.eq(st)]
        with m.Switch(state):
            with m.Case(_T.IDLE):
                with m.If(self.cmd.valid):
                    m.d.sync += [op.eq(self.cmd.payload), start.eq(1), state.eq(_T.RUN), flush.eq(0), slots.eq(0),
                                 reject.eq(cmd_bad), st.eq(0), st.n.eq(self.cmd.payload.n), st.cycles.eq(1),
                                 st.cmd_error.eq(cmd_bad)]
            with m.Case(_T.RUN):
                m.d.sync += st.cycles.eq(st.cycles + 1)
                with m.If(~start & all_idle):
                    m.d.sync += flush.eq(1)
                m.d.sync += [slots.eq(slots + lanes), st.live.eq(st.live + lanes - dis),
                             st.disabled.eq(st.disabled + dis), st.replies.eq(st.replies + sum(lasts)),
                             st.forwarded.eq(st.forwarded + sum(part.forwarded for part in parts)),
                             st.ring.eq(st.ring + sum(part.ring_put for part in parts)),
                             st.mem_error.eq(Cat(*[part.mem_error for part in parts]).any())]
                for k in range(len(REPLY_KINDS)):
                    m.d.sync += st.kinds[k].eq(st.kinds[k] + sum(l & (part.reply.p.kind == k)
                                                                 for l, part in zip(lasts, parts)))
                with m.If(~start & flush & (slots == op.n) & all_done & rings_empty):
                    m.d.sync += state.eq(_T.STATUS)
            with m.Case(_T.STATUS):
                with m.If(self.status.ready):
                    m.d.sync += state.eq(_T.IDLE)
        return m
