"""The MFF's issue engine (MFF slides, "Internal Structure of MFF Unit": the issue
engine takes the thread entries of a command and issues its elements, one per
cycle; docs/mff.md, "Structure")."""
from amaranth import *
from amaranth.lib import stream
from amaranth.lib.wiring import In, Out

from golden.mff import MFF_OPS, MFFConfig
from .jobs import JobParams
from .layouts import ConfiguredComponent, MFFCommandLayout, RegState, widths

__all__ = ["IssueEngine"]


class IssueEngine(ConfiguredComponent):
    """The thread entries of commands (``cmd``) turned into elements.

    A command's first entry takes a free job entry (``take`` with ``take_p``;
    ``have_job`` says one is free, ``free_job`` which); its later entries (until
    ``last``) use the same one (``cur_job``). One entry at a time is issued: a
    gather's ``size`` elements ``C[cidx + i]`` (at ``cbase + 4 (cidx + i)``, state C,
    scratchpad target ``target + 4 i`` or ``8 i``), a scatter's single bit ``cidx``
    if its size is non-zero (at ``vbase + cidx / 8``, state S, the bit in the byte as
    its target). An element is issued (``issue``) when a work register is free
    (``have_reg``), the event processor does not run (``blocked``), and its block
    is in the tag unit (``iss_hit``) or an entry can be taken and read
    (``can_alloc``; then ``iss_alloc``). ``issue_last``: the command's last element
    (or none) is issued; ``issuing``: the job entry whose elements are being issued.

    An invalidation is taken only when the unit is idle (``quiet`` and no entry
    here) and no invalidation waits for its completion (``inval_pending``); it
    raises ``inval`` (with ``inval_warp``).
    """

    def __init__(self, config: MFFConfig):
        w = widths(config)
        J, AW = config.job_entries, config.addr_width
        super().__init__(config, {
            "cmd": In(stream.Signature(MFFCommandLayout(config))),
            "have_job": In(1), "free_job": In(w.jb), "quiet": In(1), "inval_pending": In(1), "idle": Out(1),
            "take": Out(1), "take_p": Out(JobParams(config)),
            "inval": Out(1), "inval_warp": Out(config.warp_bits),
            "cur_job": Out(w.jb), "issuing": Out(J), "issue_last": Out(1),
            "job_cbase": In(AW), "job_vbase": In(AW), "job_v8": In(1),
            "have_reg": In(1), "blocked": In(1), "iss_hit": In(1), "can_alloc": In(1),
            "issue": Out(1), "iss_alloc": Out(1), "el_addr": Out(AW), "el_st": Out(RegState),
            "el_target": Out(config.target_width),
        })

    def elaborate(self, platform):
        m = Module()
        c = self._config
        jb = widths(c).jb
        cmd = self.cmd
        cur_v = Signal()
        cur_job = self.cur_job
        cur_cidx = Signal(32)
        cur_left = Signal(c.size_width)
        cur_target = Signal(c.target_width)
        cur_last = Signal()
        cur_scatter = Signal()
        in_cmd = Signal()                  # between a command's first and last entries
        cmd_job = Signal(jb)
        m.d.comb += self.idle.eq(self.quiet & ~cur_v & ~in_cmd)
        is_inval = cmd.p.op == MFF_OPS["invalidate"]
        is_scatter = cmd.p.op == MFF_OPS["scatter"]
        m.d.comb += cmd.ready.eq(~cur_v & Mux(is_inval, self.idle & ~self.inval_pending, in_cmd | self.have_job))
        cmd_fire = cmd.valid & cmd.ready
        new_job = Signal(jb)
        m.d.comb += new_job.eq(Mux(in_cmd, cmd_job, self.free_job))
        with m.If(cmd_fire & ~is_inval):
            m.d.sync += [cur_v.eq(1), cur_job.eq(new_job), cur_cidx.eq(cmd.p.cidx), cur_target.eq(cmd.p.target),
                         cur_last.eq(cmd.p.last), cur_scatter.eq(is_scatter),
                         cur_left.eq(Mux(is_scatter, cmd.p.size != 0, cmd.p.size)),
                         in_cmd.eq(~cmd.p.last), cmd_job.eq(new_job)]
            m.d.comb += self.take.eq(~in_cmd)
        m.d.comb += [self.take_p.warp.eq(cmd.p.warp), self.take_p.cbase.eq(cmd.p.cbase),
                     self.take_p.vbase.eq(cmd.p.vbase), self.take_p.v8.eq(cmd.p.vsize8),
                     self.take_p.scatter.eq(is_scatter)]
        # Invalidate: when idle, forget every line, then report completion.
        m.d.comb += [self.inval.eq(cmd_fire & is_inval), self.inval_warp.eq(cmd.p.warp)]

        # New elements: a register per element, looked up in the tag unit.
        m.d.comb += [self.el_addr.eq(Mux(cur_scatter, self.job_vbase + (cur_cidx >> 3),
                                         self.job_cbase + (cur_cidx << 2))),
                     self.el_st.eq(Mux(cur_scatter, RegState.S, RegState.C)),
                     self.el_target.eq(Mux(cur_scatter, cur_cidx[:3], cur_target))]
        issue_try = Signal()
        m.d.comb += issue_try.eq(cur_v & (cur_left != 0) & self.have_reg & ~self.blocked)
        with m.If(issue_try):
            with m.If(self.iss_hit):
                m.d.comb += self.issue.eq(1)
            with m.Elif(self.can_alloc):
                m.d.comb += [self.issue.eq(1), self.iss_alloc.eq(1)]
        with m.If(self.issue):
            m.d.sync += [cur_left.eq(cur_left - 1), cur_cidx.eq(cur_cidx + 1),
                         cur_target.eq(cur_target + Mux(self.job_v8, 8, 4))]
        with m.If(cur_v & ((cur_left == 0) | (self.issue & (cur_left == 1)))):
            m.d.sync += cur_v.eq(0)
            m.d.comb += self.issue_last.eq(cur_last)
        m.d.comb += self.issuing.eq(Mux(cur_v, 1 << cur_job, 0))
        return m
