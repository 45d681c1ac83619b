"""Formal harness of the whole GraphPEG unit from its ports (docs/verification.md,
"Formal"), checked by ``graphunits prove --unit graphpeg``.

Configuration: one SM with 2 ALWT entries, warps of 2, one lane a pop beat,
8-byte blocks, a 4-edge buffer, vertex lists of 2 entries, 16-bit addresses,
2 reads in flight.
Environment: reset low; commands held until taken (stream rule), any of them
(a run before a setup included) with any parameters; the memory answers only
requests in flight (any order, data and error flag); the warps' pushes held
until taken (past a list's worth they spill to memory, which the harness does
not model: the next kernel's input is then not checked); pops taken freely. A vertex value
the solver picks (fixed) is followed. Pushes come between commands, or during
a kernel once it has handed out an item (as the GPU's warps push while a kernel
runs, never between the host's run command and the kernel's start).
Properties:

* the memory request, pop and status streams obey the stream rule; a request's
  tag is not in flight already;
* one status per command, only for a command taken;
* a pop beat holds at most ``width`` items, a ``done`` beat none;
* vertex lists: a vertex-list kernel after a setup hands out exactly the
  vertices pushed before it (since the previous run or the setup, when they fit
  in the list): never more items, and all of them by its status; the followed
  vertex as often as it was pushed;
* covers: a vertex-list kernel that hands out two vertices (the followed one
  among them) and ends; an edge kernel handing out an edge; a memory error
  reaching a status.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Cover, Elaboratable, Mux, Signal

from golden.graphpeg import CMD_OPS, GraphPEGConfig

from ..formal import fixed, flag, harness_module, memory_port, stream_rule
from .top import GraphPEG

__all__ = ["GraphPEGHarness"]


class GraphPEGHarness(Elaboratable):
    def __init__(self, graphpeg_cls: type = GraphPEG):
        self.config = GraphPEGConfig(sms=1, alwt_entries=2, warp_size=2, width=1, block_bytes=8,
                                     edge_buffer_bytes=64, vlist_bytes=16, addr_width=16, fetch_inflight=2,
                                     ef_interval=16)
        self.dut = graphpeg_cls(self.config)
        self.watch = Signal(32)                  # free: the vertex value to follow
        self.free = [self.watch]

    def elaborate(self, platform):
        m, started = harness_module(self.dut)
        u = self.dut
        cfg = self.config
        cap = cfg.vlist_entries
        cmd, status, push, o = u.cmd, u.status, u.push0, u.o0
        # ---- environment: commands, pushes; the memory port
        stream_rule(m, cmd, started, check=False, name="cmd")
        stream_rule(m, push, started, check=False, name="push")
        memory_port(m, u.mem, started)
        cfire, sfire = cmd.valid & cmd.ready, status.valid & status.ready
        qfire, ofire = push.valid & push.ready, o.valid & o.ready
        # ---- the output streams
        stream_rule(m, o, started, check=True, name="o")
        stream_rule(m, status, started, check=True, name="status")
        # ---- one status per command
        pending = flag(m, set=cfire, clear=sfire, name="pending")
        with m.If(status.valid):
            m.d.comb += Assert(pending & ~cmd.ready)
        # ---- pop beats
        with m.If(o.valid):
            m.d.comb += Assert(o.p.n <= cfg.width)
            with m.If(o.p.done):
                m.d.comb += Assert(o.p.n == 0)
        # ---- vertex lists: pushes since the last run (or setup) are the next kernel's input
        watch = self.watch
        fixed(m, watch, started)
        ready = Signal()                                 # a setup was taken (the lists are open)
        queued = Signal(range(cap + 1))                  # pushes since the last run or setup
        queued_w = Signal(range(cap + 1))                # ... of the followed vertex
        inp = Signal(range(cap + 1))                     # the running kernel's input vertices
        inp_w = Signal(range(cap + 1))
        popped = Signal(range(2 * cap + 2))              # items handed out by the running kernel
        popped_w = Signal(range(2 * cap + 2))
        vmode = Signal()                                 # the running kernel is a vertex-list kernel
        checked = Signal()                               # ... after a setup: its input is known
        # pushes between commands, or during a kernel once it handed out an item (its lists
        # are swapped by then: the GPU's warps push while the kernel runs, never between the
        # host's run command and the kernel's start)
        handing = flag(m, set=ofire & ~cfire, clear=cfire, name="handing")
        with m.If(push.valid):
            m.d.comb += Assume((~pending | handing) & ~cfire)
        # pushes past a list's worth spill to memory, which the harness does not model: the
        # next kernel's input is then not checked
        spilled = Signal()
        bb_bits = cfg.block_bytes.bit_length() - 1
        bad = (cmd.p.spill_base[:bb_bits] != 0) | (cmd.p.spill_stride[:bb_bits] != 0) | (cmd.p.spill_stride == 0)
        is_setup = cmd.p.op == CMD_OPS["setup"]
        now = Mux(ofire & ~o.p.done, o.p.n, 0)
        now_w = Mux(ofire & ~o.p.done & (o.p.n != 0) & (o.p.src[0] == watch), 1, 0)
        with m.If(cfire & is_setup & ~bad):              # a setup the unit takes clears the lists
            m.d.sync += [ready.eq(1), queued.eq(0), queued_w.eq(0), checked.eq(0), spilled.eq(0)]
        with m.Elif(cfire & is_setup):                   # a refused one (misaligned spill regions)
            m.d.sync += checked.eq(0)
        with m.Elif(cfire):
            m.d.sync += [inp.eq(queued), inp_w.eq(queued_w), queued.eq(0), queued_w.eq(0), spilled.eq(0),
                         popped.eq(0), popped_w.eq(0), vmode.eq(cmd.p.vertex_mode), checked.eq(ready & ~spilled)]
        with m.Else():
            with m.If(qfire & (queued == cap)):
                m.d.sync += spilled.eq(1)
            with m.Elif(qfire):
                m.d.sync += [queued.eq(queued + 1), queued_w.eq(queued_w + (push.p.vertex == watch))]
            m.d.sync += [popped.eq(popped + now), popped_w.eq(popped_w + now_w)]
        kernel = pending & checked & vmode
        with m.If(kernel):
            m.d.comb += [Assert(popped + now <= inp), Assert(popped_w + now_w <= inp_w)]
        st = status.p
        with m.If(status.valid & kernel & ~st.mem_error & ~st.overflow & ~st.cmd_error):
            m.d.comb += [Assert(popped == inp), Assert(popped_w == inp_w)]
        # ---- covers
        m.d.comb += [Cover(sfire & kernel & ~st.cmd_error & (popped == 2) & (popped_w >= 1)),
                     Cover(ofire & pending & checked & ~vmode & ~o.p.done & (o.p.n != 0)),
                     Cover(sfire & st.mem_error)]
        return m
