"""Formal harness of the whole SCU from its ports (SCU paper §3, §4;
docs/verification.md, "Formal"): the protocol and completion rules of
:class:`~hw.scu.unit.SCU`, checked by ``graphunits prove --unit scu``.

Configuration: the ``tiny`` preset (width 2) with 16-bit addresses, 8-bit
element counts, 2 filter and 2 grouping sets, 4 reads in flight. Environment:
reset low; commands held until taken (stream rule), any operation code (the
unknown ones included), any addresses (misaligned ones included), 4-byte
elements, at most 6 elements; the memory answers only requests in flight (any
order, data, error flag); the status stream's ready free.
Properties:

* the status and memory request streams obey the stream rule; a request's tag
  is not in flight already;
* one status per command: a status only for a command taken and not answered,
  at most one command at a time, none of its requests still in flight;
* the status counts the command's elements in (all of them, or none when the
  command is rejected); an unmasked data compaction without errors keeps all
  of them; no operation that selects (bitmask, data, access, filter) gives more
  elements than it took; a grouping without errors gives every position;
* the status's memory error flag says whether an error response came during
  the command;
* covers: an unmasked data compaction of 2 elements and a filtering, each done
  without errors (steps 16 and 19: after reset the unit clears its hashes, then
  a command reads its ranges); a status with the memory error flag. (A
  grouping's flush takes it past 24 steps: its property is checked within the
  depth, not covered.)
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Cover, Elaboratable, Mux, Signal

from golden.scu import SCUConfig
from golden.scu.config import OP_CODES

from ..formal import harness_module, memory_port, stream_rule
from .unit import SCU

__all__ = ["SCUTopHarness"]


class SCUTopHarness(Elaboratable):
    def __init__(self, scu_cls: type = SCU):
        self.config = SCUConfig.from_dict({**SCUConfig.preset("tiny").to_dict(), "addr_width": 16,
                                           "count_width": 8, "filter_sets": 2, "group_sets": 2,
                                           "max_inflight": 4, "param_inflight": 2, "merge_window": 2})
        self.dut = scu_cls(self.config)

    def elaborate(self, platform):
        m, started = harness_module(self.dut)
        u = self.dut
        cmd, status, resp = u.cmd, u.status, u.mem.resp
        # ---- environment
        stream_rule(m, cmd, started, check=False, name="cmd")
        c = cmd.p
        with m.If(cmd.valid):
            m.d.comb += [Assume(c.esize8 == 0), Assume(c.n <= 6)]
        # ---- streams and the memory port (responses only for tags in flight)
        inflight = memory_port(m, u.mem, started)
        answered = resp.valid & resp.ready
        stream_rule(m, status, started, check=True, name="status")
        # ---- commands and statuses
        cfire, sfire = cmd.valid & cmd.ready, status.valid & status.ready
        pending = Signal(2)
        m.d.sync += pending.eq(pending + cfire - sfire)
        m.d.comb += Assert(pending <= 1)
        op, n, masked = Signal(3), Signal(8), Signal()
        err_seen = Signal()
        with m.If(cfire):
            m.d.sync += [op.eq(c.op), n.eq(c.n), masked.eq(c.use_mask), err_seen.eq(0)]
        with m.Elif(answered & resp.p.error):
            m.d.sync += err_seen.eq(1)
        s = status.p
        clean = ~s.cmd_error & ~s.mem_error
        with m.If(status.valid):
            m.d.comb += [
                Assert(pending == 1),
                Assert(inflight == 0),
                Assert(s.elements_in == Mux(s.cmd_error, s.elements_in, n)),
                Assert(~s.cmd_error | (s.elements_in == 0) | (s.elements_in == n)),
                Assert(s.mem_error == err_seen),
            ]
            with m.If(clean & (op == OP_CODES["data"]) & ~masked):
                m.d.comb += Assert(s.elements_out == n)
            with m.If((op == OP_CODES["bitmask"]) | (op == OP_CODES["data"]) | (op == OP_CODES["access"]) |
                      (op == OP_CODES["filter"])):
                m.d.comb += Assert(s.elements_out <= s.elements_in)
            with m.If(clean & (op == OP_CODES["group"])):
                m.d.comb += Assert(s.elements_out == n)
        # ---- covers
        m.d.comb += [Cover(sfire & clean & (op == OP_CODES["data"]) & ~masked & (n >= 2)),
                     Cover(sfire & clean & (op == OP_CODES["filter"]) & (n >= 1)),
                     Cover(sfire & s.mem_error)]
        return m
